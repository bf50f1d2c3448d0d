/* test_errors.c — misuse of ref windows raises the right MPI error class through the window's
 * error handler, with a message naming the call, the rank and the argument, and leaves the
 * window usable. Vendors need not detect most of these; the reference must. (2 ranks) */
#include <stdio.h>
#include <string.h>

#include "nbrma.h"
#include "tap.h"

static int handler_calls;
static void count_errors(MPI_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
    handler_calls++;
}

static char msg[MPI_MAX_ERROR_STRING];

/* Check `rc` has class `cls` and its message mentions every needle: MPI_Error_string's where
 * the MPI keeps our string (probed: strings_work), MPIX_Nbrma_last_error() everywhere. */
static int strings_work;
static void expect(int rc, int cls, const char *what, const char *n1, const char *n2)
{
    int got = MPI_SUCCESS, len = 0;
    msg[0] = '\0';
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &got);
        if (strings_work)
            MPI_Error_string(rc, msg, &len);
        else
            snprintf(msg, sizeof msg, "%s", MPIX_Nbrma_last_error());
    }
    tap_is_long(got, cls, "%s: error class %d", what, cls);
    tap_ok(strstr(msg, n1) && (!n2 || strstr(msg, n2)), "%s: message names '%s'%s%s: %s", what, n1,
           n2 ? " and " : "", n2 ? n2 : "", msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_init(MPI_COMM_WORLD);
    MPIX_Nbrma_set_impl("ref");
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    long *base;
    MPI_Win win;
    MPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    {
        /* Does this MPI return the strings of codes added to predefined classes? */
        int code, len;
        char back[MPI_MAX_ERROR_STRING];
        MPI_Add_error_code(MPI_ERR_OTHER, &code);
        MPI_Add_error_string(code, "probe");
        MPI_Error_string(code, back, &len);
        strings_work = strcmp(back, "probe") == 0;
        tap_diag("MPI_Error_string %s our messages; checking %s",
                 strings_work ? "returns" : "garbles",
                 strings_work ? "MPI_Error_string" : "MPIX_Nbrma_last_error()");
    }
    long v = 7, r = 0;
    double d = 1.0, dr;

    expect(MPI_Put(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win), MPI_ERR_RMA_SYNC,
           "put outside any epoch", "MPI_Put", "no access epoch toward rank");
    expect(MPI_Win_lock(99, peer, 0, win), MPI_ERR_LOCKTYPE, "lock type 99", "MPI_Win_lock", "99");
    expect(MPI_Win_lock(MPI_LOCK_SHARED, 5, 0, win), MPI_ERR_RANK, "lock of rank 5", "rank 5",
           NULL);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
    expect(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win), MPI_ERR_RMA_SYNC, "nested lock",
           "MPI_Win_lock", "nested");
    expect(MPI_Put(&v, 1, MPI_LONG, 7, 0, 1, MPI_LONG, win), MPI_ERR_RANK, "put to rank 7",
           "target_rank 7", NULL);
    expect(MPI_Put(&v, 2, MPI_LONG, peer, 63, 2, MPI_LONG, win), MPI_ERR_RMA_RANGE,
           "put past the window's end", "MPI_Put", "exceed rank");
    expect(MPI_Put(&v, 1, MPI_LONG, peer, -1, 1, MPI_LONG, win), MPI_ERR_DISP, "negative disp",
           "target_disp -1", NULL);
    expect(MPI_Compare_and_swap(&d, &d, &dr, MPI_DOUBLE, peer, 0, win), MPI_ERR_TYPE,
           "CAS on MPI_DOUBLE", "MPI_Compare_and_swap", "MPI_DOUBLE");
    expect(MPI_Accumulate(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, MPI_NO_OP, win), MPI_ERR_OP,
           "accumulate with MPI_NO_OP", "MPI_Accumulate", "MPI_NO_OP");
    unsigned char byte = 1;
    expect(MPI_Accumulate(&byte, 1, MPI_BYTE, peer, 0, 1, MPI_BYTE, MPI_SUM, win), MPI_ERR_OP,
           "MPI_SUM on MPI_BYTE", "MPI_SUM", "MPI_BYTE");
    expect(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "free while a lock is held", "MPI_Win_free",
           "lock is held");
    tap_ok(win != MPI_WIN_NULL, "the window survives the refused free");
    tap_is_long(MPI_Put(&v, 1, MPI_LONG, peer, me, 1, MPI_LONG, win), MPI_SUCCESS,
                "after the errors the window still works");
    MPI_Win_unlock(peer, win);
    expect(MPI_Win_unlock(peer, win), MPI_ERR_RMA_SYNC, "unlock without lock", "MPI_Win_unlock",
           "not locked");
    expect(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "complete without start", "MPI_Win_complete",
           "MPI_Win_start");
    expect(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post", "MPI_Win_wait", "post");
    expect(MPI_Win_flush(peer, win), MPI_ERR_RMA_SYNC, "flush outside a passive epoch",
           "MPI_Win_flush", "passive target");
    expect(MPI_Win_fence(0x4000000, win), MPI_ERR_ASSERT, "fence with an unknown assert",
           "MPI_Win_fence", "assert");
    expect(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "unlock_all without lock_all",
           "MPI_Win_unlock_all", NULL);
    expect(MPI_Win_shared_query(win, 0, &(MPI_Aint){0}, &(int){0}, &(void *){0}), MPI_SUCCESS,
           "shared_query on an allocated ref window is allowed", "", NULL);

    /* A fence epoch that carried RMA calls must be closed by a fence; an empty one may give way. */
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_LONG, peer, 2, 1, MPI_LONG, win);
    expect(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_SYNC,
           "lock inside a fence epoch that carried a put", "MPI_Win_lock", "MPI_Win_fence");
    expect(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC, "lock_all inside that fence epoch",
           "MPI_Win_lock_all", "RMA call");
    MPI_Win_fence(0, win);
    tap_is_long(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_SUCCESS,
                "after a fence with no RMA call in its epoch, a lock may follow");
    MPI_Win_unlock(peer, win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Errhandler eh;
    MPI_Win_create_errhandler(count_errors, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Put(&v, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win);
    tap_is_long(handler_calls, 1, "a user error handler on the window is called once per error");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* The put above into rank `peer` at disp `me` arrived: window usable after all of that. */
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    tap_is_long(base[peer], 7, "the put issued between the errors arrived");
    r = MPI_Win_free(&win);
    tap_is_long(r, MPI_SUCCESS, "the window frees cleanly at the end");

    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long region[4] = {0};
    MPI_Win_attach(win, region, sizeof region);
    expect(MPI_Win_attach(win, region + 1, sizeof(long)), MPI_ERR_RMA_ATTACH,
           "attaching an overlapping region", "MPI_Win_attach", "overlaps");
    MPI_Aint addr, peer_addr;
    MPI_Get_address(region, &addr);
    MPI_Sendrecv(&addr, 1, MPI_AINT, peer, 0, &peer_addr, 1, MPI_AINT, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Win_lock_all(0, win);
    expect(MPI_Put(&v, 1, MPI_LONG, peer, peer_addr + 4 * (MPI_Aint)sizeof(long), 1, MPI_LONG, win),
           MPI_ERR_RMA_RANGE, "dynamic window: put past the attached region", "MPI_Put",
           "not inside a region");
    tap_is_long(
        MPI_Put(&v, 1, MPI_LONG, peer, peer_addr + 3 * (MPI_Aint)sizeof(long), 1, MPI_LONG, win),
        MPI_SUCCESS, "dynamic window: put to the region's last element");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    tap_is_long(region[3], 7, "it arrived");
    expect(MPI_Win_detach(win, region + 2), MPI_ERR_RMA_ATTACH, "detaching an unknown address",
           "MPI_Win_detach", NULL);
    MPI_Win_detach(win, region);
    MPI_Win_free(&win);

    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
