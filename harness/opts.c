/* opts.c — parsing of the options shared by all benchmarks (see opts.h). Every error names the
 * option and the offending text, and says what would be accepted. */
#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const series_names[NBH_NSERIES] = {"vendor", "ref", "ref-nb"};
static const char *const flavor_names[] = {"allocate", "create", "dynamic", "allocmem"};
static const char *const flag_names[] = {"a_a_a_r", "a_a_e_r", "e_a_e_r", "e_a_a_r"};

const char *nbh_series_name(nbh_series_t s)
{
    return (unsigned)s < NBH_NSERIES ? series_names[s] : "?";
}

const char *nbh_win_flavor_name(nbh_win_flavor_t w)
{
    return (unsigned)w < 4 ? flavor_names[w] : "?";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
}

void nbh_opts_defaults(nbh_opts_t *o, long default_iters)
{
    memset(o, 0, sizeof *o);
    o->series = (1u << NBH_NSERIES) - 1;
    o->delay_us = 1000.0;
    o->iters = default_iters;
    o->reps = 1;
    o->warmup = 10;
    o->window = NBH_WIN_ALLOCATE;
}

/* One size: digits with an optional K/M/G suffix (binary multiples; "KiB", "KB", "B" accepted). */
static int parse_one_size(const char *s, size_t len, size_t *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!isdigit((unsigned char)buf[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno)
        return -1;
    unsigned long long mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mult = 1ull << 10;
        end++;
        break;
    case 'M':
        mult = 1ull << 20;
        end++;
        break;
    case 'G':
        mult = 1ull << 30;
        end++;
        break;
    default:
        break;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v == 0 || v > (SIZE_MAX >> 1) / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

int nbh_parse_sizes(const char *spec, size_t *out, int max, char *err, size_t errlen)
{
    int n = 0;
    const char *p = spec;
    if (*p == '\0') {
        snprintf(err, errlen, "--sizes: empty list (use e.g. 8, 64K, 4M or 1:4M)");
        return -1;
    }
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *item = p;
        /* A range a:b[:xF] */
        const char *c1 = memchr(item, ':', len);
        size_t lo, hi, factor = 2;
        if (c1) {
            const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - item));
            size_t hilen = (size_t)((c2 ? c2 : item + len) - (c1 + 1));
            if (parse_one_size(item, (size_t)(c1 - item), &lo) ||
                parse_one_size(c1 + 1, hilen, &hi)) {
                snprintf(err, errlen, "--sizes: '%.*s' is not a range (use e.g. 1:4M or 1K:1M:x4)",
                         (int)len, item);
                return -1;
            }
            if (c2) {
                const char *f = c2 + 1;
                size_t flen = len - (size_t)(f - item);
                char fb[16];
                if (flen < 2 || flen >= sizeof fb || (*f != 'x' && *f != 'X')) {
                    snprintf(err, errlen, "--sizes: '%.*s': the step must be written xF, e.g. x4",
                             (int)len, item);
                    return -1;
                }
                memcpy(fb, f + 1, flen - 1);
                fb[flen - 1] = '\0';
                char *end;
                long fv = strtol(fb, &end, 10);
                if (*end || fv < 2 || fv > 1024) {
                    snprintf(err, errlen, "--sizes: '%.*s': the factor must be 2..1024", (int)len,
                             item);
                    return -1;
                }
                factor = (size_t)fv;
            }
            if (lo > hi) {
                snprintf(err, errlen, "--sizes: '%.*s': the range runs backwards", (int)len, item);
                return -1;
            }
            for (size_t v = lo; v <= hi; v *= factor) {
                if (n == max) {
                    snprintf(err, errlen, "--sizes: more than %d sizes", max);
                    return -1;
                }
                out[n++] = v;
                if (v > SIZE_MAX / factor)
                    break;
            }
        } else {
            if (parse_one_size(item, len, &lo)) {
                snprintf(err, errlen, "--sizes: '%.*s' is not a size (use e.g. 8, 64K, 4M or 1:4M)",
                         (int)len, item);
                return -1;
            }
            if (n == max) {
                snprintf(err, errlen, "--sizes: more than %d sizes", max);
                return -1;
            }
            out[n++] = lo;
        }
        p += len;
        if (*p == ',') {
            p++;
            if (*p == '\0') {
                snprintf(err, errlen, "--sizes: trailing comma in '%s'", spec);
                return -1;
            }
        }
    }
    return n;
}

static int parse_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *v = x;
    return 0;
}

