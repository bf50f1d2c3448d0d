/* test_verbs.c — the device-independent half of the verbs transport (ref/src/transport/verbs.c):
 * the probe and NBRMA_NET choice (cross-checked against /sys/class/infiniband), connection
 * records and key tables on the wire (round trips, every malformation refused), the region table
 * (1000 regions, adjacency, the top of the address space), work-request building (splitting by
 * max_msg and max_sge checked against the byte stream it must cover, signaling, wr_id, atomics and
 * alignment) and completion accounting (credits, partial and failed completions). One rank.
 * `test_verbs --probe` prints the probe's verdict and exits 0 when windows can use a device, 1
 * otherwise (no device, or the verbs data path not wired yet: NBR_VERBS_WIRED). */
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

static int has_device;

static void test_probe(void)
{
    char why[256] = "", again[256] = "";
    int r = nbr_verbs_probe(why, sizeof why);
    int ndev = sysfs_devices();
    has_device = r == 1;
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

    nbr_verbs_why_t w = {""};
    int net = -7;
    tap_ok(nbr_verbs_net_select("am", &net, &w) == MPI_SUCCESS && net == NBR_VERBS_NET_AM,
           "NBRMA_NET=am selects active messages");
    net = -7;
    tap_ok(nbr_verbs_net_select("auto", &net, &w) == MPI_SUCCESS &&
               net == (r ? NBR_VERBS_NET_VERBS : NBR_VERBS_NET_AM),
           "NBRMA_NET=auto selects %s here", r ? "verbs" : "am");
    net = -7;
    tap_ok(nbr_verbs_net_select("AM", &net, &w) == MPI_SUCCESS && net == NBR_VERBS_NET_AM,
           "NBRMA_NET values ignore case (as win.c's check does)");
    net = -7;
    tap_ok(nbr_verbs_net_select(NULL, &net, &w) == MPI_SUCCESS &&
               net == (r ? NBR_VERBS_NET_VERBS : NBR_VERBS_NET_AM),
           "NBRMA_NET unset means auto");
    net = -7;
    w.text[0] = 0;
    int rc = nbr_verbs_net_select("verbs", &net, &w);
    if (r == 0) {
        tap_ok(rc == MPI_ERR_OTHER && net == -7, "NBRMA_NET=verbs without a device fails (%d)", rc);
        tap_ok(strstr(w.text, "NBRMA_NET=am") && strstr(w.text, "no RDMA device"),
               "... naming NBRMA_NET=am and the reason: %s", w.text);
        nbr_verbs_dev_t dev;
        memset(&dev, 0x5a, sizeof dev);
        w.text[0] = 0;
        rc = nbr_verbs_dev_open(&dev, 64, 256, &w);
        tap_ok(rc == MPI_ERR_OTHER && strstr(w.text, "NBRMA_NET=am") &&
                   ((unsigned char *)&dev)[0] == 0x5a,
               "opening the device without one is refused, output untouched: %s", w.text);
        nbr_verbs_region_t reg;
        int x;
        tap_ok(nbr_verbs_mr_reg(&dev, &x, sizeof x, &reg, NULL) == MPI_ERR_OTHER,
               "registering memory without a device is refused");
    } else {
        tap_ok(rc == MPI_SUCCESS && net == NBR_VERBS_NET_VERBS, "NBRMA_NET=verbs with a device");
        tap_skip(3, "a device is present");
    }
    w.text[0] = 0;
    tap_ok(nbr_verbs_net_select("rdma", &net, &w) == MPI_ERR_ARG && strstr(w.text, "rdma"),
           "an unknown NBRMA_NET value is refused by name: %s", w.text);
}

static int conn_eq(const nbr_verbs_conn_t *a, const nbr_verbs_conn_t *b)
{
    return a->qp_num == b->qp_num && a->psn == b->psn && a->lid == b->lid && a->mtu == b->mtu &&
           a->global == b->global && memcmp(a->gid, b->gid, 16) == 0;
}

