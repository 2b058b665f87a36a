// SPDX-License-Identifier: MIT
/*
 * roce_send: a test traffic generator for the wire view.  Sends UDP
 * datagrams whose payload starts with an InfiniBand BTH, with a chosen
 * DSCP/ECN, from a socket or as raw Ethernet frames (VLAN tags, padding,
 * fragments, a foreign IP protocol) through AF_PACKET.  The ICRC is not
 * computed: nothing here is meant for a real RDMA stack.
 *
 * Only ever point it at addresses inside network namespaces you made.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_packet.h>

#define BTH_LEN	      12
#define MAX_PAYLOAD   9000
#define MAX_TAGS      3
#define ETH_HLEN_MIN  14
#define IP4_HLEN      20
#define UDP_HLEN      8
#define MAX_FRAME     (ETH_HLEN_MIN + 4 * MAX_TAGS + IP4_HLEN + 40 + UDP_HLEN + MAX_PAYLOAD)
#define ETH_P_8021Q_  0x8100
#define ETH_P_8021AD_ 0x88a8

/* include/uapi/linux/udp.h and socket.h; older libc headers lack them. */
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

struct opts {
	const char *dest;
	uint16_t port;
	unsigned long count;
	double max_seconds;
	int dscp;
	int ecn;
	int opcode;
	int len; /* UDP payload bytes, BTH included */
	int ip_opts;
	bool hbh;
	bool zerocopy;
	int gso;
	bool tcp;
	bool stats;
	bool quiet;
	/* raw mode */
	const char *raw_if;
	const char *src;
	uint8_t dst_mac[6];
	bool have_dst_mac;
	int vlans[MAX_TAGS];
	int n_vlans;
	int outer_tpid;
	int pad_to;
	int frag_off;
	bool mf;
	int proto;
};

static void usage(FILE *f)
{
	fputs(
	    "usage: roce_send [options] DEST\n"
	    "Send COUNT UDP datagrams to DEST (IPv4 or IPv6) whose payload starts with a\n"
	    "12-byte InfiniBand BTH (opcode, P_Key 0xffff, QP 0x11, PSN counting up).\n"
	    "  -p, --port N        UDP port (4791)\n"
	    "  -n, --count N       datagrams to send (1)\n"
	    "  -T, --seconds S     stop after S seconds even if COUNT is not reached\n"
	    "      --dscp N        DSCP 0..63 (0)\n"
	    "      --ecn N         ECN 0..3: 1 ECT(1), 2 ECT(0), 3 CE (0)\n"
	    "  -o, --opcode N      BTH opcode, e.g. 0x04 SEND ONLY, 0x11 ACK, 0x81 CNP (0x04)\n"
	    "  -l, --len N         UDP payload length; below 12 the BTH is cut short (32)\n"
	    "      --ip-opts N     IPv4: N bytes (multiple of 4, <= 40) of NOP options\n"
	    "      --hbh           IPv6: add a hop-by-hop options header\n"
	    "      --zerocopy      MSG_ZEROCOPY: the payload leaves in page frags, not in\n"
	    "                      the skb's linear part\n"
	    "      --gso N         UDP GSO: each send of --len bytes goes out as datagrams\n"
	    "                      of N bytes, each starting with its own BTH\n"
	    "      --tcp           TCP instead: connect to DEST:PORT and send the payload\n"
	    "      --stats         print 'sent N packets in S s: R pps' on stdout\n"
	    "  -q, --quiet         no summary on stderr\n"
	    "raw mode (IPv4 only, AF_PACKET, frames go out exactly as built):\n"
	    "      --raw IFNAME    send Ethernet frames on IFNAME\n"
	    "      --src ADDR      IPv4 source address (required with --raw)\n"
	    "      --dst-mac MAC   destination MAC (required with --raw)\n"
	    "      --vlan VID      add an 802.1Q tag; repeat for QinQ, outermost first\n"
	    "      --outer-tpid N  TPID of the outermost tag when there are two or more (0x88a8)\n"
	    "      --pad-to N      pad the frame with zeros to N bytes (Ethernet padding)\n"
	    "      --frag-off N    IPv4 fragment offset in 8-byte units\n"
	    "      --mf            set IPv4 More Fragments\n"
	    "      --proto N       IPv4 protocol number (17); the bytes after stay UDP+BTH\n"
	    "exit: 0 sent, 1 failed, 2 usage\n",
	    f);
}

