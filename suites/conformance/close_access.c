/* close_access.c — a closing call returns only when no access of its epoch still reads or writes
 * the window (MPI-3.1 §11.5: "the window is ... available for local access" once MPI_Win_wait,
 * the closing MPI_Win_fence or the release of a lock returns). Ranks pair up, origin 2k and
 * target 2k+1 (an odd last rank only joins the collectives). In every synchronization mode the
 * origin reads (get, get_accumulate, a derived target type, a request-based get) or writes (put)
 * a large part of the target's window; as soon as the target may touch its window again — after
 * its MPI_Win_wait or closing fence, or once it holds an exclusive lock on itself after the
 * origin's unlock — it overwrites it. The origin must still have read the old bytes, and the
 * target's new bytes must survive (no put landing after the closing call).
 *
 * Found on libnbrma across nodes: a get of more than 16 KiB was sent from window memory by a
 * rendezvous send that was still reading when the origin's done notification or lock release
 * (sent once the data had *arrived*) was served, so MPI_Win_wait and the next lock holder saw
 * the window free while the transfer still read it: the origin received the new bytes. */
#include "conf.h"

enum { M_PSCW, M_FENCE, M_EXCL, M_SHARED, M_ALL, M_NMODES };
static const char *const mname[] = {"PSCW", "fence", "lock exclusive", "lock shared", "lock_all"};
enum { O_GET, O_GET_DERIVED, O_GETACC, O_RGET, O_PUT, O_NOPS };
static const char *const oname[] = {"MPI_Get", "MPI_Get (vector target type)",
                                    "MPI_Get_accumulate (MPI_NO_OP)", "MPI_Rget + MPI_Wait",
                                    "MPI_Put"};

static MPI_Group world_group;

/* The old contents of the target's window in round `round`, and what it writes after. */
static int old_val(int round, int i)
{
    return round * 1000003 + i;
}
static int new_val(int round, int i)
{
    return -(round * 7 + i) - 1;
}

