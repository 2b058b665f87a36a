// SPDX-License-Identifier: MIT
/*
 * The flight recorder.  See recorder.h for the threads, recording.c and
 * docs/recording.md for the schema.
 *
 * Durability: journal_mode=WAL with synchronous=NORMAL.  A COMMIT appends the
 * transaction's pages to the -wal file with write(2) before it returns; only
 * checkpoints fsync.  Once write(2) returned, the bytes are the kernel's:
 * kill -9 of this process cannot take them back, and the next open replays
 * the WAL.  So a killed serve loses at most the poll whose COMMIT had not
 * returned; what NORMAL gives up is durability across an OS crash or power
 * loss (the last transactions may roll back), never consistency
 * (https://www.sqlite.org/pragma.html#pragma_synchronous, "WAL mode is
 * always consistent with synchronous=NORMAL").
 *
 * Deltas: a poll stores only the series whose value changed.  Every so often
 * a poll is a keyframe (every live series has a row): readers start from
 * the keyframe at or before the window they want, and retention only ever
 * deletes up to a keyframe, so the oldest poll left always holds the full
 * state.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "prom.h"
#include "recorder.h"
#include "recording_schema.h"
#include "strmap.h"
#include "config.h"
#include "snapshot.h"
#include "util.h"

#define QUEUE_LEN     32	   /* batches between the poll loop and the writer */
#define KF_MAX_MS     (300 * 1000) /* a keyframe at least this often */
#define KF_ROW_FACTOR 8		   /* ... or once the deltas outweigh 8 keyframes */
#define DELETE_CHUNK  20000	   /* rows per retention transaction, at most */
#define AGE_CHECK_NS  (10LL * 1000000000LL)
#define ABS_GONE_NAME "gone" /* config: the object disappeared */

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/* ---- what the poll loop hands the writer ---- */

struct series_def {
	int32_t id;
	uint8_t kind, src;
	int8_t prio;
	bool config;
	uint32_t port;
	char device[RW_NAME_MAX];
	char netdev[RW_NAME_MAX];
	char name[RW_CNAME_MAX];
};

enum {
	ROW_NULL,
	ROW_INT,
	ROW_FLOAT
};

struct row {
	int32_t id;
	uint8_t type;
	int64_t v; /* ROW_FLOAT: the double's bits */
};

struct crow {
	int32_t id;
	uint8_t reason; /* enum absent_reason, or ABS__COUNT for "gone" */
	size_t off;	/* JSON text in the arena; SIZE_MAX when absent */
};

struct evrow {
	int64_t t_ms;
	char kind[32], object[16], device[RW_NAME_MAX], name[128];
	char *detail;
};

struct batch {
	int64_t seq, t_ms, dropped;
	unsigned what;
	bool keyframe;
	bool first_of_run;
	char host[RW_NAME_MAX];
	struct series_def *defs;
	size_t n_defs, cap_defs;
	struct row *rows;
	size_t n_rows, cap_rows;
	struct crow *crows;
	size_t n_crows, cap_crows;
	struct evrow *evs;
	size_t n_evs, cap_evs;
	struct strbuf arena;
	bool oom;
};

/* Per series: what the database holds once the queue has drained. */
struct series_state {
	int64_t v;	/* counters: value bits; config: hash of the value */
	uint64_t touch; /* seq of the last poll that saw the series */
	uint8_t live;	/* a value (or, for config, a reason) is recorded */
	uint8_t type;	/* ROW_INT / ROW_FLOAT */
	bool config;
};

/* Per object: series ids by field/priority and by counter-set index. */
struct cscache {
	uint32_t n;
	int32_t *id; /* 0 unknown, -1 not recorded, > 0 series id */
	char (*name)[RW_CNAME_MAX];
};

struct objrec {
	enum obj_kind kind;
	char name[RW_NAME_MAX];
	uint32_t port;
	char netdev[RW_NAME_MAX];
	int32_t fid[F__COUNT][RW_PRIO_COUNT];
	struct cscache cs[CSET__COUNT];
};

struct capture_job {
	struct capture_job *next;
	char reason[48];
	char reasons[256];
	char file[PATH_MAX];
	int64_t trigger_ms, start_ms, end_ms;
	bool have_snapshot;
	char *snapshot;
	char *rules;
};

struct recorder {
	struct recorder_opts o;
	char dir[2048]; /* leaves room in PATH_MAX for the file names below it */
	char db_path[PATH_MAX];
	int lock_fd;
	int64_t wal_budget, target_bytes, low_bytes, delete_chunk;
	uint64_t kf_max_rows;

	/* writer thread */
	sqlite3 *db;
	sqlite3_stmt *st_series, *st_poll, *st_sample, *st_config, *st_event, *st_run, *st_host;
	sqlite3_stmt *st_pages, *st_free, *st_begin, *st_commit, *st_rollback;
	int64_t run;
	int64_t page_size;
	/* series of a failed transaction: inserted again with the next one */
	struct series_def *retry;
	size_t n_retry, cap_retry;
	int64_t next_age_check; /* monotonic; 0 = now */
	int64_t maint_keep;	/* a cut in progress: delete before this t_ms; -1 none */
	bool maint_more;

	/* poll-loop side (model lock held) */
	struct strmap series_map, obj_map;
	struct objrec **objs;
	size_t n_objs, cap_objs;
	struct series_state *st;
	size_t cap_st;
	/* new series of a poll lost to out-of-memory: sent with the next one */
	struct series_def *carry;
	size_t n_carry, cap_carry;
	int32_t max_id;
	int64_t seq, last_t_ms, last_kf_ms, n_live, live_rows;
	uint64_t rows_since_kf;
	bool need_kf, run_sent;
	int64_t dropped_pending;
	char host[RW_NAME_MAX];

	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_writer, cv_idle, cv_capture;
	struct batch *q[QUEUE_LEN];
	size_t q_head, q_len;
	struct batch *free_b[QUEUE_LEN + 1];
	size_t n_free;
	bool writing, stop_writer, stop_capture;
	bool resync;	 /* a write failed: send every value again (a keyframe) */
	bool kf_request; /* retention wants a keyframe to cut at */
	struct evrow *pend_ev;
	size_t n_pend_ev, cap_pend_ev;
	struct capture_job *jobs;
	pthread_t writer, capturer;
	bool writer_started, capturer_started;

	/* counters: written by one thread, read by /metrics (relaxed atomics) */
	struct recorder_counters c;
	int64_t commit_ns;
};

#define CNT_ADD(r, f, n) __atomic_add_fetch(&(r)->c.f, (n), __ATOMIC_RELAXED)
#define CNT_SET(r, f, n) __atomic_store_n(&(r)->c.f, (n), __ATOMIC_RELAXED)
#define CNT_GET(r, f)	 __atomic_load_n(&(r)->c.f, __ATOMIC_RELAXED)