static void test_conn(void)
{
    nbr_verbs_conn_t c = {
        .qp_num = 0x123456, .psn = 0xabcdef, .lid = 0xbeef, .mtu = IBV_MTU_4096, .global = 1};
    for (int i = 0; i < 16; i++)
        c.gid[i] = (uint8_t)(0xf0 + i);
    unsigned char buf[NBR_VERBS_CONN_BYTES + 1];
    memset(buf, 0xee, sizeof buf);
    nbr_verbs_conn_pack(&c, buf);
    tap_ok(buf[NBR_VERBS_CONN_BYTES] == 0xee, "pack writes exactly %d bytes", NBR_VERBS_CONN_BYTES);
    tap_ok(memcmp(buf, "nv\x01\x20\x00\x12\x34\x56\x00\xab\xcd\xef\xbe\xef\x05\x01\xf0", 17) == 0,
           "wire format: magic, version, size, then big-endian qp_num, psn, lid, mtu, flags, gid");
    nbr_verbs_conn_t d = {0};
    tap_ok(nbr_verbs_conn_unpack(buf, NBR_VERBS_CONN_BYTES, &d, NULL) == MPI_SUCCESS &&
               conn_eq(&c, &d),
           "unpack(pack(c)) == c");
    nbr_verbs_conn_t e = {.qp_num = 1, .psn = 0, .lid = 0, .mtu = IBV_MTU_256, .global = 0};
    nbr_verbs_conn_pack(&e, buf);
    d = c;
    tap_ok(nbr_verbs_conn_unpack(buf, NBR_VERBS_CONN_BYTES, &d, NULL) == MPI_SUCCESS &&
               conn_eq(&e, &d),
           "round trip of an InfiniBand (LID-routed) record");

    struct {
        int at, val;
        size_t len;
        const char *what;
    } bad[] = {
        {-1, 0, NBR_VERBS_CONN_BYTES - 1, "one byte short"},
        {-1, 0, NBR_VERBS_CONN_BYTES + 1, "one byte long"},
        {0, 'x', NBR_VERBS_CONN_BYTES, "bad magic"},
        {2, 2, NBR_VERBS_CONN_BYTES, "version 2"},
        {3, 33, NBR_VERBS_CONN_BYTES, "size field 33"},
        {4, 1, NBR_VERBS_CONN_BYTES, "qp_num over 24 bits"},
        {8, 0x80, NBR_VERBS_CONN_BYTES, "psn over 24 bits"},
        {14, 0, NBR_VERBS_CONN_BYTES, "mtu code 0"},
        {14, 6, NBR_VERBS_CONN_BYTES, "mtu code 6"},
        {15, 2, NBR_VERBS_CONN_BYTES, "unknown flag"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nbr_verbs_conn_pack(&c, buf);
        if (bad[i].at >= 0)
            buf[bad[i].at] = (unsigned char)bad[i].val;
        nbr_verbs_conn_t out = e;
        nbr_verbs_why_t w = {""};
        int rc = nbr_verbs_conn_unpack(buf, bad[i].len, &out, &w);
        tap_ok(rc == MPI_ERR_OTHER && conn_eq(&out, &e) && w.text[0],
               "malformed record refused, output untouched: %s (%s)", bad[i].what, w.text);
    }
    tap_ok(nbr_verbs_conn_unpack(NULL, NBR_VERBS_CONN_BYTES, &d, NULL) == MPI_ERR_OTHER,
           "NULL record refused");
}

static void shuffle(int *a, int n, unsigned *seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rand_r(seed) % (unsigned)(i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

#define NREG 1000
static uint64_t reg_base(int i)
{
    return 0x100000 + (uint64_t)i * 0x3000;
}
static uint64_t reg_len(int i)
{
    return 0x1000 + (uint64_t)(i % 7) * 0x100;
}

static void test_regtab(void)
{
    nbr_verbs_regtab_t t;
    nbr_verbs_regtab_init(&t);
    static int order[NREG];
    unsigned seed = 12345;
    for (int i = 0; i < NREG; i++)
        order[i] = i;
    shuffle(order, NREG, &seed);
    int ok = 1;
    for (int k = 0; k < NREG; k++) {
        int i = order[k];
        nbr_verbs_region_t r = {.base = reg_base(i),
                                .len = reg_len(i),
                                .lkey = 1000u + (unsigned)i,
                                .rkey = 2000u + (unsigned)i};
        ok &= nbr_verbs_regtab_insert(&t, &r, NULL) == MPI_SUCCESS;
    }
    tap_ok(ok && t.n == NREG, "%d regions inserted in random order (n = %zu)", NREG, t.n);
    int sorted = 1;
    for (size_t i = 1; i < t.n; i++)
        sorted &= t.r[i - 1].base < t.r[i].base;
    tap_ok(sorted, "the table is sorted by base");
    int found = 1, misses = 1;
    for (int i = 0; i < NREG; i++) {
        const nbr_verbs_region_t *r = nbr_verbs_regtab_find(&t, reg_base(i), reg_len(i));
        found &= r && r->rkey == 2000u + (unsigned)i && r->lkey == 1000u + (unsigned)i;
        r = nbr_verbs_regtab_find(&t, reg_base(i) + reg_len(i) - 1, 1);
        found &= r && r->rkey == 2000u + (unsigned)i;
        r = nbr_verbs_regtab_find(&t, reg_base(i) + 5, 0);
        found &= r && r->rkey == 2000u + (unsigned)i;
        misses &= !nbr_verbs_regtab_find(&t, reg_base(i) + reg_len(i), 1); /* the gap */
        misses &= !nbr_verbs_regtab_find(&t, reg_base(i), reg_len(i) + 1); /* one too long */
        misses &= !nbr_verbs_regtab_find(&t, reg_base(i) - 1, 2);          /* straddles */
    }
    tap_ok(found, "every region is found by its whole range, its last byte, and len 0");
    tap_ok(misses, "gaps, one byte too many and straddling ranges are not found");
    tap_ok(!nbr_verbs_regtab_find(&t, 0, 1) && !nbr_verbs_regtab_find(&t, UINT64_MAX, 1),
           "below the first and above the last region: not found");

    nbr_verbs_why_t w = {""};
    nbr_verbs_region_t ov = {.base = reg_base(10) + 0x800, .len = 0x1000};
    tap_ok(nbr_verbs_regtab_insert(&t, &ov, &w) == MPI_ERR_ARG && strstr(w.text, "overlaps"),
           "a region overlapping the next one is refused: %s", w.text);
    ov.base = reg_base(10) - 0x10;
    ov.len = 0x11;
    tap_ok(nbr_verbs_regtab_insert(&t, &ov, NULL) == MPI_ERR_ARG,
           "a region reaching one byte into the next is refused");
    ov.base = reg_base(10) - 0x10;
    ov.len = 0x10;
    tap_ok(nbr_verbs_regtab_insert(&t, &ov, NULL) == MPI_SUCCESS && t.n == NREG + 1,
           "a region ending exactly where the next begins is accepted (adjacent)");
    const nbr_verbs_region_t *a = nbr_verbs_regtab_find(&t, reg_base(10) - 1, 1),
                             *b = nbr_verbs_regtab_find(&t, reg_base(10), 1);
    tap_ok(a && b && a != b && a->base == reg_base(10) - 0x10 && b->base == reg_base(10),
           "adjacent regions: each finds its own last/first byte");
    tap_ok(!nbr_verbs_regtab_find(&t, reg_base(10) - 1, 2),
           "a range across two adjacent regions is not one region's");

    nbr_verbs_region_t out = {0};
    tap_ok(nbr_verbs_regtab_remove(&t, reg_base(500), &out, NULL) == MPI_SUCCESS &&
               out.rkey == 2500 && t.n == NREG && !nbr_verbs_regtab_find(&t, reg_base(500), 1) &&
               nbr_verbs_regtab_find(&t, reg_base(499), 1) &&
               nbr_verbs_regtab_find(&t, reg_base(501), 1),
           "detach: the removed region is returned and no longer found; neighbours stay");
    tap_ok(nbr_verbs_regtab_remove(&t, reg_base(500), NULL, &w) == MPI_ERR_ARG &&
               nbr_verbs_regtab_remove(&t, reg_base(501) + 8, NULL, NULL) == MPI_ERR_ARG,
           "removing what is not there, or by an inner address, is refused: %s", w.text);
    nbr_verbs_regtab_remove(&t, reg_base(10) - 0x10, NULL, NULL);
    shuffle(order, NREG, &seed);
    ok = 1;
    for (int k = 0; k < NREG; k++)
        if (order[k] != 500)
            ok &= nbr_verbs_regtab_remove(&t, reg_base(order[k]), NULL, NULL) == MPI_SUCCESS;
    tap_ok(ok && t.n == 0 && !nbr_verbs_regtab_find(&t, reg_base(1), 1),
           "all regions removed in random order; the empty table finds nothing");

    /* the top of the address space */
    nbr_verbs_region_t top = {.base = UINT64_MAX - 0xfff, .len = 0x1000, .rkey = 7};
    tap_ok(nbr_verbs_regtab_insert(&t, &top, NULL) == MPI_SUCCESS,
           "a region ending exactly at 2^64 is accepted");
    tap_ok(nbr_verbs_regtab_find(&t, UINT64_MAX, 1) && nbr_verbs_regtab_find(&t, UINT64_MAX, 0) &&
               nbr_verbs_regtab_find(&t, UINT64_MAX - 0xfff, 0x1000),
           "its last byte (address 2^64 - 1) is found");
    tap_ok(!nbr_verbs_regtab_find(&t, UINT64_MAX, 2) &&
               !nbr_verbs_regtab_find(&t, UINT64_MAX - 0xfff, UINT64_MAX),
           "ranges wrapping past 2^64 are not found");
    nbr_verbs_region_t wrap = {.base = UINT64_MAX - 0xfff, .len = 0x1001};
    tap_ok(nbr_verbs_regtab_insert(&t, &wrap, &w) == MPI_ERR_ARG && strstr(w.text, "wraps"),
           "a region wrapping past 2^64 is refused: %s", w.text);
    wrap = (nbr_verbs_region_t){.base = 64, .len = 0};
    tap_ok(nbr_verbs_regtab_insert(&t, &wrap, NULL) == MPI_ERR_ARG, "an empty region is refused");
    nbr_verbs_regtab_fini(&t);
}

static void test_keys(void)
{
    nbr_verbs_regtab_t t, u;
    nbr_verbs_regtab_init(&t);
    nbr_verbs_regtab_init(&u);
    for (int i = 0; i < 50; i++) {
        nbr_verbs_region_t r = {.base = reg_base(i) | UINT64_C(0x7f00000000000000),
                                .len = reg_len(i),
                                .lkey = 1,
                                .rkey = 0xdead0000u + (unsigned)i};
        nbr_verbs_regtab_insert(&t, &r, NULL);
    }
    size_t need = nbr_verbs_keys_size(t.n), used = 0;
    tap_is_long((long)need, 8 + 24 * 50, "key table of 50 regions: 8 + 24 * 50 bytes");
    unsigned char *buf = malloc(need);
    nbr_verbs_why_t w = {""};
    tap_ok(nbr_verbs_keys_pack(&t, buf, need - 1, &used, &w) == MPI_ERR_TRUNCATE && used == 0,
           "pack into a buffer one byte short: MPI_ERR_TRUNCATE (%s)", w.text);
    tap_ok(nbr_verbs_keys_pack(&t, buf, need, &used, NULL) == MPI_SUCCESS && used == need, "pack");
    int same = nbr_verbs_keys_unpack(buf, used, &u, NULL) == MPI_SUCCESS && u.n == t.n;
    for (size_t i = 0; same && i < t.n; i++)
        same = u.r[i].base == t.r[i].base && u.r[i].len == t.r[i].len &&
               u.r[i].rkey == t.r[i].rkey && u.r[i].lkey == 0 && u.r[i].mr == NULL;
    tap_ok(same, "unpack(pack(t)): bases, lengths and rkeys (lkey 0, no mr)");
    tap_ok(nbr_verbs_regtab_find(&u, t.r[7].base + 3, 4) &&
               nbr_verbs_regtab_find(&u, t.r[7].base + 3, 4)->rkey == t.r[7].rkey,
           "the unpacked table serves lookups");

    struct {
        size_t at, len;
        int val;
        const char *what;
    } bad[] = {
        {0, 7, -1, "shorter than the header"},
        {0, 8 + 24 * 50 - 1, -1, "one byte short"},
        {0, 8 + 24 * 50 + 24, -1, "one entry too many for the count"},
        {1, 8 + 24 * 50, 'x', "bad magic"},
        {2, 8 + 24 * 50, 9, "version 9"},
        {7, 8 + 24 * 50, 51, "count 51"},
        {8 + 24 + 6, 8 + 24 * 50, 0x00, "entry 1 base below entry 0's (out of order)"},
        {8 + 24 + 8 + 7, 8 + 24 * 50, 0x00, "entry 1 of length 0x...00 (empty or changed)"},
        {8 + 8, 8 + 24 * 50, 0xff, "entry 0 wrapping past 2^64"},
        {8 + 24 * 49 + 23, 8 + 24 * 50, 1, "reserved bytes of the last entry set"},
    };
    unsigned char *m = malloc(need + 24);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(m, buf, need);
        memset(m + need, 0, 24);
        if (bad[i].val >= 0)
            m[bad[i].at] = (unsigned char)bad[i].val;
        if (i == 7) { /* entry 1's length: zero all 8 bytes */
            memset(m + 8 + 24 + 8, 0, 8);
        }
        if (i == 6) /* entry 1's base := entry 0's base: overlap */
            memcpy(m + 8 + 24, m + 8, 8);
        if (i == 8) /* entry 0: length 2^64 - 1 */
            memset(m + 8 + 8, 0xff, 8);
        nbr_verbs_regtab_t v;
        nbr_verbs_regtab_init(&v);
        nbr_verbs_region_t keep = {.base = 4096, .len = 1, .rkey = 99};
        nbr_verbs_regtab_insert(&v, &keep, NULL);
        w.text[0] = 0;
        int rc = nbr_verbs_keys_unpack(m, bad[i].len, &v, &w);
        tap_ok(rc == MPI_ERR_OTHER && v.n == 1 && v.r[0].rkey == 99 && w.text[0],
               "malformed key table refused, table untouched: %s (%s)", bad[i].what, w.text);
        nbr_verbs_regtab_fini(&v);
    }
    /* Adjacent regions on the wire are fine; one byte of overlap is not. */
    nbr_verbs_regtab_t two;
    nbr_verbs_regtab_init(&two);
    nbr_verbs_region_t r0 = {.base = 0x1000, .len = 0x1000, .rkey = 1},
                       r1 = {.base = 0x2000, .len = 0x1000, .rkey = 2};
    nbr_verbs_regtab_insert(&two, &r0, NULL);
    nbr_verbs_regtab_insert(&two, &r1, NULL);
    unsigned char wire[8 + 2 * 24];
    nbr_verbs_keys_pack(&two, wire, sizeof wire, &used, NULL);
    tap_ok(nbr_verbs_keys_unpack(wire, used, &u, NULL) == MPI_SUCCESS && u.n == 2,
           "adjacent regions unpack");
    wire[8 + 24 + 6] = 0x1f; /* entry 1's base 0x2000 -> 0x1fff: entry 0's last byte */
    wire[8 + 24 + 7] = 0xff;
    tap_ok(nbr_verbs_keys_unpack(wire, used, &u, NULL) == MPI_ERR_OTHER && u.n == 2 &&
               u.r[1].base == 0x2000,
           "regions sharing one byte are refused");
    nbr_verbs_regtab_fini(&two);

    nbr_verbs_regtab_t empty;
    nbr_verbs_regtab_init(&empty);
    tap_ok(nbr_verbs_keys_pack(&empty, buf, need, &used, NULL) == MPI_SUCCESS && used == 8 &&
               nbr_verbs_keys_unpack(buf, used, &u, NULL) == MPI_SUCCESS && u.n == 0,
           "an empty table (dynamic window before any attach) round-trips");
    free(m);
    free(buf);
    nbr_verbs_regtab_fini(&t);
    nbr_verbs_regtab_fini(&u);
}

/* Builds the whole transfer in batches of `batch` WRs and checks it against the segments:
 * the SGEs, concatenated, are exactly the non-empty segment bytes in order; remote addresses run
 * contiguously from raddr; limits hold; signaling and wr_id follow the policy. */
static int check_xfer(const nbr_verbs_wr_cfg_t *cfg, enum ibv_wr_opcode opc,
                      const struct ibv_sge *seg, size_t nseg, uint64_t raddr, int batch,
                      uint64_t *nwr_out, char *diag, size_t dn)
{
    nbr_verbs_xfer_t x;
    if (nbr_verbs_xfer_init(&x, cfg, opc, 77, seg, nseg, raddr, 0x4242, NULL) != MPI_SUCCESS) {
        snprintf(diag, dn, "init failed");
        return 0;
    }
    struct ibv_send_wr *wr = malloc(sizeof *wr * (size_t)batch);
    struct ibv_sge *sge = malloc(sizeof *sge * (size_t)batch * cfg->max_sge);
    size_t si = 0;
    uint64_t soff = 0, roff = 0, idx = 0, covered = 0, total = nbr_verbs_xfer_total(&x);
    int ok = 1;
    while (ok && nbr_verbs_xfer_left(&x) > 0) {
        int k = nbr_verbs_xfer_next(&x, wr, batch, sge);
        if (k <= 0 || k > batch) {
            snprintf(diag, dn, "next returned %d", k);
            ok = 0;
            break;
        }
        for (int i = 0; i < k && ok; i++, idx++) {
            const struct ibv_send_wr *r = &wr[i];
            uint64_t bytes = 0;
            int last = idx + 1 == total, sig = (idx + 1) % cfg->signal_every == 0 || last;
            ok &= r->opcode == opc && r->wr.rdma.rkey == 0x4242 &&
                  r->wr.rdma.remote_addr == raddr + roff && r->num_sge >= 1 &&
                  (uint32_t)r->num_sge <= cfg->max_sge &&
                  r->next == (i + 1 < k ? &wr[i + 1] : NULL) &&
                  !!(r->send_flags & IBV_SEND_SIGNALED) == sig &&
                  nbr_verbs_wrid_token(r->wr_id) == 77 && nbr_verbs_wrid_last(r->wr_id) == last &&
                  nbr_verbs_wrid_chunk(r->wr_id) == (idx & 0xffff);
            if (!ok)
                snprintf(diag, dn, "WR %llu: header wrong", (unsigned long long)idx);
            for (int j = 0; j < r->num_sge && ok; j++) {
                while (si < nseg && soff == seg[si].length) {
                    si++;
                    soff = 0;
                }
                const struct ibv_sge *s = &r->sg_list[j];
                ok &= si < nseg && s->addr == seg[si].addr + soff && s->length > 0 &&
                      s->length <= seg[si].length - soff && s->lkey == seg[si].lkey;
                if (!ok)
                    snprintf(diag, dn, "WR %llu SGE %d does not continue the segments",
                             (unsigned long long)idx, j);
                soff += s->length;
                bytes += s->length;
            }
            ok &= bytes <= cfg->max_msg;
            if (sig)
                covered += nbr_verbs_wrid_covers(r->wr_id);
            else
                ok &= nbr_verbs_wrid_covers(r->wr_id) == 0;
            roff += bytes;
        }
    }
    while (si < nseg && soff == seg[si].length) {
        si++;
        soff = 0;
    }
    if (ok && (si != nseg || covered != total)) {
        snprintf(diag, dn, "segments left %zu, covered %llu of %llu", nseg - si,
                 (unsigned long long)covered, (unsigned long long)total);
        ok = 0;
    }
    *nwr_out = total;
    free(wr);
    free(sge);
    return ok;
}

static void test_wr(void)
{
    char diag[160] = "";
    uint64_t nwr = 0;
    /* By hand: max 1000 bytes, 2 SGEs per WR; 2500 + 10 + 400 bytes -> 1000 | 1000 | 500+10 |
     * 400. */
    nbr_verbs_wr_cfg_t cfg = {.max_msg = 1000, .max_sge = 2, .signal_every = 3};
    struct ibv_sge seg[3] = {{0x10000, 2500, 11}, {0x20000, 10, 12}, {0x30000, 400, 13}};
    nbr_verbs_xfer_t x;
    nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_WRITE, 5, seg, 3, 0x7000, 9, NULL);
    struct ibv_send_wr wr[8];
    struct ibv_sge sge[16];
    int k = nbr_verbs_xfer_next(&x, wr, 8, sge);
    tap_ok(k == 4 && nbr_verbs_xfer_total(&x) == 4 && nbr_verbs_xfer_left(&x) == 0,
           "2910 bytes in 3 segments, max_msg 1000, max_sge 2: 4 WRs (%d)", k);
    tap_ok(k == 4 && wr[0].num_sge == 1 && wr[0].sg_list[0].length == 1000 &&
               wr[1].sg_list[0].addr == 0x10000 + 1000 && wr[2].num_sge == 2 &&
               wr[2].sg_list[0].length == 500 && wr[2].sg_list[1].addr == 0x20000 &&
               wr[3].num_sge == 1 && wr[3].sg_list[0].addr == 0x30000 &&
               wr[3].wr.rdma.remote_addr == 0x7000 + 2510,
           "cut where max_msg, then max_sge, is reached; remote addresses follow");
    tap_ok(k == 4 && !(wr[0].send_flags & IBV_SEND_SIGNALED) &&
               !(wr[1].send_flags & IBV_SEND_SIGNALED) && (wr[2].send_flags & IBV_SEND_SIGNALED) &&
               (wr[3].send_flags & IBV_SEND_SIGNALED) && nbr_verbs_wrid_covers(wr[2].wr_id) == 3 &&
               nbr_verbs_wrid_covers(wr[3].wr_id) == 1 && nbr_verbs_wrid_last(wr[3].wr_id) &&
               !nbr_verbs_wrid_last(wr[2].wr_id),
           "signal every 3rd WR and the last; a signaled WR retires those since the previous");

    tap_ok(check_xfer(&cfg, IBV_WR_RDMA_WRITE, seg, 3, 0x7000, 8, &nwr, diag, sizeof diag),
           "write, built at once: %s", diag);
    tap_ok(check_xfer(&cfg, IBV_WR_RDMA_READ, seg, 3, 0x7000, 1, &nwr, diag, sizeof diag),
           "read, built one WR at a time: %s", diag);

    /* Beyond 4 GiB: two 3 GiB segments at max_msg 1 GiB -> 6 WRs (addresses only, no memory). */
    nbr_verbs_wr_cfg_t big = {.max_msg = 1u << 30, .max_sge = 4, .signal_every = 4};
    struct ibv_sge huge[2] = {{UINT64_C(0x100000000000), 3u << 30, 1},
                              {UINT64_C(0x200000000000), 3u << 30, 1}};
    int fine = check_xfer(&big, IBV_WR_RDMA_WRITE, huge, 2, UINT64_C(0x7f0000000000), 4, &nwr, diag,
                          sizeof diag);
    tap_ok(fine && nwr == 6, "6 GiB in two segments at 1 GiB per WR: %llu WRs %s",
           (unsigned long long)nwr, diag);

    /* Random transfers against the same oracle. */
    unsigned seed = 99;
    int all = 1;
    for (int t = 0; t < 300 && all; t++) {
        struct ibv_sge s[12];
        size_t n = (size_t)(rand_r(&seed) % 12);
        for (size_t i = 0; i < n; i++)
            s[i] = (struct ibv_sge){
                .addr = UINT64_C(0x1000000) * (i + 1) + (unsigned)rand_r(&seed) % 64,
                .length = rand_r(&seed) % 4 == 0 ? 0 : 1 + (unsigned)rand_r(&seed) % 5000,
                .lkey = (uint32_t)i};
        nbr_verbs_wr_cfg_t c = {.max_msg = 1 + (unsigned)rand_r(&seed) % 3000,
                                .max_sge = 1 + (unsigned)rand_r(&seed) % NBR_VERBS_MAX_SGE,
                                .signal_every = 1 + (unsigned)rand_r(&seed) % 8};
        all &= check_xfer(&c, rand_r(&seed) % 2 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, s, n,
                          UINT64_C(0x5000000000), 1 + rand_r(&seed) % 5, &nwr, diag, sizeof diag);
        if (!all)
            tap_diag("case %d: %zu segments, max_msg %u, max_sge %u, every %u", t, n, c.max_msg,
                     c.max_sge, c.signal_every);
    }
    tap_ok(all, "300 random transfers (empty segments among them) cover their bytes exactly: %s",
           diag);

    struct ibv_sge none[2] = {{0x1000, 0, 1}, {0x2000, 0, 1}};
    tap_ok(nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_WRITE, 1, none, 2, 0, 0, NULL) ==
                   MPI_SUCCESS &&
               nbr_verbs_xfer_total(&x) == 0 && nbr_verbs_xfer_next(&x, wr, 8, sge) == 0,
           "a zero-byte transfer takes no WR");

    nbr_verbs_why_t w = {""};
    nbr_verbs_wr_cfg_t badc = cfg;
    badc.max_sge = 0;
    tap_ok(nbr_verbs_xfer_init(&x, &badc, IBV_WR_RDMA_WRITE, 1, seg, 3, 0, 0, NULL) == MPI_ERR_ARG,
           "max_sge 0 refused");
    badc = cfg;
    badc.signal_every = 0;
    tap_ok(nbr_verbs_xfer_init(&x, &badc, IBV_WR_RDMA_WRITE, 1, seg, 3, 0, 0, NULL) == MPI_ERR_ARG,
           "signal_every 0 refused");
    tap_ok(nbr_verbs_xfer_init(&x, &cfg, IBV_WR_SEND, 1, seg, 3, 0, 0, NULL) == MPI_ERR_ARG,
           "a send opcode is not a transfer");
    tap_ok(nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_WRITE, 1, seg, 3, UINT64_MAX - 2000, 0, &w) ==
               MPI_ERR_RMA_RANGE,
           "a remote range wrapping past 2^64 is refused: %s", w.text);
    tap_ok(nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_WRITE, 1, seg, 3, UINT64_MAX - 2909, 0,
                               NULL) == MPI_SUCCESS,
           "a remote range ending exactly at 2^64 is accepted");
    struct ibv_sge wrapseg = {UINT64_MAX - 10, 100, 1};
    tap_ok(nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_READ, 1, &wrapseg, 1, 0, 0, NULL) ==
               MPI_ERR_ARG,
           "a local segment wrapping past 2^64 is refused");

    /* atomics */
    struct ibv_send_wr a;
    struct ibv_sge as;
    memset(&a, 0xa5, sizeof a);
    tap_ok(nbr_verbs_wr_atomic(&a, &as, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 0x8008, 21, 0x9010, 22, 5,
                               0, NULL) == MPI_SUCCESS &&
               a.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD && a.wr.atomic.remote_addr == 0x9010 &&
               a.wr.atomic.compare_add == 5 && a.wr.atomic.rkey == 22 && a.num_sge == 1 &&
               a.sg_list == &as && as.addr == 0x8008 && as.length == 8 && as.lkey == 21 &&
               (a.send_flags & IBV_SEND_SIGNALED) && a.next == NULL &&
               nbr_verbs_wrid_token(a.wr_id) == 3 && nbr_verbs_wrid_covers(a.wr_id) == 1 &&
               nbr_verbs_wrid_last(a.wr_id),
           "fetch-and-add: one signaled WR, operand, result buffer and keys in place");
    tap_ok(nbr_verbs_wr_atomic(&a, &as, IBV_WR_ATOMIC_CMP_AND_SWP, 4, 0x8000, 1, 0x9000, 2, 0,
                               UINT64_C(1) << 63, NULL) == MPI_SUCCESS &&
               a.opcode == IBV_WR_ATOMIC_CMP_AND_SWP && a.wr.atomic.compare_add == 0 &&
               a.wr.atomic.swap == UINT64_C(1) << 63,
           "compare-and-swap: compare and swap values (a lock word's writer bit)");
    memset(&a, 0xa5, sizeof a);
    w.text[0] = 0;
    tap_ok(nbr_verbs_wr_atomic(&a, &as, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 0x8008, 1, 0x9004, 2, 1, 0,
                               &w) == MPI_ERR_RMA_RANGE &&
               strstr(w.text, "8-byte aligned") && a.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD,
           "an unaligned remote control word is refused, WR untouched: %s", w.text);
    tap_ok(nbr_verbs_wr_atomic(&a, &as, IBV_WR_ATOMIC_CMP_AND_SWP, 3, 0x8001, 1, 0x9000, 2, 1, 0,
                               NULL) == MPI_ERR_ARG,
           "an unaligned result buffer is refused");
    tap_ok(nbr_verbs_wr_atomic(&a, &as, IBV_WR_RDMA_WRITE, 3, 0x8000, 1, 0x9000, 2, 1, 0, NULL) ==
               MPI_ERR_ARG,
           "an RDMA write is not an atomic");

    /* hardware-style accumulate (paper 004 §III) */
    tap_ok(nbr_verbs_acc_plan(MPI_SUM, MPI_INT64_T) == NBR_VERBS_ACC_FADD &&
               nbr_verbs_acc_plan(MPI_SUM, MPI_UINT64_T) == NBR_VERBS_ACC_FADD &&
               nbr_verbs_acc_plan(MPI_NO_OP, MPI_DOUBLE) == NBR_VERBS_ACC_FADD,
           "SUM of 64-bit integers and NO_OP: one fetch-and-add");
    tap_ok(nbr_verbs_acc_plan(MPI_SUM, MPI_DOUBLE) == NBR_VERBS_ACC_CAS &&
               nbr_verbs_acc_plan(MPI_MAX, MPI_INT64_T) == NBR_VERBS_ACC_CAS &&
               nbr_verbs_acc_plan(MPI_REPLACE, MPI_UINT64_T) == NBR_VERBS_ACC_CAS &&
               nbr_verbs_acc_plan(MPI_BXOR, MPI_UNSIGNED_LONG_LONG) == NBR_VERBS_ACC_CAS,
           "other 8-byte ops: a compare-and-swap loop");
    tap_ok(nbr_verbs_acc_plan(MPI_SUM, MPI_INT) == NBR_VERBS_ACC_SOFT &&
               nbr_verbs_acc_plan(MPI_BAND, MPI_DOUBLE) == NBR_VERBS_ACC_SOFT &&
               nbr_verbs_acc_plan(MPI_MAXLOC, MPI_INT64_T) == NBR_VERBS_ACC_SOFT,
           "4-byte types, BAND on double, MAXLOC: software");
    double d1 = 1.5, d2 = 2.25, dr;
    uint64_t u1, u2, ur;
    memcpy(&u1, &d1, 8);
    memcpy(&u2, &d2, 8);
    ur = nbr_verbs_acc_apply(MPI_SUM, MPI_DOUBLE, u1, u2);
    memcpy(&dr, &ur, 8);
    tap_ok(dr == 3.75, "CAS-loop value: 1.5 + 2.25 = %g", dr);
    tap_ok(nbr_verbs_acc_apply(MPI_MIN, MPI_INT64_T, (uint64_t)-5, 3) == (uint64_t)-5 &&
               nbr_verbs_acc_apply(MPI_MIN, MPI_UINT64_T, (uint64_t)-5, 3) == 3 &&
               nbr_verbs_acc_apply(MPI_MAX, MPI_INT64_T, (uint64_t)-5, 3) == 3,
           "MIN/MAX respect signedness");
    tap_ok(nbr_verbs_acc_apply(MPI_SUM, MPI_UINT64_T, UINT64_MAX, 2) == 1 &&
               nbr_verbs_acc_apply(MPI_LXOR, MPI_INT64_T, 4, 0) == 1 &&
               nbr_verbs_acc_apply(MPI_REPLACE, MPI_INT64_T, 4, 9) == 9 &&
               nbr_verbs_acc_apply(MPI_NO_OP, MPI_INT64_T, 4, 9) == 4,
           "SUM wraps like the NIC's add; LXOR, REPLACE, NO_OP");
}

