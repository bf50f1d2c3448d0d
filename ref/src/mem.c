/* mem.c — MPI_Alloc_mem and MPI_Free_mem from node-shared memory (issue 24).
 *
 * MPI-3.1 §8.2: "In some systems, message-passing and remote-memory-access (RMA) operations run
 * faster when accessing specially allocated memory"; MPI_Alloc_mem is how a program asks for it,
 * and third-party benchmarks (IMB-RMA) expose such memory with MPI_Win_create. libnbrma serves
 * MPI_Alloc_mem from node-shared memory, so that a window created over it reaches every node peer
 * by load/store — the mapped fast path of MPI_Win_allocate windows — instead of Cross Memory
 * Attach (one system call per access, two for an atomic).
 *
 * Segments. Each process carves its blocks out of its own segments: POSIX shm objects named
 * /nbrma-m-<pid>-<tag>-<k>, each 1 GiB of address space (larger for a larger request), created
 * sparse and mapped whole, aligned to their size (up to 1 GiB), so a block of 2^k bytes is aligned
 * to 2^k. Blocks come from a buddy allocator (64 bytes to the segment's size); its bookkeeping
 * lives in private memory (a hash of blocks by address, free lists per order), never in the
 * segment. The bytes a request asks for are allocated in the object at once (fallocate), so
 * exhaustion is an error of MPI_Alloc_mem, not a SIGBUS at first touch; a freed block's pages
 * are given back (FALLOC_FL_PUNCH_HOLE) as soon as they form whole pages, peers' mappings
 * notwithstanding, and a segment left empty is unlinked and unmapped (one empty 1 GiB segment
 * is kept for reuse). New segments are made as needed: the arena grows with the program. The
 * names are unlinked at MPI_Finalize and at exit (a crashed job leaves them in /dev/shm, as the
 * MPI libraries' own segments).
 *
 * Windows. MPI_Win_create (win.c) asks nbr_mem_find whether the window's bytes lie in one segment
 * of the process; if so, each node peer maps those bytes from the object (nbr_mem_map) and reaches
 * them by load/store; the rest (another node, memory from malloc, a window spanning two segments)
 * goes as before, through the transport. A window over part of a block, or over several blocks
 * of one segment, is one mapping like any other range of the segment.
 *
 * When shared memory cannot be had (/dev/shm full, or no shm at all) MPI_Alloc_mem falls back to
 * private memory (malloc), which windows reach with CMA as before; beyond the machine's memory
 * and swap it is MPI_ERR_NO_MEM. Under NBRMA_IMPL=vendor (MPIX_Nbrma_set_impl("vendor")) the memory
 * is the MPI library's: the vendor series is unchanged. MPI_Free_mem frees each kind where it came
 * from and refuses, with MPI_ERR_BASE, a pointer MPI_Alloc_mem did not return (or returned and
 * already took back). Errors go through MPI_COMM_WORLD's error handler (MPI-3.1 §8.3: the calls
 * have no communicator).
 *
 * Info keys (MPI-3.1 §8.2 allows an implementation to honour or ignore them): the MPI-4.0 key
 * mpi_minimum_memory_alignment (a power of two) is honoured; a value that is not a power of two is
 * MPI_ERR_INFO_VALUE; others are ignored. Thread safety: one mutex (MPI_THREAD_MULTIPLE programs
 * allocate from several threads), never held across a call into the MPI library that could
 * block. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "nbr.h"

#define SEG_ORDER   nbr_mem_seg_order /* a segment: 1 GiB of address space (sparse) */
#define ALIGN_ORDER 30                /* segments aligned to their size, up to this */
#define MIN_ORDER   6                 /* blocks of 64 bytes and up: whole cache lines */
#define MAX_ORDER   46                /* 64 TiB: anything larger is refused outright */
#define PAGE        4096u

enum { B_FREE = 0, B_USED, B_PRIVATE, B_VENDOR, B_WIN };

