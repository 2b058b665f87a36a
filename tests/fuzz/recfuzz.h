/* SPDX-License-Identifier: MIT */
/*
 * The input format of the recording harness (fuzz_recording.c): a recording
 * as a sequence of rows, each turned into an INSERT into a fresh database
 * with the recorder's schema, which the reader then opens.  Mutating rows
 * instead of SQLite pages keeps the fuzzer in rocewatch's reader (ids,
 * counts, values, times) rather than in SQLite's page checks.
 *
 *   row     := kind:u8 fields...   (kind % REC_ROW__COUNT)
 *   int     := b < 0xf0: b | 0xf0 i16 | 0xf1 i32 | 0xf2 i64 | 0xf3 -(u8)
 *   text    := b < 0x80: dict[b % n] | b >= 0x80: (b & 0x7f) raw bytes
 *   double  := 8 raw bytes
 *
 * mkseeds.c writes the seed recordings in this format.
 */
#ifndef ROCEWATCH_RECFUZZ_H
#define ROCEWATCH_RECFUZZ_H

enum rec_row {
	REC_ROW_SERIES, /* id obj device port netdev source name prio config:u8 */
	REC_ROW_POLL,	/* seq t_ms run what keyframe:u8 n_samples n_config dropped */
	REC_ROW_SAMPLE, /* t_ms series_id vkind:u8 (int | double | - | text) */
	REC_ROW_CONFIG, /* t_ms series_id value:text|0xff(NULL) absent:text|0xff */
	REC_ROW_EVENT,	/* t_ms kind object device name detail */
	REC_ROW_RUN,	/* run t_ms host version interval_ms pid */
	REC_ROW_META,	/* key value */
	REC_ROW__COUNT,
};

/* The dictionaries texts index (kept small: the fuzzer finds raw bytes itself). */
static const char *const recfuzz_words[] = {
	"",
	"node",
	"netdev",
	"rdma_port",
	"eth2",
	"mlx5_0",
	"field",
	"ethtool",
	"hw",
	"port",
	"cc",
	"mtu",
	"pfc.enabled",
	"pfc.rx_pause",
	"dscp2prio",
	"gids",
	"trust",
	"wire.ce_ratio",
	"out_of_sequence",
	"rx_discards_phy",
	"9000",
	"true",
	"\"dscp\"",
	"[3]",
	"{\"3\":1234}",
	"{\"26\":3}",
	"unsupported",
	"error",
	"alert",
	"capture",
	"host",
	"capture_reason",
	"capture_trigger_ms",
	"0.25",
	("[{\"index\":3,\"gid\":\"0000:0000:0000:0000:0000:ffff:c0a8:0102\",\"type\":\"RoCE v2\","
	 "\"netdev\":\"eth2\"}]"),
};

#endif
