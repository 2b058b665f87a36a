// SPDX-License-Identifier: MIT
/* Netlink messages, attributes and request sockets (see nl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/netlink.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct walk {
	const struct rw_nl_set *set;
	const struct nlattr **tb; /* rw_nl_parse: one slot per type */
	uint8_t *bad;		  /* lenient: bad attributes are marked, not fatal */
	rw_nl_attr_fn fn;	  /* rw_nl_walk_nested: called per known attribute */
	void *data;
	char *err;
	size_t errlen;
	unsigned int nbad;
};

static const char *attr_name(const struct rw_nl_set *set, unsigned int type, char *buf, size_t size)
{
	if (type <= set->max && set->pol[type].name)
		return set->pol[type].name;
	snprintf(buf, size, "%s attribute %u", set->name ? set->name : "netlink", type);
	return buf;
}

/* Does the payload of a fit row p?  0, or -EBADMSG with err naming the attribute. */
static int check_attr(const struct rw_nl_policy *p, const char *name, const struct nlattr *a,
		      char *err, size_t errlen)
{
	static const uint8_t width[MNL_TYPE_MAX] = {
		[MNL_TYPE_U8] = 1,  [MNL_TYPE_U16] = 2,	  [MNL_TYPE_U32] = 4,
		[MNL_TYPE_U64] = 8, [MNL_TYPE_MSECS] = 8,
	};
	size_t plen = mnl_attr_get_payload_len(a);
	const char *payload = mnl_attr_get_payload(a);
	size_t max = p->max;

	switch (p->type) {
	case MNL_TYPE_U8:
	case MNL_TYPE_U16:
	case MNL_TYPE_U32:
	case MNL_TYPE_U64:
	case MNL_TYPE_MSECS:
		if (plen != width[p->type])
			goto want_exact_width;
		return 0;
	case MNL_TYPE_FLAG:
		if (plen) {
			snprintf(err, errlen, "%s: flag with a %zu-byte payload", name, plen);
			return -EBADMSG;
		}
		return 0;
	case MNL_TYPE_NUL_STRING:
		if (!max)
			max = RW_NL_STR_MAX;
		if (!plen || payload[plen - 1] != '\0') {
			snprintf(err, errlen, "%s: string of %zu bytes without its NUL", name,
				 plen);
			return -EBADMSG;
		}
		if (plen > max) {
			snprintf(err, errlen, "%s: string of %zu bytes, at most %zu", name, plen,
				 max);
			return -EBADMSG;
		}
		return 0;
	case MNL_TYPE_STRING:
		if (!max)
			max = RW_NL_STR_MAX;
		break;
	case MNL_TYPE_NESTED:
		if (plen && plen < MNL_ATTR_HDRLEN) {
			snprintf(err, errlen, "%s: nest of %zu bytes, too short for an attribute",
				 name, plen);
			return -EBADMSG;
		}
		break;
	case MNL_TYPE_BINARY:
		if (p->len && plen != p->len) {
			snprintf(err, errlen, "%s: payload %zu bytes, want %u", name, plen, p->len);
			return -EBADMSG;
		}
		break;
	default:
		/* A table row of a type this parser does not check is a bug, not input. */
		snprintf(err, errlen, "%s: policy type %u is not checked", name, p->type);
		return -EINVAL;
	}
	if (plen < p->min || (max && plen > max)) {
		snprintf(err, errlen, "%s: payload %zu bytes, want %u to %zu", name, plen, p->min,
			 max ? max : (size_t)UINT16_MAX);
		return -EBADMSG;
	}
	return 0;

want_exact_width:
	snprintf(err, errlen, "%s: payload %zu bytes, want %u", name, plen, width[p->type]);
	return -EBADMSG;
}

/*
 * The one walk: every length is a size_t compared with what is left, so
 * no attribute length can run past the container, whatever it says.
 */