static struct ibv_wc wc_of(uint64_t id, enum ibv_wc_status st)
{
    struct ibv_wc w;
    memset(&w, 0, sizeof w);
    w.wr_id = id;
    w.status = st;
    w.vendor_err = st == IBV_WC_SUCCESS ? 0 : 0x81;
    return w;
}

static void test_acct(void)
{
    nbr_verbs_credit_t fresh = {.depth = 8};
    tap_ok(!nbr_verbs_credit_reserve(&fresh, 9) && fresh.outstanding == 0,
           "more WRs than the send queue holds never fit");
    nbr_verbs_credit_t peer[3] = {{.depth = 8}, {.depth = 8}, {.depth = 8}};
    tap_ok(nbr_verbs_credit_reserve(&peer[1], 5) && !nbr_verbs_credit_reserve(&peer[1], 4) &&
               peer[1].outstanding == 5 && nbr_verbs_credit_reserve(&peer[1], 3) &&
               !nbr_verbs_credit_reserve(&peer[1], 1) && peer[1].outstanding == 8,
           "credits: 5 + 3 fit a depth of 8, then nothing (the caller polls)");
    peer[1].outstanding = 0;

    nbr_verbs_op_t op[4] = {{.peer = 2}, {.peer = 2}, {.peer = 0}, {.peer = 1}};
    nbr_verbs_acct_t a = {.peer = peer, .npeers = 3, .op = op, .nops = 4};
    /* token 1: 7 WRs (7 * 100 bytes at 100 per WR) toward peer 2, signaled every 3rd */
    nbr_verbs_wr_cfg_t cfg = {.max_msg = 100, .max_sge = 1, .signal_every = 3};
    struct ibv_sge seg = {0x1000, 700, 1};
    nbr_verbs_xfer_t x;
    nbr_verbs_xfer_init(&x, &cfg, IBV_WR_RDMA_WRITE, 1, &seg, 1, 0x2000, 2, NULL);
    struct ibv_send_wr wr[8];
    struct ibv_sge sge[8];
    int k = nbr_verbs_xfer_next(&x, wr, 8, sge);
    op[1].wrs = (uint64_t)k;
    tap_ok(k == 7 && nbr_verbs_credit_reserve(&peer[2], 7), "7 WRs reserved toward peer 2");
    /* the CQ: only signaled WRs complete (indices 2, 5, 6) */
    struct ibv_wc cq[3];
    int n = 0;
    for (int i = 0; i < k; i++)
        if (wr[i].send_flags & IBV_SEND_SIGNALED)
            cq[n++] = wc_of(wr[i].wr_id, IBV_WC_SUCCESS);
    tap_ok(n == 3, "3 of 7 WRs are signaled");
    nbr_verbs_why_t w = {""};
    tap_ok(nbr_verbs_acct_consume(&a, cq, 1, &w) == MPI_SUCCESS && op[1].retired == 3 &&
               !op[1].done && peer[2].outstanding == 4,
           "first completion retires 3 WRs, the token is not done");
    tap_ok(nbr_verbs_acct_consume(&a, cq + 1, 2, &w) == MPI_SUCCESS && op[1].retired == 7 &&
               op[1].done && op[1].err == MPI_SUCCESS && peer[2].outstanding == 0 &&
               peer[2].retired == 7 && !peer[2].failed,
           "the other two retire the rest: token done, credits all back");

    /* token 2: a fetch-and-add toward peer 0 refused by the target's key */
    struct ibv_send_wr at;
    struct ibv_sge as;
    nbr_verbs_wr_atomic(&at, &as, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 0x8000, 1, 0x9000, 2, 1, 0, NULL);
    op[2].wrs = 1;
    nbr_verbs_credit_reserve(&peer[0], 1);
    struct ibv_wc bad = wc_of(at.wr_id, IBV_WC_REM_ACCESS_ERR);
    w.text[0] = 0;
    int rc = nbr_verbs_acct_consume(&a, &bad, 1, &w);
    tap_ok(rc == MPI_ERR_RMA_RANGE && op[2].err == MPI_ERR_RMA_RANGE && op[2].done &&
               peer[0].failed && peer[0].outstanding == 0 && !peer[2].failed,
           "a remote access error: MPI_ERR_RMA_RANGE on the token, peer 0 marked failed (%d)", rc);
    tap_ok(strstr(w.text, "rank 0") &&
               strstr(w.text, nbr_verbs_status_str(IBV_WC_REM_ACCESS_ERR)) &&
               strstr(w.text, "0x81"),
           "the message names the peer, ibv_wc_status_str and the vendor error: %s", w.text);
    tap_ok(nbr_verbs_status_class(IBV_WC_SUCCESS) == MPI_SUCCESS &&
               nbr_verbs_status_class(IBV_WC_RETRY_EXC_ERR) == MPI_ERR_OTHER &&
               nbr_verbs_status_class(IBV_WC_WR_FLUSH_ERR) == MPI_ERR_OTHER &&
               nbr_verbs_status_class(IBV_WC_LOC_PROT_ERR) == MPI_ERR_INTERN,
           "status classes: retries exhausted and flushed -> MPI_ERR_OTHER, local protection -> "
           "MPI_ERR_INTERN");
    tap_ok(strlen(nbr_verbs_status_str(IBV_WC_RETRY_EXC_ERR)) > 0, "status string: %s",
           nbr_verbs_status_str(IBV_WC_RETRY_EXC_ERR));

    /* an unknown token in a batch does not stop the rest from being counted */
    op[3].wrs = 1;
    nbr_verbs_credit_reserve(&peer[1], 1);
    struct ibv_wc mix[2] = {wc_of(nbr_verbs_wrid(9, 1, 1, 0), IBV_WC_SUCCESS),
                            wc_of(nbr_verbs_wrid(3, 1, 1, 0), IBV_WC_SUCCESS)};
    w.text[0] = 0;
    rc = nbr_verbs_acct_consume(&a, mix, 2, &w);
    tap_ok(rc == MPI_ERR_INTERN && strstr(w.text, "token 9") && op[3].done &&
               peer[1].outstanding == 0,
           "a completion for an unknown token: MPI_ERR_INTERN, the next one still counted (%s)",
           w.text);
    /* more retired than posted */
    struct ibv_wc over = wc_of(nbr_verbs_wrid(3, 1, 1, 0), IBV_WC_SUCCESS);
    tap_ok(nbr_verbs_acct_consume(&a, &over, 1, NULL) == MPI_ERR_INTERN && op[3].retired == 1,
           "a completion beyond what was posted is an accounting error, not an underflow");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
        char why[256];
        int r = nbr_verbs_probe(why, sizeof why);
        if (r && !NBR_VERBS_WIRED) { /* a device, but windows cannot use it yet */
            printf("an RDMA device is here, but libnbrma's verbs data path is not wired into "
                   "the transport seam yet (issue 10)\n");
            return 1;
        }
        printf("%s\n", why);
        return r ? 0 : 1;
    }
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    test_probe();
    test_conn();
    test_regtab();
    test_keys();
    test_wr();
    test_acct();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
