// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * wire: count RoCEv2 packets at tc, per (device, direction, DSCP, ECN, class).
 *
 * Only what crosses the kernel's network stack is seen: soft-RoCE (rxe),
 * veth and containers, mirrored ports.  RoCE that a NIC's RDMA engine sends
 * and receives by itself never reaches tc.
 *
 * Parsed: Ethernet, up to two in-band 802.1Q/802.1ad tags (the stack has
 * usually moved the outer one to skb metadata before tc ingress already),
 * IPv4 with options, IPv6 without extension headers, UDP to roce_port, and
 * the 12-byte BTH.  Anything else, or anything too short for those headers,
 * is left uncounted.  The programs never change a verdict.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "wire.h"

/* Set by the loader before load; read-only afterwards. */
const volatile __u16 roce_port = WIRE_ROCE_PORT;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, WIRE_MAX_ENTRIES);
	__type(key, struct wire_key);
	__type(value, struct wire_value);
} wire_counts SEC(".maps");

/* The tag that follows the MAC addresses; uapi has no struct for it. */
struct wire_vlan {
	__be16 tci;
	__be16 proto;
};

#define WIRE_BTH_LEN  12
#define WIRE_IP_MF    0x2000
#define WIRE_IP_OFF   0x1fff
#define WIRE_MAX_TAGS 2
/* Ethernet, two tags, IPv4 with 40 bytes of options, UDP, BTH. */
#define WIRE_HDR_MAX (14 + 4 * WIRE_MAX_TAGS + 60 + 8 + WIRE_BTH_LEN)

#define WIRE_BTH_CNP 0x81

enum wire_parse {
	WIRE_SKIP,
	WIRE_COUNT,
	WIRE_NONLINEAR, /* a header runs past the linear part: see *need */
};

/* The header ending at byte n is not in the linear part (maybe nowhere). */
#define WIRE_NEED(n)                   \
	do {                           \
		*need = (n);           \
		return WIRE_NONLINEAR; \
	} while (0)

static __always_inline __u8 wire_class(__u8 opcode)
{
	__u8 transport = opcode & 0xe0; /* RC 0x00, RD 0x40, XRC 0xa0 */
	__u8 op = opcode & 0x1f;

	if (opcode == WIRE_BTH_CNP)
		return WIRE_CLASS_CNP;
	if ((op == 0x11 || op == 0x12) &&
	    (transport == 0x00 || transport == 0x40 || transport == 0xa0))
		return WIRE_CLASS_ACK;
	return WIRE_CLASS_DATA;
}

/*
 * Offsets are kept as scalars bounded by construction (at most
 * WIRE_HDR_MAX), so the verifier can follow every data + off check.
 */
static __always_inline enum wire_parse wire_parse(struct __sk_buff *skb, struct wire_key *key,
						  __u32 *need, __u32 *hlen)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct wire_vlan *vlan;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	struct udphdr *udp;
	__u8 *bth;
	__be16 proto;
	__u32 off;
	__u8 tos;
	int i;

	if ((void *)(eth + 1) > end)
		WIRE_NEED(sizeof(*eth));
	proto = eth->h_proto;
	off = sizeof(*eth);