static int walk(struct walk *w, const void *start, size_t len)
{
	const char *base = start;
	size_t off = 0;

	while (off < len) {
		const struct nlattr *a = (const struct nlattr *)(base + off);
		const struct rw_nl_policy *p;
		unsigned int type;
		char nbuf[64];
		size_t alen;
		int r;

		if (len - off < MNL_ATTR_HDRLEN) {
			snprintf(w->err, w->errlen,
				 "%s: truncated: %zu bytes left that do not form an attribute",
				 w->set->name, len - off);
			return -EBADMSG;
		}
		alen = a->nla_len;
		type = mnl_attr_get_type(a); /* without NLA_F_NESTED / NLA_F_NET_BYTEORDER */
		if (alen < MNL_ATTR_HDRLEN || alen > len - off) {
			snprintf(w->err, w->errlen, "%s: truncated: %s claims %zu bytes, %zu left",
				 w->set->name, attr_name(w->set, type, nbuf, sizeof(nbuf)), alen,
				 len - off);
			return -EBADMSG;
		}
		/* The last attribute may lack its alignment padding. */
		off += MNL_ALIGN(alen);
		if (type > w->set->max || !w->set->pol[type].type)
			continue;
		p = &w->set->pol[type];
		if (w->bad && w->nbad) {
			/* keep the first error's text; count the others */
			char tmp[8];

			r = check_attr(p, attr_name(w->set, type, nbuf, sizeof(nbuf)), a, tmp,
				       sizeof(tmp));
		} else {
			r = check_attr(p, attr_name(w->set, type, nbuf, sizeof(nbuf)), a, w->err,
				       w->errlen);
		}
		if (r == -EBADMSG && w->bad) {
			w->bad[type] = 1;
			w->nbad++;
			if (w->tb)
				w->tb[type] = NULL; /* a good duplicate before it does not count */
			continue;
		}
		if (r)
			return r;
		if (w->fn) {
			r = w->fn(a, type, w->data, w->err, w->errlen);
			if (r)
				return r < 0 ? r : -EBADMSG;
			continue;
		}
		if (!(w->bad && w->bad[type]))
			w->tb[type] = a;
	}
	return 0;
}

int rw_nl_parse(const struct rw_nl_set *set, const void *start, size_t len,
		const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen)
{
	struct walk w = { .set = set, .tb = tb, .bad = bad, .err = err, .errlen = errlen };
	int r;

	memset(tb, 0, (set->max + 1) * sizeof(*tb));
	if (bad)
		memset(bad, 0, set->max + 1);
	r = walk(&w, start, len);
	if (!r && w.nbad > 1) {
		size_t n = strlen(err);

		snprintf(err + n, errlen > n ? errlen - n : 0, " (and %u more bad attributes)",
			 w.nbad - 1);
	}
	return r;
}

int rw_nl_parse_nested(const struct rw_nl_set *set, const struct nlattr *nest,
		       const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen)
{
	return rw_nl_parse(set, mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), tb, bad,
			   err, errlen);
}

int rw_nl_parse_msg(const struct rw_nl_set *set, const struct nlmsghdr *nlh, size_t hdrlen,
		    const struct nlattr **tb, uint8_t *bad, char *err, size_t errlen)
{
	size_t off = MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen);

	/* rw_nl_check_msg() made sure of this; a caller that skipped it gets an error */
	if (nlh->nlmsg_len < off) {
		snprintf(err, errlen,
			 "netlink message of %u bytes has no room for its %zu-byte "
			 "header",
			 nlh->nlmsg_len, hdrlen);
		return -EBADMSG;
	}
	return rw_nl_parse(set, (const char *)nlh + off, nlh->nlmsg_len - off, tb, bad, err,
			   errlen);
}

int rw_nl_walk_nested(const struct rw_nl_set *set, const struct nlattr *nest, rw_nl_attr_fn fn,
		      void *data, char *err, size_t errlen)
{
	struct walk w = { .set = set, .fn = fn, .data = data, .err = err, .errlen = errlen };

	return walk(&w, mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest));
}

/* nlmsg_len of the message at buf against the len bytes there: 0 or -EBADMSG. */
static int check_len(const void *buf, size_t len, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;

	if (len < MNL_NLMSG_HDRLEN) {
		snprintf(err, errlen, "truncated netlink message: %zu bytes, a header is %zu", len,
			 (size_t)MNL_NLMSG_HDRLEN);
		return -EBADMSG;
	}
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN || (size_t)nlh->nlmsg_len > len) {
		snprintf(err, errlen, "netlink message length %u does not fit in %zu bytes",
			 nlh->nlmsg_len, len);
		return -EBADMSG;
	}
	return 0;
}

