/* SPDX-License-Identifier: MIT */
/*
 * Netlink through libmnl for every collector that speaks it (link and dcb over
 * rtnetlink, ethtool over genetlink, rdma over NETLINK_RDMA/NLDEV):
 *
 *   - messages are walked with every length checked as an unsigned size
 *     against the bytes actually received (libmnl's mnl_nlmsg_ok() compares
 *     nlmsg_len as a signed int, so a length of 2^31 or more "fits" any
 *     buffer);
 *   - attributes are parsed through a const policy table per attribute set:
 *     unknown types are skipped (newer kernels add them), known ones are
 *     checked for type and size, and an error names the attribute
 *     ("DCB_ATTR_IEEE_PFC: payload 12 bytes, want 136");
 *   - one request socket helper, with NETLINK_EXT_ACK so the kernel's own
 *     error text reaches the log, and a receive timeout so a reply that
 *     never comes cannot hang a poll.
 *
 * The parsers take bytes and never touch a socket: the unit tests and the
 * fuzz harnesses feed them exactly what a kernel sends.  Names carry an rw_
 * prefix: libibverbs brings libnl-3, which exports nl_close() and friends.
 */
#ifndef ROCEWATCH_NL_H
#define ROCEWATCH_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* The longest string a row without its own maximum accepts (NUL included). */
#define RW_NL_STR_MAX 256

/*
 * One row per attribute type read; rows left zero (type MNL_TYPE_UNSPEC)
 * and types past the table are skipped.
 *   U8/U16/U32/U64  exactly their width
 *   FLAG            no payload
 *   NUL_STRING      terminated, at most max bytes with the NUL
 *                   (RW_NL_STR_MAX when max is 0)
 *   NESTED          empty, or room for at least one attribute header
 *   BINARY          exactly len bytes when len is set (a struct copied
 *                   whole), else between min and max
 */
struct rw_nl_policy {
	uint8_t type;	  /* enum mnl_attr_data_type */
	uint16_t len;	  /* exact payload length, 0 = not fixed */
	uint16_t min;	  /* shortest payload, 0 = none */
	uint16_t max;	  /* longest payload, 0 = none (strings: RW_NL_STR_MAX) */
	const char *name; /* "DCB_ATTR_IEEE_PFC", for errors */
};

/* Rows that name their attribute once: RW_NL_U32(X) is [X] = { ..., .name = "X" }. */
#define RW_NL_U8(a)   [a] = { .type = MNL_TYPE_U8, .name = #a }
#define RW_NL_U16(a)  [a] = { .type = MNL_TYPE_U16, .name = #a }
#define RW_NL_U32(a)  [a] = { .type = MNL_TYPE_U32, .name = #a }
#define RW_NL_U64(a)  [a] = { .type = MNL_TYPE_U64, .name = #a }
#define RW_NL_FLAG(a) [a] = { .type = MNL_TYPE_FLAG, .name = #a }
#define RW_NL_NEST(a) [a] = { .type = MNL_TYPE_NESTED, .name = #a }
/* A terminated string of at most maxlen bytes, the NUL included (the kernel's buffer size). */
#define RW_NL_STR(a, maxlen) [a] = { .type = MNL_TYPE_NUL_STRING, .max = (maxlen), .name = #a }
/* A struct copied whole: exactly its size. */
#define RW_NL_STRUCT(a, T) [a] = { .type = MNL_TYPE_BINARY, .len = sizeof(T), .name = #a }

/* An attribute set: its policy table and, for errors, its name. */
struct rw_nl_set {
	const char *name;
	const struct rw_nl_policy *pol;
	unsigned int max; /* highest type pol has a row for */
};

/* max from the table's size, so the two cannot disagree. */
#define RW_NL_SET(setname, table)                                              \
	{                                                                      \
		.name = (setname), .pol = (table),                             \
		.max = (unsigned int)(sizeof(table) / sizeof((table)[0])) - 1u \
	}

/*
 * Parse the attributes in [start, start + len) into tb[0..set->max]
 * (cleared first).  Bytes that do not form whole attributes (a truncated
 * message, a length running past its container) fail the walk: -EBADMSG.
 *
 * A known attribute that breaks its row: with bad == NULL the walk fails
 * (-EBADMSG); with bad (set->max + 1 entries, cleared here) it is left out
 * of tb, bad[type] is set and the walk goes on, so the caller can blank
 * only what that attribute carries; the return is then 0.  Either way err
 * names the (first) attribute and what was wrong with it.
 */
int rw_nl_parse(const struct rw_nl_set *set, const void *start, size_t len,
		const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen);
/* The same for the payload of a nest. */
int rw_nl_parse_nested(const struct rw_nl_set *set, const struct nlattr *nest,
		       const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen);
