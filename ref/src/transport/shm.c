/* shm.c — the shared-memory transport: a target's window memory is either mapped here (the
 * allocate and shared flavors: plain memcpy) or private to its process (create and dynamic
 * flavors: Cross Memory Attach, process_vm_readv/writev, one system call per chunk — or per
 * IOV_MAX chunks of a noncontiguous transfer, nbr_shm_cma_batch). */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "nbr.h"

/* Where `off` (window displacement in bytes, already bounds checked) lives in the target. */
static inline void *remote_addr(const nbr_win_t *w, const nbr_target_t *t, MPI_Aint off)
{
    return (void *)(uintptr_t)(w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? off : t->addr + off);
}

static int cma(nbr_win_t *w, int target, MPI_Aint off, void *local, size_t len, int write)
{
    const nbr_target_t *t = &w->t[target];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && target == w->rank) {
        void *p = remote_addr(w, t, off); /* my own attached memory */
        write ? memcpy(p, local, len) : memcpy(local, p, len);
        return MPI_SUCCESS;
    }
    char *l = local, *r = remote_addr(w, t, off);
    while (len > 0) {
        struct iovec li = {l, len}, ri = {r, len};
        ssize_t n = write ? process_vm_writev(t->pid, &li, 1, &ri, 1, 0)
                          : process_vm_readv(t->pid, &li, 1, &ri, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return nbr_err(w, write ? "process_vm_writev" : "process_vm_readv", MPI_ERR_OTHER,
                           "cross-memory access to rank %d (pid %d) failed: %s", target,
                           (int)t->pid, n < 0 ? strerror(errno) : "no progress");
        }
        l += n;
        r += n;
        len -= (size_t)n;
    }
    return MPI_SUCCESS;
}

int nbr_shm_cma_batch(nbr_win_t *w, int target, int write, const nbr_cma_piece_t *p, int n)
{
    const nbr_target_t *t = &w->t[target];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && target == w->rank) { /* my own memory */
        for (int i = 0; i < n; i++) {
            void *r = remote_addr(w, t, p[i].off);
            write ? memcpy(r, p[i].local, p[i].len) : memcpy(p[i].local, r, p[i].len);
        }
        return MPI_SUCCESS;
    }
    struct iovec li[NBR_CMA_BATCH], ri[NBR_CMA_BATCH];
    int k = 0;
    for (int i = 0; i < n; i++) {
        li[i] = (struct iovec){p[i].local, p[i].len};
        ri[i] = (struct iovec){remote_addr(w, t, p[i].off), p[i].len};
    }
    /* A call moves whole iovecs in order until one fails part-way: resume after what moved. */
    while (k < n) {
        ssize_t m = write ? process_vm_writev(t->pid, li + k, (unsigned long)(n - k), ri + k,
                                              (unsigned long)(n - k), 0)
                          : process_vm_readv(t->pid, li + k, (unsigned long)(n - k), ri + k,
                                             (unsigned long)(n - k), 0);
        if (m <= 0) {
            if (m < 0 && errno == EINTR)
                continue;
            return nbr_err(w, write ? "process_vm_writev" : "process_vm_readv", MPI_ERR_OTHER,
                           "cross-memory access to rank %d (pid %d) failed: %s", target,
                           (int)t->pid, m < 0 ? strerror(errno) : "no progress");
        }
        while (k < n && (size_t)m >= li[k].iov_len)
            m -= (ssize_t)li[k++].iov_len;
        if (k < n && m > 0) { /* a partial iovec: the rest of it next */
            li[k].iov_base = (char *)li[k].iov_base + m, li[k].iov_len -= (size_t)m;
            ri[k].iov_base = (char *)ri[k].iov_base + m, ri[k].iov_len -= (size_t)m;
        }
    }
    return MPI_SUCCESS;
}

int nbr_shm_write(nbr_win_t *w, int target, MPI_Aint off, const void *src, size_t len)
{
    unsigned char *b = w->t[target].base;
    if (NBR_LIKELY(b != NULL)) {
        memcpy(b + off, src, len);
        return MPI_SUCCESS;
    }
    return cma(w, target, off, (void *)src, len, 1);
}

int nbr_shm_read(nbr_win_t *w, int target, MPI_Aint off, void *dst, size_t len)
{
    const unsigned char *b = w->t[target].base;
    if (NBR_LIKELY(b != NULL)) {
        memcpy(dst, b + off, len);
        return MPI_SUCCESS;
    }
    return cma(w, target, off, dst, len, 0);
}