static int64_t ts_ms(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

/* ---- batches ---- */

#define GROW(arr, n, cap, b)                                              \
	do {                                                              \
		if ((n) == (cap)) {                                       \
			size_t nc_ = (cap) ? (cap)*2 : 256;               \
			void *np_ = realloc((arr), nc_ * sizeof(*(arr))); \
			if (!np_) {                                       \
				(b)->oom = true;                          \
				break;                                    \
			}                                                 \
			(arr) = np_;                                      \
			(cap) = nc_;                                      \
		}                                                         \
		(n)++;                                                    \
	} while (0)

static void batch_reset(struct batch *b)
{
	for (size_t i = 0; i < b->n_evs; i++)
		free(b->evs[i].detail);
	b->n_defs = b->n_rows = b->n_crows = b->n_evs = 0;
	b->keyframe = b->first_of_run = b->oom = false;
	b->dropped = 0;
	sb_reset(&b->arena);
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	batch_reset(b);
	free(b->defs);
	free(b->rows);
	free(b->crows);
	free(b->evs);
	sb_free(&b->arena);
	free(b);
}

static void add_row(struct batch *b, int32_t id, uint8_t type, int64_t v)
{
	size_t n = b->n_rows;

	GROW(b->rows, b->n_rows, b->cap_rows, b);
	if (b->n_rows == n)
		return;
	b->rows[n] = (struct row){ id, type, v };
}

static void add_crow(struct batch *b, int32_t id, uint8_t reason, size_t off)
{
	size_t n = b->n_crows;

	GROW(b->crows, b->n_crows, b->cap_crows, b);
	if (b->n_crows == n)
		return;
	b->crows[n] = (struct crow){ id, reason, off };
}

static void add_def(struct batch *b, const struct series_def *d)
{
	size_t n = b->n_defs;

	GROW(b->defs, b->n_defs, b->cap_defs, b);
	if (b->n_defs == n)
		return;
	b->defs[n] = *d;
}

/* ---- interning (poll thread) ---- */

static void series_key(char *buf, size_t len, enum obj_kind kind, const char *device, uint32_t port,
		       const char *netdev, int src, const char *name, int prio)
{
	/* the widths are those of series_def: a key never truncates */
	snprintf(buf, len, "%d\x1f%.63s\x1f%u\x1f%.63s\x1f%d\x1f%.47s\x1f%d", kind, device, port,
		 netdev, src, name, prio);
}

static int ensure_series_cap(struct recorder *r, size_t id)
{
	if (id < r->cap_st)
		return 0;
	size_t nc = r->cap_st ? r->cap_st : 4096;

	while (nc <= id)
		nc *= 2;
	void *ns = realloc(r->st, nc * sizeof(*r->st));

	if (!ns)
		return -ENOMEM;
	r->st = ns;
	memset(r->st + r->cap_st, 0, (nc - r->cap_st) * sizeof(*r->st));
	r->cap_st = nc;
	return 0;
}

static int32_t intern(struct recorder *r, struct batch *b, const struct objrec * or, int src,
		      const char *name, int prio, bool config)
{
	char key[320];
	int64_t id;
	struct series_def d = { 0 };

	series_key(key, sizeof(key), or->kind, or->kind == OBJ_NODE ? "" : or->name, or->port,
		   or->netdev, src, name, prio);
	id = strmap_get(&r->series_map, key);
	if (id > 0)
		return (int32_t)id;
	if (r->max_id >= INT32_MAX - 1 || ensure_series_cap(r, (size_t)r->max_id + 1) ||
	    strmap_put(&r->series_map, key, r->max_id + 1)) {
		b->oom = true;
		return -1;
	}
	id = ++r->max_id;
	d.id = (int32_t)id;
	d.kind = (uint8_t) or->kind;
	d.src = (uint8_t)src;
	d.prio = (int8_t)prio;
	d.config = config;
	d.port = or->port;
	strlcpy0(d.device, or->kind == OBJ_NODE ? "" : or->name, sizeof(d.device));
	strlcpy0(d.netdev, or->netdev, sizeof(d.netdev));
	strlcpy0(d.name, name, sizeof(d.name));
	r->st[id] = (struct series_state){ .config = config };
	add_def(b, &d);
	return (int32_t)id;
}

static struct objrec *objrec_get(struct recorder *r, const struct object *o)
{
	char key[200];
	const char *nd = "";
	struct objrec * or ;
	int64_t i;

	/* The netdev label as /metrics writes it (prom.c object_labels). */
	if (o->kind == OBJ_RDMA_PORT && o->netdev)
		nd = o->netdev->name;
	else if (o->kind == OBJ_RDMA_PORT && field_present(o, F_PORT_NETDEV))
		nd = o->f[F_PORT_NETDEV].v.s;
	snprintf(key, sizeof(key), "%d\x1f%s\x1f%u\x1f%s", o->kind, o->name, o->port, nd);
	i = strmap_get(&r->obj_map, key);
	if (i >= 0)
		return r->objs[i];
	if (r->n_objs == r->cap_objs) {
		size_t nc = r->cap_objs ? r->cap_objs * 2 : 32;
		void *np = realloc(r->objs, nc * sizeof(*r->objs));

		if (!np)
			return NULL;
		r->objs = np;
		r->cap_objs = nc;
	}
	or = calloc(1, sizeof(* or));
	if (! or)
		return NULL;
	or->kind = o->kind;
	strlcpy0(or->name, o->name, sizeof(or->name));
	or->port = o->port;
	strlcpy0(or->netdev, nd, sizeof(or->netdev));
	if (strmap_put(&r->obj_map, key, (int64_t)r->n_objs)) {
		free(or);
		return NULL;
	}
	r->objs[r->n_objs++] = or ;
	return or ;
}

static void objrec_free(struct objrec * or)
{
	for (int c = 0; c < CSET__COUNT; c++) {
		free(or->cs[c].id);
		free(or->cs[c].name);
	}
	free(or);
}

/* ---- diffing (poll thread) ---- */

static bool is_counter(const struct field_desc *d)
{
	return !d->config && (d->type == VT_INT || d->type == VT_PRIO_ARRAY || d->type == VT_FLOAT);
}

static void emit_counter(struct recorder *r, struct batch *b, int32_t id, bool present,
			 uint8_t type, int64_t v, bool kf)
{
	struct series_state *s = &r->st[id];

	s->touch = (uint64_t)r->seq;
	if (!present) {
		if (s->live) {
			add_row(b, id, ROW_NULL, 0);
			s->live = 0;
			r->n_live--;
		}
		return;
	}
	if (!s->live) {
		s->live = 1;
		r->n_live++;
	} else if (!kf && s->v == v && s->type == type) {
		return;
	}
	s->v = v;
	s->type = type;
	add_row(b, id, type, v);
	r->live_rows++;
}

/* A hash of what a configuration field holds; only a change is encoded and stored. */
static int64_t field_hash(const struct field_desc *d, const struct field_val *f)
{
	uint64_t h = fnv1a(&f->state, 1, FNV_INIT);

	h = fnv1a(&f->err, sizeof(f->err), h);
	if (f->state != ABS_NONE)
		return (int64_t)h;
	switch (d->type) {
	case VT_INT:
	case VT_BOOL:
		return (int64_t)fnv1a(&f->v.i, sizeof(f->v.i), h);
	case VT_FLOAT:
		return (int64_t)fnv1a(&f->v.d, sizeof(f->v.d), h);
	case VT_STR:
		return (int64_t)fnv1a(f->v.s, strnlen(f->v.s, sizeof(f->v.s)), h);
	case VT_PRIOSET:
		return (int64_t)fnv1a(&f->v.set, sizeof(f->v.set), h);
	case VT_DSCPSET:
		return (int64_t)fnv1a(&f->v.dset, sizeof(f->v.dset), h);
	case VT_PRIO_ARRAY:
		h = fnv1a(&f->mask, 1, h);
		for (int p = 0; p < RW_PRIO_COUNT; p++)
			if (f->mask & (1u << p))
				h = fnv1a(&f->v.arr[p], sizeof(f->v.arr[p]), h);
		return (int64_t)h;
	case VT_DSCP_MAP:
		return (int64_t)fnv1a(f->v.dscp, sizeof(f->v.dscp), h);
	case VT_GIDS:
		if (f->v.gids && f->v.gids->n)
			h = fnv1a(f->v.gids->e, f->v.gids->n * sizeof(*f->v.gids->e), h);
		return (int64_t)fnv1a(&(size_t){ f->v.gids ? f->v.gids->n : 0 }, sizeof(size_t), h);
	case VT_PCI_PAIRS:
		if (f->v.pairs && f->v.pairs->n)
			h = fnv1a(f->v.pairs->e, f->v.pairs->n * sizeof(*f->v.pairs->e), h);
		return (int64_t)fnv1a(&(size_t){ f->v.pairs ? f->v.pairs->n : 0 }, sizeof(size_t),
				      h);
	}
	return (int64_t)h;
}

static bool config_changed(struct recorder *r, int32_t id, int64_t h, bool kf)
{
	struct series_state *s = &r->st[id];

	s->touch = (uint64_t)r->seq;
	if (!s->live) {
		s->live = 1;
		r->n_live++;
	} else if (!kf && s->v == h) {
		return false;
	}
	s->v = h;
	r->live_rows++;
	return true;
}

static void emit_config_field(struct recorder *r, struct batch *b, int32_t id,
			      const struct field_desc *d, const struct field_val *f, bool kf)
{
	size_t off;

	if (!config_changed(r, id, field_hash(d, f), kf))
		return;
	if (f->state != ABS_NONE) {
		add_crow(b, id, f->state, SIZE_MAX);
		return;
	}
	off = b->arena.len;
	if (snapshot_value_text(&b->arena, d, f)) {
		b->oom = true;
		return;
	}
	sb_putc(&b->arena, '\0');
	add_crow(b, id, ABS_NONE, off);
}

static void emit_config_u64(struct recorder *r, struct batch *b, int32_t id, bool present,
			    uint64_t v, bool kf)
{
	size_t off;

	if (!present) {
		struct series_state *s = &r->st[id];

		s->touch = (uint64_t)r->seq;
		if (s->live) {
			add_crow(b, id, ABS__COUNT, SIZE_MAX);
			s->live = 0;
			r->n_live--;
		}
		return;
	}
	if (!config_changed(r, id, (int64_t)v, kf))
		return;
	off = b->arena.len;
	sb_u64(&b->arena, v);
	sb_putc(&b->arena, '\0');
	add_crow(b, id, ABS_NONE, off);
}

static int cscache_fit(struct cscache *c, uint32_t n)
{
	if (n <= c->n)
		return 0;
	void *ni = realloc(c->id, n * sizeof(*c->id));

	if (!ni)
		return -ENOMEM;
	c->id = ni;
	void *nn = realloc(c->name, n * sizeof(*c->name));

	if (!nn)
		return -ENOMEM;
	c->name = nn;
	memset(c->id + c->n, 0, (n - c->n) * sizeof(*c->id));
	memset(c->name + c->n, 0, (n - c->n) * sizeof(*c->name));
	c->n = n;
	return 0;
}

static const enum rec_source cset_source[CSET__COUNT] = {
	[CSET_ETHTOOL] = REC_ETHTOOL,
	[CSET_HW] = REC_HW,
	[CSET_PORT] = REC_PORT,
	[CSET_CC] = REC_CC,
};

static void diff_object(struct recorder *r, struct batch *b, const struct object *o, bool kf)
{
	struct objrec * or = objrec_get(r, o);

	if (! or) {
		b->oom = true;
		return;
	}
	for (int id = 0; id < F__COUNT; id++) {
		const struct field_desc *d = &fields[id];
		const struct field_val *f = &o->f[id];
		int32_t *sid = or->fid[id];

		if (d->obj != o->kind)
			continue;
		if (!is_counter(d)) {
			/* A field no collector fills here is not history worth a series. */
			if (!*sid && f->state == ABS_NOT_COLLECTED)
				continue;
			if (!*sid && (*sid = intern(r, b, or, REC_FIELD, d->path, -1, true)) < 0)
				return;
			emit_config_field(r, b, *sid, d, f, kf);
			continue;
		}
		if (d->type == VT_PRIO_ARRAY) {
			for (int p = 0; p < RW_PRIO_COUNT; p++) {
				bool present = f->state == ABS_NONE && (f->mask & (1u << p));

				if (!sid[p] && !present)
					continue;
				if (!sid[p] &&
				    (sid[p] = intern(r, b, or, REC_FIELD, d->path, p, false)) < 0)
					return;
				emit_counter(r, b, sid[p], present, ROW_INT, (int64_t)f->v.arr[p],
					     kf);
			}
			continue;
		}
		if (!*sid && f->state != ABS_NONE)
			continue;
		if (!*sid && (*sid = intern(r, b, or, REC_FIELD, d->path, -1, false)) < 0)
			return;
		if (d->type == VT_FLOAT) {
			int64_t bits;

			memcpy(&bits, &f->v.d, sizeof(bits));
			emit_counter(r, b, *sid, f->state == ABS_NONE, ROW_FLOAT, bits, kf);
		} else {
			emit_counter(r, b, *sid, f->state == ABS_NONE, ROW_INT, f->v.i, kf);
		}
	}
	for (int c = 0; c < CSET__COUNT; c++) {
		const struct counter_set *cs = &o->cs[c];
		struct cscache *cc = & or->cs[c];

		if (!cs->n)
			continue;
		if (cscache_fit(cc, cs->n)) {
			b->oom = true;
			return;
		}
		for (uint32_t i = 0; i < cs->n; i++) {
			int32_t *sid = &cc->id[i];

			/* Names keep their index across polls; re-resolve only when one moved. */
			if (!*sid || strcmp(cc->name[i], cs->names[i])) {
				strlcpy0(cc->name[i], cs->names[i], sizeof(cc->name[i]));
				if (c == CSET_ETHTOOL &&
				    (!r->o.ethtool_include ||
				     regexec(r->o.ethtool_include, cs->names[i], 0, NULL, 0))) {
					*sid = -1;
				} else {
					*sid = intern(r, b, or, cset_source[c], cs->names[i], -1,
						      c == CSET_CC);
					if (*sid < 0) {
						*sid = 0;
						return;
					}
				}
			}
			if (*sid < 0)
				continue;
			if (c == CSET_CC)
				emit_config_u64(r, b, *sid, cs->present[i], cs->vals[i], kf);
			else
				emit_counter(r, b, *sid, cs->present[i], ROW_INT,
					     (int64_t)cs->vals[i], kf);
		}
	}
}

/* Series of objects that vanished (or values nobody visited this poll) go absent. */
static void sweep(struct recorder *r, struct batch *b)
{
	for (int32_t id = 1; id <= r->max_id; id++) {
		struct series_state *s = &r->st[id];

		if (!s->live || s->touch == (uint64_t)r->seq)
			continue;
		s->live = 0;
		r->n_live--;
		if (s->config)
			add_crow(b, id, ABS__COUNT, SIZE_MAX);
		else
			add_row(b, id, ROW_NULL, 0);
	}
}

static void take_capture_snapshots(struct recorder *r, struct batch *b, struct node_model *m)
{
	struct capture_job *j;

	pthread_mutex_lock(&r->mu);
	for (j = r->jobs; j; j = j->next) {
		struct strbuf sb = { 0 };
		size_t n = b->n_evs;

		if (j->have_snapshot)
			continue;
		if (!snapshot_write(&sb, m, 0)) {
			j->snapshot = sb.buf;
			sb.buf = NULL;
		}
		sb_free(&sb);
		if (r->o.rule_results) {
			if (!r->o.rule_results(r->o.rule_results_arg, &sb) && !sb.oom) {
				j->rules = sb.buf;
				sb.buf = NULL;
			}
			sb_free(&sb);
		}
		j->have_snapshot = true;
		GROW(b->evs, b->n_evs, b->cap_evs, b);
		if (b->n_evs == n)
			continue;
		memset(&b->evs[n], 0, sizeof(b->evs[n]));
		b->evs[n].t_ms = j->trigger_ms;
		strlcpy0(b->evs[n].kind, "capture", sizeof(b->evs[n].kind));
		strlcpy0(b->evs[n].name, j->reason, sizeof(b->evs[n].name));
		b->evs[n].detail =
		    strdup(strrchr(j->file, '/') ? strrchr(j->file, '/') + 1 : j->file);
	}
	pthread_cond_broadcast(&r->cv_capture);
	pthread_mutex_unlock(&r->mu);
}

void recorder_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct recorder *r = arg;
	struct batch *b = NULL;
	int64_t t = ts_ms(&m->time);
	bool kf, resync;

	/* polls.t_ms is unique: a clock step back must not collide with rows we have. */
	if (t <= r->last_t_ms) {
		if (t < r->last_t_ms - 1000)
			rw_log_once(
			    LOG_LVL_WARN, "recorder-clock",
			    "recorder: the clock went back %.3f s; polls recorded 1 ms apart "
			    "until it catches up",
			    (double)(r->last_t_ms - t) / 1e3);
		t = r->last_t_ms + 1;
	}
	r->seq++;
	pthread_mutex_lock(&r->mu);
	if (strcmp(r->host, m->host))
		strlcpy0(r->host, m->host, sizeof(r->host));
	if (r->n_free)
		b = r->free_b[--r->n_free];
	resync = r->resync;
	r->resync = false;
	if (r->kf_request)
		r->need_kf = true;
	r->kf_request = false;
	pthread_mutex_unlock(&r->mu);
	if (resync)
		r->need_kf = true;
	if (!b) {
		/* The writer is behind: drop this poll, write the next one in full. */
		r->dropped_pending++;
		r->need_kf = true;
		CNT_ADD(r, dropped, 1);
		rw_log_once(LOG_LVL_WARN, "recorder-drop",
			    "recorder: the database is not keeping up; dropping polls (counted in "
			    "rocewatch_recorder_dropped_polls_total)");
		return;
	}
	batch_reset(b);
	b->seq = r->seq;
	b->t_ms = t;
	b->what = what;
	b->dropped = r->dropped_pending;
	strlcpy0(b->host, m->host, sizeof(b->host));
	b->first_of_run = !r->run_sent;
	kf = r->need_kf || t - r->last_kf_ms >= KF_MAX_MS ||
	     r->rows_since_kf >= (uint64_t)(KF_ROW_FACTOR * (r->n_live + 1)) ||
	     r->rows_since_kf >= r->kf_max_rows;
	for (size_t i = 0; i < r->n_carry; i++)
		add_def(b, &r->carry[i]);
	r->n_carry = 0;
	r->live_rows = 0;
	diff_object(r, b, &m->node, kf);
	for (size_t i = 0; i < m->n_netdevs; i++)
		diff_object(r, b, m->netdevs[i], kf);
	for (size_t i = 0; i < m->n_ports; i++)
		diff_object(r, b, m->ports[i], kf);
	sweep(r, b);

	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->n_pend_ev; i++) {
		size_t n = b->n_evs;

		GROW(b->evs, b->n_evs, b->cap_evs, b);
		if (b->n_evs == n)
			break;
		b->evs[n] = r->pend_ev[i];
		r->pend_ev[i].detail = NULL;
	}
	r->n_pend_ev = 0;
	pthread_mutex_unlock(&r->mu);
	if (r->jobs)
		take_capture_snapshots(r, b, m);

	if (b->oom) {
		/*
		 * Out of memory mid-diff: the state above no longer matches; start
		 * over in full, keeping the series already given ids.
		 */
		for (size_t i = 0; i < b->n_defs; i++) {
			size_t n = r->n_carry;
			struct batch tmp = { 0 };

			GROW(r->carry, r->n_carry, r->cap_carry, &tmp);
			if (r->n_carry != n)
				r->carry[n] = b->defs[i];
		}
		batch_reset(b);
		pthread_mutex_lock(&r->mu);
		r->free_b[r->n_free++] = b;
		pthread_mutex_unlock(&r->mu);
		r->need_kf = true;
		r->dropped_pending++;
		CNT_ADD(r, dropped, 1);
		rw_log_once(LOG_LVL_ERROR, "recorder-oom", "recorder: out of memory; poll dropped");
		return;
	}
	/* A poll that rewrote every live series is a keyframe whatever we planned. */
	b->keyframe = kf || r->live_rows == r->n_live;
	if (b->keyframe) {
		r->last_kf_ms = t;
		r->rows_since_kf = 0;
	} else {
		r->rows_since_kf += b->n_rows + b->n_crows;
	}
	r->need_kf = false;
	r->run_sent = true;
	r->dropped_pending = 0;
	r->last_t_ms = t;
	CNT_SET(r, series, (uint64_t)r->max_id);

	pthread_mutex_lock(&r->mu);
	r->q[(r->q_head + r->q_len) % QUEUE_LEN] = b;
	r->q_len++;
	pthread_cond_signal(&r->cv_writer);
	pthread_mutex_unlock(&r->mu);
}

