/* SPDX-License-Identifier: MIT */
/* A peer's probe QPs as its serve publishes them at /api/v1/probe (JSON), read back. */
#ifndef ROCEWATCH_PROBE_INFO_H
#define ROCEWATCH_PROBE_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_INFO_MAX_PORTS 64

struct probe_info {
	char device[64], gid[48];
	unsigned port, active_mtu; /* 0 when not published */
	uint8_t gid_raw[16];
	uint32_t qpn, qkey;
	/* what a fleet probe plans with: "" and -1 when not published */
	bool active;
	char role[16], rail[64], leaf[64];
	int64_t link_downed, carrier_changes, symbol_errors;
};

/* Every port of the document, and the host's facts ("" none). */
struct probe_doc {
	struct probe_info *ports;
	size_t n;
	char host[256];
};

/*
 * The first port of a /api/v1/probe document: 0, or -EBADMSG with err
 * saying what is wrong with it (not JSON, no ports, a GID or QPN that is
 * not one), without naming where it came from.
 */
int probe_info_parse(const char *body, size_t len, struct probe_info *pi, char *err, size_t errlen);
/*
 * Every port (at most PROBE_INFO_MAX_PORTS): 0, -EBADMSG with err naming the
 * port and the member that is wrong (a hostile document quoted in at most a
 * few printable characters), -ENOMEM.  d is safe to free either way.
 */
int probe_info_parse_all(const char *body, size_t len, struct probe_doc *d, char *err,
			 size_t errlen);
void probe_doc_free(struct probe_doc *d);

#endif
