// SPDX-License-Identifier: MIT
/*
 * wire loader: libbpf glue for wire.bpf.c.
 *
 * Attach prefers tcx links (Linux 6.6+): they belong to this process, vanish
 * with it, and never touch qdiscs.  Older kernels get cls_bpf filters under
 * a clsact qdisc, which outlive the process, so detach there is careful to
 * remove only what this process put in place.
 *
 * tcx is reached through plain bpf_link_create() rather than
 * bpf_program__attach_tcx(), which only libbpf 1.3 has (Debian 12 ships
 * 1.1); the two issue the same BPF_LINK_CREATE command.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wire_loader.h"

/* The skeleton embeds the BPF object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "wire.skel.h"
#pragma GCC diagnostic pop

/*
 * enum bpf_attach_type in include/uapi/linux/bpf.h: BPF_TCX_INGRESS and
 * BPF_TCX_EGRESS were added in Linux 6.6, right after BPF_STRUCT_OPS (44)
 * and BPF_NETFILTER (45).  Debian 12's linux-libc-dev (6.1) stops at
 * BPF_LSM_CGROUP (43) and newer headers make them enum constants that #ifndef
 * cannot see, so the values live here under our own names.  They are ABI.
 */
#define WIRE_BPF_TCX_INGRESS 46
#define WIRE_BPF_TCX_EGRESS  47

/* Linux's internal "operation not supported" (include/linux/errno.h). */
#define WIRE_ENOTSUPP 524

struct wire_tc_filter {
	__u32 handle;
	__u32 priority;
	__u32 prog_id;
	bool attached;
};

struct wire_hook {
	int ifindex;
	char ifname[IF_NAMESIZE];
	enum wire_attach_mode kind; /* TCX or CLSACT */
	int link_fd[WIRE_DIR_MAX];
	struct wire_tc_filter tc[WIRE_DIR_MAX];
	bool made_qdisc;
};

struct wire {
	struct wire_bpf *skel;
	wire_log_fn log;
	libbpf_print_fn_t prev_print;
	enum wire_attach_mode mode;
	bool no_tcx; /* the kernel refused a tcx link once: stop asking */
	int ncpus;
	uint16_t roce_port;
	struct wire_hook *hooks;
	size_t n_hooks;
	size_t cap_hooks;
};

/*
 * libbpf_set_print() takes a bare function with no context pointer, so the
 * callback for libbpf's messages has to sit in a global.
 */
static wire_log_fn wire_libbpf_log;

__attribute__((format(printf, 3, 4))) static void wire_log(const struct wire *w, int level,
							   const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!w->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->log(level, msg);
}

static int wire_libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	int level = WIRE_LOG_DEBUG;
	char *buf, *line, *next;

	if (!wire_libbpf_log)
		return 0;
	if (lvl == LIBBPF_WARN)
		level = WIRE_LOG_WARN;
	else if (lvl == LIBBPF_INFO)
		level = WIRE_LOG_INFO;
	/* Not a fixed buffer: a verifier log is long and its verdict is at the end. */
	if (vasprintf(&buf, fmt, ap) < 0)
		return 0;
	/* Verifier logs come as one string of many lines; hand them over one by one. */
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (*line)
			wire_libbpf_log(level, line);
	}
	free(buf);
	return 0;
}

static struct wire_hook *wire_find(const struct wire *w, int ifindex)
{
	size_t i;

	for (i = 0; i < w->n_hooks; i++)
		if (w->hooks[i].ifindex == ifindex)
			return &w->hooks[i];
	return NULL;
}

static void wire_free(struct wire *w)
{
	if (!w)
		return;
	wire_bpf__destroy(w->skel);
	libbpf_set_print(w->prev_print);
	wire_libbpf_log = NULL;
	free(w->hooks);
	free(w);
}

