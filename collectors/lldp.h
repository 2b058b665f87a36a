/* SPDX-License-Identifier: MIT */
/*
 * The lldp collector's parts: who exports what.
 *
 *   lldp_parse.c  pure functions over bytes: an Ethernet frame carrying an
 *                 LLDPDU (IEEE 802.1AB-2016 clause 8), and the JSON of
 *                 `lldpcli -f json show neighbors`, both into struct lldp_nb
 *   lldp_cli.c    runs lldpcli without a shell, bounded in time and output
 *   lldp.c        the collector: the AF_PACKET socket, the neighbours heard
 *                 per ifindex with their TTL, lldpd's answer, the facts
 *
 * Contract of the parsers: 0 with every string of *nb terminated, printable
 * ASCII and at most RW_STR_MAX - 1 bytes, or -EBADMSG with err naming what
 * was wrong ("Port ID TLV: length 1, want 2 to 256"); never a read past len.
 */
#ifndef ROCEWATCH_LLDP_H
#define ROCEWATCH_LLDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* IEEE 802.1AB-2016 Table 7-1: the LLDP ethertype; 8.1: the nearest bridge address */
#define LLDP_ETHERTYPE 0x88cc
extern const uint8_t lldp_nearest_bridge[6];

struct lldp_nb {
	char chassis_id[RW_STR_MAX];
	char port_id[RW_STR_MAX];
	char system_name[RW_STR_MAX]; /* "" when has_system_name is false */
	char port_description[RW_STR_MAX];
	uint8_t chassis_subtype; /* 8.5.2.2 (lldpcli: 0 when its word is not one we map) */
	uint8_t port_subtype;	 /* 8.5.3.2 */
	bool has_system_name, has_port_description;
	uint32_t ttl; /* seconds; 0 from a frame is a shutdown LLDPDU (8.5.4.1) */
};

/*
 * One received frame: destination, source, ethertype LLDP_ETHERTYPE, then an
 * LLDPDU; src (6 bytes, may be NULL) gets the sender's MAC for the log.
 */
int lldp_parse_frame(const uint8_t *buf, size_t len, struct lldp_nb *nb, uint8_t *src, char *err,
		     size_t errlen);
/* The LLDPDU alone (the frame's payload). */
int lldp_parse_pdu(const uint8_t *p, size_t len, struct lldp_nb *nb, char *err, size_t errlen);
/* Do two neighbours say the same (IDs, names; not the TTL)? */
bool lldp_nb_same(const struct lldp_nb *a, const struct lldp_nb *b);

/* One neighbour of lldpcli's answer, by the local interface lldpd heard it on. */
struct lldp_cli_nb {
	char ifname[RW_NAME_MAX];
	struct lldp_nb nb;
};

#define LLDP_CLI_MAX_NB 4096 /* more interfaces than that is not an answer we believe */

/*
 * lldpcli's JSON (-f json): "interface" is an object of one member for one
 * neighbour and an array of one-member objects for several, and a chassis
 * with a system name is an object keyed by that name; both shapes are read.
 * *out (malloc'ed, *n entries, NULL when none) gets one entry per interface
 * (the first neighbour of one that has several).  0, -EBADMSG (err says
 * where), or -ENOMEM.
 */
int lldp_json_parse(const char *buf, size_t len, struct lldp_cli_nb **out, size_t *n, char *err,
		    size_t errlen);

/* What running lldpcli gave: its exit status and what it wrote, bounded. */
#define LLDP_CLI_OUT_MAX    (1u << 20)
#define LLDP_CLI_TIMEOUT_MS 2000
struct lldp_cli_out {
	char *out; /* stdout, terminated; malloc'ed */
	size_t len;
	char err[160]; /* the first line of stderr */
	int status;    /* waitpid's */
};

/*
 * Run argv[0] (looked up in PATH) with argv, stdin /dev/null, no other fd of
 * ours, and env; kill it past timeout_ms or max output bytes.  0 when it ran
 * and exited (r->status says how), -ETIMEDOUT, -EMSGSIZE, -ENOENT (no such
 * program), or another -errno.  lldp_cli_out_free() after, whatever it returned.
 */
int lldp_cli_run(char *const argv[], int timeout_ms, size_t max, struct lldp_cli_out *r);
void lldp_cli_out_free(struct lldp_cli_out *r);

/*
 * The neighbours heard from frames, by ifindex, with when each expires:
 * kept by lldp.c, pure so tests can drive it with their own clock.
 */
struct lldp_heard {
	int ifindex;
	struct lldp_nb nb;
	int64_t expires_ns; /* monotonic */
	bool expired;	    /* its TTL passed (kept to say so, until a frame comes) */
};

struct lldp_table {
	struct lldp_heard *e;
	size_t n, cap;
};

#define LLDP_TABLE_MAX 1024 /* ifindexes heard at once; beyond, new ones are dropped */

/*
 * A frame's neighbour on ifindex at now: 1 when what is known changed (new,
 * different, or a shutdown LLDPDU withdrew it), 0 when it only refreshed the
 * TTL, -ENOSPC when the table is full, -ENOMEM.
 */
int lldp_table_heard(struct lldp_table *t, int ifindex, const struct lldp_nb *nb, int64_t now_ns);
struct lldp_heard *lldp_table_find(struct lldp_table *t, int ifindex);
/* Mark what expired by now: how many newly did (each said once by the caller). */
int lldp_table_expire(struct lldp_table *t, int64_t now_ns,
		      void (*said)(const struct lldp_heard *h, void *arg), void *arg);
/* Forget the ifindexes keep() says are gone. */
void lldp_table_prune(struct lldp_table *t, bool (*keep)(int ifindex, void *arg), void *arg);
void lldp_table_free(struct lldp_table *t);

/*
 * o's lldp.* facts from nb (source "frames" or "lldpd"); the optional TLVs nb
 * lacks absent (unsupported, ENODATA).  lldp_absent(): all of them absent.
 */
void lldp_fill(struct object *o, const struct lldp_nb *nb, const char *source);
void lldp_absent(struct object *o, enum absent_reason why, int err);

#endif