typedef struct seg seg_t;
typedef struct blk {
    struct blk *fprev, *fnext; /* the segment's free list of its order */
    seg_t *seg;                /* NULL for private and vendor memory */
    uintptr_t addr;
    size_t len; /* bytes asked for (used blocks) */
    unsigned char order, kind;
} blk_t;

struct seg {
    char *base;
    size_t size;
    int order, fd;
    uint32_t index;
    blk_t *free[MAX_ORDER + 1];
};

int nbr_mem_seg_order = 30; /* tests make it smaller, before the first allocation */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static seg_t **segs; /* sorted by base */
static int nsegs, segs_cap;
static uint32_t next_index;
static int unlinked, registered;

/* ---- blocks by address: open addressing, backward-shift deletion ------------------------------
 */

static blk_t **map;
static size_t map_cap, map_n;

static size_t slot(uintptr_t a)
{
    uint64_t k = (uint64_t)a * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(k ^ (k >> 29)) & (map_cap - 1);
}

static blk_t *map_find(uintptr_t a)
{
    for (size_t i = map_cap ? slot(a) : 0; map_cap && map[i]; i = (i + 1) & (map_cap - 1))
        if (map[i]->addr == a)
            return map[i];
    return NULL;
}

static int map_put(blk_t *b)
{
    if ((map_n + 1) * 2 > map_cap) {
        size_t cap = map_cap ? map_cap * 2 : 256, old = map_cap;
        blk_t **m = calloc(cap, sizeof *m), **o = map;
        if (!m)
            return -1;
        map = m;
        map_cap = cap;
        for (size_t i = 0; i < old; i++)
            if (o[i]) {
                size_t j = slot(o[i]->addr);
                while (map[j])
                    j = (j + 1) & (map_cap - 1);
                map[j] = o[i];
            }
        free(o);
    }
    size_t j = slot(b->addr);
    while (map[j])
        j = (j + 1) & (map_cap - 1);
    map[j] = b;
    map_n++;
    return 0;
}

static void map_del(blk_t *b)
{
    size_t i = slot(b->addr);
    while (map[i] != b)
        i = (i + 1) & (map_cap - 1);
    map[i] = NULL;
    map_n--;
    for (size_t j = (i + 1) & (map_cap - 1); map[j]; j = (j + 1) & (map_cap - 1)) {
        size_t k = slot(map[j]->addr);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        map[i] = map[j];
        map[j] = NULL;
        i = j;
    }
}

/* ---- segments -------------------------------------------------------------------------------- */

static void seg_name(char *buf, size_t len, int pid, uint32_t tag, uint32_t k)
{
    snprintf(buf, len, "/nbrma-m-%d-%08x-%u", pid, (unsigned)tag, (unsigned)k);
}

static void unlink_all(void)
{
    pthread_mutex_lock(&mu);
    if (!unlinked) {
        unlinked = 1;
        char name[64];
        for (int i = 0; i < nsegs; i++) {
            seg_name(name, sizeof name, (int)getpid(), nbr_proc_tag(), segs[i]->index);
            shm_unlink(name);
        }
    }
    pthread_mutex_unlock(&mu);
}

void nbr_mem_finalize(void)
{
    unlink_all(); /* peers mapped what their windows need; the blocks stay usable here */
}

static void free_push(seg_t *s, blk_t *b)
{
    b->kind = B_FREE;
    b->fprev = NULL;
    b->fnext = s->free[b->order];
    if (b->fnext)
        b->fnext->fprev = b;
    s->free[b->order] = b;
}

