// SPDX-License-Identifier: MIT
/*
 * The recording reader (src/recording/recording.c) on a database built from
 * the input (recfuzz.h): rec_open, rec_load of everything, rec_scan
 * rebuilding a node model as replay and export do, rec_events.
 * Contract: a schema-correct file opens; loading and scanning succeed or fail
 * with an error naming the file, never by allocating by a wild id or size.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "fuzz.h"
#include "recfuzz.h"
#include "recording.h"
#include "util.h"

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static void raw(struct rd *r, void *out, size_t len)
{
	memset(out, 0, len);
	if (len > r->n)
		len = r->n;
	memcpy(out, r->p, len);
	r->p += len;
	r->n -= len;
}

static int64_t num(struct rd *r)
{
	uint8_t b = u8(r);
	int16_t v16;
	int32_t v32;
	int64_t v64;

	switch (b) {
	case 0xf0:
		raw(r, &v16, sizeof(v16));
		return v16;
	case 0xf1:
		raw(r, &v32, sizeof(v32));
		return v32;
	case 0xf2:
		raw(r, &v64, sizeof(v64));
		return v64;
	case 0xf3:
		return -(int64_t)u8(r);
	default:
		return b;
	}
}

/* A text, or NULL for 0xff where the column allows it. */
static const char *text(struct rd *r, char *buf, size_t cap, int nullable)
{
	uint8_t b = u8(r);
	size_t len;

	if (nullable && b == 0xff)
		return NULL;
	if (b < 0x80)
		return recfuzz_words[b % ARRAY_SIZE(recfuzz_words)];
	len = b & 0x7f;
	if (len >= cap)
		len = cap - 1;
	raw(r, buf, len);
	buf[len] = '\0';
	return buf;
}

static void bind_text(sqlite3_stmt *st, int col, const char *s)
{
	if (s)
		sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, col);
}

static const char *const insert_sql[REC_ROW__COUNT] = {
	[REC_ROW_SERIES] = "INSERT INTO series VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[REC_ROW_POLL] = "INSERT INTO polls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[REC_ROW_SAMPLE] = "INSERT INTO samples VALUES (?1, ?2, ?3)",
	[REC_ROW_CONFIG] = "INSERT INTO config VALUES (?1, ?2, ?3, ?4)",
	[REC_ROW_EVENT] = ("INSERT INTO events (t_ms, kind, object, device, name, detail)"
			   " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
	[REC_ROW_RUN] = "INSERT INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[REC_ROW_META] = "INSERT OR REPLACE INTO meta VALUES (?1, ?2)",
};

/* One row from the input into its statement; constraint failures are just skipped rows. */
static void row(sqlite3_stmt **st, struct rd *r)
{
	enum rec_row k = (enum rec_row)(u8(r) % REC_ROW__COUNT);
	sqlite3_stmt *s = st[k];
	char b1[128], b2[128], b3[128], b4[128], b5[128];
	double d;

	switch (k) {
	case REC_ROW_SERIES:
		sqlite3_bind_int64(s, 1, num(r));
		bind_text(s, 2, text(r, b1, sizeof(b1), 0));
		bind_text(s, 3, text(r, b2, sizeof(b2), 0));
		sqlite3_bind_int64(s, 4, num(r));
		bind_text(s, 5, text(r, b3, sizeof(b3), 0));
		bind_text(s, 6, text(r, b4, sizeof(b4), 0));
		bind_text(s, 7, text(r, b5, sizeof(b5), 0));
		sqlite3_bind_int64(s, 8, num(r));
		sqlite3_bind_int64(s, 9, u8(r) & 1);
		break;
	case REC_ROW_POLL:
		for (int c = 1; c <= 8; c++)
			sqlite3_bind_int64(s, c, c == 5 ? u8(r) & 1 : num(r));
		break;
	case REC_ROW_SAMPLE:
		sqlite3_bind_int64(s, 1, num(r));
		sqlite3_bind_int64(s, 2, num(r));
		switch (u8(r) % 4) {
		case 0:
			sqlite3_bind_int64(s, 3, num(r));
			break;
		case 1:
			raw(r, &d, sizeof(d));
			sqlite3_bind_double(s, 3, d);
			break;
		case 2:
			sqlite3_bind_null(s, 3);
			break;
		default:
			bind_text(s, 3, text(r, b1, sizeof(b1), 0));
		}
		break;
	case REC_ROW_CONFIG:
		sqlite3_bind_int64(s, 1, num(r));
		sqlite3_bind_int64(s, 2, num(r));
		bind_text(s, 3, text(r, b1, sizeof(b1), 1));
		bind_text(s, 4, text(r, b2, sizeof(b2), 1));
		break;
	case REC_ROW_EVENT:
		sqlite3_bind_int64(s, 1, num(r));
		bind_text(s, 2, text(r, b1, sizeof(b1), 0));
		bind_text(s, 3, text(r, b2, sizeof(b2), 1));
		bind_text(s, 4, text(r, b3, sizeof(b3), 1));
		bind_text(s, 5, text(r, b4, sizeof(b4), 1));
		bind_text(s, 6, text(r, b5, sizeof(b5), 1));
		break;
	case REC_ROW_RUN:
		sqlite3_bind_int64(s, 1, num(r));
		sqlite3_bind_int64(s, 2, num(r));
		bind_text(s, 3, text(r, b1, sizeof(b1), 0));
		bind_text(s, 4, text(r, b2, sizeof(b2), 0));
		sqlite3_bind_int64(s, 5, num(r));
		sqlite3_bind_int64(s, 6, num(r));
		break;
	case REC_ROW_META:
		bind_text(s, 1, text(r, b1, sizeof(b1), 0));
		bind_text(s, 2, text(r, b2, sizeof(b2), 1));
		break;
	default:
		return;
	}
	sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

static void on_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	(void)p;
	rec_model_sample(arg, s, v);
}

static void on_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	char err[256];

	(void)p;
	rec_model_config(arg, s, json, absent, err, sizeof(err));
}

