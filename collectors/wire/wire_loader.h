/* SPDX-License-Identifier: MIT */
/*
 * wire loader: load wire.bpf.c, hang it on devices, read its counters.
 *
 * Every function returns 0 or a negative errno and has already said why
 * through the log callback when it fails.  One struct wire is not meant for
 * concurrent use, except that wire_read() may run alongside itself.
 */
#ifndef ROCEWATCH_WIRE_LOADER_H
#define ROCEWATCH_WIRE_LOADER_H

#include <stdint.h>

#include "wire.h"

struct wire;

/* Levels handed to the log callback; same order as rocewatch's log_level. */
enum wire_log_level {
	WIRE_LOG_ERROR,
	WIRE_LOG_WARN,
	WIRE_LOG_INFO,
	WIRE_LOG_DEBUG,
};

typedef void (*wire_log_fn)(int level, const char *msg);

typedef int (*wire_read_fn)(const struct wire_key *k, uint64_t packets, uint64_t bytes, void *arg);

enum wire_attach_mode {
	WIRE_ATTACH_AUTO,   /* tcx where the kernel has it (6.6+), else clsact */
	WIRE_ATTACH_TCX,    /* tcx or fail: -EINVAL/-EOPNOTSUPP on old kernels */
	WIRE_ATTACH_CLSACT, /* cls_bpf under a clsact qdisc, even where tcx exists */
};

/*
 * Load the programs and the counter map.  roce_port 0 means 4791.  log may
 * be NULL (silence); it also receives libbpf's own messages, because
 * libbpf_set_print() is process-wide: the last wire_open() wins, and
 * wire_close() puts the previous printer back.  -EPERM without CAP_BPF +
 * CAP_NET_ADMIN; -EACCES or -EINVAL when the verifier rejects the programs.
 */
int wire_open(struct wire **w, uint16_t roce_port, wire_log_fn log);

/* For tests and for forcing the legacy hook; applies to later attaches. */
int wire_set_attach_mode(struct wire *w, enum wire_attach_mode mode);

/*
 * Count ingress and egress of ifindex (in the caller's netns).  Idempotent:
 * an ifindex already attached is left as it is.  -EOPNOTSUPP for a device
 * without Ethernet headers, -ENODEV when it does not exist.
 */
int wire_attach(struct wire *w, int ifindex);

/*
 * Undo wire_attach(): tcx links are detached; clsact filters are removed
 * only if they still run our program, and the clsact qdisc only if
 * wire_attach() created it and nothing else hangs on it now.  0 when the
 * device has gone meanwhile; -ENOENT if ifindex was never attached.
 */
int wire_detach(struct wire *w, int ifindex);

/* WIRE_ATTACH_TCX or WIRE_ATTACH_CLSACT for an attached ifindex, else -ENOENT. */
int wire_attach_kind(const struct wire *w, int ifindex);

/*
 * Call cb once per key with counters summed over CPUs.  Counters are
 * cumulative since wire_open(): entries are never deleted, so keys of
 * detached or vanished devices stay.  A non-zero return from cb stops the
 * walk and is returned.
 */
int wire_read(struct wire *w, wire_read_fn cb, void *arg);

/* Detach everything still attached, unload, free.  NULL is fine. */
void wire_close(struct wire *w);

#endif