#pragma unroll
	for (i = 0; i < WIRE_MAX_TAGS; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		vlan = data + off;
		if ((void *)(vlan + 1) > end)
			WIRE_NEED(off + sizeof(*vlan));
		proto = vlan->proto;
		off += sizeof(*vlan);
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		ip4 = data + off;
		if ((void *)(ip4 + 1) > end)
			WIRE_NEED(off + sizeof(*ip4));
		if (ip4->version != 4 || ip4->ihl < 5 || ip4->protocol != IPPROTO_UDP)
			return WIRE_SKIP;
		/*
		 * RoCEv2 sets DF.  A later fragment has no UDP header to read,
		 * and a first one would be counted at a fragment's length, so
		 * neither is counted.
		 */
		if (ip4->frag_off & bpf_htons(WIRE_IP_MF | WIRE_IP_OFF))
			return WIRE_SKIP;
		tos = ip4->tos;
		off += ip4->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = data + off;
		if ((void *)(ip6 + 1) > end)
			WIRE_NEED(off + sizeof(*ip6));
		/* An extension header (fragment included) is not followed. */
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return WIRE_SKIP;
		tos = ip6->priority << 4 | ip6->flow_lbl[0] >> 4;
		off += sizeof(*ip6);
	} else {
		return WIRE_SKIP;
	}

	udp = data + off;
	if ((void *)(udp + 1) > end)
		WIRE_NEED(off + sizeof(*udp));
	if (udp->dest != bpf_htons(roce_port))
		return WIRE_SKIP;
	/*
	 * The UDP length, not the frame, says whether a BTH is there: a short
	 * datagram arrives padded to the 60-byte Ethernet minimum and tc
	 * ingress sees the padding.
	 */
	if (bpf_ntohs(udp->len) < sizeof(*udp) + WIRE_BTH_LEN)
		return WIRE_SKIP;
	off += sizeof(*udp);

	bth = data + off;
	if ((void *)(bth + WIRE_BTH_LEN) > end)
		WIRE_NEED(off + WIRE_BTH_LEN);

	key->dscp = tos >> 2;
	key->ecn = tos & 3;
	key->class = wire_class(bth[0]);
	*hlen = off;
	return WIRE_COUNT;
}

static __always_inline void wire_add(const struct wire_key *key, __u64 packets, __u64 bytes)
{
	struct wire_value *val, init = { .packets = packets, .bytes = bytes };

	val = bpf_map_lookup_elem(&wire_counts, key);
	if (!val) {
		if (!bpf_map_update_elem(&wire_counts, key, &init, BPF_NOEXIST))
			return;
		/* Another CPU made the key first (or the map is full). */
		val = bpf_map_lookup_elem(&wire_counts, key);
		if (!val)
			return;
	}
	/* Per-CPU slot, and tc runs with BH off: a plain add is enough. */
	val->packets += packets;
	val->bytes += bytes;
}

static __always_inline int wire_count(struct __sk_buff *skb, __u8 dir)
{
	struct wire_key key = { .ifindex = skb->ifindex, .dir = dir };
	enum wire_parse res;
	__u32 len = skb->len;
	__u32 need = 0, hlen = 0;
	__u32 segs;

	res = wire_parse(skb, &key, &need, &hlen);
	if (res == WIRE_NONLINEAR && need <= len) {
		/*
		 * The headers go on in page frags: header-split drivers,
		 * MSG_ZEROCOPY senders.  Pull all we could need at once so
		 * that one more parse settles it.  A packet simply too short
		 * never gets here, nor one already ruled out by a header.
		 */
		if (bpf_skb_pull_data(skb, len < WIRE_HDR_MAX ? len : WIRE_HDR_MAX))
			return TC_ACT_UNSPEC;
		res = wire_parse(skb, &key, &need, &hlen);
	}
	if (res != WIRE_COUNT)
		return TC_ACT_UNSPEC;

	/*
	 * A UDP GSO/GRO skb stands for gso_segs datagrams on the wire, each
	 * with its own copy of the headers in front of the BTH; all of them
	 * get the class of the first.
	 */
	segs = skb->gso_segs;
	if (segs > 1)
		wire_add(&key, segs, len + (__u64)(segs - 1) * hlen);
	else
		wire_add(&key, 1, len);
	/*
	 * TC_ACT_UNSPEC is -1, which tcx names TCX_NEXT (enum tcx_action_base,
	 * include/uapi/linux/bpf.h since Linux 6.6): the next program decides.
	 * Under cls_bpf direct-action it means "go on with the next filter",
	 * and the packet passes when none is left.  TC_ACT_OK would end the
	 * chain and hide the packet from whatever is attached after us.
	 */
	return TC_ACT_UNSPEC;
}

SEC("tc")
int wire_ingress(struct __sk_buff *skb)
{
	return wire_count(skb, WIRE_DIR_INGRESS);
}

SEC("tc")
int wire_egress(struct __sk_buff *skb)
{
	return wire_count(skb, WIRE_DIR_EGRESS);
}

/* GPL-compatible so that GPL-only helpers stay usable while debugging. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";