int wire_open(struct wire **wp, uint16_t roce_port, wire_log_fn log)
{
	struct wire *w;
	int err;

	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->log = log;
	w->roce_port = roce_port ? roce_port : WIRE_ROCE_PORT;
	wire_libbpf_log = log;
	w->prev_print = libbpf_set_print(wire_libbpf_print);

	w->ncpus = libbpf_num_possible_cpus();
	if (w->ncpus <= 0) {
		err = w->ncpus < 0 ? w->ncpus : -EINVAL;
		wire_log(w, WIRE_LOG_ERROR, "wire: cannot count possible CPUs: %s", strerror(-err));
		goto cleanup;
	}

	w->skel = wire_bpf__open();
	if (!w->skel) {
		err = -errno;
		wire_log(w, WIRE_LOG_ERROR, "wire: cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	w->skel->rodata->roce_port = w->roce_port;

	err = wire_bpf__load(w->skel);
	if (err == -EPERM) {
		wire_log(w, WIRE_LOG_ERROR,
			 "wire: the kernel refused to load the BPF programs (%s): run as root or "
			 "with CAP_BPF and CAP_NET_ADMIN (CAP_SYS_ADMIN before Linux 5.8)",
			 strerror(-err));
		goto cleanup;
	}
	if (err) {
		/* -EACCES here is the verifier saying no; libbpf has logged why. */
		wire_log(w, WIRE_LOG_ERROR, "wire: cannot load the BPF programs: %s",
			 strerror(-err));
		goto cleanup;
	}

	*wp = w;
	return 0;

cleanup:
	wire_free(w);
	return err;
}

int wire_set_attach_mode(struct wire *w, enum wire_attach_mode mode)
{
	if (mode != WIRE_ATTACH_AUTO && mode != WIRE_ATTACH_TCX && mode != WIRE_ATTACH_CLSACT)
		return -EINVAL;
	w->mode = mode;
	return 0;
}

static int wire_prog_fd(const struct wire *w, int dir)
{
	return bpf_program__fd(dir == WIRE_DIR_INGRESS ? w->skel->progs.wire_ingress
						       : w->skel->progs.wire_egress);
}

static const char *const wire_dir_name[WIRE_DIR_MAX] = {
	[WIRE_DIR_INGRESS] = "ingress",
	[WIRE_DIR_EGRESS] = "egress",
};

/* Which link types wire_attach() may treat as "this kernel has no tcx". */
static bool wire_tcx_missing(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP || err == -WIRE_ENOTSUPP;
}

static void wire_detach_tcx(struct wire *w, struct wire_hook *h)
{
	int dir;

	for (dir = 0; dir < WIRE_DIR_MAX; dir++) {
		if (h->link_fd[dir] < 0)
			continue;
		/*
		 * Detach before close: a forked child holding a copy of the
		 * fd would otherwise keep the link, and the program, alive.
		 * A link whose device went away is already detached.
		 */
		if (bpf_link_detach(h->link_fd[dir]) && errno != ENOLINK && errno != ENODEV)
			wire_log(w, WIRE_LOG_DEBUG, "wire: %s: detaching tcx %s link: %s",
				 h->ifname, wire_dir_name[dir], strerror(errno));
		close(h->link_fd[dir]);
		h->link_fd[dir] = -1;
	}
}

static int wire_attach_tcx(struct wire *w, struct wire_hook *h)
{
	static const int type[WIRE_DIR_MAX] = {
		[WIRE_DIR_INGRESS] = WIRE_BPF_TCX_INGRESS,
		[WIRE_DIR_EGRESS] = WIRE_BPF_TCX_EGRESS,
	};
	int dir, fd, err;

	for (dir = 0; dir < WIRE_DIR_MAX; dir++) {
		fd = bpf_link_create(wire_prog_fd(w, dir), h->ifindex,
				     (enum bpf_attach_type)type[dir], NULL);
		if (fd < 0) {
			err = fd;
			goto cleanup;
		}
		h->link_fd[dir] = fd;
	}
	h->kind = WIRE_ATTACH_TCX;
	return 0;

cleanup:
	wire_detach_tcx(w, h);
	return err;
}

/*
 * Count the filters left under one clsact parent through an RTM_GETTFILTER
 * dump: libbpf can query a filter by handle but not list them.
 */
static int wire_tc_filters_left(int ifindex, __u32 parent)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
	} req = {
		.nh = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
			.nlmsg_type = RTM_GETTFILTER,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1,
		},
		.tc = {
			.tcm_family = AF_UNSPEC,
			.tcm_ifindex = ifindex,
			.tcm_parent = parent,
		},
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nh;
	int fd, one = 1, count = 0, err = 0;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* Failing is fine: only the kernel's error text is lost. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto cleanup;
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != req.nh.nlmsg_seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				goto cleanup;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
					err = -EPROTO;
					goto cleanup;
				}
				err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				if (err)
					goto cleanup;
				continue;
			}
			if (nh->nlmsg_type == RTM_NEWTFILTER)
				count++;
		}
		if (n == 0)
			break;
	}

cleanup:
	close(fd);
	return err ? err : count;
}

/* The device has gone, or took its qdisc and filters with it. */
static bool wire_tc_gone(int err)
{
	return err == -ENODEV || err == -ENOENT || err == -EINVAL;
}

