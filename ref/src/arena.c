/* arena.c — node-shared memory for the windows' control blocks, so that creating a window costs
 * no system call (paper 004 §III counts window metadata as the first cost of a window).
 *
 * Each process carves its control blocks out of its own chunks of node-shared memory (POSIX shm
 * objects named /nbrma-a-<pid>-<tag>-<k>, 1 MiB or more; <tag> is random per process, because a
 * killed job's leftovers carry pids that the kernel hands out again). A block is named by (chunk, offset): a window's
 * set-up allgathers that, and a peer maps a chunk the first time a block in it is named, then
 * keeps the mapping. Blocks are recycled through free lists per power-of-two size class; a block
 * keeps a header across reuse (its incarnation and the last incarnation freed), which is what
 * the free barrier waits on, so a block reused at once by a fast rank never stalls a slow peer.
 * The objects are unlinked at MPI_Finalize (and at exit): peers have mapped what they need by
 * then. A crashed job leaves them in /dev/shm, as the MPI libraries' own segments. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nbr.h"

#define NBR_CHUNK_MIN  (1u << 20)
#define NBR_CLASS_MIN  7 /* 128 bytes */
#define NBR_CLASSES    40
#define NBR_MAX_CHUNKS 4096

typedef struct nbr_free_block {
    struct nbr_free_block *next;
} nbr_free_block_t;

static struct {
    char *base[NBR_MAX_CHUNKS];
    size_t size[NBR_MAX_CHUNKS];
    int n;
    size_t used; /* bump pointer in the last chunk */
    nbr_free_block_t *free[NBR_CLASSES];
    int unlinked;
} mine;

/* Mappings of peers' chunks: open addressing on (pid, tag, chunk). */
typedef struct {
    int pid, chunk;
    uint32_t tag;
    char *base;
    size_t size;
} nbr_peer_chunk_t;
static nbr_peer_chunk_t *peers;
static size_t peers_cap, peers_n;

static uint32_t proc_tag;
static pthread_once_t proc_tag_once = PTHREAD_ONCE_INIT;

static void pick_tag(void)
{
    uint32_t t = 0;
    if (getrandom(&t, sizeof t, GRND_NONBLOCK) != (ssize_t)sizeof t) {
        struct timespec ts; /* no entropy yet (early boot): time and pid still differ */
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^ (uint32_t)getpid() << 16;
    }
    proc_tag = t;
}

uint32_t nbr_proc_tag(void)
{
    if (pthread_once(&proc_tag_once, pick_tag) != 0)
        pick_tag(); /* cannot happen with a valid once object */
    return proc_tag;
}

static void chunk_name(char *buf, size_t len, int pid, uint32_t tag, int k)
{
    snprintf(buf, len, "/nbrma-a-%d-%08x-%d", pid, (unsigned)tag, k);
}

static int size_class(size_t bytes)
{
    int c = NBR_CLASS_MIN;
    while (c < NBR_CLASS_MIN + NBR_CLASSES - 1 && ((size_t)1 << c) < bytes)
        c++;
    return ((size_t)1 << c) < bytes ? -1 : c;
}

static void unlink_all(void)
{
    if (mine.unlinked)
        return;
    mine.unlinked = 1;
    char name[64];
    for (int k = 0; k < mine.n; k++) {
        chunk_name(name, sizeof name, (int)getpid(), nbr_proc_tag(), k);
        shm_unlink(name);
    }
}

void nbr_arena_finalize(void)
{
    unlink_all();
    nbr_mem_finalize(); /* MPI_Alloc_mem's segments (mem.c) */
}

static int new_chunk(size_t need)
{
    static int registered;
    if (mine.n == NBR_MAX_CHUNKS || mine.unlinked)
        return MPI_ERR_NO_MEM;
    size_t size = NBR_CHUNK_MIN;
    while (size < need)
        size *= 2;
    char name[64];
    chunk_name(name, sizeof name, (int)getpid(), nbr_proc_tag(), mine.n);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return MPI_ERR_NO_MEM;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return MPI_ERR_NO_MEM;
    }
    if (!registered) {
        registered = 1;
        atexit(unlink_all);
    }
    mine.base[mine.n] = p;
    mine.size[mine.n] = size;
    mine.n++;
    mine.used = 0;
    return MPI_SUCCESS;
}