static void on_poll_end(void *arg, const struct rec_poll *p)
{
	(void)p;
	rec_model_sweep(arg);
	model_link_ports(arg);
}

static void on_event(void *arg, const struct rec_event *e)
{
	(void)arg;
	FUZZ_CHECK(e->kind && e->object && e->device && e->name && e->detail, "NULL in an event");
}

static char path[256];

static void remove_db(void)
{
	unlink(path);
}

static void build(const uint8_t *data, size_t size)
{
	struct rd r = { data, size };
	sqlite3_stmt *st[REC_ROW__COUNT] = { NULL };
	char err[256];
	sqlite3 *db;

	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		abort();
	sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", NULL, NULL, NULL);
	if (rec_create_schema(db, "main", err, sizeof(err)))
		abort();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (int k = 0; k < REC_ROW__COUNT; k++)
		if (sqlite3_prepare_v2(db, insert_sql[k], -1, &st[k], NULL) != SQLITE_OK)
			abort();
	while (r.n)
		row(st, &r);
	for (int k = 0; k < REC_ROW__COUNT; k++)
		sqlite3_finalize(st[k]);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_scan_ops ops = { .sample = on_sample,
				    .config = on_config,
				    .poll_end = on_poll_end };
	struct rec_reader rd;
	struct node_model m;
	char err[512] = "";
	int r;

	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(path, sizeof(path), "%s/rw-fuzz-recording-%d.db", dir, (int)getpid());
		atexit(remove_db);
	}
	build(data, size);
	r = rec_open(&rd, path, err, sizeof(err));
	FUZZ_CHECK(!r, "a database with the recorder's schema did not open: %s", err);
	r = rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -EIO, "rec_load returned %d", r);
	FUZZ_CHECK(!r || strstr(err, path), "an error that names no file: %s", err);
	if (!r) {
		model_init(&m);
		r = rec_scan(&rd, &ops, &m, err, sizeof(err));
		FUZZ_CHECK(r == 0 || r == -EIO, "rec_scan returned %d: %s", r, err);
		rec_events(&rd, on_event, NULL);
		model_free(&m);
	}
	rec_close(&rd);
	return 0;
}