/* Returns 0 also when the device went away; otherwise the first failure. */
static int wire_detach_clsact(struct wire *w, struct wire_hook *h)
{
	struct bpf_tc_hook hook = { .sz = sizeof(hook), .ifindex = h->ifindex };
	static const __u32 parent[WIRE_DIR_MAX] = {
		[WIRE_DIR_INGRESS] = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
		[WIRE_DIR_EGRESS] = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS),
	};
	bool ours_all_removed = true;
	int dir, err, ret = 0, left;

	for (dir = 0; dir < WIRE_DIR_MAX; dir++) {
		struct wire_tc_filter *f = &h->tc[dir];
		struct bpf_tc_opts q = {
			.sz = sizeof(q),
			.handle = f->handle,
			.priority = f->priority,
		};
		struct bpf_tc_opts del = q;

		if (!f->attached)
			continue;
		f->attached = false;
		hook.attach_point = dir == WIRE_DIR_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		/* Handle and priority may have been reused by someone else since. */
		err = bpf_tc_query(&hook, &q);
		if (wire_tc_gone(err)) {
			ours_all_removed = false;
			continue;
		}
		if (!err && q.prog_id != f->prog_id) {
			wire_log(
			    w, WIRE_LOG_WARN,
			    "wire: %s: %s filter %u:%u now runs program %u, not ours; left alone",
			    h->ifname, wire_dir_name[dir], f->priority, f->handle, q.prog_id);
			ours_all_removed = false;
			continue;
		}
		if (!err)
			err = bpf_tc_detach(&hook, &del);
		if (err && !wire_tc_gone(err)) {
			wire_log(w, WIRE_LOG_ERROR, "wire: %s: removing %s filter: %s", h->ifname,
				 wire_dir_name[dir], strerror(-err));
			ours_all_removed = false;
			if (!ret)
				ret = err;
		}
	}

	if (!h->made_qdisc || !ours_all_removed)
		return ret;
	h->made_qdisc = false;
	/* Someone may have hung filters on the qdisc we made: then it stays. */
	for (dir = 0; dir < WIRE_DIR_MAX; dir++) {
		left = wire_tc_filters_left(h->ifindex, parent[dir]);
		if (left < 0 && wire_tc_gone(left))
			return ret;
		if (left != 0) {
			if (left < 0)
				wire_log(w, WIRE_LOG_WARN, "wire: %s: cannot list tc filters: %s",
					 h->ifname, strerror(-left));
			return ret;
		}
	}
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	err = bpf_tc_hook_destroy(&hook);
	if (err && !wire_tc_gone(err)) {
		wire_log(w, WIRE_LOG_ERROR, "wire: %s: removing the clsact qdisc: %s", h->ifname,
			 strerror(-err));
		if (!ret)
			ret = err;
	}
	return ret;
}

static int wire_attach_clsact(struct wire *w, struct wire_hook *h)
{
	struct bpf_tc_hook hook = {
		.sz = sizeof(hook),
		.ifindex = h->ifindex,
		.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS,
	};
	int dir, err;

	h->kind = WIRE_ATTACH_CLSACT;
	err = bpf_tc_hook_create(&hook);
	if (!err)
		h->made_qdisc = true;
	else if (err != -EEXIST)
		return err;

	for (dir = 0; dir < WIRE_DIR_MAX; dir++) {
		/* handle and priority 0: the kernel picks free ones and echoes them. */
		struct bpf_tc_opts opts = { .sz = sizeof(opts), .prog_fd = wire_prog_fd(w, dir) };

		hook.attach_point = dir == WIRE_DIR_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		err = bpf_tc_attach(&hook, &opts);
		if (err)
			goto cleanup;
		h->tc[dir].handle = opts.handle;
		h->tc[dir].priority = opts.priority;
		h->tc[dir].prog_id = opts.prog_id;
		h->tc[dir].attached = true;
	}
	return 0;

cleanup:
	wire_detach_clsact(w, h);
	return err;
}

/* tc programs read an Ethernet header at skb->data; lo has a zeroed one. */
static int wire_check_ether(struct wire *w, const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER &&
		 ifr.ifr_hwaddr.sa_family != ARPHRD_LOOPBACK)
		err = -EOPNOTSUPP;
	close(fd);
	if (err == -EOPNOTSUPP)
		wire_log(w, WIRE_LOG_ERROR,
			 "wire: %s: link type %u has no Ethernet header; RoCEv2 runs on Ethernet",
			 ifname, ifr.ifr_hwaddr.sa_family);
	else if (err)
		wire_log(w, WIRE_LOG_ERROR, "wire: %s: %s", ifname, strerror(-err));
	return err;
}

