/* SPDX-License-Identifier: MIT */
/*
 * wire_fields: the wire.* fields of a netdev, derived from its cumulative
 * obj->wire counters.  Kept apart from the collector (wire.c, which needs
 * libbpf) so the derivation is built and unit-tested everywhere.
 *
 * The fields describe recent traffic, not everything since start: one
 * mis-marked job an hour ago must not fail "RoCE data DSCP == 26" until the
 * next restart.  The window moves every WIRE_WINDOW_NS and covers between
 * one and two windows (5 to 10 minutes) of traffic; until the first move it
 * covers everything since the device was attached.  The per-codepoint
 * counters (obj->wire, roce_wire_*_total) stay cumulative.
 */
#ifndef ROCEWATCH_WIRE_FIELDS_H
#define ROCEWATCH_WIRE_FIELDS_H

#include <stdint.h>

#include "model.h"

#define WIRE_WINDOW_NS (300 * 1000000000LL)

/* What the rules look at: data and CNP packets, both directions summed. */
struct wire_sums {
	uint64_t data[RW_DSCP_COUNT]; /* RoCE data packets per DSCP */
	uint64_t cnp[RW_DSCP_COUNT];  /* CNPs per DSCP */
	uint64_t data_ecn[4];	      /* RoCE data packets per ECN codepoint */
};

struct wire_window {
	struct wire_sums base[2]; /* sums at the start of the previous [0] and current [1] window */
	int64_t start_ns;	  /* monotonic time base[1] was taken */
};

/* A freshly attached device: the window starts now, from zero. */
void wire_window_reset(struct wire_window *win, int64_t now_ns);

/* Sum o->wire into the rule view. */
void wire_sums_of(const struct wire_counts *wc, struct wire_sums *out);

/*
 * Set the wire.* fields of netdev o from o->wire (which must be allocated)
 * at monotonic time now_ns, moving the window when it is due.  Kinds of
 * packets not seen in the window leave their fields absent with ABS_NO_DATA.
 */
void wire_fields_derive(struct object *o, struct wire_window *win, int64_t now_ns);

/* Mark every wire.* field of o absent with one reason (and errno). */
void wire_fields_absent(struct object *o, enum absent_reason why, int err);

#endif
