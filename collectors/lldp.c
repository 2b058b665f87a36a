// SPDX-License-Identifier: MIT
/*
 * lldp: each netdev's LLDP neighbour (the switch port at the other end of
 * the cable), for rail identity (issue 36).  Two sources:
 *
 *  - frames: one AF_PACKET socket for ETH_P_LLDP, opened at start (it needs
 *    CAP_NET_RAW, which serve then drops: the socket stays), joined to the
 *    nearest-bridge group 01:80:c2:00:00:0e on every netdev, since a real
 *    NIC filters that address otherwise (joining needs no capability).  A
 *    neighbour is kept per ifindex until its TTL passes.  Frames are drained
 *    without blocking from the daemon's event loop (event_fd) and at each
 *    poll; a new or changed neighbour makes the daemon poll at once.
 *  - lldpd: where its control socket is there, `lldpcli -u SOCKET -f json
 *    show neighbors` on each configuration poll.  lldpd has listened since
 *    boot, so it answers the one-shot commands too.
 *
 * A neighbour heard in a frame, not expired, wins; lldpd's answer fills the
 * netdevs without one.  NIC firmware with an LLDP agent of its own (mlx5's,
 * mlxconfig LLDP_NB_RX_MODE) can take every frame before the host sees it:
 * then neither source knows, and the facts say "no LLDP frame seen".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector.h"
#include "lldp.h"
#include "util.h"

/* A jumbo frame and then some; MSG_TRUNC says when one was longer. */
#define LLDP_FRAME_MAX 9216
/* Frames read per drain: a flood cannot hold the poll loop; the rest wait for the next. */
#define LLDP_DRAIN_MAX 256

struct lldp_priv {
	const struct rw_config *cfg;
	int idx;
	int fd;	    /* the AF_PACKET socket, or -1 */
	int fd_err; /* why there is none (positive errno) */
	uint8_t *buf;
	struct lldp_table heard;
	struct lldp_cli_nb *cli; /* lldpd's last answer */
	size_t n_cli;
	bool polled; /* the first poll ran (--collector.lldp.wait is for it alone) */
	int64_t (*now)(void);
};

/* obj->cpriv[idx] of a netdev */
struct lldp_nd {
	int ifindex;  /* what the rest is about; another one starts over */
	bool typed;   /* sysfs type read */
	bool ether;   /* ARPHRD_ETHER (or type unreadable): LLDP may come */
	bool foreign; /* no netdev of this ifindex and name here (a --sysfs-root tree) */
	bool joined;
	int join_err;
};

/* ---- the neighbour table ---- */

/* The MSAP identifier (802.1AB 6.5): what a neighbour is, whatever else it says. */
static bool lldp_msap_same(const struct lldp_nb *a, const struct lldp_nb *b)
{
	return a->chassis_subtype == b->chassis_subtype && a->port_subtype == b->port_subtype &&
	       !strcmp(a->chassis_id, b->chassis_id) && !strcmp(a->port_id, b->port_id);
}

struct lldp_heard *lldp_table_find(struct lldp_table *t, int ifindex)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].ifindex == ifindex)
			return &t->e[i];
	return NULL;
}

int lldp_table_heard(struct lldp_table *t, int ifindex, const struct lldp_nb *nb, int64_t now_ns)
{
	struct lldp_heard *h = lldp_table_find(t, ifindex);
	int changed;

	/*
	 * 802.1AB 9.2.7.7.3: a shutdown LLDPDU (TTL 0) withdraws its MSAP (chassis
	 * and port ID) now; lldpd sends one for the old port ID when it changes.
	 */
	if (!nb->ttl) {
		if (!h || h->expired || !lldp_msap_same(&h->nb, nb))
			return 0;
		h->expired = true;
		return 1;
	}
	if (!h) {
		if (t->n >= LLDP_TABLE_MAX)
			return -ENOSPC;
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			return -ENOMEM;
		h = &t->e[t->n++];
		h->ifindex = ifindex;
		changed = 1;
	} else {
		changed = h->expired || !lldp_nb_same(&h->nb, nb);
	}
	h->nb = *nb;
	h->expired = false;
	h->expires_ns = now_ns + (int64_t)nb->ttl * 1000000000LL;
	return changed;
}

