/* SPDX-License-Identifier: MIT */
/*
 * A fleet probe slice's address handles (probe_responder.c): one per (local
 * port, peer GID, traffic class, flow label) the slice sends to, made by a
 * thread of their own between the slice's arrival and its common start (the
 * plan's lead), in the order the probes need them.  ibv_create_ah resolves
 * the peer's MAC in the kernel (a system call and a neighbour lookup; up to
 * a second when the neighbour is unknown), so it must not sit on the
 * responder's thread between two receives: about 9 x 8 000 handles a node
 * in a 1 000-node plan with 8 paths.  The send path only looks a handle up;
 * one not made yet when its probe is due is made there and then (counted
 * lazy), one the thread is making that moment makes the probe wait
 * (-ENOBUFS, asked again).  The traffic class is the plan's, one for all.
 * The replies this node sends to its plan's peers use the same handles
 * (probe_ahs_find(): a peer probes us on the rail we probe it on).
 */
#ifndef ROCEWATCH_PROBE_AHS_H
#define ROCEWATCH_PROBE_AHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_slice.h"

struct ibv_ah;
struct probe_ep;
struct probe_ahs;

/*
 * The table for slice s (which must outlive it), whose port k sends from
 * ep_of[k] (copied; NULL: none).  0 or -ENOMEM.
 */
int probe_ahs_new(struct probe_ahs **out, const struct probe_slice *s,
		  struct probe_ep *const *ep_of, uint8_t tclass);
/* Start making them (a thread); 0 or -errno, after which they are all made lazily. */
int probe_ahs_start(struct probe_ahs *t);
/*
 * The handle for entry's probe on flow label fl (0: the main path): 0 and
 * *ah; -ENOBUFS: being made now; -EHOSTUNREACH: it could not be made (or
 * its port is gone).  From one thread only (the responder's).
 */
int probe_ahs_get(struct probe_ahs *t, size_t entry, unsigned fl, struct ibv_ah **ah);
/* A made handle from slice port k to gid with tclass on the main path, else NULL; never makes. */
struct ibv_ah *probe_ahs_find(struct probe_ahs *t, unsigned k, const uint8_t gid[16],
			      uint8_t tclass);
/*
 * Wait for the thread to end: the one making them stops between two
 * handles, the one destroying them (probe_ahs_release()) finishes.
 */
void probe_ahs_stop(struct probe_ahs *t);
/*
 * Let slice port k's handles go (every port's when k < 0): after
 * probe_ahs_stop(), and only once no send still uses them.  Port k's are
 * destroyed at once (its endpoint is about to close); all of them by a
 * thread, so the responder does not make as many system calls after the
 * run as were made before it.
 */
void probe_ahs_release(struct probe_ahs *t, int k);
/* Stop, destroy what is left, free. */
void probe_ahs_free(struct probe_ahs *t);
void probe_ahs_stats(struct probe_ahs *t, struct probe_ah_stats *st);
/* The first handle that could not be made, in words ("" when none). */
const char *probe_ahs_error(struct probe_ahs *t);

#endif
