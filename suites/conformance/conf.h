/* conf.h — helpers shared by the conformance programs (static inline: every .c file in this
 * directory is its own program, so there is no conf.c).
 *
 * Data is deterministic: conf_val(salt, rank, i) = salt*100000 + rank*1000 + i, so a wrong value
 * in a diagnostic says where it came from (102017 = salt 1, rank 2, element 17). The array checks
 * report the first differing element and how many differ, e.g.
 *   "element 17 of rank 2's window holds 102016, expected 102017 (3 of 64 elements differ)". */
#ifndef NBRMA_CONF_H
#define NBRMA_CONF_H

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "timing.h"

static int conf_rank, conf_size;

/* MPI_Init + TAP on MPI_COMM_WORLD. With fewer than min_procs ranks the whole program is
 * skipped ("1..0 # SKIP"). */
static inline void conf_init(int *argc, char ***argv, int min_procs)
{
    MPI_Init(argc, argv);
    tap_init(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &conf_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &conf_size);
    if (conf_size < min_procs) {
        if (conf_rank == 0)
            printf("1..0 # SKIP needs at least %d ranks, running on %d\n", min_procs, conf_size);
        MPI_Finalize();
        exit(0);
    }
}

/* The threaded programs' start: MPI_Init_thread(MPI_THREAD_MULTIPLE) + TAP, and their one option
 * "--iters N" (returned; `iters` when absent). A bad option exits 2 with a message naming it;
 * without MPI_THREAD_MULTIPLE or with fewer than 2 ranks the program is skipped (exit 0). */
static inline int conf_init_threads(int *argc, char ***argv, const char *prog, int iters)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    tap_init(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &conf_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &conf_size);
    for (int i = 1; i < *argc; i++) {
        if (!strcmp((*argv)[i], "--iters") && i + 1 < *argc && atoi((*argv)[i + 1]) > 0) {
            iters = atoi((*argv)[++i]);
        } else {
            if (conf_rank == 0)
                fprintf(stderr, "%s: unknown option '%s' (--iters N)\n", prog, (*argv)[i]);
            MPI_Finalize();
            exit(2);
        }
    }
    if (provided < MPI_THREAD_MULTIPLE || conf_size < 2) {
        if (conf_rank == 0)
            printf("1..0 # SKIP needs MPI_THREAD_MULTIPLE (provided %d) and 2 ranks\n",
                   provided);
        MPI_Finalize();
        exit(0);
    }
    return iters;
}

/* Runs fn on n threads, thread i with &args[i * size], and joins them. */
static inline void conf_run_threads(void *(*fn)(void *), void *args, size_t size, int n)
{
    pthread_t th[64];
    if (n > 64)
        tap_bail_out("conf_run_threads: %d threads, at most 64", n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, fn, (char *)args + (size_t)i * size) != 0)
            tap_bail_out("pthread_create failed");
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

/* tap_done + MPI_Finalize; main returns this. */
static inline int conf_done(void)
{
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}

static inline long conf_val(int salt, int rank, int i)
{
    return salt * 100000L + rank * 1000L + i;
}

static inline int conf_right(void)
{
    return (conf_rank + 1) % conf_size;
}

static inline int conf_left(void)
{
    return (conf_rank + conf_size - 1) % conf_size;
}

/* Array comparisons: 1 if equal; otherwise queue a diagnostic naming the first differing
 * element of `where` (printf format) and return 0. Use as tap_ok(conf_check_int(...), "..."). */
#define CONF_DEFINE_CHECK(suffix, T, PRI, CAST)                                                    \
    __attribute__((format(printf, 4, 5))) static inline int conf_check_##suffix(                   \
        const T *got, const T *exp, int n, const char *where, ...)                                 \
    {                                                                                              \
        int bad = 0, first = -1;                                                                   \
        for (int i = 0; i < n; i++)                                                                \
            if (!(got[i] == exp[i])) {                                                             \
                if (first < 0)                                                                     \
                    first = i;                                                                     \
                bad++;                                                                             \
            }                                                                                      \
        if (bad) {                                                                                 \
            char w[256];                                                                           \
            va_list ap;                                                                            \
            va_start(ap, where);                                                                   \
            vsnprintf(w, sizeof w, where, ap);                                                     \
            va_end(ap);                                                                            \
            tap_diag("element %d of %s holds " PRI ", expected " PRI                               \
                     " (%d of %d elements differ)",                                                \
                     first, w, (CAST)got[first], (CAST)exp[first], bad, n);                        \
        }                                                                                          \
        return bad == 0;                                                                           \
    }

CONF_DEFINE_CHECK(int, int, "%d", int)
CONF_DEFINE_CHECK(long, long, "%ld", long)
CONF_DEFINE_CHECK(i64, int64_t, "%lld", long long)
CONF_DEFINE_CHECK(double, double, "%.17g", double)