static int parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = b[i];
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill_payload(uint8_t *p, int len, int opcode, uint32_t psn, int seg)
{
	/* SE, MigReq, PadCnt, TVer, AckReq and the reserved bits all 0. */
	uint8_t bth[BTH_LEN] = { 0 };
	int i, off;

	bth[0] = opcode;
	bth[2] = 0xff; /* P_Key 0xffff */
	bth[3] = 0xff;
	bth[7] = 0x11; /* destination QP */
	for (i = 0; i < len; i++)
		p[i] = i & 0xff;
	/* One BTH per GSO segment: each becomes a datagram of its own. */
	for (off = 0; off < len; off += seg ? seg : len) {
		bth[9] = psn >> 16;
		bth[10] = psn >> 8;
		bth[11] = psn;
		memcpy(p + off, bth, len - off < BTH_LEN ? len - off : BTH_LEN);
		psn++;
	}
}

static uint16_t ip_csum(const void *buf, int len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;
	int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Builds the whole frame; returns its length. */
static int build_frame(const struct opts *o, const uint8_t src_mac[6], struct in_addr src,
		       struct in_addr dst, uint32_t psn, uint8_t *f)
{
	int off = 0, ip_off, ihl = IP4_HLEN + o->ip_opts, i;
	int udp_len = UDP_HLEN + o->len;
	uint16_t tpid;

	memcpy(f, o->dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	off = 12;
	for (i = 0; i < o->n_vlans; i++) {
		tpid = i == 0 && o->n_vlans > 1 ? o->outer_tpid : ETH_P_8021Q_;
		put16(f + off, tpid);
		put16(f + off + 2, o->vlans[i] & 0x0fff);
		off += 4;
	}
	put16(f + off, ETH_P_IP);
	off += 2;

	ip_off = off;
	memset(f + off, 0, ihl);
	f[off] = 0x40 | ihl / 4;
	f[off + 1] = o->dscp << 2 | o->ecn;
	put16(f + off + 2, ihl + udp_len);
	put16(f + off + 4, psn & 0xffff);
	put16(f + off + 6, (o->mf ? 0x2000 : 0) | (o->frag_off & 0x1fff));
	f[off + 8] = 64;
	f[off + 9] = o->proto;
	memcpy(f + off + 12, &src, 4);
	memcpy(f + off + 16, &dst, 4);
	memset(f + off + IP4_HLEN, 1, o->ip_opts); /* NOP */
	put16(f + off + 10, ip_csum(f + ip_off, ihl));
	off += ihl;

	put16(f + off, 49152 + (psn & 0x3fff)); /* source port */
	put16(f + off + 2, o->port);
	put16(f + off + 4, udp_len);
	put16(f + off + 6, 0); /* no checksum: allowed over IPv4 */
	off += UDP_HLEN;
	fill_payload(f + off, o->len, o->opcode, psn, 0);
	off += o->len;

	if (off < o->pad_to) {
		memset(f + off, 0, o->pad_to - off);
		off = o->pad_to;
	}
	return off;
}

static int send_raw(const struct opts *o, unsigned long *sent)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct in_addr src, dst;
	struct ifreq ifr = { 0 };
	uint8_t src_mac[6], *frame;
	double deadline = o->max_seconds > 0 ? now_s() + o->max_seconds : 0;
	unsigned long i;
	int fd = -1, len, err = 0;

	if (inet_pton(AF_INET, o->dest, &dst) != 1 || !o->src ||
	    inet_pton(AF_INET, o->src, &src) != 1 || !o->have_dst_mac) {
		fprintf(stderr, "roce_send: --raw needs IPv4 --src, DEST and --dst-mac\n");
		return -EINVAL;
	}
	frame = calloc(1, MAX_FRAME);
	if (!frame)
		return -ENOMEM;
	/* Protocol 0: this socket only sends, it must not queue every frame seen. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "roce_send: AF_PACKET socket: %s\n", strerror(errno));
		goto cleanup;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->raw_if);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		err = -errno;
		fprintf(stderr, "roce_send: %s: %s\n", o->raw_if, strerror(errno));
		goto cleanup;
	}
	sll.sll_ifindex = ifr.ifr_ifindex;
	/* ifr_ifindex and ifr_hwaddr share a union: one question at a time. */
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		fprintf(stderr, "roce_send: %s: %s\n", o->raw_if, strerror(errno));
		goto cleanup;
	}
	memcpy(src_mac, ifr.ifr_hwaddr.sa_data, 6);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, o->dst_mac, 6);

	for (i = 0; i < o->count; i++) {
		if (deadline && (i & 255) == 0 && now_s() > deadline)
			break;
		len = build_frame(o, src_mac, src, dst, i, frame);
		if (sendto(fd, frame, len, 0, (struct sockaddr *)&sll, sizeof(sll)) != len) {
			err = -errno;
			fprintf(stderr, "roce_send: sendto %s: %s\n", o->raw_if, strerror(errno));
			goto cleanup;
		}
		(*sent)++;
	}

cleanup:
	if (fd >= 0)
		close(fd);
	free(frame);
	return err;
}

static int resolve(const char *dest, uint16_t port, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, dest, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*sl = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, dest, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*sl = sizeof(*s6);
		return 0;
	}
	fprintf(stderr, "roce_send: %s: not an IPv4 or IPv6 address\n", dest);
	return -EINVAL;
}