int lldp_table_expire(struct lldp_table *t, int64_t now_ns,
		      void (*said)(const struct lldp_heard *h, void *arg), void *arg)
{
	int n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct lldp_heard *h = &t->e[i];

		if (h->expired || now_ns < h->expires_ns)
			continue;
		h->expired = true;
		n++;
		if (said)
			said(h, arg);
	}
	return n;
}

void lldp_table_prune(struct lldp_table *t, bool (*keep)(int ifindex, void *arg), void *arg)
{
	size_t w = 0;

	for (size_t i = 0; i < t->n; i++)
		if (keep(t->e[i].ifindex, arg))
			t->e[w++] = t->e[i];
	t->n = w;
}

void lldp_table_free(struct lldp_table *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/* ---- the facts ---- */

static const enum field_id lldp_fields[] = {
	F_NETDEV_LLDP_SYSTEM_NAME,	F_NETDEV_LLDP_CHASSIS_ID, F_NETDEV_LLDP_PORT_ID,
	F_NETDEV_LLDP_PORT_DESCRIPTION, F_NETDEV_LLDP_SOURCE,	  F_NETDEV_LLDP_TTL,
};

void lldp_absent(struct object *o, enum absent_reason why, int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(lldp_fields); i++)
		field_absent(o, lldp_fields[i], why, err);
}

void lldp_fill(struct object *o, const struct lldp_nb *nb, const char *source)
{
	field_set_str(o, F_NETDEV_LLDP_CHASSIS_ID, nb->chassis_id);
	field_set_str(o, F_NETDEV_LLDP_PORT_ID, nb->port_id);
	/* optional TLVs (8.5.5, 8.5.6) this neighbour does not send */
	if (nb->has_system_name)
		field_set_str(o, F_NETDEV_LLDP_SYSTEM_NAME, nb->system_name);
	else
		field_absent(o, F_NETDEV_LLDP_SYSTEM_NAME, ABS_UNSUPPORTED, ENODATA);
	if (nb->has_port_description)
		field_set_str(o, F_NETDEV_LLDP_PORT_DESCRIPTION, nb->port_description);
	else
		field_absent(o, F_NETDEV_LLDP_PORT_DESCRIPTION, ABS_UNSUPPORTED, ENODATA);
	field_set_str(o, F_NETDEV_LLDP_SOURCE, source);
	field_set_int(o, F_NETDEV_LLDP_TTL, nb->ttl);
}

/* ---- frames ---- */

static const char *ifname_of(int ifindex, char buf[IF_NAMESIZE + 16])
{
	if (!if_indextoname((unsigned)ifindex, buf))
		snprintf(buf, IF_NAMESIZE + 16, "ifindex %d", ifindex);
	return buf;
}

static void say_heard(int ifindex, const struct lldp_nb *nb)
{
	char name[IF_NAMESIZE + 16];

	ifname_of(ifindex, name);
	if (!nb->ttl)
		log_info("lldp: %s: neighbour withdrawn (shutdown LLDPDU from chassis %s port %s)",
			 name, nb->chassis_id, nb->port_id);
	else
		log_info("lldp: %s: neighbour %s port %s (chassis %s, TTL %u s)", name,
			 nb->has_system_name ? nb->system_name : "(no system name)", nb->port_id,
			 nb->chassis_id, nb->ttl);
}

/*
 * One frame of n bytes (more than we read when n > LLDP_FRAME_MAX): 1 when
 * it changed a neighbour.
 */
static int lldp_frame(struct lldp_priv *p, int ifindex, ssize_t n, int64_t now)
{
	char err[160], key[64], name[IF_NAMESIZE + 16];
	uint8_t src[6] = { 0 };
	struct lldp_nb nb;
	int r;

	snprintf(key, sizeof(key), "lldp:%d:malformed", ifindex);
	if (n > LLDP_FRAME_MAX) {
		snprintf(err, sizeof(err), "frame of %zd bytes, longer than the %d read", n,
			 LLDP_FRAME_MAX);
		r = -EBADMSG;
	} else {
		r = lldp_parse_frame(p->buf, (size_t)n, &nb, src, err, sizeof(err));
	}
	if (r) {
		/* once until this netdev hears a good one: a switch repeats itself every 30 s */
		rw_log_once(LOG_LVL_WARN, key,
			    "lldp: %s: malformed LLDPDU from %02x:%02x:%02x:%02x:%02x:%02x: %s "
			    "(ignored; said once)",
			    ifname_of(ifindex, name), src[0], src[1], src[2], src[3], src[4],
			    src[5], err);
		return 0;
	}
	rw_log_once_reset(key);
	r = lldp_table_heard(&p->heard, ifindex, &nb, now);
	if (r > 0)
		say_heard(ifindex, &nb);
	else if (r < 0)
		rw_log_once(LOG_LVL_WARN, "lldp:table",
			    "lldp: %s: not kept: neighbours on %d netdevs already (said once)",
			    ifname_of(ifindex, name), LLDP_TABLE_MAX);
	return r > 0;
}