/* ---- the writer thread ---- */

static int step_done(struct recorder *r, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : rc;
	(void)r;
}

static int64_t pragma_int(sqlite3_stmt *st)
{
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static const char *reason_text(uint8_t reason)
{
	return reason == ABS__COUNT ? ABS_GONE_NAME : absent_reason_name(reason);
}

static int write_batch(struct recorder *r, struct batch *b)
{
	int rc;
	int64_t t0 = mono_ns();

	rc = step_done(r, r->st_begin);
	if (rc)
		goto fail;
	if (b->first_of_run) {
		sqlite3_bind_int64(r->st_run, 1, b->t_ms);
		sqlite3_bind_text(r->st_run, 2, b->host, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_run, 3, ROCEWATCH_VERSION, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->st_run, 4, r->o.interval_ns / 1000000);
		sqlite3_bind_int64(r->st_run, 5, getpid());
		if ((rc = step_done(r, r->st_run)))
			goto fail;
		r->run = sqlite3_last_insert_rowid(r->db);
		sqlite3_bind_text(r->st_host, 1, b->host, -1, SQLITE_STATIC);
		if ((rc = step_done(r, r->st_host)))
			goto fail;
	}
	for (size_t i = 0; i < r->n_retry + b->n_defs; i++) {
		const struct series_def *d =
		    i < r->n_retry ? &r->retry[i] : &b->defs[i - r->n_retry];

		sqlite3_bind_int64(r->st_series, 1, d->id);
		sqlite3_bind_text(r->st_series, 2, obj_kind_name(d->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 3, d->device, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->st_series, 4, d->port);
		sqlite3_bind_text(r->st_series, 5, d->netdev, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 6, rec_source_name(d->src), -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 7, d->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->st_series, 8, d->prio);
		sqlite3_bind_int64(r->st_series, 9, d->config);
		if ((rc = step_done(r, r->st_series)))
			goto fail;
	}
	sqlite3_bind_int64(r->st_poll, 1, b->seq);
	sqlite3_bind_int64(r->st_poll, 2, b->t_ms);
	sqlite3_bind_int64(r->st_poll, 3, r->run);
	sqlite3_bind_int64(r->st_poll, 4, b->what);
	sqlite3_bind_int64(r->st_poll, 5, b->keyframe);
	sqlite3_bind_int64(r->st_poll, 6, (int64_t)b->n_rows);
	sqlite3_bind_int64(r->st_poll, 7, (int64_t)b->n_crows);
	sqlite3_bind_int64(r->st_poll, 8, b->dropped);
	if ((rc = step_done(r, r->st_poll)))
		goto fail;
	for (size_t i = 0; i < b->n_rows; i++) {
		const struct row *w = &b->rows[i];

		sqlite3_bind_int64(r->st_sample, 1, b->t_ms);
		sqlite3_bind_int64(r->st_sample, 2, w->id);
		if (w->type == ROW_INT) {
			sqlite3_bind_int64(r->st_sample, 3, w->v);
		} else if (w->type == ROW_FLOAT) {
			double d;

			memcpy(&d, &w->v, sizeof(d));
			sqlite3_bind_double(r->st_sample, 3, d);
		}
		/* ROW_NULL: unbound parameters are NULL */
		if ((rc = step_done(r, r->st_sample)))
			goto fail;
	}
	for (size_t i = 0; i < b->n_crows; i++) {
		const struct crow *w = &b->crows[i];

		sqlite3_bind_int64(r->st_config, 1, b->t_ms);
		sqlite3_bind_int64(r->st_config, 2, w->id);
		if (w->off != SIZE_MAX)
			sqlite3_bind_text(r->st_config, 3, b->arena.buf + w->off, -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_text(r->st_config, 4, reason_text(w->reason), -1,
					  SQLITE_STATIC);
		if ((rc = step_done(r, r->st_config)))
			goto fail;
	}
	for (size_t i = 0; i < b->n_evs; i++) {
		const struct evrow *e = &b->evs[i];

		sqlite3_bind_int64(r->st_event, 1, e->t_ms);
		sqlite3_bind_text(r->st_event, 2, e->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 3, e->object, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 4, e->device, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 5, e->name, -1, SQLITE_STATIC);
		if (e->detail)
			sqlite3_bind_text(r->st_event, 6, e->detail, -1, SQLITE_STATIC);
		if ((rc = step_done(r, r->st_event)))
			goto fail;
	}
	rc = step_done(r, r->st_commit);
	if (rc)
		goto fail;
	r->n_retry = 0;
	CNT_ADD(r, polls, 1);
	CNT_ADD(r, samples, b->n_rows);
	CNT_ADD(r, config_rows, b->n_crows);
	CNT_SET(r, last_seq, b->seq);
	CNT_SET(r, last_t_ms, b->t_ms);
	__atomic_store_n(&r->commit_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	rw_log_once_reset("recorder-write");
	return 0;
fail:
	rw_log_once(LOG_LVL_ERROR, "recorder-write", "recorder: %s: writing poll %" PRId64 ": %s",
		    r->db_path, b->seq, sqlite3_errstr(rc));
	step_done(r, r->st_rollback);
	/* The series this batch introduced are known by id from now on: insert them next time. */
	for (size_t i = 0; i < b->n_defs; i++) {
		size_t n = r->n_retry;
		struct batch tmp = { 0 };

		GROW(r->retry, r->n_retry, r->cap_retry, &tmp);
		if (r->n_retry != n)
			r->retry[n] = b->defs[i];
	}
	CNT_ADD(r, write_errors, 1);
	CNT_ADD(r, dropped, 1);
	/* What the poll loop believes is stored is not: make it send every value again. */
	pthread_mutex_lock(&r->mu);
	r->resync = true;
	pthread_mutex_unlock(&r->mu);
	return -EIO;
}

static int exec1(struct recorder *r, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rw_log_once(LOG_LVL_ERROR, "recorder-maint", "recorder: %s: %s", r->db_path,
			    msg ? msg : "?");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static int64_t q1(sqlite3 *db, const char *sql, int64_t a, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (int64_t)st.st_size;
}

static void update_size(struct recorder *r)
{
	char wal[PATH_MAX + 8];

	snprintf(wal, sizeof(wal), "%s-wal", r->db_path);
	CNT_SET(r, db_bytes, (uint64_t)(file_size(r->db_path) + file_size(wal)));
}

/*
 * Delete the oldest polls, at most DELETE_CHUNK rows per transaction, up to
 * (not including) the keyframe at `keep`.  Returns 1 while more is to do.
 */
static int delete_before(struct recorder *r, int64_t keep)
{
	sqlite3_stmt *st;
	int64_t upto = -1, rows = 0, polls = 0;
	char sql[160];
	int rc;

	rc = sqlite3_prepare_v2(
	    r->db, "SELECT t_ms, n_samples + n_config FROM polls WHERE t_ms < ?1 ORDER BY t_ms", -1,
	    &st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, keep);
	while (sqlite3_step(st) == SQLITE_ROW) {
		upto = sqlite3_column_int64(st, 0);
		rows += sqlite3_column_int64(st, 1);
		polls++;
		if (rows >= r->delete_chunk)
			break;
	}
	sqlite3_finalize(st);
	if (upto < 0)
		return 0;
	if (exec1(r, "BEGIN"))
		return -EIO;
	static const char *const tables[] = { "samples", "config", "polls", "events" };
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE t_ms <= %" PRId64, tables[i],
			 upto);
		if (exec1(r, sql)) {
			exec1(r, "ROLLBACK");
			return -EIO;
		}
	}
	if (exec1(r, "COMMIT")) {
		exec1(r, "ROLLBACK");
		return -EIO;
	}
	CNT_ADD(r, deleted_polls, (uint64_t)polls);
	return upto < keep ? 1 : 0;
}

/* The poll loop should write its next poll in full (a keyframe). */
static void request_keyframe(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	r->kf_request = true;
	pthread_mutex_unlock(&r->mu);
}

/*
 * Where a size cut should go: the poll by which `want` rows (plus one per
 * poll, for the polls row itself) have been passed, oldest first.
 */
static int64_t size_cut(struct recorder *r, int64_t used)
{
	int64_t total = q1(r->db, "SELECT sum(n_samples + n_config) + count(*) FROM polls", 0, 0);
	int64_t want = (int64_t)((double)total * (double)(used - r->low_bytes) / (double)used);
	int64_t acc = 0, cut = -1;
	sqlite3_stmt *st;

	if (want <= 0 ||
	    sqlite3_prepare_v2(r->db,
			       "SELECT t_ms, n_samples + n_config + 1 FROM polls ORDER BY t_ms", -1,
			       &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		acc += sqlite3_column_int64(st, 1);
		cut = sqlite3_column_int64(st, 0);
		if (acc >= want)
			break;
	}
	sqlite3_finalize(st);
	return cut;
}

/*
 * One step of retention (a bounded transaction); true while more steps are
 * due.  Age: delete before the newest keyframe older than the retention.
 * Size: when the used pages pass 90 % of the bound, delete the oldest polls
 * down to 75 %, up to the next keyframe.  Deleted pages are reused by new
 * rows, so the file stops growing at about the bound.
 */
static bool maintain(struct recorder *r)
{
	int64_t pages = pragma_int(r->st_pages), freep = pragma_int(r->st_free);
	int64_t used = (pages - freep) * r->page_size;
	int64_t now_ms = real_ns() / 1000000;
	bool over = used > r->target_bytes;
	int rc;

	if (r->maint_keep < 0) {
		int64_t keep = -1;

		if (!over && mono_ns() < r->next_age_check)
			return false;
		if (mono_ns() >= r->next_age_check) {
			/* A short retention (tests) is checked more often than every 10 s. */
			int64_t every = r->o.retention_ns / 4 < AGE_CHECK_NS ? r->o.retention_ns / 4
									     : AGE_CHECK_NS;

			r->next_age_check = mono_ns() + (every > 100000000LL ? every : 100000000LL);
			keep =
			    q1(r->db, "SELECT max(t_ms) FROM polls WHERE keyframe AND t_ms <= ?1",
			       now_ms - r->o.retention_ns / 1000000, -1);
		}
		if (over) {
			int64_t cut = size_cut(r, used), k2 = -1;

			if (cut >= 0)
				k2 = q1(r->db,
					"SELECT min(t_ms) FROM polls WHERE keyframe AND t_ms > ?1",
					cut, -1);
			if (k2 < 0)
				request_keyframe(r); /* nothing to cut at yet: make a place */
			if (k2 > keep)
				keep = k2;
		}
		if (keep < 0)
			return false;
		r->maint_keep = keep;
	}
	rc = delete_before(r, r->maint_keep);
	if (rc > 0)
		return true;
	r->maint_keep = -1;
	if (rc == 0) {
		/* Hand pages beyond the bound back to the file system (auto_vacuum=INCREMENTAL). */
		int64_t excess = pages * r->page_size - ((int64_t)r->o.max_size - r->wal_budget);

		if (excess > 0 && freep > 0) {
			char sql[64];

			snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%" PRId64 ")",
				 excess / r->page_size + 1);
			exec1(r, sql);
		}
	}
	return false;
}

static void *writer_main(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct batch *b;
		bool more;

		while (!r->q_len && !r->stop_writer && !r->maint_more) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&r->cv_writer, &r->mu, &ts);
			if (mono_ns() >= r->next_age_check)
				break;
		}
		if (!r->q_len && r->stop_writer)
			break;
		b = NULL;
		if (r->q_len) {
			b = r->q[r->q_head];
			r->q_head = (r->q_head + 1) % QUEUE_LEN;
			r->q_len--;
			r->writing = true;
		}
		pthread_mutex_unlock(&r->mu);
		if (b)
			write_batch(r, b);
		more = maintain(r);
		update_size(r);
		pthread_mutex_lock(&r->mu);
		if (b) {
			batch_reset(b);
			r->free_b[r->n_free++] = b;
			r->writing = false;
		}
		r->maint_more = more;
		if (!r->q_len && !r->writing)
			pthread_cond_broadcast(&r->cv_idle);
		pthread_cond_broadcast(&r->cv_capture);
	}
	pthread_cond_broadcast(&r->cv_idle);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* ---- captures ---- */

