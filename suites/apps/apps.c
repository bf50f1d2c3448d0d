/* apps.c — the shared options and the corruption note of the application kernels (apps.h). */
#include "apps.h"

#include <stdio.h>

long nba_seed = 0, nba_corrupt = 0;

void nba_corrupt_note(const nbh_case_t *c, const char *what)
{
    if (c->ctx->rank == 0) {
        fprintf(stderr, "nbrma: %s: --corrupt 1: damaging %s; verification must fail\n", c->name,
                what);
        fflush(stderr);
    }
}