/* What has arrived, without blocking: how many neighbours changed. */
static int lldp_drain(struct lldp_priv *p)
{
	int changed = 0;

	for (int i = 0; p->fd >= 0 && i < LLDP_DRAIN_MAX; i++) {
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		ssize_t n = recvfrom(p->fd, p->buf, LLDP_FRAME_MAX, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&sll, &sl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break; /* EAGAIN: drained */
		}
		/* ours, as the kernel loops them back to packet sockets (an lldpd here sending) */
		if (sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		changed += lldp_frame(p, sll.sll_ifindex, n, p->now());
	}
	return changed;
}

/* PACKET_ORIGDEV: a bond's or VLAN's port reports the device it came in on, the cabled one. */
static int lldp_open_socket(struct lldp_priv *p)
{
	int one = 1;

	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_LLDP));
	if (p->fd < 0)
		return -errno;
	setsockopt(p->fd, SOL_PACKET, PACKET_ORIGDEV, &one, sizeof(one));
#ifdef PACKET_IGNORE_OUTGOING
	setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
	return 0;
}

/* ---- lldpd ---- */

static void lldpd_forget(struct lldp_priv *p)
{
	free(p->cli);
	p->cli = NULL;
	p->n_cli = 0;
}

static const struct lldp_nb *lldpd_find(const struct lldp_priv *p, const char *ifname)
{
	for (size_t i = 0; i < p->n_cli; i++)
		if (!strcmp(p->cli[i].ifname, ifname))
			return &p->cli[i].nb;
	return NULL;
}