/*
 * The attributes after a family header of hdrlen bytes in a message that
 * rw_nl_check_msg() (or rw_nl_msg_next()) accepted.
 */
int rw_nl_parse_msg(const struct rw_nl_set *set, const struct nlmsghdr *nlh, size_t hdrlen,
		    const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen);

/*
 * For nests that repeat a type (an APP table, a counter table): fn sees
 * each known attribute that passed its row, in order; a bad one, or fn
 * returning -errno, ends the walk with that error.
 */
typedef int (*rw_nl_attr_fn)(const struct nlattr *a, unsigned int type, void *data, char *err,
			     size_t errlen);
int rw_nl_walk_nested(const struct rw_nl_set *set, const struct nlattr *nest, rw_nl_attr_fn fn,
		      void *data, char *err, size_t errlen);

/*
 * buf holds one whole message (nlmsg_len within len) with room for a
 * family header of hdrlen bytes: 0, or -EBADMSG saying what is wrong.
 */
int rw_nl_check_msg(const void *buf, size_t len, size_t hdrlen, char *err, size_t errlen);

/*
 * The message at *off in a receive buffer of len bytes: 1 with *nlh set
 * and *off moved past it, 0 at the end, -EBADMSG for a length that is
 * shorter than a header or runs past the buffer.
 */
int rw_nl_msg_next(const void *buf, size_t len, size_t *off, const struct nlmsghdr **nlh, char *err,
		   size_t errlen);

/*
 * The NLMSGERR_ATTR_MSG of an NLMSG_ERROR (extended ack) into out, "" when
 * the kernel sent none.  nlh must have passed rw_nl_msg_next().
 */
void rw_nl_ext_ack(const struct nlmsghdr *nlh, char *out, size_t size);

/*
 * The replies to one request, walked one receive buffer at a time.  msg()
 * sees every message of the expected type (0: any that is not a control
 * message) and sequence number; replies with another seq (a late answer to
 * an abandoned request) are skipped.  msg() returns 0 to go on, > 0 when
 * the reply is complete with this message, -errno to fail (err says why).
 */
struct rw_nl_reply {
	uint32_t seq;
	uint32_t portid; /* 0: any */
	uint16_t type;
	int (*msg)(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen);
	void *arg;
	/* why the walk failed: the kernel's extended-ack text or what was malformed */
	char err[192];
	/* the failure is the kernel's answer (NLMSG_ERROR, a failed dump), err maybe empty */
	bool from_kernel;
};

/*
 * 1 when the reply is complete (NLMSG_DONE, an ACK, or a message without
 * NLM_F_MULTI), 0 when more is to come, -errno from the kernel (NLMSG_ERROR,
 * or the error NLMSG_DONE carries after a failed dump), -ENOBUFS for
 * NLMSG_OVERRUN, -EBADMSG for a malformed buffer, or what msg() returned.
 */
int rw_nl_reply_walk(struct rw_nl_reply *w, const void *buf, size_t len);

/*
 * A notification socket's backlog, read without blocking until EAGAIN: how
 * many messages of a type in [lo, hi] arrived, plus one for an overrun
 * (ENOBUFS: some were lost) or bytes that do not parse, so that the caller
 * re-reads to be sure.  buf: len bytes to receive into.
 */
int rw_nl_drain(int fd, void *buf, size_t len, uint16_t lo, uint16_t hi);

/* A request socket. */
struct rw_nl {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	char *buf; /* receive buffer, allocated once */
	size_t buflen;
};

/*
 * Open and bind a socket on bus (NETLINK_ROUTE, NETLINK_GENERIC,
 * NETLINK_RDMA) with extended and capped acks, a receive buffer of buflen
 * bytes and a receive timeout of timeout_ms.  0 or -errno.
 */
int rw_nl_open(struct rw_nl *s, int bus, size_t buflen, int timeout_ms);
void rw_nl_close(struct rw_nl *s);

/*
 * Send req (NLM_F_REQUEST, seq and pid are set here) and feed its replies of
 * nlmsg_type type (0: any) to msg() until complete.  0 or -errno; err holds
 * the kernel's extended-ack text or what was wrong with the reply.
 */
int rw_nl_exchange(struct rw_nl *s, struct nlmsghdr *req, uint16_t type,
		   int (*msg)(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen),
		   void *arg, char *err, size_t errlen);

/*
 * A request answered by one message: *reply points into s->buf until the
 * next call (nlmsg_len already checked against what was received).
 * -ENODATA when the kernel answered with an empty dump or a bare ACK.
 */
int rw_nl_request(struct rw_nl *s, struct nlmsghdr *req, const struct nlmsghdr **reply, char *err,
		  size_t errlen);

#endif