static void free_pop(seg_t *s, blk_t *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        s->free[b->order] = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

static blk_t *blk_new(seg_t *s, uintptr_t addr, int order, int kind)
{
    blk_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    *b =
        (blk_t){.seg = s, .addr = addr, .order = (unsigned char)order, .kind = (unsigned char)kind};
    if (map_put(b) != 0) {
        free(b);
        return NULL;
    }
    return b;
}

/* A sparse object of 2^order bytes, mapped at an address aligned to min(2^order, 1 GiB). */
static seg_t *seg_new(int order)
{
    size_t size = (size_t)1 << order;
    size_t align = (size_t)1 << (order < ALIGN_ORDER ? order : ALIGN_ORDER);
    if (unlinked || nsegs == INT32_MAX / 2)
        return NULL;
    if (nsegs == segs_cap) {
        int cap = segs_cap ? 2 * segs_cap : 8;
        seg_t **n = realloc(segs, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        segs = n;
        segs_cap = cap;
    }
    seg_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    char name[64];
    uint32_t index = next_index++;
    seg_name(name, sizeof name, (int)getpid(), nbr_proc_tag(), index);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        free(s);
        return NULL;
    }
    char *base = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0) {
        /* reserve size + align, place the object at the aligned address, give back the rest */
        char *r =
            mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r != MAP_FAILED) {
            char *a = (char *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
            base = mmap(a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd,
                        0);
            if (base == MAP_FAILED) {
                munmap(r, size + align);
            } else {
                if (a > r)
                    munmap(r, (size_t)(a - r));
                if (a + size < r + size + align)
                    munmap(a + size, (size_t)(r + size + align - (a + size)));
            }
        }
    }
    blk_t *root = NULL;
    *s = (seg_t){.base = base, .size = size, .order = order, .fd = fd, .index = index};
    if (base == MAP_FAILED || !(root = blk_new(s, (uintptr_t)base, order, B_FREE))) {
        if (base != MAP_FAILED)
            munmap(base, size);
        close(fd);
        shm_unlink(name);
        free(s);
        return NULL;
    }
    free_push(s, root);
    if (!registered) {
        registered = 1;
        atexit(unlink_all);
    }
    int i = nsegs;
    while (i > 0 && segs[i - 1]->base > base) {
        segs[i] = segs[i - 1];
        i--;
    }
    segs[i] = s;
    nsegs++;
    return s;
}

/* The segment holding address a, or NULL. */
static seg_t *seg_of(uintptr_t a)
{
    int lo = 0, hi = nsegs;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)segs[mid]->base <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    seg_t *s = segs[lo - 1];
    return a - (uintptr_t)s->base < s->size ? s : NULL;
}

static void seg_release(seg_t *s)
{
    blk_t *root = s->free[s->order];
    free_pop(s, root);
    map_del(root);
    free(root);
    int i = 0;
    while (segs[i] != s)
        i++;
    memmove(&segs[i], &segs[i + 1], (size_t)(nsegs - i - 1) * sizeof *segs);
    nsegs--;
    char name[64];
    seg_name(name, sizeof name, (int)getpid(), nbr_proc_tag(), s->index);
    /* the pages went back when the blocks merged (punched); a peer still mapping the object
     * keeps only the name-less file */
    munmap(s->base, s->size);
    close(s->fd);
    if (!unlinked)
        shm_unlink(name);
    free(s);
}

/* A block of 2^k bytes from s (split from a larger free one), or NULL. */
static blk_t *seg_take(seg_t *s, int k)
{
    int j = k;
    while (j <= s->order && !s->free[j])
        j++;
    if (j > s->order)
        return NULL;
    blk_t *b = s->free[j];
    while (j > k) { /* keep the lower half, free the upper */
        j--;
        blk_t *up = blk_new(s, b->addr + ((uintptr_t)1 << j), j, B_FREE);
        if (!up)
            return NULL; /* out of memory for bookkeeping: b stays free, whole */
        free_pop(s, b);
        b->order = (unsigned char)j;
        free_push(s, b);
        free_push(s, up);
    }
    free_pop(s, b);
    b->kind = B_USED;
    return b;
}

static int empty(const seg_t *s)
{
    return s->free[s->order] != NULL;
}