/* lldpcli's failure in words: "" when it answered. */
static void lldpd_problem(int r, const struct lldp_cli_out *out, char *buf, size_t len)
{
	if (r == -ENOENT)
		snprintf(buf, len, "no lldpcli in PATH (Debian: the lldpd package)");
	else if (r == -ETIMEDOUT)
		snprintf(buf, len, "no answer in %d ms (killed)", LLDP_CLI_TIMEOUT_MS);
	else if (r == -EMSGSIZE)
		snprintf(buf, len, "answer longer than %u bytes (killed)", LLDP_CLI_OUT_MAX);
	else if (r)
		snprintf(buf, len, "%s", strerror(-r));
	else if (WIFSIGNALED(out->status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(out->status));
	else if (WEXITSTATUS(out->status))
		snprintf(buf, len, "exit status %d%s%s", WEXITSTATUS(out->status),
			 out->err[0] ? ": " : "", out->err);
	else
		buf[0] = '\0';
}

/*
 * lldpd's neighbours, when its socket is there; none otherwise (the last
 * answer is not kept past a failure: lldpd ages its neighbours, we do not).
 */
static void lldpd_read(struct lldp_priv *p)
{
	const char *sock = p->cfg->lldp_socket ? p->cfg->lldp_socket : "/run/lldpd.socket";
	char *argv[] = { "lldpcli", "-u", (char *)sock, "-f", "json", "show", "neighbors", NULL };
	struct lldp_cli_out out;
	char problem[200], err[160];
	struct stat st;
	int r;

	lldpd_forget(p);
	if (stat(sock, &st) || !S_ISSOCK(st.st_mode))
		return; /* no lldpd here: nothing to say */
	r = lldp_cli_run(argv, LLDP_CLI_TIMEOUT_MS, LLDP_CLI_OUT_MAX, &out);
	lldpd_problem(r, &out, problem, sizeof(problem));
	if (!problem[0]) {
		r = lldp_json_parse(out.out, out.len, &p->cli, &p->n_cli, err, sizeof(err));
		if (r)
			snprintf(problem, sizeof(problem), "its JSON: %s", err);
	}
	lldp_cli_out_free(&out);
	if (problem[0]) {
		rw_log_once(LOG_LVL_WARN, "lldp:lldpcli",
			    "lldp: lldpcli -u %s: %s (lldpd's neighbours not read; said once)",
			    sock, problem);
		return;
	}
	rw_log_once_reset("lldp:lldpcli");
}

/* ---- netdevs ---- */

static struct lldp_nd *nd_of(struct lldp_priv *p, struct object *o)
{
	struct lldp_nd *nd = o->cpriv[p->idx];

	if (!nd) {
		nd = calloc(1, sizeof(*nd));
		if (!nd)
			return NULL;
		o->cpriv[p->idx] = nd;
	}
	if (nd->ifindex != o->ifindex) /* a new device of that name */
		*nd = (struct lldp_nd){ .ifindex = o->ifindex };
	return nd;
}

/*
 * /sys/class/net/NAME/type: ARPHRD_ETHER (1) is the only one LLDP comes on.
 * And is it this host's device of that name?  A --sysfs-root tree's netdev
 * is not, and its ifindex may be a stranger's: never joined, never heard.
 */
static void nd_type(struct lldp_priv *p, struct lldp_nd *nd, const struct object *o)
{
	char path[4096], buf[32], name[IF_NAMESIZE];
	uint64_t t;

	if (nd->typed)
		return;
	nd->typed = true;
	nd->ether = true;
	snprintf(path, sizeof(path), "%s/class/net/%s/type", p->cfg->sysfs_root, o->name);
	if (!read_file_str(path, buf, sizeof(buf)) && !parse_u64(buf, &t))
		nd->ether = t == ARPHRD_ETHER;
	nd->foreign =
	    o->ifindex <= 0 || !if_indextoname((unsigned)o->ifindex, name) || strcmp(name, o->name);
}

static void nd_join(struct lldp_priv *p, struct lldp_nd *nd, const struct object *o)
{
	struct packet_mreq mr = { .mr_ifindex = o->ifindex,
				  .mr_type = PACKET_MR_MULTICAST,
				  .mr_alen = 6 };
	char key[96];

	if (p->fd < 0 || !nd->ether || nd->joined || nd->join_err || nd->foreign)
		return;
	memcpy(mr.mr_address, lldp_nearest_bridge, 6);
	if (!setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		nd->joined = true;
		return;
	}
	nd->join_err = errno;
	snprintf(key, sizeof(key), "lldp:%s:join", o->name);
	rw_log_once(LOG_LVL_WARN, key,
		    "lldp: %s: cannot join 01:80:c2:00:00:0e: %s (the NIC may filter LLDP "
		    "frames out)",
		    o->name, strerror(nd->join_err));
}

static bool lldp_known(struct lldp_priv *p, const struct object *o)
{
	struct lldp_heard *h = lldp_table_find(&p->heard, o->ifindex);

	return (h && !h->expired) || lldpd_find(p, o->name);
}

/*
 * --collector.lldp.wait: until every Ethernet netdev of this host with
 * carrier has a neighbour, or the time is up.  One-shot commands only hear
 * what arrives while they run, and a switch sends every 30 s.
 */
static void lldp_wait(struct lldp_priv *p, struct node_model *m)
{
	int64_t deadline = p->now() + p->cfg->lldp_wait_ns;

	while (p->fd >= 0) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int64_t left = deadline - p->now();
		bool all = true;

		for (size_t i = 0; i < m->n_netdevs && all; i++) {
			struct object *o = m->netdevs[i];
			struct lldp_nd *nd = o->cpriv[p->idx];

			if (nd && nd->ether && !nd->foreign && field_present(o, F_NETDEV_CARRIER) &&
			    o->f[F_NETDEV_CARRIER].v.i && !lldp_known(p, o))
				all = false;
		}
		if (all || left <= 0)
			return;
		if (poll(&pfd, 1, (int)((left + 999999) / 1000000)) > 0)
			lldp_drain(p);
	}
}

static void say_expired(const struct lldp_heard *h, void *arg)
{
	char name[IF_NAMESIZE + 16];

	(void)arg;
	log_info("lldp: %s: neighbour %s port %s expired: no LLDPDU within its TTL of %u s",
		 ifname_of(h->ifindex, name),
		 h->nb.has_system_name ? h->nb.system_name : h->nb.chassis_id, h->nb.port_id,
		 h->nb.ttl);
}

static bool in_model(int ifindex, void *arg)
{
	return model_netdev_by_ifindex(arg, ifindex) != NULL;
}

