/* symheap.c — symmetric allocation for MPI_Win_allocate (paper 001 §2.2).
 *
 * When every rank asks for the same size and displacement unit, all ranks' window memory is one
 * node-shared object mapped at the *same* virtual address in every process, rank r's part at
 * A + r·stride. Every process then knows every rank's window address from (A, stride) alone:
 * O(1) descriptors instead of a table of p base addresses, and a base pointer means the same
 * memory in every process. The address is agreed with 001's POSIX protocol: a leader proposes an
 * address, each process tries mmap() there (MAP_FIXED_NOREPLACE: never over an existing
 * mapping), an allreduce says whether all succeeded, repeat with another address if not. After
 * a few failed rounds the caller falls back to separate segments. Collectives are nonblocking
 * plus a yielding wait (never blocking inside the vendor). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nbr.h"

#define NBR_SYM_TRIES 8

static int allreduce_min(MPI_Comm comm, int v)
{
    MPI_Request r;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm, &r) != MPI_SUCCESS ||
        nbr_wait_req(&r) != MPI_SUCCESS)
        return 0;
    return v;
}

static int bcast(MPI_Comm comm, void *buf, int n, int root)
{
    MPI_Request r;
    int rc = PMPI_Ibcast(buf, n, MPI_BYTE, root, comm, &r);
    return rc != MPI_SUCCESS ? rc : nbr_wait_req(&r);
}

/* Rounds 0 .. NBR_SYM_KERNEL-1 (at most one per rank): rank `round` proposes where its own
 * kernel would place the mapping (likely free everywhere: processes of one job have similar
 * layouts, and a rank whose layout differs gets its turn too). Later rounds: random addresses in
 * the upper half of the user address space, except under ThreadSanitizer, whose shadow memory
 * occupies much of that range (a fixed mapping there aborts the process). */
#define NBR_SYM_KERNEL 4
#if defined(__SANITIZE_THREAD__)
#define NBR_SYM_RANDOM 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NBR_SYM_RANDOM 0
#endif
#endif
#ifndef NBR_SYM_RANDOM
#define NBR_SYM_RANDOM 1
#endif

static uintptr_t propose(size_t total, int round, int kernel)
{
    if (kernel) {
        void *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        munmap(p, total);
        return (uintptr_t)p;
    }
    uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15u ^ (uint64_t)time(NULL) * (uint64_t)round;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 32;
    return (uintptr_t)(0x100000000000u + (x % 0x500000000000u)) & ~(uintptr_t)0xfffff;
}

void *nbr_sym_alloc(MPI_Comm comm, size_t total)
{
    int me, n;
    if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return NULL;
    int kernel_rounds = n < NBR_SYM_KERNEL ? n : NBR_SYM_KERNEL;
    int rounds = NBR_SYM_RANDOM ? NBR_SYM_TRIES : kernel_rounds;
    static unsigned serial;
    char name[64] = "";
    int fd = -1, ok = 1;
    if (me == 0) {
        snprintf(name, sizeof name, "/nbrma-%d-%08x-%u", (int)getpid(), (unsigned)nbr_proc_tag(), serial++);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)total) == 0;
        if (!ok)
            name[0] = '\0';
    }
    if (bcast(comm, name, (int)sizeof name, 0) != MPI_SUCCESS)
        ok = 0;
    if (me != 0 && name[0]) {
        fd = shm_open(name, O_RDWR, 0);
        ok = fd >= 0;
    }
    ok = allreduce_min(comm, ok && name[0]);
    if (me == 0 && name[0])
        shm_unlink(name); /* everyone holds it open (or the attempt is over) */
    void *addr = NULL;
    for (int round = 0; ok && round < rounds && !addr; round++) {
        int kernel = round < kernel_rounds, root = kernel ? round : 0;
        uint64_t a = me == root ? (uint64_t)propose(total, round, kernel) : 0;
        if (bcast(comm, &a, (int)sizeof a, root) != MPI_SUCCESS)
            break;
        void *p = a ? mmap((void *)(uintptr_t)a, total, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0)
                    : MAP_FAILED;
        int mine = p != MAP_FAILED && (uintptr_t)p == a;
        if (p != MAP_FAILED && !mine)
            munmap(p, total); /* a kernel that ignored the hint */
        if (allreduce_min(comm, mine))
            addr = p;
        else if (mine)
            munmap(p, total);
    }
    if (fd >= 0)
        close(fd);
    return addr;
}

void nbr_sym_free(void *addr, size_t total)
{
    if (addr)
        munmap(addr, total);
}
