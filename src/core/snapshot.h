/* SPDX-License-Identifier: MIT */
/*
 * Snapshot JSON (schema in docs/snapshot.md): the whole node model, every
 * field with its value or its absence reason, counter sets and collector
 * outcomes.  Written by `rocewatch snapshot` and /api/v1/state, read back
 * by --from so any later feature runs on a recorded node.
 */
#ifndef ROCEWATCH_SNAPSHOT_H
#define ROCEWATCH_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "strbuf.h"

#define SNAPSHOT_SCHEMA "rocewatch-snapshot"
/* 2: the absent reason "no_data" (wire view).  Version 1 files are still read. */
#define SNAPSHOT_VERSION     2
#define SNAPSHOT_VERSION_MIN 1

/* Serialise; pretty adds indentation. 0 or -errno. */
int snapshot_write(struct strbuf *out, const struct node_model *m, int pretty);
/*
 * Any jansson value as rocewatch prints JSON (full double precision; pretty:
 * indented, with a final newline) appended to out: 0 or -ENOMEM.
 */
struct json_t;
int json_write_sb(struct strbuf *out, struct json_t *root, bool pretty);
/*
 * snapshot_write() with one more top-level member, key: extra (its reference
 * is taken, NULL adds nothing).  Readers ignore top-level members they do not
 * know, so a section beside the model (serve's "probe") needs no new version.
 */
/* The same with every member of the object members (its reference is taken; NULL: none). */
int snapshot_write_members(struct strbuf *out, const struct node_model *m, int pretty,
			   struct json_t *members);
int snapshot_write_with(struct strbuf *out, const struct node_model *m, int pretty, const char *key,
			struct json_t *extra);
int snapshot_write_file(const char *path, const struct node_model *m);

/*
 * A loaded snapshot file: one snapshot, or a JSON array of them (a recorded
 * sequence, replayed one per poll).
 */
struct snapshot_file;

/* Parse and validate every snapshot in the file; err names file and place. */
int snapshot_open(const char *path, struct snapshot_file **out, char *err, size_t errlen);
/*
 * A document in memory (an HTTP body; name stands for the file in messages):
 * every snapshot in it validated, m (after model_init) filled from the last.
 * SNAPSHOT_NO_COUNTERS: counter sets are validated but not kept (a fleet
 * compares configuration, and counters are most of an mlx5 node's model).
 */
#define SNAPSHOT_NO_COUNTERS 1u
int snapshot_read_last(const char *name, const char *buf, size_t len, unsigned flags,
		       struct node_model *m, char *err, size_t errlen);
/* The same from len bytes in memory; name stands for the file in errors. */
int snapshot_open_buffer(const char *name, const char *buf, size_t len, struct snapshot_file **out,
			 char *err, size_t errlen);
size_t snapshot_count(const struct snapshot_file *sf);
/* Fill m (after model_init) from snapshot i. Objects not in it are dropped. */
int snapshot_apply(const struct snapshot_file *sf, size_t i, struct node_model *m, char *err,
		   size_t errlen);
void snapshot_close(struct snapshot_file *sf);

/*
 * One field's value as the snapshot encodes it (compact JSON), and back:
 * the recorder stores configuration history this way, report/replay read it.
 */
int snapshot_value_text(struct strbuf *out, const struct field_desc *d, const struct field_val *f);
int snapshot_value_parse(struct object *o, int id, const char *text, char *err, size_t errlen);

#endif