static int cap_exec(sqlite3 *db, const char *sql, const int64_t *args, int nargs, char *err,
		    size_t errlen)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		for (int i = 0; i < nargs; i++)
			sqlite3_bind_int64(st, i + 1, args[i]);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE || rc == SQLITE_ROW)
			return 0;
	}
	snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	return -EIO;
}

static int cap_meta(sqlite3 *db, const char *key, const char *val)
{
	sqlite3_stmt *st;
	int rc;

	if (!val)
		return 0;
	rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO cap.meta VALUES (?1, ?2)", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int fsync_path(const char *path, bool dir)
{
	int fd = open(path, (dir ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		r = -errno;
	close(fd);
	return r;
}

/*
 * Cut [start, end] out of the recording into a capture file: the state at
 * the first poll of the window (a synthetic keyframe), every row after it,
 * the events, the snapshot and rule results taken at the trigger.
 */
static int write_capture(struct recorder *r, struct capture_job *j, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 8], num[32];
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	int64_t p0, kf, a[3];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", j->file);
	unlink(tmp);
	if (sqlite3_open_v2(r->db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s", db ? sqlite3_errmsg(db) : "cannot open");
		rc = -EIO;
		goto close_db;
	}
	sqlite3_busy_timeout(db, 5000);
	rc = sqlite3_prepare_v2(db, "ATTACH ?1 AS cap", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%.300s: %s", tmp, sqlite3_errmsg(db));
		rc = -EIO;
		goto close_db;
	}
	/* Built under a temporary name and renamed: no journal needed, we fsync at the end. */
	if ((rc = cap_exec(db, "PRAGMA cap.journal_mode = OFF", NULL, 0, err, errlen)) ||
	    (rc = cap_exec(db, "PRAGMA cap.synchronous = OFF", NULL, 0, err, errlen)) ||
	    (rc = rec_create_schema(db, "cap", err, errlen)) ||
	    (rc = cap_exec(db, "BEGIN", NULL, 0, err, errlen)))
		goto close_db;
	a[0] = j->start_ms;
	p0 = q1(db, "SELECT min(t_ms) FROM main.polls WHERE t_ms >= ?1", j->start_ms, -1);
	if (p0 >= 0 && p0 <= j->end_ms) {
		kf = q1(db,
			"SELECT coalesce((SELECT max(t_ms) FROM main.polls WHERE keyframe AND t_ms "
			"<= ?1),"
			" (SELECT min(t_ms) FROM main.polls))",
			p0, p0);
		a[0] = p0;
		a[1] = kf;
		a[2] = j->end_ms;
		/*
		 * max() makes SQLite take the bare columns from the row holding the
		 * maximum (https://www.sqlite.org/lang_select.html#bareagg): the
		 * last value of each series at p0.
		 */
		if ((rc = cap_exec(db,
				   "INSERT INTO cap.samples SELECT ?1, series_id, value FROM"
				   " (SELECT series_id, value, max(t_ms) FROM main.samples"
				   "  WHERE t_ms >= ?2 AND t_ms <= ?1 GROUP BY series_id)"
				   " WHERE value IS NOT NULL",
				   a, 2, err, errlen)) ||
		    (rc = cap_exec(db,
				   "INSERT INTO cap.config SELECT ?1, series_id, value, absent FROM"
				   " (SELECT series_id, value, absent, max(t_ms) FROM main.config"
				   "  WHERE t_ms >= ?2 AND t_ms <= ?1 GROUP BY series_id)"
				   " WHERE value IS NOT NULL OR absent <> '" ABS_GONE_NAME "'",
				   a, 2, err, errlen)) ||
		    (rc = cap_exec(db,
				   "INSERT INTO cap.samples SELECT * FROM main.samples"
				   " WHERE t_ms > ?1 AND t_ms <= ?3",
				   a, 3, err, errlen)) ||
		    (rc = cap_exec(db,
				   "INSERT INTO cap.config SELECT * FROM main.config"
				   " WHERE t_ms > ?1 AND t_ms <= ?3",
				   a, 3, err, errlen)) ||
		    (rc = cap_exec(db,
				   "INSERT INTO cap.polls SELECT * FROM main.polls"
				   " WHERE t_ms >= ?1 AND t_ms <= ?3",
				   a, 3, err, errlen)) ||
		    (rc =
			 cap_exec(db,
				  "UPDATE cap.polls SET keyframe = 1, dropped = 0,"
				  " n_samples = (SELECT count(*) FROM cap.samples WHERE t_ms = ?1),"
				  " n_config = (SELECT count(*) FROM cap.config WHERE t_ms = ?1)"
				  " WHERE t_ms = ?1",
				  a, 1, err, errlen)))
			goto close_db;
	}
	a[0] = j->start_ms;
	a[1] = j->end_ms;
	if ((rc = cap_exec(db, "INSERT INTO cap.series SELECT * FROM main.series", NULL, 0, err,
			   errlen)) ||
	    (rc = cap_exec(db,
			   "INSERT INTO cap.runs SELECT * FROM main.runs WHERE run IN"
			   " (SELECT DISTINCT run FROM cap.polls)",
			   NULL, 0, err, errlen)) ||
	    (rc = cap_exec(db,
			   "INSERT INTO cap.events SELECT * FROM main.events"
			   " WHERE t_ms >= ?1 AND t_ms <= ?2",
			   a, 2, err, errlen)))
		goto close_db;
	pthread_mutex_lock(&r->mu);
	rc = cap_meta(db, "host", r->host);
	pthread_mutex_unlock(&r->mu);
	snprintf(num, sizeof(num), "%" PRId64, j->trigger_ms);
	rc = rc ?: cap_meta(db, "capture_trigger_ms", num);
	snprintf(num, sizeof(num), "%" PRId64, j->start_ms);
	rc = rc ?: cap_meta(db, "window_start_ms", num);
	snprintf(num, sizeof(num), "%" PRId64, j->end_ms);
	rc = rc ?: cap_meta(db, "window_end_ms", num);
	rc = rc ?: cap_meta(db, "capture_reason", j->reason);
	rc = rc ?: cap_meta(db, "capture_reasons", j->reasons);
	rc = rc ?: cap_meta(db, "rocewatch_version", ROCEWATCH_VERSION);
	rc = rc ?: cap_meta(db, "snapshot", j->snapshot);
	rc = rc ?: cap_meta(db, "rule_results", j->rules);
	if (rc) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		goto close_db;
	}
	if ((rc = cap_exec(db, "COMMIT", NULL, 0, err, errlen)) ||
	    (rc = cap_exec(db, "DETACH cap", NULL, 0, err, errlen)))
		goto close_db;
	sqlite3_close(db);
	db = NULL;
	if ((rc = fsync_path(tmp, false)) || rename(tmp, j->file)) {
		rc = rc ?: -errno;
		snprintf(err, errlen, "%.300s: %s", j->file, strerror(-rc));
		goto close_db;
	}
	fsync_path(r->dir, true);
	return 0;
close_db:
	if (db)
		sqlite3_close(db);
	unlink(tmp);
	return rc ? rc : -EIO;
}

struct cap_file {
	char name[256];
	off_t size;
	time_t mtime;
};

static int cap_file_cmp(const void *a, const void *b)
{
	const struct cap_file *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime ? 1 : strcmp(x->name, y->name);
}

/*
 * Capture retention, like the recording's: files older than
 * capture_retention_ns go, then the oldest until the rest fit in
 * capture_max_size.  The newest is always kept.  Anyone who may trigger a
 * capture could otherwise fill the disk with them.
 */
static void prune_captures(struct recorder *r)
{
	struct cap_file *f = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;

	if (!r->o.capture_retention_ns && !r->o.capture_max_size)
		return;
	d = opendir(r->dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char p[PATH_MAX + 256];
		struct stat st;

		if (strncmp(e->d_name, "capture-", 8) || len < 11 || len >= sizeof(f->name) ||
		    strcmp(e->d_name + len - 3, ".db"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", r->dir, e->d_name);
		if (lstat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if (array_grow(&f, &cap, n, sizeof(*f), 16))
			break;
		strlcpy0(f[n].name, e->d_name, sizeof(f[n].name));
		f[n].size = st.st_size;
		f[n].mtime = st.st_mtime;
		total += (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	if (n)
		qsort(f, n, sizeof(*f), cap_file_cmp);
	for (size_t i = 0; i + 1 < n; i++) {
		bool old = r->o.capture_retention_ns &&
			   (int64_t)(now - f[i].mtime) * 1000000000LL > r->o.capture_retention_ns;
		bool big = r->o.capture_max_size && total > r->o.capture_max_size;
		char p[PATH_MAX + 256];

		if (!old && !big)
			break;
		snprintf(p, sizeof(p), "%s/%s", r->dir, f[i].name);
		if (!unlink(p)) {
			total -= (uint64_t)f[i].size;
			CNT_ADD(r, captures_deleted, 1);
			log_info("recorder: capture %s deleted (%s)", f[i].name,
				 old ? "older than --record.capture-retention"
				     : "captures over --record.capture-max-size");
		}
	}
	free(f);
}

static void *capture_main(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct capture_job *j = NULL, **pp;
		int64_t now = real_ns() / 1000000;
		int64_t committed = CNT_GET(r, last_t_ms);
		char err[512];
		int rc;

		for (pp = &r->jobs; *pp; pp = &(*pp)->next) {
			struct capture_job *c = *pp;
			/* The window's tail is committed, or the poll loop has stalled past it. */
			bool due = now >= c->end_ms &&
				   (committed >= c->end_ms ||
				    now >= c->end_ms + 3 * r->o.interval_ns / 1000000 + 5000);

			if (r->stop_capture || (c->have_snapshot && due)) {
				j = c;
				*pp = c->next;
				break;
			}
		}
		if (!j) {
			struct timespec ts;

			if (r->stop_capture)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&r->cv_capture, &r->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&r->mu);
		if (j->end_ms > now) /* stopping early: the window ends where the data does */
			j->end_ms = committed > j->start_ms ? committed : now;
		rc = write_capture(r, j, err, sizeof(err));
		if (rc) {
			CNT_ADD(r, capture_errors, 1);
			log_err("recorder: capture %s failed: %s", j->file, err);
		} else {
			CNT_ADD(r, captures, 1);
			log_info("recorder: capture written: %s (%s)", j->file, j->reasons);
			prune_captures(r);
		}
		free(j->snapshot);
		free(j->rules);
		free(j);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void sanitize_reason(char *out, size_t len, const char *in)
{
	size_t n = 0;

	for (const char *p = in ? in : ""; *p && n + 1 < len; p++) {
		char c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
			out[n++] = c;
		else if (c >= 'A' && c <= 'Z')
			out[n++] = (char)(c - 'A' + 'a');
		else if (n && out[n - 1] != '_')
			out[n++] = '_';
	}
	out[n] = '\0';
	if (!n)
		strlcpy0(out, "manual", len);
}

int recorder_capture(struct recorder *r, const char *reason, char *file, size_t filelen)
{
	int64_t now = real_ns() / 1000000;
	struct capture_job *j;
	char rs[48], ts[32], host[RW_NAME_MAX];
	time_t sec = (time_t)(now / 1000);
	struct tm tm;

	sanitize_reason(rs, sizeof(rs), reason);
	pthread_mutex_lock(&r->mu);
	for (j = r->jobs; j; j = j->next) {
		if (j->end_ms < now)
			continue;
		/* Pending and still open: this trigger is inside its window already. */
		if (!strstr(j->reasons, rs) &&
		    strlen(j->reasons) + strlen(rs) + 2 < sizeof(j->reasons)) {
			strcat(j->reasons, ",");
			strcat(j->reasons, rs);
		}
		if (file)
			strlcpy0(file, j->file, filelen);
		pthread_mutex_unlock(&r->mu);
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		pthread_mutex_unlock(&r->mu);
		return -ENOMEM;
	}
	sanitize_reason(host, sizeof(host), r->host[0] ? r->host : "host");
	gmtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	strlcpy0(j->reason, rs, sizeof(j->reason));
	strlcpy0(j->reasons, rs, sizeof(j->reasons));
	snprintf(j->file, sizeof(j->file), "%s/capture-%s-%s-%s.db", r->dir, host, ts, rs);
	for (int n = 2; !access(j->file, F_OK) && n < 100; n++)
		snprintf(j->file, sizeof(j->file), "%s/capture-%s-%s-%s-%d.db", r->dir, host, ts,
			 rs, n);
	j->trigger_ms = now;
	j->start_ms = now - r->o.capture_before_ns / 1000000;
	j->end_ms = now + r->o.capture_after_ns / 1000000;
	j->next = r->jobs;
	r->jobs = j;
	if (file)
		strlcpy0(file, j->file, filelen);
	pthread_cond_broadcast(&r->cv_capture);
	pthread_mutex_unlock(&r->mu);
	log_info("recorder: capture requested (%s): %s, finalised at +%.0f s", rs, j->file,
		 (double)r->o.capture_after_ns / 1e9);
	return 0;
}

int recorder_event(struct recorder *r, int64_t t_ms, const char *kind, const char *object,
		   const char *device, const char *name, const char *detail)
{
	struct evrow *e;

	pthread_mutex_lock(&r->mu);
	if (r->n_pend_ev == r->cap_pend_ev) {
		size_t nc = r->cap_pend_ev ? r->cap_pend_ev * 2 : 16;
		void *np = nc <= 4096 ? realloc(r->pend_ev, nc * sizeof(*r->pend_ev)) : NULL;

		if (!np) {
			pthread_mutex_unlock(&r->mu);
			return -ENOMEM;
		}
		r->pend_ev = np;
		r->cap_pend_ev = nc;
	}
	e = &r->pend_ev[r->n_pend_ev++];
	memset(e, 0, sizeof(*e));
	e->t_ms = t_ms;
	strlcpy0(e->kind, kind ? kind : "", sizeof(e->kind));
	strlcpy0(e->object, object ? object : "", sizeof(e->object));
	strlcpy0(e->device, device ? device : "", sizeof(e->device));
	strlcpy0(e->name, name ? name : "", sizeof(e->name));
	e->detail = detail ? strdup(detail) : NULL;
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* ---- open / close ---- */

static int prepare(struct recorder *r, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

static int load_series_map(struct recorder *r, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(
	    r->db,
	    "SELECT id, object, device, port, netdev, source, name, prio, config "
	    "FROM series ORDER BY id",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *obj = (const char *)sqlite3_column_text(st, 1) ?: "";
		int src = rec_source_parse((const char *)sqlite3_column_text(st, 5) ?: "");
		struct series_def d0 = { 0 }, *d = &d0;
		char key[320];
		int k;

		for (k = 0; k < OBJ__COUNT; k++)
			if (!strcmp(obj_kind_name(k), obj))
				break;
		if (id <= 0 || id >= INT32_MAX || ensure_series_cap(r, (size_t)id)) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "%s: series id %" PRId64 " out of range", r->db_path,
				 id);
			return -EINVAL;
		}
		if (id > r->max_id)
			r->max_id = (int32_t)id;
		if (k == OBJ__COUNT || src < 0)
			continue; /* written by a newer rocewatch: keep its id reserved */
		d->id = (int32_t)id;
		d->kind = (uint8_t)k;
		d->src = (uint8_t)src;
		d->port = (uint32_t)sqlite3_column_int64(st, 3);
		d->prio = (int8_t)sqlite3_column_int64(st, 7);
		d->config = sqlite3_column_int64(st, 8) != 0;
		strlcpy0(d->device, (const char *)sqlite3_column_text(st, 2) ?: "",
			 sizeof(d->device));
		strlcpy0(d->netdev, (const char *)sqlite3_column_text(st, 4) ?: "",
			 sizeof(d->netdev));
		strlcpy0(d->name, (const char *)sqlite3_column_text(st, 6) ?: "", sizeof(d->name));
		r->st[id].config = d->config;
		series_key(key, sizeof(key), k, d->device, d->port, d->netdev, src, d->name,
			   d->prio);
		if (strmap_put(&r->series_map, key, id)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	snprintf(err, errlen, "%s: reading series: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

static void remove_stale_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strncmp(e->d_name, "capture-", 8) && n > 7 &&
		    !strcmp(e->d_name + n - 7, ".db.tmp")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p); /* a capture a killed serve was writing: incomplete */
		}
	}
	closedir(d);
}

static int open_db(struct recorder *r, char *err, size_t errlen)
{
	char sql[128];
	bool fresh;
	int rc;

	rc = sqlite3_open_v2(r->db_path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", r->db_path,
			 r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
		return -EIO;
	}
	sqlite3_busy_timeout(r->db, 2000);
	sqlite3_extended_result_codes(r->db, 1);
	/* No table yet: a new file (or an empty one); also tells a non-database apart. */
	{
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM sqlite_master", -1, &st,
				       NULL) != SQLITE_OK)
			goto sql_err;
		rc = sqlite3_step(st);
		fresh = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			goto sql_err;
	}
	if (fresh) {
		/* Must precede the first table: lets retention give pages back to the file system.
		 */
		if (sqlite3_exec(r->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL) !=
		    SQLITE_OK)
			goto sql_err;
	}
	{
		sqlite3_stmt *st;
		const char *mode = "";

		if (sqlite3_prepare_v2(r->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) !=
		    SQLITE_OK)
			goto sql_err;
		if (sqlite3_step(st) == SQLITE_ROW)
			mode = (const char *)sqlite3_column_text(st, 0) ?: "";
		if (strcmp(mode, "wal")) {
			snprintf(err, errlen, "%s: cannot use WAL mode (got '%s'): %s", r->db_path,
				 mode, sqlite3_errmsg(r->db));
			sqlite3_finalize(st);
			return -EIO;
		}
		sqlite3_finalize(st);
	}
	r->page_size = 4096;
	if (sqlite3_exec(r->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	/* Appends touch the right edge of each B-tree only: 512 KiB of cache is plenty. */
	if (sqlite3_exec(r->db, "PRAGMA cache_size = -512", NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	/*
	 * A checkpoint runs once the WAL passes a quarter of its budget and
	 * leaves the file at half of it: what remains is room for the one
	 * transaction that pushes it past (a poll, a retention step).
	 */
	snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %" PRId64, r->wal_budget / 2);
	if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	snprintf(sql, sizeof(sql), "PRAGMA wal_autocheckpoint = %" PRId64,
		 r->wal_budget / 4 / r->page_size > 8 ? r->wal_budget / 4 / r->page_size : 8);
	if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	if (fresh) {
		rc = rec_create_schema(r->db, "main", err, errlen);
		if (rc)
			return rc;
		snprintf(sql, sizeof(sql), "INSERT INTO meta VALUES ('created_ms', '%" PRId64 "')",
			 real_ns() / 1000000);
		sqlite3_exec(r->db, sql, NULL, NULL, NULL);
	} else {
		rc = rec_check_schema(r->db, r->db_path, err, errlen);
		if (rc)
			return rc;
	}
	r->page_size = q1(r->db, "PRAGMA page_size", 0, 4096);
	return 0;
sql_err:
	snprintf(err, errlen, "%s: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

int recorder_open(struct recorder **out, const struct recorder_opts *o, char *err, size_t errlen)
{
	struct recorder *r = calloc(1, sizeof(*r));
	char lock_path[PATH_MAX + 16];
	int rc;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->lock_fd = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv_writer, NULL);
	pthread_cond_init(&r->cv_idle, NULL);
	pthread_cond_init(&r->cv_capture, NULL);
	if (strlen(o->dir) >= sizeof(r->dir)) {
		snprintf(err, errlen, "--record: path too long");
		rc = -ENAMETOOLONG;
		goto fail;
	}
	strlcpy0(r->dir, o->dir, sizeof(r->dir));
	snprintf(r->db_path, sizeof(r->db_path), "%s/%s", r->dir, REC_DB_NAME);
	if (o->max_size < REC_MIN_MAX_SIZE) {
		snprintf(err, errlen,
			 "--record.max-size: %" PRIu64 " bytes is below the minimum of %llu",
			 o->max_size, REC_MIN_MAX_SIZE);
		rc = -EINVAL;
		goto fail;
	}
	/*
	 * The WAL holds at least one whole transaction (a poll, or a retention
	 * step) before a checkpoint can reset it: a quarter of small bounds.
	 */
	r->wal_budget = (int64_t)(o->max_size / 4 < (4u << 20) ? o->max_size / 4 : (4u << 20));
	/* Used pages stay under 90 % of what the WAL leaves; a cut goes down to 75 %. */
	r->target_bytes = (int64_t)((double)((int64_t)o->max_size - r->wal_budget) * 0.90);
	r->low_bytes = (int64_t)((double)((int64_t)o->max_size - r->wal_budget) * 0.75);
	/*
	 * Deleting a row rewrites its page into the WAL: a retention step stays
	 * at about half the WAL budget (~32 bytes a row with its page overhead).
	 */
	r->delete_chunk = r->wal_budget / 2 / 32;
	if (r->delete_chunk > DELETE_CHUNK)
		r->delete_chunk = DELETE_CHUNK;
	if (r->delete_chunk < 1000)
		r->delete_chunk = 1000;
	/* Keyframes at least every 1/16 of the bound (~24 bytes a row): cuts land close. */
	r->kf_max_rows = (uint64_t)(r->target_bytes / 24 / 16);
	if (mkdir(r->dir, 0750) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "--record: %s: %s", r->dir, strerror(errno));
		goto fail;
	}
	snprintf(lock_path, sizeof(lock_path), "%s/rocewatch.lock", r->dir);
	r->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (r->lock_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "--record: %s: %s", lock_path, strerror(errno));
		goto fail;
	}
	if (flock(r->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		snprintf(err, errlen,
			 "--record: %s: another rocewatch is recording into this directory",
			 r->dir);
		goto fail;
	}
	remove_stale_tmp(r->dir);
	prune_captures(r);
	rc = open_db(r, err, errlen);
	if (rc)
		goto fail;
	rc = load_series_map(r, err, errlen);
	if (rc)
		goto fail;
	r->seq = q1(r->db, "SELECT max(seq) FROM polls", 0, 0);
	r->last_t_ms = q1(r->db, "SELECT max(t_ms) FROM polls", 0, 0);
	CNT_SET(r, last_seq, r->seq);
	CNT_SET(r, last_t_ms, r->last_t_ms);
	CNT_SET(r, series, (uint64_t)r->max_id);
	r->need_kf = true;
	if ((rc =
		 prepare(r, &r->st_series,
			 "INSERT OR IGNORE INTO series VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
			 err, errlen)) ||
	    (rc = prepare(r, &r->st_poll,
			  "INSERT INTO polls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", err,
			  errlen)) ||
	    (rc = prepare(r, &r->st_sample, "INSERT INTO samples VALUES (?1, ?2, ?3)", err,
			  errlen)) ||
	    (rc = prepare(r, &r->st_config, "INSERT INTO config VALUES (?1, ?2, ?3, ?4)", err,
			  errlen)) ||
	    (rc = prepare(r, &r->st_event,
			  "INSERT INTO events (t_ms, kind, object, device, name, detail)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			  err, errlen)) ||
	    (rc = prepare(r, &r->st_run,
			  "INSERT INTO runs (t_ms, host, version, interval_ms, pid)"
			  " VALUES (?1, ?2, ?3, ?4, ?5)",
			  err, errlen)) ||
	    (rc = prepare(r, &r->st_host, "INSERT OR REPLACE INTO meta VALUES ('host', ?1)", err,
			  errlen)) ||
	    (rc = prepare(r, &r->st_pages, "PRAGMA page_count", err, errlen)) ||
	    (rc = prepare(r, &r->st_free, "PRAGMA freelist_count", err, errlen)) ||
	    (rc = prepare(r, &r->st_begin, "BEGIN", err, errlen)) ||
	    (rc = prepare(r, &r->st_commit, "COMMIT", err, errlen)) ||
	    (rc = prepare(r, &r->st_rollback, "ROLLBACK", err, errlen)))
		goto fail;
	for (int i = 0; i <= QUEUE_LEN; i++) {
		struct batch *b = calloc(1, sizeof(*b));

		if (!b) {
			rc = -ENOMEM;
			goto fail;
		}
		r->free_b[r->n_free++] = b;
	}
	update_size(r);
	r->maint_keep = -1;
	r->next_age_check = 0; /* apply retention to what an earlier run left, now */
	if ((rc = -pthread_create(&r->writer, NULL, writer_main, r))) {
		snprintf(err, errlen, "recorder: cannot start the writer: %s", strerror(-rc));
		goto fail;
	}
	r->writer_started = true;
	if ((rc = -pthread_create(&r->capturer, NULL, capture_main, r))) {
		snprintf(err, errlen, "recorder: cannot start the capture thread: %s",
			 strerror(-rc));
		goto fail;
	}
	r->capturer_started = true;
	*out = r;
	return 0;
fail:
	recorder_close(r);
	return rc ? rc : -EIO;
}

void recorder_flush(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	while (r->writer_started && (r->q_len || r->writing))
		pthread_cond_wait(&r->cv_idle, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

void recorder_close(struct recorder *r)
{
	if (!r)
		return;
	if (r->writer_started) {
		pthread_mutex_lock(&r->mu);
		r->stop_writer = true;
		pthread_cond_broadcast(&r->cv_writer);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->writer, NULL);
	}
	if (r->capturer_started) {
		pthread_mutex_lock(&r->mu);
		r->stop_capture = true;
		pthread_cond_broadcast(&r->cv_capture);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->capturer, NULL);
	}
	while (r->jobs) {
		struct capture_job *j = r->jobs;

		r->jobs = j->next;
		free(j->snapshot);
		free(j->rules);
		free(j);
	}
	sqlite3_finalize(r->st_series);
	sqlite3_finalize(r->st_poll);
	sqlite3_finalize(r->st_sample);
	sqlite3_finalize(r->st_config);
	sqlite3_finalize(r->st_event);
	sqlite3_finalize(r->st_run);
	sqlite3_finalize(r->st_host);
	sqlite3_finalize(r->st_pages);
	sqlite3_finalize(r->st_free);
	sqlite3_finalize(r->st_begin);
	sqlite3_finalize(r->st_commit);
	sqlite3_finalize(r->st_rollback);
	if (r->db)
		sqlite3_close(r->db);
	for (size_t i = 0; i < r->n_free; i++)
		batch_free(r->free_b[i]);
	for (size_t i = 0; i < r->q_len; i++)
		batch_free(r->q[(r->q_head + i) % QUEUE_LEN]);
	for (size_t i = 0; i < r->n_objs; i++)
		objrec_free(r->objs[i]);
	for (size_t i = 0; i < r->n_pend_ev; i++)
		free(r->pend_ev[i].detail);
	free(r->pend_ev);
	free(r->objs);
	free(r->st);
	free(r->carry);
	free(r->retry);
	strmap_free(&r->series_map);
	strmap_free(&r->obj_map);
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	pthread_cond_destroy(&r->cv_writer);
	pthread_cond_destroy(&r->cv_idle);
	pthread_cond_destroy(&r->cv_capture);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void recorder_get_counters(struct recorder *r, struct recorder_counters *c)
{
	c->polls = CNT_GET(r, polls);
	c->dropped = CNT_GET(r, dropped);
	c->samples = CNT_GET(r, samples);
	c->config_rows = CNT_GET(r, config_rows);
	c->write_errors = CNT_GET(r, write_errors);
	c->deleted_polls = CNT_GET(r, deleted_polls);
	c->captures = CNT_GET(r, captures);
	c->capture_errors = CNT_GET(r, capture_errors);
	c->captures_deleted = CNT_GET(r, captures_deleted);
	c->last_seq = CNT_GET(r, last_seq);
	c->last_t_ms = CNT_GET(r, last_t_ms);
	c->series = CNT_GET(r, series);
	c->db_bytes = CNT_GET(r, db_bytes);
	c->last_commit_seconds = (double)__atomic_load_n(&r->commit_ns, __ATOMIC_RELAXED) / 1e9;
}

static void counter1(struct strbuf *sb, const char *name, const char *type, const char *help,
		     uint64_t v)
{
	prom_family(sb, name, type, help);
	prom_sample_begin(sb, name);
	prom_sample_end_u64(sb, 1, v);
}

void recorder_render(struct strbuf *sb, void *arg)
{
	struct recorder *r = arg;
	struct recorder_counters c;
	size_t qlen;
	int first;

	recorder_get_counters(r, &c);
	pthread_mutex_lock(&r->mu);
	qlen = r->q_len;
	pthread_mutex_unlock(&r->mu);
	counter1(sb, "rocewatch_recorder_polls_total", "counter",
		 "Polls committed to the flight recorder database.", c.polls);
	counter1(sb, "rocewatch_recorder_dropped_polls_total", "counter",
		 "Polls not recorded: the writer queue was full or the write failed "
		 "(the next poll is written in full).",
		 c.dropped);
	prom_family(sb, "rocewatch_recorder_rows_total", "counter",
		    "Rows written to the flight recorder, by table.");
	first = 1;
	prom_sample_begin(sb, "rocewatch_recorder_rows_total");
	prom_label(sb, &first, "table", "samples");
	prom_sample_end_u64(sb, first, c.samples);
	first = 1;
	prom_sample_begin(sb, "rocewatch_recorder_rows_total");
	prom_label(sb, &first, "table", "config");
	prom_sample_end_u64(sb, first, c.config_rows);
	counter1(sb, "rocewatch_recorder_write_errors_total", "counter",
		 "Failed flight recorder transactions.", c.write_errors);
	counter1(sb, "rocewatch_recorder_deleted_polls_total", "counter",
		 "Polls deleted by retention (age or size).", c.deleted_polls);
	prom_family(sb, "rocewatch_recorder_captures_total", "counter",
		    "Incident capture files written, by result.");
	first = 1;
	prom_sample_begin(sb, "rocewatch_recorder_captures_total");
	prom_label(sb, &first, "result", "ok");
	prom_sample_end_u64(sb, first, c.captures);
	first = 1;
	prom_sample_begin(sb, "rocewatch_recorder_captures_total");
	prom_label(sb, &first, "result", "error");
	prom_sample_end_u64(sb, first, c.capture_errors);
	counter1(sb, "rocewatch_recorder_captures_deleted_total", "counter",
		 "Capture files deleted by capture retention (age or size).", c.captures_deleted);
	counter1(sb, "rocewatch_recorder_last_committed_poll", "gauge",
		 "Sequence number of the last poll committed (polls.seq).", (uint64_t)c.last_seq);
	counter1(sb, "rocewatch_recorder_series", "gauge", "Series known to the flight recorder.",
		 c.series);
	counter1(sb, "rocewatch_recorder_queue_length", "gauge",
		 "Polls waiting for the flight recorder's writer.", qlen);
	counter1(sb, "rocewatch_recorder_database_bytes", "gauge",
		 "Size of the flight recorder database and its WAL in bytes.", c.db_bytes);
	prom_family(sb, "rocewatch_recorder_commit_duration_seconds", "gauge",
		    "Duration of the last flight recorder transaction in seconds.");
	prom_sample_begin(sb, "rocewatch_recorder_commit_duration_seconds");
	prom_sample_end_double(sb, 1, c.last_commit_seconds);
}