/* Fill helpers with the conf_val pattern. */
static inline void conf_fill_int(int *a, int n, int salt, int rank)
{
    for (int i = 0; i < n; i++)
        a[i] = (int)conf_val(salt, rank, i);
}

static inline void conf_fill_long(long *a, int n, int salt, int rank)
{
    for (int i = 0; i < n; i++)
        a[i] = conf_val(salt, rank, i);
}

static inline void conf_fill_double(double *a, int n, int salt, int rank)
{
    for (int i = 0; i < n; i++)
        a[i] = (double)conf_val(salt, rank, i) + 0.25;
}

/* Printable name of an MPI error class (the ones RMA tests meet). */
static inline const char *conf_class_name(int cls)
{
#define C_(x)                                                                                      \
    {                                                                                              \
        x, #x                                                                                      \
    }
    static const struct {
        int cls;
        const char *name;
    } names[] = {
        C_(MPI_SUCCESS),        C_(MPI_ERR_BUFFER),       C_(MPI_ERR_COUNT),
        C_(MPI_ERR_TYPE),       C_(MPI_ERR_TAG),          C_(MPI_ERR_COMM),
        C_(MPI_ERR_RANK),       C_(MPI_ERR_REQUEST),      C_(MPI_ERR_ROOT),
        C_(MPI_ERR_GROUP),      C_(MPI_ERR_OP),           C_(MPI_ERR_TOPOLOGY),
        C_(MPI_ERR_DIMS),       C_(MPI_ERR_ARG),          C_(MPI_ERR_UNKNOWN),
        C_(MPI_ERR_TRUNCATE),   C_(MPI_ERR_OTHER),        C_(MPI_ERR_INTERN),
        C_(MPI_ERR_IN_STATUS),  C_(MPI_ERR_PENDING),      C_(MPI_ERR_INFO_KEY),
        C_(MPI_ERR_INFO_VALUE), C_(MPI_ERR_INFO),         C_(MPI_ERR_NO_MEM),
        C_(MPI_ERR_BASE),       C_(MPI_ERR_KEYVAL),       C_(MPI_ERR_WIN),
        C_(MPI_ERR_SIZE),       C_(MPI_ERR_DISP),         C_(MPI_ERR_LOCKTYPE),
        C_(MPI_ERR_ASSERT),     C_(MPI_ERR_RMA_CONFLICT), C_(MPI_ERR_RMA_SYNC),
        C_(MPI_ERR_RMA_RANGE),  C_(MPI_ERR_RMA_ATTACH),   C_(MPI_ERR_RMA_SHARED),
        C_(MPI_ERR_RMA_FLAVOR),
    };
#undef C_
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == cls)
            return names[i].name;
    return "(another class)";
}

/* "MPI_ERR_RANK (vendor text)" for a return code, into buf. */
static inline const char *conf_describe_rc(int rc, char *buf, size_t len)
{
    int cls = MPI_ERR_UNKNOWN, slen = 0;
    char s[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, s, &slen);
        char *stack = strstr(s, ", error stack"); /* MPICH appends its call stack */
        if (stack)
            *stack = '\0';
    }
    snprintf(buf, len, "%s (class %d)%s%.200s", conf_class_name(cls), cls, slen ? ": " : "", s);
    for (char *p = buf; *p; p++) /* MPICH's error stacks span lines; TAP diagnostics cannot */
        if (*p == '\n')
            *p = ' ';
    return buf;
}

static inline int conf_class(int rc)
{
    int cls = MPI_ERR_UNKNOWN;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* The ranks sharing memory with this one (for MPI_Win_allocate_shared). */
static inline MPI_Comm conf_shm_comm(void)
{
    MPI_Comm c;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    return c;
}

/* ---- windows where a program needs "a window of n bytes" (docs/conformance.md) -------------
 *
 * CONF_WINDOW (environment) selects what conf_win_allocate makes, so that one program runs the
 * whole conformance list over every kind of window memory without a copy per kind:
 *   allocate (default)  MPI_Win_allocate, as the program would call it;
 *   allocmem            MPI_Alloc_mem + MPI_Win_create: a create window over the memory MPI-3.1
 *                       §8.2 says RMA may be fast on (libnbrma maps it for node peers, issue 24);
 *   malloc              malloc + MPI_Win_create (private memory, reached with CMA by libnbrma).
 * Programs that test MPI_Win_allocate itself (its flavor, MPI_Win_shared_query, load/store of a
 * peer's memory) call it directly. conf_win_free frees the window, then the memory the helper
 * made. An unknown CONF_WINDOW stops the program (exit 2) rather than test something else. */
enum { CONF_WIN_ALLOCATE, CONF_WIN_ALLOCMEM, CONF_WIN_MALLOC };

static inline int conf_window_kind(void)
{
    static int kind = -1;
    if (kind < 0) {
        const char *v = getenv("CONF_WINDOW");
        if (!v || !*v || !strcmp(v, "allocate"))
            kind = CONF_WIN_ALLOCATE;
        else if (!strcmp(v, "allocmem"))
            kind = CONF_WIN_ALLOCMEM;
        else if (!strcmp(v, "malloc"))
            kind = CONF_WIN_MALLOC;
        else {
            fprintf(stderr, "CONF_WINDOW=%s: use allocate, allocmem or malloc\n", v);
            exit(2);
        }
    }
    return kind;
}

/* What conf_win_allocate makes, for test descriptions. */
static inline const char *conf_window_name(void)
{
    static const char *const names[] = {"MPI_Win_allocate", "MPI_Win_create over MPI_Alloc_mem",
                                        "MPI_Win_create over malloc"};
    return names[conf_window_kind()];
}

/* Memory the helper made, by window (several threads may create windows at once). */
static pthread_mutex_t conf_win_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    MPI_Win win;
    void *mem;
    int kind;
} conf_win_mem[256];

