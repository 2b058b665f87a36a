// SPDX-License-Identifier: MIT
/* wire_fields: the wire.* fields from the wire view's counters (see wire_fields.h). */
#include <stdbool.h>
#include <string.h>

#include "wire_fields.h"

/* ECN codepoints (RFC 3168 section 5): the two low bits of the traffic class. */
#define WIRE_ECN_NOT_ECT 0
#define WIRE_ECN_CE	 3

void wire_window_reset(struct wire_window *win, int64_t now_ns)
{
	memset(win, 0, sizeof(*win));
	win->start_ns = now_ns;
}

void wire_sums_of(const struct wire_counts *wc, struct wire_sums *out)
{
	memset(out, 0, sizeof(*out));
	for (int dir = 0; dir < 2; dir++)
		for (int d = 0; d < RW_DSCP_COUNT; d++)
			for (int e = 0; e < 4; e++) {
				uint64_t data = wc->packets[dir][d][e][WIRE_DATA];

				out->data[d] += data;
				out->data_ecn[e] += data;
				out->cnp[d] += wc->packets[dir][d][e][WIRE_CNP];
			}
}

/* Every counter of a is at least the one of b. */
static bool sums_ge(const struct wire_sums *a, const struct wire_sums *b)
{
	for (int d = 0; d < RW_DSCP_COUNT; d++)
		if (a->data[d] < b->data[d] || a->cnp[d] < b->cnp[d])
			return false;
	for (int e = 0; e < 4; e++)
		if (a->data_ecn[e] < b->data_ecn[e])
			return false;
	return true;
}

void wire_fields_derive(struct object *o, struct wire_window *win, int64_t now_ns)
{
	const struct wire_sums *base = &win->base[0];
	struct wire_sums now;
	uint64_t data = 0, cnp = 0, dset = 0, cset = 0;

	wire_sums_of(o->wire, &now);
	/*
	 * The counters only grow while one attachment lasts; smaller ones
	 * mean a new attachment (counted from zero) whose window the caller
	 * did not reset.  Start the window over rather than underflow.
	 */
	if (!sums_ge(&now, &win->base[0]) || !sums_ge(&now, &win->base[1]))
		wire_window_reset(win, now_ns);
	if (now_ns - win->start_ns >= WIRE_WINDOW_NS) {
		win->base[0] = win->base[1];
		win->base[1] = now;
		win->start_ns = now_ns;
	}

	for (int d = 0; d < RW_DSCP_COUNT; d++) {
		uint64_t nd = now.data[d] - base->data[d], nc = now.cnp[d] - base->cnp[d];

		data += nd;
		cnp += nc;
		if (nd)
			dset |= 1ULL << d;
		if (nc)
			cset |= 1ULL << d;
	}
	field_set_int(o, F_NETDEV_WIRE_DATA_PACKETS, (int64_t)data);
	field_set_int(o, F_NETDEV_WIRE_CNP_PACKETS, (int64_t)cnp);
	if (cnp)
		field_set_dset(o, F_NETDEV_WIRE_CNP_DSCP, cset);
	else
		field_absent(o, F_NETDEV_WIRE_CNP_DSCP, ABS_NO_DATA, 0);
	if (!data) {
		/* Without data packets, a set, a 0 or a ratio would read as a pass. */
		field_absent(o, F_NETDEV_WIRE_DATA_DSCP, ABS_NO_DATA, 0);
		field_absent(o, F_NETDEV_WIRE_DATA_NOT_ECT, ABS_NO_DATA, 0);
		field_absent(o, F_NETDEV_WIRE_CE_RATIO, ABS_NO_DATA, 0);
		return;
	}
	field_set_dset(o, F_NETDEV_WIRE_DATA_DSCP, dset);
	field_set_int(o, F_NETDEV_WIRE_DATA_NOT_ECT,
		      (int64_t)(now.data_ecn[WIRE_ECN_NOT_ECT] - base->data_ecn[WIRE_ECN_NOT_ECT]));
	field_set_float(o, F_NETDEV_WIRE_CE_RATIO,
			(double)(now.data_ecn[WIRE_ECN_CE] - base->data_ecn[WIRE_ECN_CE]) /
			    (double)data);
}

void wire_fields_absent(struct object *o, enum absent_reason why, int err)
{
	field_absent_source(o, SRC_WIRE, FIELDS_ALL, why, err);
}
