/* SPDX-License-Identifier: MIT */
/* A peer's probe QP as its serve publishes it at /api/v1/probe (JSON), read back. */
#ifndef ROCEWATCH_PROBE_INFO_H
#define ROCEWATCH_PROBE_INFO_H

#include <stddef.h>
#include <stdint.h>

struct probe_info {
	char device[64], gid[48];
	unsigned port, active_mtu; /* 0 when not published */
	uint8_t gid_raw[16];
	uint32_t qpn, qkey;
};

/*
 * The first port of a /api/v1/probe document: 0, or -EBADMSG with err
 * saying what is wrong with it (not JSON, no ports, a GID or QPN that is
 * not one), without naming where it came from.
 */
int probe_info_parse(const char *body, size_t len, struct probe_info *pi, char *err, size_t errlen);

#endif