/* Give b back: merge with free buddies, return whole pages to the system, and release the
 * segment when nothing is left in it (keeping one empty default segment). */
static void seg_give(seg_t *s, blk_t *b)
{
    b->kind = B_FREE;
    while (b->order < s->order) {
        uintptr_t off = b->addr - (uintptr_t)s->base;
        blk_t *bud = map_find((uintptr_t)s->base + (off ^ ((uintptr_t)1 << b->order)));
        if (!bud || bud->kind != B_FREE || bud->order != b->order)
            break;
        free_pop(s, bud);
        blk_t *lo = bud->addr < b->addr ? bud : b, *hi = lo == b ? bud : b;
        map_del(hi);
        free(hi);
        lo->order++;
        b = lo;
    }
    size_t len = (size_t)1 << b->order;
    if (len >= PAGE) /* buddy blocks of a page or more are whole, aligned pages */
        (void)fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)(b->addr - (uintptr_t)s->base), (off_t)len);
    free_push(s, b);
    if (!empty(s))
        return;
    int others = 0;
    for (int i = 0; i < nsegs; i++)
        others += segs[i] != s && segs[i]->order == SEG_ORDER && empty(segs[i]);
    if (s->order > SEG_ORDER || others)
        seg_release(s);
}

/* The pages of [b, b + len) really allocated in the object (so that running out is an error
 * now, not a SIGBUS later). 0 on success. */
