/* nbrma_settings.c — `nbrma-settings`: print libnbrma's NBRMA_* settings, their current values
 * (from this environment) and what they do (the list comes from the one settings table), then
 * what carries traffic between nodes: the UCX version; with --net also the UCX transports toward
 * a peer and the RDMA devices libibverbs sees, so a cluster user sees at once what will carry the
 * traffic. */
#include <stdio.h>
#include <string.h>

#include "nbrma.h"

int main(int argc, char **argv)
{
    int net = argc > 1 && strcmp(argv[1], "--net") == 0;
    if (argc > 2 || (argc > 1 && !net && strcmp(argv[1], "--help") != 0)) {
        fprintf(stderr, "nbrma-settings: unknown argument '%s' (--net or --help)\n",
                argv[argc > 2 ? 2 : 1]);
        return 2;
    }
    if (argc > 1 && !net) {
        puts("usage: nbrma-settings [--net]\nPrints libnbrma's NBRMA_* settings (name, value in "
             "this environment, meaning) and the UCX version;\n--net: also the UCX transports "
             "toward a peer (UCX_TLS, UCX_NET_DEVICES) and the RDMA devices libibverbs sees.");
        return 0;
    }
    MPIX_Nbrma_print_settings(stdout);
    MPIX_Nbrma_print_net(stdout, net);
    return 0;
}