int rw_nl_check_msg(const void *buf, size_t len, size_t hdrlen, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	int r = check_len(buf, len, err, errlen);

	if (r)
		return r;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen)) {
		snprintf(err, errlen,
			 "netlink message of %u bytes has no room for its %zu-byte header",
			 nlh->nlmsg_len, hdrlen);
		return -EBADMSG;
	}
	return 0;
}

int rw_nl_msg_next(const void *buf, size_t len, size_t *off, const struct nlmsghdr **nlh, char *err,
		   size_t errlen)
{
	const char *p = (const char *)buf + *off;
	int r;

	if (*off >= len)
		return 0;
	r = check_len(p, len - *off, err, errlen);
	if (r)
		return r;
	*nlh = (const struct nlmsghdr *)p;
	/* aligned in size_t: MNL_ALIGN() of a 32-bit length near 2^32 wraps to 0 */
	*off += MNL_ALIGN((size_t)(*nlh)->nlmsg_len);
	if (*off > len)
		*off = len;
	return 1;
}

/* NLMSGERR_ATTR_MSG among the extended-ack TLVs in [start, start + len), "" without. */
static void ext_ack_tlvs(const void *start, size_t len, char *out, size_t size)
{
	static const struct rw_nl_policy pol[NLMSGERR_ATTR_MSG + 1] = {
		RW_NL_STR(NLMSGERR_ATTR_MSG, 1024),
	};
	static const struct rw_nl_set set = RW_NL_SET("NLMSGERR_ATTR", pol);
	const struct nlattr *tb[NLMSGERR_ATTR_MSG + 1];
	char perr[64];

	if (rw_nl_parse(&set, start, len, tb, NULL, perr, sizeof(perr)) || !tb[NLMSGERR_ATTR_MSG])
		return;
	snprintf(out, size, "%s", mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	/* some drivers end their messages with a newline */
	for (size_t n = strlen(out); n && (out[n - 1] == '\n' || out[n - 1] == ' ');)
		out[--n] = '\0';
}

void rw_nl_ext_ack(const struct nlmsghdr *nlh, char *out, size_t size)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t plen = mnl_nlmsg_get_payload_len(nlh), off = sizeof(*e);

	if (size)
		out[0] = '\0';
	if (plen < sizeof(*e) || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the request's payload is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return;
		off += MNL_ALIGN((size_t)e->msg.nlmsg_len - sizeof(struct nlmsghdr));
	}
	if (off < plen)
		ext_ack_tlvs((const char *)e + off, plen - off, out, size);
}

int rw_nl_reply_walk(struct rw_nl_reply *w, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;
	int r;

	w->err[0] = '\0';
	w->from_kernel = false;
	while ((r = rw_nl_msg_next(buf, len, &off, &nlh, w->err, sizeof(w->err))) > 0) {
		if (nlh->nlmsg_seq != w->seq ||
		    (w->portid && nlh->nlmsg_pid && nlh->nlmsg_pid != w->portid))
			continue; /* a late answer to an earlier, abandoned request */
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			continue;
		case NLMSG_OVERRUN:
			snprintf(w->err, sizeof(w->err), "NLMSG_OVERRUN: replies were lost");
			return -ENOBUFS;
		case NLMSG_ERROR: {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
				snprintf(w->err, sizeof(w->err),
					 "NLMSG_ERROR of %u bytes, too short for struct nlmsgerr",
					 nlh->nlmsg_len);
				return -EBADMSG;
			}
			if (!e->error)
				return 1; /* ACK */
			w->from_kernel = true;
			rw_nl_ext_ack(nlh, w->err, sizeof(w->err));
			/* a positive value is not an errno the kernel sends; never return > 0 */
			return e->error < 0 ? e->error : -EPROTO;
		}
		case NLMSG_DONE:
			/* netlink_dump() puts the dump's own error, if any, after the header. */
			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
				int err;

				memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
				if (err < 0) {
					w->from_kernel = true;
					/* netlink_dump_done(): the TLVs follow the errno */
					if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
						ext_ack_tlvs(
						    (const char *)mnl_nlmsg_get_payload(nlh) +
							MNL_ALIGN(sizeof(int)),
						    mnl_nlmsg_get_payload_len(nlh) -
							MNL_ALIGN(sizeof(int)),
						    w->err, sizeof(w->err));
					return err;
				}
			}
			return 1;
		default:
			if (w->type && nlh->nlmsg_type != w->type) {
				snprintf(w->err, sizeof(w->err),
					 "unexpected message type %u in the reply (want %u)",
					 nlh->nlmsg_type, w->type);
				return -EBADMSG;
			}
			if (nlh->nlmsg_type < NLMSG_MIN_TYPE) {
				snprintf(w->err, sizeof(w->err),
					 "unexpected control message type %u in the reply",
					 nlh->nlmsg_type);
				return -EBADMSG;
			}
			if (w->msg) {
				r = w->msg(nlh, w->arg, w->err, sizeof(w->err));
				if (r)
					return r < 0 ? r : 1;
			}
			if (!(nlh->nlmsg_flags & NLM_F_MULTI))
				return 1;
		}
	}
	return r;
}

