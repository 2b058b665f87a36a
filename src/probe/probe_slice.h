/* SPDX-License-Identifier: MIT */
/*
 * A node's slice of a fleet probe plan, and its results, as they travel
 * (POST /api/v1/probe/plan, GET /api/v1/probe/plan?id=ID): a line of JSON,
 * the header, then a line of base64 holding fixed binary records, so a
 * 1 000-node full mesh is 8 000 entries of 28 bytes (about 300 KB) per node,
 * not megabytes of JSON, and the records are read without a JSON parser
 * walking them (it is the coordinator's cost: 1 000 nodes' results).
 *
 * The slice:
 *   {"version": 1, "plan": "<16 hex digits>", "session": u32, "node": NAME,
 *    "start_ns": CLOCK_REALTIME ns of slot 0, "slot_ns", "probe_ns", "wait_ns",
 *    "slots", "repeats", "paths", "dscp",
 *    "ports": [{"device", "port", "gid"}, ...]   the node's own ports, by index,
 *    "entries": N}
 *   base64 of N records
 * an entry record, multi-byte fields in network byte order:
 *    0 u32 slot   4 u16 mtu   6 u8 port (into "ports")   7 u8 flow labels
 *    8 u8 kind    9 u24 the peer's QPN   12 u8[16] the peer's GID
 *
 * The results:
 *   {"version": 1, "plan", "node", "state": "running"|"done", "entries": N,
 *    "address_handles": {"made", "failed", "lazy", "create_seconds",
 *                        "mean_seconds", "max_seconds", "ready_seconds",
 *                        "before_start"}}
 *   base64 of N records (an empty line while running)
 * address_handles (optional: a serve before it sends none) is struct
 * probe_ah_stats; ready_seconds is null when they were not all made before
 * the run ended.
 * a result record: u8 sent[3], u8 recv[3], u8 damaged, u8 labels_sent,
 *    u32 labels_lost, u32 rtt_ns (network byte order): struct probe_result.
 *
 * Every decode checks what it takes (sizes, ranges, the record count against
 * "entries", the plan id) and says what is wrong in one line naming the
 * field, without quoting more of a hostile body than a few characters.
 */
#ifndef ROCEWATCH_PROBE_SLICE_H
#define ROCEWATCH_PROBE_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_plan.h"
#include "strbuf.h"

#define PROBE_SLICE_VERSION	1
#define PROBE_SLICE_ENTRY_LEN	28
#define PROBE_RESULT_LEN	16
#define PROBE_SLICE_MAX_ENTRIES (1u << 22) /* 4 M: far past any budget's plan */
#define PROBE_SLICE_MAX_SLOTS	(1u << 22)
#define PROBE_SLICE_NAME_MAX	256

struct probe_slice_port {
	char device[64];
	unsigned port;
	char gid[48];
};

struct probe_slice_entry {
	uint32_t slot;
	uint16_t mtu;
	uint8_t port, labels, kind;
	uint32_t qpn;
	uint8_t gid[16];
};

struct probe_slice {
	uint64_t plan;
	uint32_t session;
	char node[PROBE_SLICE_NAME_MAX];
	int64_t start_ns, slot_ns, probe_ns, wait_ns;
	uint32_t n_slots;
	unsigned repeats, paths, dscp;
	struct probe_slice_port *ports;
	size_t n_ports;
	struct probe_slice_entry *e;
	size_t n;
};

/*
 * A slice's address handles (probe_ahs.h): how many were made (ahead of the
 * start, or lazily when their probe was due), could not be, what
 * ibv_create_ah took in all and at most, and how long after the slice came
 * in the last one was there.
 */
struct probe_ah_stats {
	bool known; /* decoded: the results carried them */
	uint64_t made, failed, lazy;
	int64_t create_ns, max_ns;
	int64_t ready_ns; /* -1: not all made before the run ended */
	bool before_start;
};

/* JSON into out (appended); 0 or -ENOMEM. */
int probe_slice_encode(struct strbuf *out, const struct probe_slice *s);
/* 0, or -EBADMSG / -ENOMEM with err saying what is wrong; s is safe to free either way. */
int probe_slice_decode(const char *body, size_t len, struct probe_slice *s, char *err,
		       size_t errlen);
void probe_slice_free(struct probe_slice *s);

/* ah as JSON (those members and "mean_seconds"): a new reference, NULL without memory */
struct json_t;
struct json_t *probe_ah_stats_json(const struct probe_ah_stats *ah);

/* ah: NULL for none */
int probe_results_encode(struct strbuf *out, uint64_t plan, const char *node, bool done,
			 const struct probe_result *r, size_t n, const struct probe_ah_stats *ah);
/*
 * Results of plan for n entries into out[n] and, if ah is not NULL, its
 * address handles into *ah (known false when absent): 0, 1 when the node
 * says it is still running (out untouched), or -EBADMSG with err.
 */
int probe_results_decode(const char *body, size_t len, uint64_t plan, size_t n,
			 struct probe_result *out, struct probe_ah_stats *ah, char *err,
			 size_t errlen);

/* "0123456789abcdef" <-> the plan id; 0 or -EINVAL */
void probe_plan_id_text(uint64_t id, char buf[17]);
int probe_plan_id_parse(const char *s, uint64_t *id);

#endif
