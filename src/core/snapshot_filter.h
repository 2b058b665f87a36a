/* SPDX-License-Identifier: MIT */
/*
 * A snapshot read for a few of its fields (fleet check).  An 8-NIC mlx5
 * node's snapshot is about 150 KiB, 70 % counters and most of the rest fields
 * no fleet rule reads; jansson spent ~200 instructions a byte on it.  One
 * linear pass reads a snapshot straight into the model, keeping those fields
 * and validating the rest as the full reader would; for a sequence the same
 * pass copies the document without what the reader would throw away, and
 * jansson parses the few KiB left.  Whenever the pass is not sure, the full
 * reader reads the original, so every verdict and every error message is the
 * full reader's.
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
 * Copy the document buf (one snapshot, or a JSON array of them) into out,
 * compact where it drops, without every object's "counters" and without the
 * "fields" and "absent" members of known fields k does not keep.  0: out
 * holds it; -EAGAIN: not sure (the document, or what would be dropped, is
 * anything but well-formed and valid as snapshot_read_last() checks it, or
 * unusual: escapes in dropped names, nesting deeper than real snapshots);
 * -ENOMEM.
 */
int snapshot_filter(const struct snapshot_keep *k, const char *buf, size_t len, struct strbuf *out);

/*
 * The same pass reading one snapshot (not a sequence) straight into m
 * (after model_init), as snapshot_read_last(..., SNAPSHOT_NO_COUNTERS)
 * would for k's fields, without jansson.  0: m is filled; -EAGAIN: not sure
 * (anything the full reader would refuse, or unusual; m holds a part of it
 * and is only fit for model_free); -ENOMEM.
 */
int snapshot_read_direct(const struct snapshot_keep *k, const char *buf, size_t len,
			 struct node_model *m);

/*
 * snapshot_read_last(name, buf, len, SNAPSHOT_NO_COUNTERS, ...) for a reader
 * of k's fields: m gets those (the others are left not collected).  Read
 * directly when it can be, else filtered and parsed by jansson; a document
 * neither is sure of, or one that fails, is read in full: the return value
 * and err are exactly snapshot_read_last()'s.
 */
int snapshot_read_last_kept(const char *name, const char *buf, size_t len,
			    const struct snapshot_keep *k, struct node_model *m, char *err,
			    size_t errlen);

#endif
