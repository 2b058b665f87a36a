// SPDX-License-Identifier: MIT
/*
 * libmnl helpers shared by the netdev collectors (dcb, ethtool genetlink):
 * one request socket per collector, one reply per request, and attribute
 * parsing through a const policy table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/netlink.h>

#include "netdev.h"

/* Largest reply we expect: an mlx5 IEEE_GET with a full DSCP APP table is ~1.5 KiB. */
#define NL_RXBUF (32 * 1024)

struct attr_ctx {
	const struct nl_policy *pol;
	unsigned int max;
	const struct nlattr **tb; /* nl_parse_attrs: one slot per type */
	nl_attr_fn fn;		  /* nl_walk_attrs: called per known attribute */
	void *data;
	char *err;
	size_t errlen;
};

/* The one attribute callback: skip what the policy does not know, validate what it does. */
static int attr_cb(const struct nlattr *a, void *data)
{
	struct attr_ctx *c = data;
	unsigned int type = mnl_attr_get_type(a);
	const struct nl_policy *p;
	int r;

	if (type > c->max || !c->pol[type].type)
		return MNL_CB_OK;
	p = &c->pol[type];
	if (p->type == MNL_TYPE_BINARY)
		/* validate2 rejects short and long payloads: a struct is copied whole or not at all
		 */
		r = mnl_attr_validate2(a, MNL_TYPE_BINARY, p->len);
	else
		r = mnl_attr_validate(a, (enum mnl_attr_data_type)p->type);
	if (r < 0) {
		if (p->type == MNL_TYPE_BINARY)
			snprintf(c->err, c->errlen, "%s: payload %u bytes, expected %u",
				 p->name ? p->name : "attribute", mnl_attr_get_payload_len(a),
				 p->len);
		else
			snprintf(c->err, c->errlen, "%s: payload %u bytes: %s",
				 p->name ? p->name : "attribute", mnl_attr_get_payload_len(a),
				 strerror(errno));
		return MNL_CB_ERROR;
	}
	if (c->fn)
		return c->fn(a, type, c->data, c->err, c->errlen) ? MNL_CB_ERROR : MNL_CB_OK;
	c->tb[type] = a;
	return MNL_CB_OK;
}

static int walk(const void *start, size_t len, struct attr_ctx *c)
{
	const struct nlattr *a = start;
	int rem = (int)len;

	if (len > INT32_MAX)
		return -EBADMSG;
	/*
	 * mnl_attr_parse() stops quietly at an attribute that runs past the
	 * end; walking by hand lets a truncated message be an error instead.
	 */
	while (mnl_attr_ok(a, rem)) {
		if (attr_cb(a, c) != MNL_CB_OK)
			return -EBADMSG;
		rem -= MNL_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + MNL_ALIGN(a->nla_len));
	}
	if (rem > 0) {
		snprintf(c->err, c->errlen,
			 "truncated: %d bytes left that do not form an attribute", rem);
		return -EBADMSG;
	}
	return 0;
}

int nl_parse_attrs(const void *start, size_t len, const struct nl_policy *pol, unsigned int max,
		   const struct nlattr **tb, char *err, size_t errlen)
{
	struct attr_ctx c = { .pol = pol, .max = max, .tb = tb, .err = err, .errlen = errlen };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	return walk(start, len, &c);
}

int nl_walk_nested(const struct nlattr *nest, const struct nl_policy *pol, unsigned int max,
		   nl_attr_fn fn, void *data, char *err, size_t errlen)
{
	struct attr_ctx c = {
		.pol = pol, .max = max, .fn = fn, .data = data, .err = err, .errlen = errlen
	};

	return walk(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), &c);
}

int nl_parse_nested(const struct nlattr *nest, const struct nl_policy *pol, unsigned int max,
		    const struct nlattr **tb, char *err, size_t errlen)
{
	return nl_parse_attrs(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), pol, max,
			      tb, err, errlen);
}

int nl_check_msg(const void *buf, size_t len, size_t hdrlen, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;

	if (len > INT32_MAX || !mnl_nlmsg_ok(nlh, (int)len)) {
		snprintf(err, errlen, "truncated netlink message (%zu bytes)", len);
		return -EBADMSG;
	}
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen)) {
		snprintf(err, errlen,
			 "netlink message of %u bytes has no room for its %zu-byte header",
			 nlh->nlmsg_len, hdrlen);
		return -EBADMSG;
	}
	return 0;
}

int nl_open(struct nl_sock *s, int bus)
{
	struct timeval tv = { .tv_sec = 2 };
	int one = 1, r;

	memset(s, 0, sizeof(*s));
	s->buf = malloc(NL_RXBUF);
	if (!s->buf)
		return -ENOMEM;
	s->buflen = NL_RXBUF;
	s->nl = mnl_socket_open(bus);
	if (!s->nl)
		goto fail_errno;
	/* The kernel's own error text ("device does not support ...") reaches the log. */
	mnl_socket_setsockopt(s->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	/* A reply that never comes must not hang the poll loop. */
	setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail_errno;
	s->portid = mnl_socket_get_portid(s->nl);
	return 0;

fail_errno:
	r = -errno;
	nl_close(s);
	return r ? r : -EIO;
}

void nl_close(struct nl_sock *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* NLMSG_ERROR: the errno, and the extended-ack message when the kernel sent one. */
static int parse_error(const struct nlmsghdr *nlh, char *err, size_t errlen)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -EBADMSG;
	if (!e->error)
		return 0;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		static const struct nl_policy pol[NLMSGERR_ATTR_MAX + 1] = {
			[NLMSGERR_ATTR_MSG] = { MNL_TYPE_NUL_STRING, 0, "NLMSGERR_ATTR_MSG" },
		};
		const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
		char perr[64];

		/* The TLVs follow the echoed request, or only its header when capped. */
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(e->msg);
		if (off < mnl_nlmsg_get_payload_len(nlh) &&
		    !nl_parse_attrs((const char *)e + MNL_ALIGN(off),
				    mnl_nlmsg_get_payload_len(nlh) - MNL_ALIGN(off), pol,
				    NLMSGERR_ATTR_MAX, tb, perr, sizeof(perr)) &&
		    tb[NLMSGERR_ATTR_MSG])
			snprintf(err, errlen, "%s", mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	}
	return e->error < 0 ? e->error : -e->error;
}

int nl_request(struct nl_sock *s, struct nlmsghdr *req, const struct nlmsghdr **reply, char *err,
	       size_t errlen)
{
	unsigned int seq = ++s->seq;
	ssize_t n;

	if (err && errlen)
		err[0] = '\0';
	req->nlmsg_flags |= NLM_F_REQUEST;
	req->nlmsg_seq = seq;
	req->nlmsg_pid = 0;
	if (mnl_socket_sendto(s->nl, req, req->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)s->buf;
		int rem;

		n = mnl_socket_recvfrom(s->nl, s->buf, s->buflen);
		if (n < 0)
			/* EAGAIN: the receive timeout; ENOSPC: a reply larger than our buffer */
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rem = (int)n;
		for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
			/* A late reply to an earlier, timed-out request is not ours. */
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				int r = parse_error(nlh, err, errlen);

				if (r)
					return r;
				continue; /* a plain ack: the reply, if any, came first */
			}
			if (nlh->nlmsg_type == NLMSG_DONE)
				return -ENODATA;
			*reply = nlh;
			return 0;
		}
	}
}