/* One case: `n` ints of the window, read or written by the origin in mode `m`. */
static void one(int m, int o, int n, int round)
{
    const int origin = (conf_rank & 1) == 0 && conf_rank + 1 < conf_size,
              target = conf_rank & 1, peer = conf_rank ^ 1;
    int *mem, *buf = malloc((size_t)n * sizeof *buf);
    MPI_Win win;
    conf_win_allocate((MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                      MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < n; i++)
        mem[i] = old_val(round, i), buf[i] = o == O_PUT ? 7 * i + round : -7;
    /* The derived case reads every other block of 4096 ints (a vector of n/8192 blocks). */
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    int nblk = n / 8192, per = 4096;
    if (o == O_GET_DERIVED) {
        MPI_Type_vector(nblk, per, 2 * per, MPI_INT, &vec);
        MPI_Type_commit(&vec);
    }
    MPI_Group g = MPI_GROUP_NULL;
    if (m == M_PSCW && (origin || target) && peer < conf_size)
        MPI_Group_incl(world_group, 1, &peer, &g);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone's window holds the old contents */
    if (m == M_FENCE)
        MPI_Win_fence(0, win);
    if (origin) {
        if (m == M_PSCW)
            MPI_Win_start(g, 0, win);
        else if (m == M_EXCL || m == M_SHARED)
            MPI_Win_lock(m == M_EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, peer, 0, win);
        else if (m == M_ALL)
            MPI_Win_lock_all(0, win);
        if (m >= M_EXCL) {
            /* A lock may be taken lazily: make sure it is held (flush). Then the target may ask
             * for its own exclusive lock, which is granted only after my unlock; it overwrites
             * its window as soon as it has it. */
            int probe, go = 1;
            MPI_Get(&probe, 1, MPI_INT, peer, 0, 1, MPI_INT, win);
            MPI_Win_flush(peer, win);
            MPI_Send(&go, 1, MPI_INT, peer, 17, MPI_COMM_WORLD);
        }
        MPI_Request r;
        switch (o) {
        case O_GET:
            MPI_Get(buf, n, MPI_INT, peer, 0, n, MPI_INT, win);
            break;
        case O_GET_DERIVED:
            MPI_Get(buf, nblk * per, MPI_INT, peer, 0, 1, vec, win);
            break;
        case O_GETACC:
            MPI_Get_accumulate(NULL, 0, MPI_INT, buf, n, MPI_INT, peer, 0, n, MPI_INT, MPI_NO_OP,
                               win);
            break;
        case O_RGET:
            MPI_Rget(buf, n, MPI_INT, peer, 0, n, MPI_INT, win, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            break;
        case O_PUT:
            MPI_Put(buf, n, MPI_INT, peer, 0, n, MPI_INT, win);
            break;
        }
        if (m == M_PSCW)
            MPI_Win_complete(win);
        else if (m == M_EXCL || m == M_SHARED)
            MPI_Win_unlock(peer, win);
        else if (m == M_ALL)
            MPI_Win_unlock_all(win);
    } else if (target && peer < conf_size) {
        if (m == M_PSCW) {
            MPI_Win_post(g, 0, win);
            MPI_Win_wait(win);
        } else if (m >= M_EXCL) {
            int go;
            MPI_Recv(&go, 1, MPI_INT, peer, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, conf_rank, 0, win); /* after the origin's unlock */
        }
        if (m != M_FENCE) { /* the window is mine again: overwrite it at once */
            for (int i = 0; i < n; i++)
                mem[i] = new_val(round, i);
            if (m >= M_EXCL)
                MPI_Win_unlock(conf_rank, win);
        }
    }
    if (m == M_FENCE) {
        MPI_Win_fence(0, win);
        if (target && peer < conf_size)
            for (int i = 0; i < n; i++)
                mem[i] = new_val(round, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0, first = -1;
    long got = 0, exp = 0;
    if (origin && o != O_PUT) {
        for (int k = 0, i = 0; k < (o == O_GET_DERIVED ? nblk * per : n); k++) {
            i = o == O_GET_DERIVED ? (k / per) * 2 * per + k % per : k;
            if (buf[k] != old_val(round, i) && bad++ == 0)
                first = k, got = buf[k], exp = old_val(round, i);
        }
        if (bad)
            tap_diag("element %d of the result holds %ld, expected %ld%s (%d of %d differ)",
                     first, got, exp, got < 0 ? ": the target's write after its closing call" : "",
                     bad, n);
    }
    if (target && peer < conf_size && o == O_PUT) {
        MPI_Win_lock(MPI_LOCK_SHARED, conf_rank, 0, win);
        for (int i = 0; i < n; i++)
            if (mem[i] != new_val(round, i) && bad++ == 0)
                first = i, got = mem[i], exp = new_val(round, i);
        MPI_Win_unlock(conf_rank, win);
        if (bad)
            tap_diag("element %d of the target's window holds %ld after its own write of %ld: "
                     "the put landed after the closing call (%d of %d differ)",
                     first, got, exp, bad, n);
    }
    tap_ok(bad == 0, "%s, %s of %d bytes: %s", mname[m], oname[o], n * (int)sizeof(int),
           o == O_PUT ? "no byte lands after the target's closing call"
                      : "the origin read the window as it was before the closing call");
    if (vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&vec);
    if (g != MPI_GROUP_NULL)
        MPI_Group_free(&g);
    conf_win_free(&win);
    free(buf);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 2);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    /* Above 16384 bytes, the largest eager message of libnbrma's am transport. */
    static const int sizes[] = {4100, 262148}; /* whole multiples of 16 bytes */
    /* Request-based calls belong to passive-target epochs only (MPI-3.1 §11.3.5). */
    tap_plan(M_NMODES * (O_NOPS - 1) * 2 + M_NMODES - 2 * 2);
    int round = 0;
    for (int m = 0; m < M_NMODES; m++)
        for (int o = 0; o < O_NOPS; o++)
            for (int s = 0; s < 2; s++) {
                if ((o == O_GET_DERIVED && s == 0) || (o == O_RGET && m <= M_FENCE))
                    continue; /* two blocks of 4096 ints at least; Rget: passive target only */
                one(m, o, o == O_GET_DERIVED ? 65536 : sizes[s], round++);
            }
    MPI_Group_free(&world_group);
    return conf_done();
}
