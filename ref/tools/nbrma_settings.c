/* nbrma_settings.c — `nbrma-settings`: print libnbrma's NBRMA_* settings, their current values
 * (from this environment) and what they do. The list comes from the one settings table. */
#include <stdio.h>
#include <string.h>

#include "nbrma.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") != 0) {
        fprintf(stderr, "nbrma-settings: unknown argument '%s' (it takes none; --help)\n", argv[1]);
        return 2;
    }
    if (argc > 1) {
        puts("usage: nbrma-settings\nPrints libnbrma's NBRMA_* settings: name, value in this "
             "environment, meaning.");
        return 0;
    }
    MPIX_Nbrma_print_settings(stdout);
    return 0;
}
