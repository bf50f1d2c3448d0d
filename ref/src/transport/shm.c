/* shm.c — the shared-memory transport: a target's window memory is either mapped here (the
 * allocate and shared flavors: plain memcpy) or private to its process (create and dynamic
 * flavors: Cross Memory Attach, process_vm_readv/writev, one system call per chunk). */
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
