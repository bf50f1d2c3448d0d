/* test_verbs.c — what libnbrma still asks libibverbs itself (ref/src/transport/verbs.c): the
 * probe, cross-checked against /sys/class/infiniband, and the device listing nbrma-settings
 * --net prints. The RDMA data path is UCX's (ucx.c, test_ucx.c). One rank.
 * `test_verbs --probe` prints the probe's verdict and exits 0 when an RDMA device has an active
 * port (test_rdma_conformance.sh then runs the conformance suite over UCX on it). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "transport/verbs.h"

static int sysfs_devices(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_probe(void)
{
    char why[256] = "", again[256] = "";
    int r = nbr_verbs_probe(why, sizeof why);
    int ndev = sysfs_devices();
    tap_ok(r == 0 || r == 1, "probe answers 0 or 1 (%d): %s", r, why);
    tap_ok(ndev > 0 || r == 0, "no device in /sys/class/infiniband (%d) => probe says none", ndev);
    if (r == 0)
        tap_ok(strncmp(why, "no RDMA device", 14) == 0, "without a device the reason says so: %s",
               why);
    else
        tap_ok(strstr(why, "active") != NULL, "with a device the reason names its active port: %s",
               why);
    tap_ok(nbr_verbs_probe(again, sizeof again) == r && strcmp(why, again) == 0,
           "a second probe gives the same verdict and reason");
    tap_ok(nbr_verbs_probe(NULL, 0) == r, "probe(NULL, 0) is allowed");
    char tiny[8];
    nbr_verbs_probe(tiny, sizeof tiny);
    tap_ok(strlen(tiny) == sizeof tiny - 1, "the reason is truncated to the buffer");

    /* The listing: one line per port of every device, or one line saying there is none. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tap_ok(f != NULL, "open_memstream");
    if (!f)
        return;
    nbr_rdma_devices(f);
    fclose(f);
    if (ndev == 0)
        tap_ok(strncmp(text, "RDMA devices: none", 18) == 0, "the listing says none: %s", text);
    else
        tap_ok(strstr(text, "RDMA devices (libibverbs)") != NULL, "the listing names devices: %s",
               text);
    tap_ok(!r || strstr(text, "ACTIVE") != NULL, "an active port the probe found is listed");
    free(text);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
        char why[256];
        int r = nbr_verbs_probe(why, sizeof why);
        printf("%s\n", why);
        return r ? 0 : 1;
    }
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    test_probe();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