int wire_attach(struct wire *w, int ifindex)
{
	struct wire_hook *h, *grown;
	size_t cap;
	int err;

	if (wire_find(w, ifindex))
		return 0;
	if (w->n_hooks == w->cap_hooks) {
		cap = w->cap_hooks ? 2 * w->cap_hooks : 4;
		grown = realloc(w->hooks, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		w->hooks = grown;
		w->cap_hooks = cap;
	}
	h = &w->hooks[w->n_hooks];
	memset(h, 0, sizeof(*h));
	h->ifindex = ifindex;
	h->link_fd[WIRE_DIR_INGRESS] = -1;
	h->link_fd[WIRE_DIR_EGRESS] = -1;
	if (!if_indextoname(ifindex, h->ifname)) {
		err = errno == ENXIO ? -ENODEV : -errno;
		wire_log(w, WIRE_LOG_ERROR, "wire: ifindex %d: %s", ifindex, strerror(-err));
		return err;
	}
	err = wire_check_ether(w, h->ifname);
	if (err)
		return err;

	if (w->mode == WIRE_ATTACH_TCX || (w->mode == WIRE_ATTACH_AUTO && !w->no_tcx)) {
		err = wire_attach_tcx(w, h);
		if (!err)
			goto attached;
		if (w->mode == WIRE_ATTACH_TCX || !wire_tcx_missing(err)) {
			wire_log(w, WIRE_LOG_ERROR, "wire: %s: attaching tcx links: %s%s",
				 h->ifname, strerror(-err),
				 err == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
			return err;
		}
		w->no_tcx = true;
		wire_log(w, WIRE_LOG_INFO,
			 "wire: the kernel refuses tcx links (%s); using clsact qdiscs instead",
			 strerror(-err));
	}
	err = wire_attach_clsact(w, h);
	if (err) {
		wire_log(w, WIRE_LOG_ERROR, "wire: %s: attaching clsact filters: %s%s", h->ifname,
			 strerror(-err), err == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
		return err;
	}

attached:
	w->n_hooks++;
	wire_log(w, WIRE_LOG_INFO, "wire: %s: counting RoCEv2 (UDP %u) via %s", h->ifname,
		 w->roce_port, h->kind == WIRE_ATTACH_TCX ? "tcx" : "clsact");
	return 0;
}

int wire_detach(struct wire *w, int ifindex)
{
	struct wire_hook *h = wire_find(w, ifindex);
	int err = 0;

	if (!h)
		return -ENOENT;
	if (h->kind == WIRE_ATTACH_TCX)
		wire_detach_tcx(w, h);
	else
		err = wire_detach_clsact(w, h);
	if (!err)
		wire_log(w, WIRE_LOG_INFO, "wire: %s: detached", h->ifname);
	/* Forget it either way: what failed to go is logged and not ours to retry blindly. */
	*h = w->hooks[--w->n_hooks];
	return err;
}

int wire_attach_kind(const struct wire *w, int ifindex)
{
	const struct wire_hook *h = wire_find(w, ifindex);

	return h ? (int)h->kind : -ENOENT;
}

int wire_read(struct wire *w, wire_read_fn cb, void *arg)
{
	int fd = bpf_map__fd(w->skel->maps.wire_counts);
	struct wire_key key, next;
	struct wire_value *vals;
	uint64_t packets, bytes;
	const void *prev = NULL;
	int err, cpu;

	/* Per call, not per struct wire: concurrent readers must not share it. */
	vals = calloc(w->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	while (!(err = bpf_map_get_next_key(fd, prev, &next))) {
		err = bpf_map_lookup_elem(fd, &next, vals);
		if (err) {
			wire_log(w, WIRE_LOG_ERROR, "wire: reading counters: %s", strerror(-err));
			goto cleanup;
		}
		packets = bytes = 0;
		for (cpu = 0; cpu < w->ncpus; cpu++) {
			packets += vals[cpu].packets;
			bytes += vals[cpu].bytes;
		}
		err = cb(&next, packets, bytes, arg);
		if (err)
			goto cleanup;
		key = next;
		prev = &key;
	}
	if (err == -ENOENT)
		err = 0;
	else
		wire_log(w, WIRE_LOG_ERROR, "wire: walking counters: %s", strerror(-err));

cleanup:
	free(vals);
	return err;
}

void wire_close(struct wire *w)
{
	if (!w)
		return;
	while (w->n_hooks)
		wire_detach(w, w->hooks[w->n_hooks - 1].ifindex);
	wire_free(w);
}