static void lldp_fill_netdev(struct lldp_priv *p, struct object *o, const struct lldp_nd *nd)
{
	struct lldp_heard *h = lldp_table_find(&p->heard, o->ifindex);
	const struct lldp_nb *c = lldpd_find(p, o->name);

	if (h && !h->expired)
		lldp_fill(o, &h->nb, "frames");
	else if (c)
		lldp_fill(o, c, "lldpd");
	else if (!nd->ether)
		lldp_absent(o, ABS_UNSUPPORTED, EOPNOTSUPP); /* InfiniBand, tunnels: no LLDP */
	else if (nd->foreign)
		lldp_absent(o, ABS_UNSUPPORTED, ENODEV);
	else if (h)
		lldp_absent(o, ABS_NO_DATA, RW_ELLDPEXPIRED);
	else if (p->fd < 0)
		lldp_absent(o, absent_from_errno(p->fd_err), p->fd_err);
	else
		lldp_absent(o, ABS_NO_DATA, RW_ENOLLDP);
}

static int lldp_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct lldp_priv *p = cc->priv;

	/*
	 * A frame between polls wakes the event loop, which drains it
	 * (lldp_event): a fast poll has nothing to read, and a recvfrom() that
	 * says so ten times a second is a system call for nothing.
	 */
	if ((what & COLLECT_SLOW) || !p->polled)
		lldp_drain(p);
	if ((what & COLLECT_SLOW) || !p->polled)
		lldpd_read(p);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct lldp_nd *nd = nd_of(p, o);

		if (!nd) {
			lldp_absent(o, ABS_ERROR, ENOMEM);
			continue;
		}
		nd_type(p, nd, o);
		nd_join(p, nd, o);
	}
	if (!p->polled && p->cfg->lldp_wait_ns > 0)
		lldp_wait(p, m);
	p->polled = true;
	lldp_table_expire(&p->heard, p->now(), say_expired, NULL);
	if (what & COLLECT_SLOW)
		lldp_table_prune(&p->heard, in_model, m);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];

		if (o->cpriv[p->idx])
			lldp_fill_netdev(p, o, o->cpriv[p->idx]);
	}
	return 0;
}

static int lldp_init(struct collector_ctx *cc)
{
	struct lldp_priv *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	cc->priv = p;
	p->cfg = cc->cfg;
	p->idx = cc->idx;
	p->now = mono_ns;
	p->fd = -1;
	p->buf = malloc(LLDP_FRAME_MAX);
	if (!p->buf)
		return -ENOMEM;
	r = lldp_open_socket(p);
	if (r) {
		/*
		 * lldpd may still answer: not a reason to stop.  EPERM and
		 * EAFNOSUPPORT are a sandbox doing its job (the shipped unit:
		 * contrib/systemd/lldp.conf lifts it), so not a warning.
		 */
		p->fd_err = -r;
		rw_log(r == -EPERM || r == -EACCES || r == -EAFNOSUPPORT ? LOG_LVL_INFO
									 : LOG_LVL_WARN,
		       "lldp: no LLDP frames: AF_PACKET socket: %s (needs CAP_NET_RAW at start and "
		       "AF_PACKET allowed); only a running lldpd's neighbours are read",
		       strerror(-r));
	}
	return 0;
}

static void lldp_fini(struct collector_ctx *cc)
{
	struct lldp_priv *p = cc->priv;

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	lldp_table_free(&p->heard);
	lldpd_forget(p);
	free(p->buf);
	free(p);
	cc->priv = NULL;
}

static int lldp_event_fd(struct collector_ctx *cc)
{
	struct lldp_priv *p = cc->priv;

	return p ? p->fd : -1;
}

static int lldp_event(struct collector_ctx *cc)
{
	return lldp_drain(cc->priv);
}

const struct collector lldp_collector = {
	.name = "lldp",
	.source = SRC_LLDP,
	.help = "LLDP neighbour of each netdev: lldp.system_name, lldp.chassis_id, lldp.port_id, "
		"lldp.port_description, lldp.ttl, lldp.source (frames on an AF_PACKET socket, "
		"which needs CAP_NET_RAW at start; else a running lldpd, through lldpcli)",
	.default_enabled = true,
	.init = lldp_init,
	.collect = lldp_collect,
	.fini = lldp_fini,
	.event_fd = lldp_event_fd,
	.event = lldp_event,
	.obj_free = free,
};