/* MPI_Win_allocate's signature and meaning (memory of `size` bytes, its address in *baseptr). */
static inline int conf_win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    int kind = conf_window_kind(), rc;
    if (kind == CONF_WIN_ALLOCATE)
        return MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    void *mem = NULL;
    if (kind == CONF_WIN_ALLOCMEM)
        rc = MPI_Alloc_mem(size, MPI_INFO_NULL, &mem);
    else
        rc = (mem = malloc(size > 0 ? (size_t)size : 1)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS)
        return rc;
    if (size > 0) /* zero-filled, as MPI_Win_allocate's fresh memory is on both MPIs here */
        memset(mem, 0, (size_t)size);
    rc = MPI_Win_create(mem, size, disp_unit, info, comm, win);
    if (rc == MPI_SUCCESS) {
        int slot = -1;
        pthread_mutex_lock(&conf_win_mu);
        for (int i = 0; i < 256 && slot < 0; i++)
            if (!conf_win_mem[i].mem) {
                slot = i;
                conf_win_mem[i].win = *win;
                conf_win_mem[i].mem = mem;
                conf_win_mem[i].kind = kind;
            }
        pthread_mutex_unlock(&conf_win_mu);
        if (slot < 0) {
            fprintf(stderr, "conf_win_allocate: more than 256 live windows\n");
            exit(2);
        }
        *(void **)baseptr = mem;
    } else if (kind == CONF_WIN_ALLOCMEM) {
        MPI_Free_mem(mem);
    } else {
        free(mem);
    }
    return rc;
}

/* MPI_Win_free, then the memory conf_win_allocate made for the window (if it did). */
static inline int conf_win_free(MPI_Win *win)
{
    MPI_Win w = *win;
    void *mem = NULL;
    int kind = CONF_WIN_ALLOCATE;
    int rc = MPI_Win_free(win);
    if (rc != MPI_SUCCESS)
        return rc; /* the window lives on: so does its memory */
    pthread_mutex_lock(&conf_win_mu);
    for (int i = 0; i < 256; i++)
        if (conf_win_mem[i].mem && conf_win_mem[i].win == w) {
            mem = conf_win_mem[i].mem;
            kind = conf_win_mem[i].kind;
            conf_win_mem[i].mem = NULL;
            break;
        }
    pthread_mutex_unlock(&conf_win_mu);
    if (kind == CONF_WIN_ALLOCMEM)
        rc = MPI_Free_mem(mem);
    else if (kind == CONF_WIN_MALLOC)
        free(mem);
    return rc;
}

/* Memory a program exposes with MPI_Win_create itself (a create window is what it tests):
 * MPI_Alloc_mem's under CONF_WINDOW=allocmem, else malloc's. NULL when there is none. */
static inline void *conf_mem_alloc(size_t size)
{
    void *mem = NULL;
    if (conf_window_kind() != CONF_WIN_ALLOCMEM)
        return malloc(size > 0 ? size : 1);
    if (size > (size_t)(((MPI_Aint)1 << (8 * sizeof(MPI_Aint) - 2)) - 1) ||
        MPI_Alloc_mem((MPI_Aint)size, MPI_INFO_NULL, &mem) != MPI_SUCCESS)
        return NULL;
    return mem;
}

static inline void conf_mem_free(void *mem)
{
    if (conf_window_kind() != CONF_WIN_ALLOCMEM)
        free(mem);
    else if (mem)
        MPI_Free_mem(mem);
}

/* Collective over comm: 1 when its ranks live on more than one node — real nodes, or the
 * virtual ones of NBRMA_RANKS_PER_NODE, which libnbrma's MPI_Comm_split_type honours. Such a
 * group cannot make an MPI_Win_allocate_shared window (MPI-3.1 §11.2.3). */
static inline int conf_spans_nodes(MPI_Comm comm)
{
    MPI_Comm c;
    int n, all;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    MPI_Comm_size(c, &n);
    MPI_Comm_size(comm, &all);
    MPI_Comm_free(&c);
    return n < all;
}

#endif