/* Split a comma list and match each item against names[]; returns a bitmask or -1. */
static long parse_name_list(const char *s, const char *const *names, int nnames, const char **bad,
                            size_t *badlen)
{
    long mask = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        int hit = -1;
        for (int i = 0; i < nnames; i++)
            if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
                hit = i;
        if (hit < 0 || len == 0) {
            *bad = s;
            *badlen = len;
            return -1;
        }
        mask |= 1L << hit;
        s += len;
        if (*s == ',')
            s++;
    }
    return mask;
}

int nbh_opts_parse(nbh_opts_t *o, int argc, char **argv, unsigned uses,
                   const nbh_extra_opt_t *extra, char *err, size_t errlen)
{
    int impl = -1, sync = -1; /* --impl / --sync filters over --series */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0)
            return fail(err, errlen, "unexpected argument '%s' (options start with --; see --help)",
                        a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        char key[48];
        if (nlen >= sizeof key)
            return fail(err, errlen, "unknown option '%s' (see --help)", a);
        memcpy(key, name, nlen);
        key[nlen] = '\0';

        if (!strcmp(key, "help")) {
            o->help = 1;
            continue;
        }
        if (!strcmp(key, "quick")) {
            if (eq)
                return fail(err, errlen, "--quick takes no value");
            o->quick = 1;
            continue;
        }
        /* Every other option takes a value: --opt=value or --opt value. */
        const char *val;
        if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            val = NULL;
        }

        const nbh_extra_opt_t *x = NULL;
        for (const nbh_extra_opt_t *e = extra; e && e->name; e++)
            if (!strcmp(e->name, key))
                x = e;
        static const char *const known[] = {"series", "impl",     "sync",  "flags",
                                            "sizes",  "delay-us", "iters", "reps",
                                            "warmup", "window",   "out"};
        int is_known = 0;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            if (!strcmp(known[k], key))
                is_known = 1;
        if (!is_known && !x)
            return fail(err, errlen, "unknown option '--%s' (see --help)", key);
        if (!val)
            return fail(err, errlen, "option '--%s' needs a value", key);

        const char *bad;
        size_t badlen;
        long v;
        if (x) {
            if (parse_long(val, &v) || v < x->min || v > x->max)
                return fail(err, errlen, "--%s: '%s' is not an integer in %ld..%ld", key, val,
                            x->min, x->max);
            *x->value = v;
        } else if (!strcmp(key, "series")) {
            long m = parse_name_list(val, series_names, NBH_NSERIES, &bad, &badlen);
            if (m <= 0)
                return fail(err, errlen, "--series: '%.*s' is not a series (vendor, ref, ref-nb)",
                            m < 0 ? (int)badlen : (int)strlen(val), m < 0 ? bad : val);
            o->series = (unsigned)m;
        } else if (!strcmp(key, "impl")) {
            if (!strcmp(val, "vendor"))
                impl = 0;
            else if (!strcmp(val, "ref"))
                impl = 1;
            else
                return fail(err, errlen, "--impl: '%s' is not vendor or ref", val);
        } else if (!strcmp(key, "sync")) {
            if (!strcmp(val, "blocking"))
                sync = 0;
            else if (!strcmp(val, "nonblocking"))
                sync = 1;
            else
                return fail(err, errlen, "--sync: '%s' is not blocking or nonblocking", val);
        } else if (!strcmp(key, "flags")) {
            if (!(uses & NBH_USE_FLAGS))
                return fail(err, errlen, "--flags does not apply to this experiment");
            long m = parse_name_list(val, flag_names, 4, &bad, &badlen);
            if (m < 0)
                return fail(
                    err, errlen,
                    "--flags: '%.*s' is not a reorder flag (a_a_a_r, a_a_e_r, e_a_e_r, e_a_a_r)",
                    (int)badlen, bad);
            o->flags = (unsigned)m;
            o->given |= NBH_USE_FLAGS;
        } else if (!strcmp(key, "sizes")) {
            if (!(uses & NBH_USE_SIZES))
                return fail(err, errlen, "--sizes does not apply to this experiment");
            int n = nbh_parse_sizes(val, o->sizes, NBH_MAX_SIZES, err, errlen);
            if (n < 0)
                return 2;
            o->nsizes = n;
            o->given |= NBH_USE_SIZES;
        } else if (!strcmp(key, "delay-us")) {
            if (!(uses & NBH_USE_DELAY))
                return fail(err, errlen, "--delay-us does not apply to this experiment");
            char *end;
            errno = 0;
            double d = strtod(val, &end);
            if (errno || end == val || *end || d < 0 || d > 60e6)
                return fail(err, errlen,
                            "--delay-us: '%s' is not a delay in microseconds (0..60000000)", val);
            o->delay_us = d;
            o->given |= NBH_USE_DELAY;
        } else if (!strcmp(key, "iters")) {
            if (parse_long(val, &v) || v < 0 || v > 100000000)
                return fail(err, errlen, "--iters: '%s' is not a sample count (0 = automatic)",
                            val);
            o->iters = v;
        } else if (!strcmp(key, "reps")) {
            if (parse_long(val, &v) || v < 1 || v > 1000)
                return fail(err, errlen, "--reps: '%s' is not a repetition count (1..1000)", val);
            o->reps = (int)v;
        } else if (!strcmp(key, "warmup")) {
            if (parse_long(val, &v) || v < 0 || v > 1000000)
                return fail(err, errlen, "--warmup: '%s' is not an iteration count (0..1000000)",
                            val);
            o->warmup = (int)v;
        } else if (!strcmp(key, "window")) {
            if (!(uses & NBH_USE_WINDOW))
                return fail(err, errlen, "--window does not apply to this experiment");
            long m = parse_name_list(val, flavor_names, 4, &bad, &badlen);
            if (m <= 0 || (m & (m - 1)))
                return fail(err, errlen,
                            "--window: '%s' is not one of create, allocate, dynamic, allocmem",
                            val);
            o->window = (nbh_win_flavor_t)__builtin_ctzl((unsigned long)m);
            o->given |= NBH_USE_WINDOW;
        } else if (!strcmp(key, "out")) {
            if (*val == '\0')
                return fail(err, errlen, "--out: empty file name");
            o->out = val;
        }
    }
    /* --impl/--sync narrow the series set: impl ref + sync nonblocking = ref-nb, etc. */
    if (impl >= 0 || sync >= 0) {
        unsigned keep = 0;
        for (int s = 0; s < NBH_NSERIES; s++) {
            int s_impl = s == NBH_VENDOR ? 0 : 1, s_sync = s == NBH_REF_NB ? 1 : 0;
            if ((impl < 0 || impl == s_impl) && (sync < 0 || sync == s_sync))
                keep |= 1u << s;
        }
        o->series &= keep;
        if (!o->series)
            return fail(err, errlen,
                        "--impl/--sync/--series select no series (vendor has only "
                        "blocking synchronization)");
    }
    if (o->flags && !(o->series & (1u << NBH_REF_NB)))
        return fail(err, errlen, "--flags apply to the ref-nb series only, which is not selected");
    return 0;
}