static int set_tos(int fd, int family, const struct opts *o)
{
	int tos = o->dscp << 2 | o->ecn;
	uint8_t opts[40], hbh[8] = { 0, 0, 1, 4, 0, 0, 0, 0 }; /* PadN over 6 bytes */

	if (family == AF_INET) {
		if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0)
			return -errno;
		if (o->ip_opts) {
			memset(opts, 1, o->ip_opts); /* NOP */
			if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opts, o->ip_opts) < 0)
				return -errno;
		}
		return 0;
	}
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) < 0)
		return -errno;
	if (o->hbh && setsockopt(fd, IPPROTO_IPV6, IPV6_HOPOPTS, hbh, sizeof(hbh)) < 0)
		return -errno;
	return 0;
}

/* Zerocopy completions queue up on the error queue; they only need to go. */
static void drain_errqueue(int fd)
{
	char ctrl[256];
	struct msghdr msg = { .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };

	while (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
		msg.msg_controllen = sizeof(ctrl);
}

static int send_tcp(const struct opts *o, const struct sockaddr_storage *ss, socklen_t sl,
		    unsigned long *sent)
{
	uint8_t payload[MAX_PAYLOAD];
	struct pollfd pfd;
	int fd, err = 0, soerr = 0;
	socklen_t el = sizeof(soerr);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	err = set_tos(fd, ss->ss_family, o);
	if (err)
		goto cleanup;
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS) {
		err = -errno;
		goto cleanup;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, 2000) <= 0) {
		err = -ETIMEDOUT;
		goto cleanup;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
	/* A refused connection still put TCP segments to PORT on the wire. */
	if (soerr == ECONNREFUSED) {
		*sent = 1;
		goto cleanup;
	}
	if (soerr) {
		err = -soerr;
		goto cleanup;
	}
	fill_payload(payload, o->len, o->opcode, 0, 0);
	for (*sent = 0; *sent < o->count; (*sent)++)
		if (send(fd, payload, o->len, MSG_NOSIGNAL) < 0) {
			err = -errno;
			goto cleanup;
		}

cleanup:
	close(fd);
	return err;
}

static int send_udp(const struct opts *o, unsigned long *sent)
{
	struct sockaddr_storage ss;
	uint8_t payload[MAX_PAYLOAD];
	double deadline = o->max_seconds > 0 ? now_s() + o->max_seconds : 0;
	socklen_t sl;
	unsigned long i;
	int fd, err, one = 1, flags = 0;

	err = resolve(o->dest, o->port, &ss, &sl);
	if (err)
		return err;
	if (o->tcp)
		return send_tcp(o, &ss, sl, sent);

	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = set_tos(fd, ss.ss_family, o);
	if (err) {
		fprintf(stderr, "roce_send: setting TOS/options: %s\n", strerror(-err));
		goto cleanup;
	}
	if (o->zerocopy) {
		if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
			err = -errno;
			fprintf(stderr, "roce_send: SO_ZEROCOPY: %s\n", strerror(errno));
			goto cleanup;
		}
		flags = MSG_ZEROCOPY;
	}
	if (o->gso && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &o->gso, sizeof(o->gso)) < 0) {
		err = -errno;
		fprintf(stderr, "roce_send: UDP_SEGMENT: %s\n", strerror(errno));
		goto cleanup;
	}
	/*
	 * Not connect()ed on purpose: a connected UDP socket would get the
	 * receiver's ICMP port-unreachable as an error on a later send, which
	 * would then not go out.
	 */
	for (i = 0; i < o->count; i++) {
		if (deadline && (i & 255) == 0 && now_s() > deadline)
			break;
		fill_payload(payload, o->len, o->opcode, i, o->gso);
		if (sendto(fd, payload, o->len, flags, (struct sockaddr *)&ss, sl) < 0) {
			/* A full qdisc or device queue: wait and retry the same one. */
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(100);
				i--;
				continue;
			}
			err = -errno;
			fprintf(stderr, "roce_send: sendto %s: %s\n", o->dest, strerror(errno));
			goto cleanup;
		}
		(*sent)++;
		if (o->zerocopy)
			drain_errqueue(fd);
	}