void *nbr_arena_alloc(size_t bytes, nbr_arena_ref_t *ref)
{
    int c = size_class(bytes);
    if (c < 0)
        return NULL;
    size_t sz = (size_t)1 << c;
    nbr_free_block_t *link = mine.free[c - NBR_CLASS_MIN];
    char *p;
    if (link) { /* the link lives past the header, which survives reuse */
        mine.free[c - NBR_CLASS_MIN] = link->next;
        p = (char *)link - NBR_CACHELINE;
    } else {
        if (!mine.n || mine.used + sz > mine.size[mine.n - 1])
            if (new_chunk(sz) != MPI_SUCCESS)
                return NULL;
        p = mine.base[mine.n - 1] + mine.used;
        mine.used += sz; /* sizes are powers of two from 128: blocks stay 128-aligned */
    }
    for (int k = 0; k < mine.n; k++)
        if (p >= mine.base[k] && p < mine.base[k] + mine.size[k]) {
            ref->chunk = (uint32_t)k;
            ref->tag = nbr_proc_tag();
            ref->off = (uint64_t)(p - mine.base[k]);
            break;
        }
    return p;
}

void nbr_arena_free(void *p, size_t bytes)
{
    int c = size_class(bytes);
    if (c < 0 || !p)
        return;
    nbr_free_block_t *link = (nbr_free_block_t *)((char *)p + NBR_CACHELINE);
    link->next = mine.free[c - NBR_CLASS_MIN];
    mine.free[c - NBR_CLASS_MIN] = link;
}

/* The address of a block in process `pid` (this one, or a peer on the node). */
void *nbr_arena_map(int pid, nbr_arena_ref_t ref)
{
    if (pid == (int)getpid() && ref.tag == nbr_proc_tag())
        return (int)ref.chunk < mine.n ? mine.base[ref.chunk] + ref.off : NULL;
    if (peers_cap) {
        size_t h = (size_t)((uint64_t)pid * 0x9e3779b97f4a7c15u ^ ref.chunk) & (peers_cap - 1);
        for (; peers[h].base; h = (h + 1) & (peers_cap - 1))
            if (peers[h].pid == pid && peers[h].tag == ref.tag && peers[h].chunk == (int)ref.chunk)
                return ref.off < peers[h].size ? peers[h].base + ref.off : NULL;
    }
    if ((peers_n + 1) * 2 > peers_cap) {
        size_t cap = peers_cap ? peers_cap * 2 : 64;
        nbr_peer_chunk_t *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < peers_cap; i++)
            if (peers[i].base) {
                size_t h =
                    (size_t)((uint64_t)peers[i].pid * 0x9e3779b97f4a7c15u ^ (uint64_t)peers[i].chunk) &
                    (cap - 1);
                while (t[h].base)
                    h = (h + 1) & (cap - 1);
                t[h] = peers[i];
            }
        free(peers);
        peers = t;
        peers_cap = cap;
    }
    char name[64];
    chunk_name(name, sizeof name, pid, ref.tag, (int)ref.chunk);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    off_t end = lseek(fd, 0, SEEK_END);
    void *p = end > 0 ? mmap(NULL, (size_t)end, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    size_t h = (size_t)((uint64_t)pid * 0x9e3779b97f4a7c15u ^ ref.chunk) & (peers_cap - 1);
    while (peers[h].base)
        h = (h + 1) & (peers_cap - 1);
    peers[h] = (nbr_peer_chunk_t){pid, (int)ref.chunk, ref.tag, p, (size_t)end};
    peers_n++;
    return ref.off < (uint64_t)end ? (char *)p + ref.off : NULL;
}
