/* hashtable.c — lab 7: a distributed hash table, one-sided and two-sided
 * (labs/07-hashtable/README.md).
 *
 * Every rank owns one volume of the table: SLOTS ints in its window, 0 meaning empty. A key (a
 * positive int) belongs to one rank and one slot, given by a hash of the key; when that slot is
 * taken, the next one of the same volume is tried (linear probing). Every rank inserts N keys of
 * its own, all different, then every owner checks its volume and the ranks compare totals:
 * every key must be in the table exactly once, in the volume it belongs to.
 *
 *   -m rma   one-sided: inside one MPI_Win_lock_all epoch, a rank claims a slot of the owner's
 *            volume with RMA calls (insert_rma below)
 *   -m am    two-sided: every rank sends each owner the keys that belong to it (MPI_Ialltoall
 *            of the counts, MPI_Ialltoallv of the keys); owners insert them into their own volume
 *
 *   mpiexec -n 3 ./hashtable [-m rma|am] [-k N] [-r REPEATS]
 */
#include "labutil.h"

static int nranks, slots;

static unsigned hash(int key)
{
    unsigned x = (unsigned)key * 2654435761u;
    return x ^ (x >> 16);
}
static int owner_of(int key)
{
    return (int)(hash(key) % (unsigned)nranks);
}
static int slot_of(int key)
{
    return (int)((hash(key) / (unsigned)nranks) % (unsigned)slots);
}

/* Insert key into its owner's volume, one-sided. Called inside a lock_all epoch. */
static void insert_rma(MPI_Win win, int key)
{
    const int owner = owner_of(key);
    for (int s = slot_of(key), tries = 0; tries < slots; s = (s + 1) % slots, tries++) {
        int current;
        MPI_Get(&current, 1, MPI_INT, owner, s, 1, MPI_INT, win);
        MPI_Win_flush(owner, win);
        if (current == 0) { /* the slot is empty: take it */
            MPI_Put(&key, 1, MPI_INT, owner, s, 1, MPI_INT, win);
            MPI_Win_flush(owner, win);
            return;
        }
    }
    fprintf(stderr, "hashtable: the volume of rank %d is full\n", owner);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Insert key into this rank's own volume (two-sided version: the owner does it itself). */
static void insert_local(int *volume, int key)
{
    for (int s = slot_of(key), tries = 0; tries < slots; s = (s + 1) % slots, tries++)
        if (volume[s] == 0) {
            volume[s] = key;
            return;
        }
    fprintf(stderr, "hashtable: my volume is full\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The keys of this rank: rank*n+1 .. rank*n+n, scrambled, so owners and slots look random. */
static int key_of(int rank, int n, int i)
{
    return (int)(((unsigned)(rank * n + i) * 40503u) % 0x7fff0000u) + 1;
}

int main(int argc, char **argv)
{
    int rank, *volume;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const int n = lab_arg(argc, argv, "-k", 2000), repeats = lab_arg(argc, argv, "-r", 5);
    int am = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-m") == 0)
            am = strcmp(argv[i + 1], "am") == 0;
    if (n < 1 || repeats < 1) {
        if (rank == 0)
            fprintf(stderr, "hashtable: -k and -r must be at least 1\n");
        MPI_Finalize();
        return 2;
    }
    slots = 2 * n + 4; /* at most half full on average; a multiple of 4 ints (16 bytes) */
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)slots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &volume, &win);
    int *keys = malloc(n * sizeof(int)), *sendbuf = malloc(n * sizeof(int));
    int *recvbuf = malloc((size_t)nranks * n * sizeof(int));
    int *scount = calloc(nranks, sizeof(int)), *rcount = calloc(nranks, sizeof(int));
    int *sdispl = calloc(nranks, sizeof(int)), *rdispl = calloc(nranks, sizeof(int));
    for (int i = 0; i < n; i++)
        keys[i] = key_of(rank, n, i);
    double best = 1e30;
    long long found = 0, sum = 0, misplaced = 0;

    for (int rep = 0; rep < repeats; rep++) {
        for (int s = 0; s < slots; s++)
            volume[s] = 0;
        lab_barrier(MPI_COMM_WORLD); /* every volume is empty before anybody inserts */
        const double t0 = lab_now();
        if (!am) {
            MPI_Win_lock_all(0, win);
            for (int i = 0; i < n; i++)
                insert_rma(win, keys[i]);
            MPI_Win_unlock_all(win);
        } else {
            for (int r = 0; r < nranks; r++)
                scount[r] = 0;
            for (int i = 0; i < n; i++)
                scount[owner_of(keys[i])]++;
            for (int r = 1; r < nranks; r++)
                sdispl[r] = sdispl[r - 1] + scount[r - 1];
            for (int r = 0; r < nranks; r++)
                scount[r] = 0;
            for (int i = 0; i < n; i++) {
                const int o = owner_of(keys[i]);
                sendbuf[sdispl[o] + scount[o]++] = keys[i];
            }
            MPI_Request req;
            MPI_Ialltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD, &req);
            lab_wait(&req);
            for (int r = 1; r < nranks; r++)
                rdispl[r] = rdispl[r - 1] + rcount[r - 1];
            MPI_Ialltoallv(sendbuf, scount, sdispl, MPI_INT, recvbuf, rcount, rdispl, MPI_INT,
                           MPI_COMM_WORLD, &req);
            lab_wait(&req);
            for (int i = 0; i < rdispl[nranks - 1] + rcount[nranks - 1]; i++)
                insert_local(volume, recvbuf[i]);
        }
        double t = lab_now() - t0, tmax;
        lab_barrier(MPI_COMM_WORLD); /* every insert is complete: owners may read their volume */
        MPI_Request req;
        MPI_Iallreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
        lab_wait(&req);
        if (tmax < best)
            best = tmax;
        long long mine[3] = {0, 0, 0}, all[3];
        for (int s = 0; s < slots; s++)
            if (volume[s]) {
                mine[0]++;
                mine[1] += volume[s];
                mine[2] += owner_of(volume[s]) != rank;
            }
        MPI_Iallreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &req);
        lab_wait(&req);
        found = all[0], sum = all[1], misplaced = all[2];
        if (found != (long long)nranks * n)
            break; /* keys were lost: report this repetition */
    }

    long long expect_sum = 0;
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < n; i++)
            expect_sum += key_of(r, n, i);
    if (rank == 0) {
        const int ok = found == (long long)nranks * n && sum == expect_sum && !misplaced;
        printf("hashtable (%s): %lld keys in the table, %lld expected; checksum %s; %lld in the"
               " wrong volume: %s\n",
               am ? "two-sided" : "one-sided", found, (long long)nranks * n,
               sum == expect_sum ? "ok" : "WRONG", misplaced, ok ? "verified" : "WRONG");
        printf("hashtable: %.3f ms for %d inserts (best of %d): %.2f M inserts/s\n", 1e3 * best,
               nranks * n, repeats, nranks * n / best / 1e6);
        printf("lab-result: mode=%s keys=%lld expected=%lld checksum=%s misplaced=%lld ms=%.4f"
               " verified=%s\n",
               am ? "am" : "rma", found, (long long)nranks * n, sum == expect_sum ? "ok" : "wrong",
               misplaced, 1e3 * best, ok ? "yes" : "no");
    }
    free(keys), free(sendbuf), free(recvbuf), free(scount), free(rcount), free(sdispl),
        free(rdispl);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
