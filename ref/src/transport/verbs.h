/* verbs.h — the RDMA devices libibverbs sees (verbs.c). RDMA data moves through UCX (ucx.c);
 * what stays of issue 10's libibverbs transport is the device probe, used by nbrma-settings and
 * its unit test. */
#ifndef NBR_VERBS_H
#define NBR_VERBS_H

#include <infiniband/verbs.h>
#include <stddef.h>

/* 1 when an RDMA device with an active port exists; else 0 and a reason in why[n] that starts
 * with "no RDMA device" (e.g. "no RDMA device: ibv_get_device_list found none"). Thread-safe;
 * never crashes when libibverbs or its providers are missing. */
int nbr_verbs_probe(char *why, size_t n);

/* The devices and their ports, one line each (also tp.h's nbr_rdma_devices). */
void nbr_rdma_devices(void *stream);

#endif