static int commit(seg_t *s, blk_t *b, size_t len)
{
    if (!len)
        return 0;
    uintptr_t off = b->addr - (uintptr_t)s->base;
    uintptr_t lo = off & ~(uintptr_t)(PAGE - 1),
              hi = (off + len + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    if (fallocate(s->fd, 0, (off_t)lo, (off_t)(hi - lo)) == 0)
        return 0;
    return errno == EOPNOTSUPP || errno == ENOSYS ? 0 : -1; /* a file system that cannot say */
}

/* ---- allocation ------------------------------------------------------------------------------ */

static int order_of(size_t n)
{
    int k = MIN_ORDER;
    while (k <= MAX_ORDER && ((size_t)1 << k) < n)
        k++;
    return k;
}

/* Node-shared memory for `size` bytes aligned to `align`, or NULL. */
static void *shm_alloc(size_t size, size_t align)
{
    int k = order_of(size > align ? size : align);
    if (k > MAX_ORDER)
        return NULL;
    blk_t *b = NULL;
    for (int i = 0; i < nsegs && !b; i++)
        if (segs[i]->order >= k)
            b = seg_take(segs[i], k);
    seg_t *s = b ? b->seg : seg_new(k > SEG_ORDER ? k : SEG_ORDER);
    if (!b && s && !(b = seg_take(s, k))) {
        if (empty(s) && s->order > SEG_ORDER)
            seg_release(s);
        return NULL;
    }
    if (!b)
        return NULL;
    s = b->seg;
    if (commit(s, b, size) != 0) { /* the object's file system is full */
        seg_give(s, b);
        return NULL;
    }
    b->len = size;
    return (void *)b->addr;
}

/* Private memory when shared memory cannot be had; NULL beyond what the machine could ever give
 * (its memory and swap), which also keeps an ASan build from aborting on a huge request. */
static void *private_alloc(size_t size, size_t align, int kind)
{
    struct sysinfo si;
    if (sysinfo(&si) == 0 &&
        size / (si.mem_unit ? si.mem_unit : 1) > (size_t)si.totalram + (size_t)si.totalswap)
        return NULL;
    size_t a = align < 16 ? 16 : align, n = size ? size : 1;
    if (n > SIZE_MAX - a)
        return NULL;
    n = (n + a - 1) & ~(a - 1);
    void *p = aligned_alloc(a, n);
    blk_t *b = p ? calloc(1, sizeof *b) : NULL;
    if (b) {
        *b = (blk_t){.addr = (uintptr_t)p, .len = size, .kind = (unsigned char)kind};
        if (map_put(b) == 0)
            return p;
        free(b);
    }
    free(p);
    return NULL;
}

/* mpi_minimum_memory_alignment (MPI-4.0), in *align; MPI_ERR_INFO_VALUE when not a power of
 * two. */
static int info_alignment(MPI_Info info, size_t *align, char *val, int vlen)
{
    *align = 0;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int found = 0;
    if (PMPI_Info_get(info, "mpi_minimum_memory_alignment", vlen - 1, val, &found) != MPI_SUCCESS)
        return MPI_ERR_INFO;
    if (!found)
        return MPI_SUCCESS;
    char *end;
    errno = 0;
    unsigned long long a = strtoull(val, &end, 10);
    if (errno || *end || end == val || a == 0 || (a & (a - 1)) || a > ((size_t)1 << ALIGN_ORDER))
        return MPI_ERR_INFO_VALUE;
    *align = (size_t)a;
    return MPI_SUCCESS;
}

NBR_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char call[] = "MPI_Alloc_mem";
    char val[MPI_MAX_INFO_VAL + 1] = "";
    size_t align;
    if (size < 0 || !baseptr)
        return nbr_err_comm(MPI_COMM_WORLD, call, MPI_ERR_ARG,
                            size < 0 ? "size %ld is negative" : "baseptr is NULL", (long)size);
    int rc = info_alignment(info, &align, val, (int)sizeof val);
    if (rc != MPI_SUCCESS)
        return nbr_err_comm(MPI_COMM_WORLD, call, rc,
                            rc == MPI_ERR_INFO ? "the info object could not be read"
                                               : "info key mpi_minimum_memory_alignment has value "
                                                 "\"%.60s\"; use a power of two up to 1 GiB",
                            val);
    nbr_settings_load();
    if (!nbr_impl_ref) { /* the vendor's memory, remembered so that MPI_Free_mem knows it */
        void *p = NULL;
        if ((rc = PMPI_Alloc_mem(size, info, &p)) != MPI_SUCCESS)
            return rc;
        blk_t *b = p ? calloc(1, sizeof *b) : NULL;
        pthread_mutex_lock(&mu);
        if (b) {
            *b = (blk_t){.addr = (uintptr_t)p, .len = (size_t)size, .kind = B_VENDOR};
            if (map_find((uintptr_t)p) || map_put(b) != 0) { /* (a NULL for size 0 is not kept) */
                free(b);
                b = NULL;
            }
        }
        pthread_mutex_unlock(&mu);
        if (p && !b) {
            PMPI_Free_mem(p);
            return nbr_err_comm(MPI_COMM_WORLD, call, MPI_ERR_NO_MEM,
                                "out of memory recording the MPI library's block");
        }
        *(void **)baseptr = p;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&mu);
    void *p = shm_alloc((size_t)size, align);
    if (!p)
        p = private_alloc((size_t)size, align, B_PRIVATE);
    pthread_mutex_unlock(&mu);
    if (!p)
        return nbr_err_comm(MPI_COMM_WORLD, call, MPI_ERR_NO_MEM,
                            "no memory for %ld bytes (neither node-shared nor private)",
                            (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

NBR_API int MPI_Free_mem(void *base)
{
    static const char call[] = "MPI_Free_mem";
    if (!base) /* as free(NULL); both MPI libraries accept it */
        return MPI_SUCCESS;
    pthread_mutex_lock(&mu);
    blk_t *b = map_find((uintptr_t)base);
    int kind = b ? b->kind : -1;
    seg_t *inside = b ? NULL : seg_of((uintptr_t)base);
    if (kind == B_USED) {
        seg_give(b->seg, b);
    } else if (kind == B_PRIVATE || kind == B_VENDOR) {
        map_del(b);
        free(b);
    }
    pthread_mutex_unlock(&mu);
    if (kind == B_USED)
        return MPI_SUCCESS;
    if (kind == B_WIN)
        return nbr_err_comm(MPI_COMM_WORLD, call, MPI_ERR_BASE,
                            "%p is the memory of an MPI_Win_allocate window, not a block "
                            "MPI_Alloc_mem returned: MPI_Win_free frees it",
                            base);
    if (kind == B_PRIVATE) {
        free(base);
        return MPI_SUCCESS;
    }
    if (kind == B_VENDOR)
        return PMPI_Free_mem(base);
    return nbr_err_comm(MPI_COMM_WORLD, call, MPI_ERR_BASE, "%p %s", base,
                        kind == B_FREE ? "was freed already (MPI_Alloc_mem returned it before)"
                        : inside ? "is not a block MPI_Alloc_mem returned and has not taken back: "
                                   "it lies in libnbrma's node-shared memory, but not at the "
                                   "start of a live block (freed twice, or a pointer into a block)"
                                 : "was not returned by MPI_Alloc_mem (or was freed already)");
}

/* ---- windows over it ------------------------------------------------------------------------- */

/* MPI_Win_allocate's memory in a window that spans nodes, for a rank with node peers in it
 * (win.c): a block of a segment, which those peers map like MPI_Alloc_mem memory and reach by
 * load/store instead of CMA. Zero-filled. NULL when node-shared memory cannot be had (the caller
 * falls back to private memory). MPI_Free_mem refuses the block (B_WIN); nbr_mem_win_free takes
 * it back. */
void *nbr_mem_win_alloc(size_t size)
{
    if (!size)
        return NULL;
    pthread_mutex_lock(&mu);
    void *p = shm_alloc(size, 64); /* NULL beyond MAX_ORDER too */
    blk_t *b = p ? map_find((uintptr_t)p) : NULL;
    if (b)
        b->kind = B_WIN;
    pthread_mutex_unlock(&mu);
    if (p)
        memset(p, 0, size); /* a block given back before may hold old bytes */
    return p;
}

void nbr_mem_win_free(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&mu);
    blk_t *b = map_find((uintptr_t)p);
    if (b && b->kind == B_WIN)
        seg_give(b->seg, b);
    pthread_mutex_unlock(&mu);
}

int nbr_mem_find(const void *base, MPI_Aint size, nbr_mem_ref_t *ref)
{
    uintptr_t a = (uintptr_t)base;
    int ok = 0;
    if (size <= 0 || !base)
        return 0;
    pthread_mutex_lock(&mu);
    seg_t *s = seg_of(a);
    if (s && (uint64_t)size <= s->size - (a - (uintptr_t)s->base)) {
        *ref =
            (nbr_mem_ref_t){.tag = nbr_proc_tag(), .seg = s->index, .off = a - (uintptr_t)s->base};
        ok = 1;
    }
    pthread_mutex_unlock(&mu);
    return ok;
}

void *nbr_mem_map(int pid, const nbr_mem_ref_t *ref, MPI_Aint size, void **map_out, size_t *len_out)
{
    char name[64];
    seg_name(name, sizeof name, pid, ref->tag, ref->seg);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    uint64_t lo = ref->off & ~(uint64_t)(PAGE - 1);
    size_t len = (size_t)(((ref->off + (uint64_t)size + PAGE - 1) & ~(uint64_t)(PAGE - 1)) - lo);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, (off_t)lo);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    *map_out = p;
    *len_out = len;
    return (char *)p + (ref->off - lo);
}

void nbr_mem_unmap(void *map_base, size_t len)
{
    if (map_base)
        munmap(map_base, len);
}

size_t nbr_mem_resident(void)
{
    size_t n = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nsegs; i++) {
        struct stat st;
        if (fstat(segs[i]->fd, &st) == 0)
            n += (size_t)st.st_blocks * 512;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

long nbr_mem_segments(void)
{
    pthread_mutex_lock(&mu);
    long n = nsegs;
    pthread_mutex_unlock(&mu);
    return n;
}
