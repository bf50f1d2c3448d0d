/* env.c — the NBRMA_* settings: one table (nbr.h's NBR_SETTINGS) read once from the
 * environment, printable with MPIX_Nbrma_print_settings and documented from the same table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbr.h"
#include "nbrma.h"
#include "transport/tp.h"

nbr_settings_t nbr_cfg = {
#define NBR_DEF_str(v)           v,
#define NBR_DEF_int(v)           v,
#define X(name, type, def, help) NBR_DEF_##type(def)
    NBR_SETTINGS(X)
#undef X
};

static void load_str(const char *name, const char **dst)
{
    const char *v = getenv(name);
    if (v && *v)
        *dst = v;
}

static void load_int(const char *name, long *dst)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < 0) {
        fprintf(stderr, "libnbrma: %s='%s' is not a non-negative integer; using %ld\n", name, v,
                *dst);
        return;
    }
    *dst = x;
}

void nbr_settings_load(void)
{
    static int loaded;
    if (loaded)
        return;
    loaded = 1;
#define NBR_LOAD_str(n)          load_str("NBRMA_" #n, &nbr_cfg.n);
#define NBR_LOAD_int(n)          load_int("NBRMA_" #n, &nbr_cfg.n);
#define X(name, type, def, help) NBR_LOAD_##type(name)
    NBR_SETTINGS(X)
#undef X
    if (strcmp(nbr_cfg.IMPL, "ref") && strcmp(nbr_cfg.IMPL, "vendor")) {
        fprintf(stderr, "libnbrma: NBRMA_IMPL='%s' is not ref or vendor; using ref\n",
                nbr_cfg.IMPL);
        nbr_cfg.IMPL = "ref";
    }
    nbr_impl_ref = strcmp(nbr_cfg.IMPL, "ref") == 0;
    static const char *const relax[] = {"auto", "yield", "sleep", "spin"};
    nbr_relax_mode = -1;
    for (int i = 0; i < (int)(sizeof relax / sizeof *relax); i++)
        if (strcmp(nbr_cfg.RELAX, relax[i]) == 0)
            nbr_relax_mode = i;
    if (nbr_relax_mode < 0) {
        fprintf(stderr, "libnbrma: NBRMA_RELAX='%s' is not auto, yield, sleep or spin; using auto\n",
                nbr_cfg.RELAX);
        nbr_cfg.RELAX = "auto";
        nbr_relax_mode = NBR_RELAX_AUTO;
    }
    if (nbr_cfg.RELAX_NS > 999999999L) {
        fprintf(stderr, "libnbrma: NBRMA_RELAX_NS=%ld is a second or more; using 999999999\n",
                nbr_cfg.RELAX_NS);
        nbr_cfg.RELAX_NS = 999999999L;
    }
}

NBR_API void MPIX_Nbrma_print_settings(void *stream)
{
    FILE *f = stream ? stream : stdout;
    nbr_settings_load();
#define NBR_PRINT_str(n, help)   fprintf(f, "NBRMA_%-14s %-8s %s\n", #n, nbr_cfg.n, help);
#define NBR_PRINT_int(n, help)   fprintf(f, "NBRMA_%-14s %-8ld %s\n", #n, nbr_cfg.n, help);
#define X(name, type, def, help) NBR_PRINT_##type(name, help)
    NBR_SETTINGS(X)
#undef X
}

NBR_API void MPIX_Nbrma_print_net(void *stream, int verbose)
{
    nbr_settings_load();
    nbr_ucx_describe(stream ? stream : stdout, verbose);
}

NBR_API int MPIX_Nbrma_set_impl(const char *impl)
{
    nbr_settings_load();
    if (!impl || (strcmp(impl, "ref") && strcmp(impl, "vendor")))
        return MPI_ERR_ARG;
    nbr_impl_ref = strcmp(impl, "ref") == 0;
    return MPI_SUCCESS;
}
