/* test_opts.c — the shared option parser: defaults, accepted forms, and that every kind of bad
 * input is refused with a message naming the option (the binaries turn that into exit 2). */
#include <string.h>

#include "opts.h"
#include "tap.h"

static nbh_opts_t o;
static char err[512];

/* Parse a NULL-terminated list of arguments with every common option enabled unless `uses`. */
static int parse_with(unsigned uses, const nbh_extra_opt_t *extra, const char *const *args)
{
    char *argv[32] = {"prog"};
    int argc = 1;
    while (*args && argc < 31)
        argv[argc++] = (char *)*args++;
    err[0] = '\0';
    nbh_opts_defaults(&o, 1000);
    return nbh_opts_parse(&o, argc, argv, uses, extra, err, sizeof err);
}
#define ALL        (NBH_USE_SIZES | NBH_USE_DELAY | NBH_USE_WINDOW | NBH_USE_FLAGS)
#define PARSE(...) parse_with(ALL, NULL, (const char *const[]){__VA_ARGS__, NULL})

static int err_has(const char *needle)
{
    return strstr(err, needle) != NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);

    tap_is_long(parse_with(ALL, NULL, (const char *const[]){NULL}), 0, "no options parse");
    tap_ok(o.series == 7 && o.iters == 1000 && o.reps == 1 && o.delay_us == 1000.0 &&
               o.window == NBH_WIN_ALLOCATE && !o.quick && !o.out,
           "defaults: all series, 1000 iters, 1 rep, D = 1000 us, allocated window");

    tap_is_long(PARSE("--sizes", "1:4M"), 0, "--sizes 1:4M parses");
    tap_ok(o.nsizes == 23 && o.sizes[0] == 1 && o.sizes[22] == 4u << 20,
           "1:4M expands to the 23 powers of two from 1 B to 4 MiB");
    tap_is_long(PARSE("--sizes=8,64K,1KiB:16KB:x4,2G"), 0, "--sizes=list with units and a factor");
    tap_ok(o.nsizes == 6 && o.sizes[0] == 8 && o.sizes[1] == 65536 && o.sizes[2] == 1024 &&
               o.sizes[3] == 4096 && o.sizes[4] == 16384 && o.sizes[5] == (size_t)2 << 30,
           "list items: 8, 64K, then 1K 4K 16K from the range, then 2G");
    tap_is_long(PARSE("--sizes", "12Q"), 2, "--sizes 12Q is refused");
    tap_ok(err_has("--sizes") && err_has("12Q"), "the message names --sizes and '12Q': %s", err);
    tap_is_long(PARSE("--sizes", "4M:1"), 2, "a backwards range is refused");
    tap_is_long(PARSE("--sizes", "8,"), 2, "a trailing comma is refused");
    tap_is_long(PARSE("--sizes", "0"), 2, "size 0 is refused");

    tap_is_long(PARSE("--bogus"), 2, "unknown option is refused");
    tap_ok(err_has("--bogus"), "the message names it: %s", err);
    tap_is_long(PARSE("stray"), 2, "a bare word is refused");
    tap_is_long(PARSE("--iters"), 2, "a missing value is refused");
    tap_ok(err_has("--iters") && err_has("value"), "the message says what is missing: %s", err);
    tap_is_long(PARSE("--iters", "-3"), 2, "--iters -3 is refused");
    tap_is_long(PARSE("--iters", "10x"), 2, "--iters 10x is refused");
    tap_is_long(PARSE("--reps", "0"), 2, "--reps 0 is refused");
    tap_is_long(PARSE("--delay-us", "abc"), 2, "--delay-us abc is refused");
    tap_is_long(PARSE("--window", "shared"), 2, "--window shared is refused");
    tap_ok(err_has("create, allocate, dynamic"), "the message lists the flavors: %s", err);
    tap_is_long(PARSE("--quick=yes"), 2, "--quick takes no value");

    tap_is_long(PARSE("--window", "dynamic", "--delay-us=250", "--iters=5", "--reps", "3"), 0,
                "both --opt value and --opt=value forms parse");
    tap_ok(o.window == NBH_WIN_DYNAMIC && o.delay_us == 250.0 && o.iters == 5 && o.reps == 3,
           "their values arrive");

    tap_is_long(PARSE("--impl", "ref", "--sync", "nonblocking"), 0,
                "--impl ref --sync nonblocking");
    tap_is_long((long)o.series, 1L << NBH_REF_NB, "selects ref-nb alone");
    tap_is_long(PARSE("--sync", "nonblocking"), 0, "--sync nonblocking (the teaching-lab form)");
    tap_is_long((long)o.series, 1L << NBH_REF_NB, "selects ref-nb alone");
    tap_is_long(PARSE("--sync", "blocking"), 0, "--sync blocking");
    tap_is_long((long)o.series, (1L << NBH_VENDOR) | (1L << NBH_REF),
                "selects the blocking series, vendor and ref");
    tap_is_long(PARSE("--impl", "vendor"), 0, "--impl vendor");
    tap_is_long((long)o.series, 1L << NBH_VENDOR, "selects vendor alone");
    tap_is_long(PARSE("--impl", "vendor", "--sync", "nonblocking"), 2,
                "vendor with nonblocking synchronization is refused (no such series)");
    tap_is_long(PARSE("--series", "vendor,ref-nb"), 0, "--series vendor,ref-nb");
    tap_is_long((long)o.series, (1L << NBH_VENDOR) | (1L << NBH_REF_NB), "selects those two");
    tap_is_long(PARSE("--series", "vendor,mpi"), 2, "an unknown series is refused");
    tap_ok(err_has("'mpi'"), "the message names it: %s", err);

    tap_is_long(PARSE("--flags", "a_a_a_r,e_a_a_r"), 0, "--flags a_a_a_r,e_a_a_r");
    tap_is_long((long)o.flags, NBH_FLAG_A_A_A_R | NBH_FLAG_E_A_A_R, "sets those two flags");
    tap_is_long(PARSE("--flags", "a_a_x_r"), 2, "an unknown flag is refused");
    tap_is_long(PARSE("--flags", "a_a_a_r", "--series", "vendor"), 2,
                "flags without the ref-nb series are refused");

    tap_is_long(parse_with(NBH_USE_WINDOW, NULL, (const char *const[]){"--delay-us", "5", NULL}), 2,
                "an option the experiment does not use is refused");
    tap_ok(err_has("does not apply"), "and says so: %s", err);

    long batch = 1000;
    const nbh_extra_opt_t extra[] = {{"batch", "puts per sample", &batch, 1, 100}, {0, 0, 0, 0, 0}};
    tap_is_long(parse_with(0, extra, (const char *const[]){"--batch", "64", NULL}), 0,
                "an experiment's own option parses");
    tap_is_long(batch, 64, "and its value arrives");
    tap_is_long(parse_with(0, extra, (const char *const[]){"--batch", "1000", NULL}), 2,
                "out of its range it is refused");
    tap_ok(err_has("1..100"), "the message gives the range: %s", err);

    tap_is_long(PARSE("--help", "--quick", "--out", "x.json"), 0, "--help, --quick, --out parse");
    tap_ok(o.help && o.quick && o.out && !strcmp(o.out, "x.json"), "and are recorded");

    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
