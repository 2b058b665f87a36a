/* SPDX-License-Identifier: MIT */
/*
 * wire: what wire.bpf.c and its loader agree on.  Included by the BPF object
 * (built with -target bpf against uapi headers only) and by userspace, so it
 * uses the kernel's __u types and nothing else.
 */
#ifndef ROCEWATCH_WIRE_H
#define ROCEWATCH_WIRE_H

#include <linux/types.h>

/* The IANA port of RoCEv2; the BPF side takes its copy as a const volatile. */
#define WIRE_ROCE_PORT 4791

/* wire_key.dir */
enum wire_dir {
	WIRE_DIR_INGRESS = 0,
	WIRE_DIR_EGRESS = 1,
	WIRE_DIR_MAX,
};

/*
 * wire_key.class, from the first byte of the InfiniBand BTH.  (The tag is
 * not wire_class: src/core/model.h has that one, in its own order, and the wire
 * collector includes both headers.)
 *
 * CNP is the RoCEv2 congestion notification packet, opcode 0x81.
 * ACK is ACKNOWLEDGE (xxx1_0001) or ATOMIC ACKNOWLEDGE (xxx1_0010) on the
 * transports that have them: RC (0x11, 0x12), RD (0x51, 0x52) and XRC
 * (0xb1, 0xb2).  UC and UD have no responses at all, so no opcode of theirs
 * is an ACK; a NAK is an ACKNOWLEDGE with a NAK syndrome in its AETH and is
 * counted as ACK.  READ RESPONSE packets carry data and are counted as DATA.
 */
enum wire_key_class {
	WIRE_CLASS_DATA = 0,
	WIRE_CLASS_CNP = 1,
	WIRE_CLASS_ACK = 2,
	WIRE_CLASS_MAX,
};

/*
 * Map key.  8 bytes, no padding: the BPF side builds it on the stack and the
 * hash compares all of it, so every byte must be written.
 */
struct wire_key {
	__u32 ifindex; /* of the device the program ran on, in its netns */
	__u8 dir;      /* enum wire_dir */
	__u8 dscp;     /* 0..63 */
	__u8 ecn;      /* 0..3: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE */
	__u8 class;    /* enum wire_key_class */
};

/*
 * Map value, one per CPU.  bytes is skb->len where the program runs: the L2
 * frame without FCS; a VLAN tag the driver or the stack already moved into
 * skb metadata is not in it.
 */
struct wire_value {
	__u64 packets;
	__u64 bytes;
};

/*
 * ifindex x 2 directions x 64 DSCP x 4 ECN x 3 classes is 1536 keys per
 * device at the very worst; real traffic uses a handful of DSCPs.  A full
 * map stops new keys from being counted (existing ones keep counting).
 */
#define WIRE_MAX_ENTRIES 16384

#endif
