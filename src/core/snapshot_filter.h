/* SPDX-License-Identifier: MIT */
/*
 * A snapshot read for a few of its fields (fleet check reads thousands).
 * The one reader (snapshot_read.c) validates every field as ever, and sets
 * in the model only those a keep set keeps: an 8-NIC mlx5 node's snapshot
 * is about 150 KiB, 70 % counters and most of the rest fields no fleet
 * rule reads.
 */
#ifndef ROCEWATCH_SNAPSHOT_FILTER_H
#define ROCEWATCH_SNAPSHOT_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "fields.h"
#include "model.h"
#include "strbuf.h"

struct snapshot_keep;

/*
 * The fields a reader needs (keep NULL: all of them), with the ones the
 * reader derives them from; NULL when out of memory.  Read-only after this:
 * threads may share it.
 */
struct snapshot_keep *snapshot_keep_new(const bool keep[F__COUNT]);
void snapshot_keep_free(struct snapshot_keep *k);
/* Does k keep field id (derived ones included)? */
bool snapshot_keep_has(const struct snapshot_keep *k, int id);

/*
 * snapshot_read_last(name, buf, len, SNAPSHOT_NO_COUNTERS, ...) for a reader
 * of k's fields (k NULL: all): m gets those, the others are validated and
 * left not collected.  The return value and err are snapshot_read_last()'s.
 */
int snapshot_read_last_kept(const char *name, const char *buf, size_t len,
			    const struct snapshot_keep *k, struct node_model *m, char *err,
			    size_t errlen);

#endif
