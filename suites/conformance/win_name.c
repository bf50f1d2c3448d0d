/* win_name.c — MPI_Win_set_name / MPI_Win_get_name: an unnamed window's name is the empty string
 * (MPI-3.1 §6.8, as for communicators), a set name round-trips with its length. Its own program
 * because Open MPI 4.1.4 names new windows itself ("rdma window 3"). */
#include "conf.h"

static void check(MPI_Win win, const char *flavor)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Win_get_name(win, name, &len);
    if (len != 0 || name[0] != '\0')
        tap_diag("MPI_Win_get_name of an unnamed %s window: '%s' (resultlen %d)", flavor, name,
                 len);
    tap_ok(len == 0 && name[0] == '\0', "an unnamed %s window's name is the empty string", flavor);
    MPI_Win_set_name(win, "conformance window");
    MPI_Win_get_name(win, name, &len);
    tap_is_str(name, "conformance window", "%s: MPI_Win_set_name / MPI_Win_get_name round-trip",
               flavor);
    tap_is_long(len, (long)strlen("conformance window"), "%s: MPI_Win_get_name's resultlen",
                flavor);
    MPI_Win_set_name(win, "renamed");
    MPI_Win_get_name(win, name, &len);
    tap_is_str(name, "renamed", "%s: a second MPI_Win_set_name replaces the name", flavor);
}

int main(int argc, char **argv)
{
    conf_init(&argc, &argv, 1);
    tap_plan(8);
    MPI_Win win;
    void *base;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    check(win, "Win_allocate");
    MPI_Win_free(&win);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check(win, "Win_create_dynamic");
    MPI_Win_free(&win);
    return conf_done();
}
