/* rt_mem.c — memcpy, memmove and memset of instrumented programs.
 *
 * GCC's -fsanitize=thread emits no hook for a call to memcpy/memmove/memset: libtsan intercepts
 * those functions, and GCC expands constant-size calls inline, unhooked. rmacheck-cc therefore
 * compiles with -fno-builtin-memcpy/-memmove/-memset (every such call stays a call) and links
 * with -Wl,--wrap=memcpy,... so the program's calls, and only the program's (not those of MPI,
 * libnbrma or libc), land here: the source is recorded as a read range and the destination as a
 * write range with the caller's pc, then the libc function runs. */
#include <stddef.h>
#include <string.h>

void __tsan_read_range_pc(void *p, unsigned long n, void *pc);
void __tsan_write_range_pc(void *p, unsigned long n, void *pc);
void *__memcpy_chk(void *d, const void *s, size_t n, size_t dn);
void *__memmove_chk(void *d, const void *s, size_t n, size_t dn);
void *__memset_chk(void *d, int c, size_t n, size_t dn);

void *__wrap_memcpy(void *d, const void *s, size_t n);
void *__wrap_memmove(void *d, const void *s, size_t n);
void *__wrap_memset(void *d, int c, size_t n);
void *__wrap___memcpy_chk(void *d, const void *s, size_t n, size_t dn);
void *__wrap___memmove_chk(void *d, const void *s, size_t n, size_t dn);
void *__wrap___memset_chk(void *d, int c, size_t n, size_t dn);

#define RA __builtin_return_address(0)

static void copy_hooks(void *d, const void *s, size_t n, void *pc)
{
    if (n == 0)
        return;
    __tsan_read_range_pc((void *)s, n, pc);
    __tsan_write_range_pc(d, n, pc);
}

void *__wrap_memcpy(void *d, const void *s, size_t n)
{
    copy_hooks(d, s, n, RA);
    return memcpy(d, s, n);
}

void *__wrap_memmove(void *d, const void *s, size_t n)
{
    copy_hooks(d, s, n, RA);
    return memmove(d, s, n);
}

void *__wrap_memset(void *d, int c, size_t n)
{
    if (n)
        __tsan_write_range_pc(d, n, RA);
    return memset(d, c, n);
}

void *__wrap___memcpy_chk(void *d, const void *s, size_t n, size_t dn)
{
    copy_hooks(d, s, n, RA);
    return __memcpy_chk(d, s, n, dn);
}

void *__wrap___memmove_chk(void *d, const void *s, size_t n, size_t dn)
{
    copy_hooks(d, s, n, RA);
    return __memmove_chk(d, s, n, dn);
}

void *__wrap___memset_chk(void *d, int c, size_t n, size_t dn)
{
    if (n)
        __tsan_write_range_pc(d, n, RA);
    return __memset_chk(d, c, n, dn);
}