int rw_nl_open(struct rw_nl *s, int bus, size_t buflen, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	int one = 1, fd, r;

	memset(s, 0, sizeof(*s));
	s->buf = malloc(buflen);
	if (!s->buf)
		return -ENOMEM;
	s->buflen = buflen;
	s->nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	if (!s->nl)
		goto fail_errno;
	fd = mnl_socket_get_fd(s->nl);
	/* The kernel's own error text ("device does not support ...") reaches the log. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	/* and an error does not echo our request back */
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* A reply that never comes must not hang the poll loop. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail_errno;
	s->portid = mnl_socket_get_portid(s->nl);
	return 0;

fail_errno:
	r = errno ? -errno : -EIO;
	rw_nl_close(s);
	return r;
}

void rw_nl_close(struct rw_nl *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int rw_nl_exchange(struct rw_nl *s, struct nlmsghdr *req, uint16_t type,
		   int (*msg)(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen),
		   void *arg, char *err, size_t errlen)
{
	struct rw_nl_reply w = { .portid = s->portid, .type = type, .msg = msg, .arg = arg };
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!s->nl)
		return -ENOTCONN;
	req->nlmsg_flags |= NLM_F_REQUEST;
	req->nlmsg_seq = w.seq = ++s->seq;
	req->nlmsg_pid = 0;
	if (mnl_socket_sendto(s->nl, req, req->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->nl, s->buf, s->buflen);

		if (n < 0) {
			/* EAGAIN: the receive timeout; ENOSPC: a reply larger than the buffer */
			r = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
			break;
		}
		r = rw_nl_reply_walk(&w, s->buf, (size_t)n);
		if (r)
			break;
	}
	if (r < 0 && err && errlen)
		snprintf(err, errlen, "%s", w.err);
	return r < 0 ? r : 0;
}

struct one_reply {
	const struct nlmsghdr *nlh;
};

static int keep_reply(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct one_reply *o = arg;

	(void)err;
	(void)errlen;
	o->nlh = nlh;
	/* Stop here, before another receive could overwrite the buffer it points into. */
	return 1;
}

int rw_nl_request(struct rw_nl *s, struct nlmsghdr *req, const struct nlmsghdr **reply, char *err,
		  size_t errlen)
{
	struct one_reply o = { NULL };
	int r = rw_nl_exchange(s, req, 0, keep_reply, &o, err, errlen);

	if (r)
		return r;
	if (!o.nlh)
		return -ENODATA;
	*reply = o.nlh;
	return 0;
}

int rw_nl_drain(int fd, void *buf, size_t len, uint16_t lo, uint16_t hi)
{
	int count = 0;

	for (;;) {
		const struct nlmsghdr *nlh;
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		size_t off = 0;
		char err[96];
		int r;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* ENOBUFS: the socket overran and lost notifications; re-read anyway */
			if (errno == ENOBUFS) {
				count++;
				continue;
			}
			break;
		}
		if (n == 0)
			break;
		while ((r = rw_nl_msg_next(buf, (size_t)n, &off, &nlh, err, sizeof(err))) > 0)
			count += nlh->nlmsg_type >= lo && nlh->nlmsg_type <= hi;
		if (r < 0)
			count++; /* something arrived that did not parse: re-read to be sure */
	}
	return count;
}