void nbh_opts_usage(FILE *f, const char *prog, unsigned uses, const nbh_extra_opt_t *extra)
{
    fprintf(f, "usage: mpiexec -n N %s [options] [--benchmark_* flags]\n\n", prog);
    fprintf(
        f,
        "Options:\n"
        "  --series LIST          series to run, comma separated: vendor, ref, ref-nb (default:\n"
        "                         all; a series this binary cannot run is skipped with a message)\n"
        "  --impl vendor|ref      keep only series of this implementation\n"
        "  --sync blocking|nonblocking  keep only series with this synchronization\n"
        "  --iters N              samples per benchmark (0: Google Benchmark decides)\n"
        "  --reps N               repetitions of each benchmark (median reported)\n"
        "  --warmup N             untimed iterations before sampling (default 10)\n"
        "  --quick                smoke run: few samples, few sizes\n"
        "  --out FILE             write Google Benchmark JSON to FILE (rank 0)\n"
        "  --help                 this text\n");
    if (uses & NBH_USE_SIZES)
        fprintf(
            f,
            "  --sizes LIST           message sizes in bytes: 8, 64K, 4M, ranges 1:4M (powers of\n"
            "                         two) or 1K:1M:x4, comma separated\n");
    if (uses & NBH_USE_DELAY)
        fprintf(f, "  --delay-us D           injected delay D in microseconds (calibrated work)\n");
    if (uses & NBH_USE_WINDOW)
        fprintf(f, "  --window create|allocate|dynamic|allocmem  window flavor (default allocate;\n"
                   "                         allocmem: MPI_Win_create over MPI_Alloc_mem memory)\n");
    if (uses & NBH_USE_FLAGS)
        fprintf(f, "  --flags LIST           reorder flags for ref-nb: a_a_a_r, a_a_e_r, e_a_e_r, "
                   "e_a_a_r\n");
    for (const nbh_extra_opt_t *e = extra; e && e->name; e++)
        fprintf(f, "  --%-20s %s (default %ld)\n", e->name, e->help, *e->value);
    fputc('\n', f);
}