cleanup:
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	enum {
		OPT_DSCP = 256,
		OPT_ECN,
		OPT_IPOPTS,
		OPT_HBH,
		OPT_TCP,
		OPT_STATS,
		OPT_RAW,
		OPT_SRC,
		OPT_DSTMAC,
		OPT_VLAN,
		OPT_TPID,
		OPT_PAD,
		OPT_FRAG,
		OPT_MF,
		OPT_PROTO,
		OPT_ZC,
		OPT_GSO,
	};
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 'T' },
		{ "opcode", required_argument, NULL, 'o' },
		{ "len", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "dscp", required_argument, NULL, OPT_DSCP },
		{ "ecn", required_argument, NULL, OPT_ECN },
		{ "ip-opts", required_argument, NULL, OPT_IPOPTS },
		{ "hbh", no_argument, NULL, OPT_HBH },
		{ "zerocopy", no_argument, NULL, OPT_ZC },
		{ "gso", required_argument, NULL, OPT_GSO },
		{ "tcp", no_argument, NULL, OPT_TCP },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "raw", required_argument, NULL, OPT_RAW },
		{ "src", required_argument, NULL, OPT_SRC },
		{ "dst-mac", required_argument, NULL, OPT_DSTMAC },
		{ "vlan", required_argument, NULL, OPT_VLAN },
		{ "outer-tpid", required_argument, NULL, OPT_TPID },
		{ "pad-to", required_argument, NULL, OPT_PAD },
		{ "frag-off", required_argument, NULL, OPT_FRAG },
		{ "mf", no_argument, NULL, OPT_MF },
		{ "proto", required_argument, NULL, OPT_PROTO },
		{ 0 },
	};
	struct opts o = {
		.port = 4791,
		.count = 1,
		.opcode = 0x04,
		.len = 32,
		.outer_tpid = ETH_P_8021AD_,
		.proto = IPPROTO_UDP,
	};
	unsigned long sent = 0;
	double t0, dt;
	long v;
	int c, err;

	while ((c = getopt_long(argc, argv, "p:n:T:o:l:qh", lo, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'p':
			err = parse_num(optarg, 1, 65535, &v);
			o.port = v;
			break;
		case 'n':
			err = parse_num(optarg, 0, LONG_MAX, &v);
			o.count = v;
			break;
		case 'T':
			o.max_seconds = atof(optarg);
			break;
		case 'o':
			err = parse_num(optarg, 0, 255, &v);
			o.opcode = v;
			break;
		case 'l':
			err = parse_num(optarg, 0, MAX_PAYLOAD, &v);
			o.len = v;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_DSCP:
			err = parse_num(optarg, 0, 63, &v);
			o.dscp = v;
			break;
		case OPT_ECN:
			err = parse_num(optarg, 0, 3, &v);
			o.ecn = v;
			break;
		case OPT_IPOPTS:
			err = parse_num(optarg, 0, 40, &v);
			if (!err && v % 4)
				err = -EINVAL;
			o.ip_opts = v;
			break;
		case OPT_HBH:
			o.hbh = true;
			break;
		case OPT_ZC:
			o.zerocopy = true;
			break;
		case OPT_GSO:
			err = parse_num(optarg, 1, MAX_PAYLOAD, &v);
			o.gso = v;
			break;
		case OPT_TCP:
			o.tcp = true;
			break;
		case OPT_STATS:
			o.stats = true;
			break;
		case OPT_RAW:
			o.raw_if = optarg;
			break;
		case OPT_SRC:
			o.src = optarg;
			break;
		case OPT_DSTMAC:
			err = parse_mac(optarg, o.dst_mac);
			o.have_dst_mac = !err;
			break;
		case OPT_VLAN:
			err = parse_num(optarg, 0, 4095, &v);
			if (!err && o.n_vlans == MAX_TAGS)
				err = -E2BIG;
			if (!err)
				o.vlans[o.n_vlans++] = v;
			break;
		case OPT_TPID:
			err = parse_num(optarg, 0, 0xffff, &v);
			o.outer_tpid = v;
			break;
		case OPT_PAD:
			err = parse_num(optarg, 0, MAX_FRAME, &v);
			o.pad_to = v;
			break;
		case OPT_FRAG:
			err = parse_num(optarg, 0, 0x1fff, &v);
			o.frag_off = v;
			break;
		case OPT_MF:
			o.mf = true;
			break;
		case OPT_PROTO:
			err = parse_num(optarg, 0, 255, &v);
			o.proto = v;
			break;
		default:
			usage(stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "roce_send: bad option value '%s'\n", optarg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	o.dest = argv[optind];

	t0 = now_s();
	err = o.raw_if ? send_raw(&o, &sent) : send_udp(&o, &sent);
	dt = now_s() - t0;
	if (err) {
		if (err != -EINVAL)
			fprintf(stderr, "roce_send: %s\n", strerror(-err));
		return 1;
	}
	if (!o.quiet)
		fprintf(stderr, "roce_send: %lu %s to %s port %u, dscp %d ecn %d opcode 0x%02x\n",
			sent, o.tcp ? "connection(s)" : "packets", o.dest, o.port, o.dscp, o.ecn,
			o.opcode);
	if (o.stats)
		printf("sent %lu packets in %.3f s: %.0f pps\n", sent, dt, dt > 0 ? sent / dt : 0);
	return 0;
}
