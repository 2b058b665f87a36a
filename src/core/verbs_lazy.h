/* SPDX-License-Identifier: MIT */
/*
 * libibverbs opened on first use (src/core/verbs_lazy.c says why): the
 * verbs collector on the live machine and the probe's endpoints
 * (probe_ports(), probe_ep_open()) call this before their first verbs call,
 * so a missing library is their reason, said once; they then call libibverbs
 * by its own names (<infiniband/verbs.h>) as if it were linked.
 */
#ifndef ROCEWATCH_VERBS_LAZY_H
#define ROCEWATCH_VERBS_LAZY_H

#include <stddef.h>

#define VERBS_LAZY_SONAME "libibverbs.so.1"

/*
 * 0, or -ENOENT with err naming the library and why it did not open
 * ("RDMA verbs needs libibverbs.so.1: ...").  Thread-safe; the library is
 * opened once and never closed, and a failure is not retried.
 */
int verbs_lazy_open(char *err, size_t errlen);

#endif
