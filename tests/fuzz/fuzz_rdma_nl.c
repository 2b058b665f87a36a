// SPDX-License-Identifier: MIT
/*
 * One receive buffer of RDMA netlink replies through rw_nl_reply_walk(),
 * each message of the expected type handed to the NLDEV parser of its
 * command (device, port, statistic), the counters into a port's counter set.
 * The expected seq and type are the first message's, as a real exchange
 * would have them.  Contract: the walk ends (1, 0 or -errno), and a failure
 * it reports itself comes with a reason.
 */
#include <errno.h>

#include <rdma/rdma_netlink.h>

#include "fuzz.h"
#include "nl.h"
#include "rdma.h"

struct ctx {
	struct object *port;
	int slot;
};

static int counter(void *arg, const char *name, uint64_t v)
{
	struct ctx *c = arg;

	if (strlen(name) >= RW_CNAME_MAX)
		return 0;
	return rdma_cset_put(&c->port->cs[CSET_HW], &c->slot, name, v) < 0 ? -ENOMEM : 0;
}

static int on_msg(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct ctx *c = arg;
	union {
		struct rdma_nl_dev d;
		struct rdma_nl_port p;
		struct rdma_nl_stat s;
	} u;
	int r;

	switch (RDMA_NL_GET_OP(nlh->nlmsg_type)) {
	case RDMA_NLDEV_CMD_GET:
		r = rdma_nl_parse_dev(nlh, &u.d, err, errlen);
		break;
	case RDMA_NLDEV_CMD_PORT_GET:
		r = rdma_nl_parse_port(nlh, &u.p, err, errlen);
		break;
	case RDMA_NLDEV_CMD_STAT_GET:
		r = rdma_nl_parse_stat(nlh, &u.s, counter, c, err, errlen);
		break;
	default:
		return 0;
	}
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM, "parser returned %d", r);
	FUZZ_CHECK(!r || err[0], "parser failed without a reason");
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct node_model m;
	struct ctx c = { .slot = -1 };
	struct rw_nl_reply w = { .msg = on_msg, .arg = &c };
	int r;

	model_init(&m);
	c.port = model_add_port(&m, "mlx5_0", 1);
	if (!c.port)
		abort();
	if (size >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *first = (const struct nlmsghdr *)buf;

		w.seq = first->nlmsg_seq;
		w.type = first->nlmsg_type;
		w.portid = first->nlmsg_pid;
	}
	r = rw_nl_reply_walk(&w, buf, size);
	FUZZ_CHECK(r <= 1, "walk returned %d", r);
	/* a malformed buffer says why; the kernel's own errno may come without text */
	FUZZ_CHECK(r != -EBADMSG || w.from_kernel || w.err[0], "-EBADMSG without a reason");
	model_free(&m);
	free(buf);
	return 0;
}
