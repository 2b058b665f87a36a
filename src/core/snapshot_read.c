// SPDX-License-Identifier: MIT
/*
 * The snapshot reader: one linear pass over the document, straight into the
 * model, for every caller (--from, /api/v1/state answers, fleet check's
 * thousands of files, the recorder's single values).  An 8-NIC mlx5 node's
 * snapshot is about 150 KiB, 70 % counters; a tree of jansson values cost
 * ~200 instructions a byte, this pass a few.
 *
 * It accepts exactly the JSON jansson accepts with JSON_REJECT_DUPLICATES
 * (RFC 8259, UTF-8, 64-bit integers, reals that do not overflow, no \u0000,
 * no key twice in an object, nesting to 2048) and, of that, exactly the
 * snapshots the format allows (docs/snapshot.md).  A document it refuses
 * gets one message: when the JSON itself is broken, jansson's own words
 * and place (line:column), asked of jansson only then, so they stay what
 * they always were; else the first thing wrong in the order the format is
 * checked (schema, version, host, time, collectors, node, the lists, each
 * netdev, each port; in an object its name, then fields, absent entries,
 * counters, wire), wherever in the document it stands.  That order is a
 * key (struct rd's at[]): every check says where it is, and the smallest
 * key's message wins, so members may come in any order.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bounded.h"
#include "config.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "snapshot_filter.h"
#include "util.h"
#include "vendors.h"

#define SYNTAX	  (-EBADMSG) /* not JSON as jansson reads it: jansson words it */
#define MAX_DEPTH 2048	     /* jansson's JSON_PARSER_MAX_DEPTH */
#define KEY_SLOTS 1024
#define AT_N	  5

_Static_assert(F__COUNT < KEY_SLOTS / 2, "field hash table too small");

/* ---- the keep set ---- */

struct snapshot_keep {
	bool keep[F__COUNT];
	int16_t slot[KEY_SLOTS]; /* (kind, path) hash -> field id + 1; 0: free */
};

static uint32_t path_hash(enum obj_kind kind, const char *path, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)kind;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)path[i]) * 16777619u;
	return h & (KEY_SLOTS - 1);
}

/* field_lookup() without its linear search: every field of every object is looked up. */
static int lookup(const struct snapshot_keep *k, enum obj_kind kind, const char *path, size_t n)
{
	for (uint32_t h = path_hash(kind, path, n); k->slot[h]; h = (h + 1) & (KEY_SLOTS - 1)) {
		int id = k->slot[h] - 1;

		if (fields[id].obj == kind && !strncmp(fields[id].path, path, n) &&
		    !fields[id].path[n])
			return id;
	}
	return -1;
}

static void keep_init(struct snapshot_keep *k, const bool keep[F__COUNT])
{
	static const enum field_id pfc[] = {
		F_NETDEV_PFC_RX_PAUSE,	  F_NETDEV_PFC_TX_PAUSE, F_NETDEV_PFC_SOURCE,
		F_NETDEV_PFC_INDICATIONS, F_NETDEV_PFC_REQUESTS,
	};
	bool any = false;

	for (int i = 0; i < F__COUNT; i++) {
		uint32_t h;

		k->keep[i] = !keep || keep[i];
		if (!fields[i].path)
			continue;
		for (h = path_hash(fields[i].obj, fields[i].path, strlen(fields[i].path));
		     k->slot[h]; h = (h + 1) & (KEY_SLOTS - 1))
			;
		k->slot[h] = (int16_t)(i + 1);
	}
	/* model_link_ports() binds a port to its netdev by name when the ifindex does not */
	k->keep[F_PORT_NETDEV] = true;
	/* vendor_fill_netdev() makes the pause counters and their source from dcbnl's */
	for (size_t i = 0; i < ARRAY_SIZE(pfc); i++)
		any |= k->keep[pfc[i]];
	for (size_t i = 0; i < ARRAY_SIZE(pfc) && any; i++)
		k->keep[pfc[i]] = true;
	/* vendor_fill_port() picks the driver's counter names (none here: no counters) */
	for (int i = 0; i < VENDOR_N_MEANINGS; i++)
		if (k->keep[F_PORT_RDMA_ACK_TIMEOUTS + i])
			k->keep[F_PORT_DRIVER] = true;
}

struct snapshot_keep *snapshot_keep_new(const bool keep[F__COUNT])
{
	struct snapshot_keep *k = calloc(1, sizeof(*k));

	if (k)
		keep_init(k, keep);
	return k;
}

void snapshot_keep_free(struct snapshot_keep *k)
{
	free(k);
}

bool snapshot_keep_has(const struct snapshot_keep *k, int id)
{
	return id >= 0 && id < F__COUNT && k->keep[id];
}

static struct snapshot_keep keep_all;
static pthread_once_t keep_all_once = PTHREAD_ONCE_INIT;

static void keep_all_init(void)
{
	keep_init(&keep_all, NULL);
}

static const struct snapshot_keep *keep_or_all(const struct snapshot_keep *k)
{
	if (k)
		return k;
	pthread_once(&keep_all_once, keep_all_init);
	return &keep_all;
}

/* ---- the pass ---- */

/* One key seen in an object being read (the same key twice is jansson's error). */
struct key_slot {
	uint32_t gen, hash;
	const unsigned char *s;
	uint32_t n;
};

/* The keys of the object open at one depth; a new generation forgets them without clearing. */
struct key_set {
	struct key_slot *slot;
	uint32_t cap, n, gen;
};

/* A key that had escapes, decoded: kept until the pass ends, its key set points at it. */
struct owned {
	struct owned *next;
	unsigned char s[];
};

struct rd {
	const unsigned char *p, *end, *start;
	int depth;
	struct key_set *sets; /* one per depth */
	int n_sets;
	unsigned char *open; /* skip(): the kind of each container open, '{' or '[' */
	struct owned *owned;
	bool allow_dups; /* a single value (the recorder's): jansson read it without the check */
	const struct snapshot_keep *k;
	bool no_counters; /* validate counter sets, do not keep them */
	/* the message: the first thing wrong by the order the format is checked in */
	const char *file;
	char *err;
	size_t errlen;
	bool failed;
	uint32_t at[AT_N], ekey[AT_N];
};

/* at[]: which snapshot, which part of it, which object, which part of that, which entry */
enum {
	AT_SNAP,
	AT_PART,
	AT_OBJ,
	AT_SECT,
	AT_ENTRY
};
enum {
	P_OBJECT,
	P_SCHEMA,
	P_VERSION,
	P_HOST,
	P_NS,
	P_TIME,
	P_COLLECTORS,
	P_NODE,
	P_LISTS,
	P_NETDEVS,
	P_PORTS
};
enum {
	S_NAME,
	S_DUPLICATE,
	S_SHAPE,
	S_FIELDS,
	S_ABSENT,
	S_COUNTERS,
	S_WIRE
};

/* Where a message says the thing wrong is: base[.sect[.key]], as the format names it. */
struct where {
	const char *base, *sect, *key;
	size_t klen;
};

static void vfail(struct rd *r, const char *where, const char *fmt, va_list ap)
{
	char msg[256];
	int i;

	for (i = 0; r->failed && i < AT_N && r->at[i] == r->ekey[i]; i++)
		;
	/* the same place or later: the message there stands */
	if (r->failed && (i == AT_N || r->at[i] > r->ekey[i]))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(r->err, r->errlen, "%s: %s: %s", r->file, where, msg);
	r->failed = true;
	memcpy(r->ekey, r->at, sizeof(r->ekey));
}

static void fail(struct rd *r, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void failw(struct rd *r, const struct where *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(struct rd *r, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, where, fmt, ap);
	va_end(ap);
}

static void failw(struct rd *r, const struct where *w, const char *fmt, ...)
{
	char at[256];
	va_list ap;

	if (w->key)
		snprintf(at, sizeof(at), "%s.%s.%.*s", w->base, w->sect, (int)w->klen, w->key);
	else if (w->sect)
		snprintf(at, sizeof(at), "%s.%s", w->base, w->sect);
	else
		snprintf(at, sizeof(at), "%s", w->base);
	va_start(ap, fmt);
	vfail(r, at, fmt, ap);
	va_end(ap);
}

/* string bytes: 0 plain, 1 quote, 2 backslash, 3 control (jansson refuses), 4 not ASCII */
static const uint8_t str_class[256] = {
	[0 ... 0x1f] = 3,
	['"'] = 1,
	['\\'] = 2,
	[0x80 ... 0xff] = 4,
};

static bool ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static uint64_t load8(const unsigned char *p)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Which of 8 bytes loaded from memory is the first with its flag (bit 7) set in m (not 0). */
static size_t first_flagged(uint64_t m)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (size_t)__builtin_clzll(m) / 8;
#else
	return (size_t)__builtin_ctzll(m) / 8;
#endif
}

/* Past the whitespace: an indented snapshot is 40 % spaces, skipped 8 at a time. */
static int skip_ws(struct rd *r)
{
	const unsigned char *p = r->p, *end = r->end;

	for (;;) {
		if (end - p >= 8) {
			uint64_t x = load8(p) ^ (ONES * ' ');

			if (!x) {
				p += 8;
				continue;
			}
			/* the first byte that is not a space (any bit of it differs) */
			p += first_flagged((((x & ~HIGHS) + ~HIGHS) | x) & HIGHS);
		} else {
			while (p < end && *p == ' ')
				p++;
		}
		if (p >= end || !ws(*p))
			break;
		p++;
	}
	r->p = p;
	return p < end ? *p : -1;
}

/* The next byte that is not whitespace, -1 at the end; most often the very next one. */
static inline int peek(struct rd *r)
{
	const unsigned char *p = r->p;

	if (p < r->end && !ws(*p))
		return *p;
	/* the space after a colon */
	if (r->end - p > 1 && *p == ' ' && !ws(p[1])) {
		r->p = p + 1;
		return p[1];
	}
	return skip_ws(r);
}

/* The first byte from p that is not plain string content (quote, backslash, control, not ASCII). */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
	for (; end - p >= 8; p += 8) {
		uint64_t x = load8(p), q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
		/*
		 * a zero byte of q or b, a byte below 0x20, a byte from 0x80; a
		 * borrow only runs upwards, so the first flag is the first such byte
		 */
		uint64_t m =
		    (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) | x) & HIGHS;

		if (m)
			return p + first_flagged(m);
	}
	while (p < end && !str_class[*p])
		p++;
	return p;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	*cp = 0;
	if (end - p < 4)
		return SYNTAX;
	for (int i = 0; i < 4; i++) {
		int v = rw_hex_digit(p[i]);

		if (v < 0)
			return SYNTAX;
		*cp = *cp << 4 | (uint32_t)v;
	}
	return 0;
}

/* A UTF-8 sequence as jansson's utf.c accepts it: its length, 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char u = *p;
	size_t n;
	uint32_t cp;

	if (u >= 0xC2 && u <= 0xDF)
		n = 2, cp = u & 0x1F;
	else if (u >= 0xE0 && u <= 0xEF)
		n = 3, cp = u & 0x0F;
	else if (u >= 0xF0 && u <= 0xF4)
		n = 4, cp = u & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000))
		return 0;
	return n;
}

static void put(char *buf, size_t cap, size_t at, const void *s, size_t n)
{
	if (!buf || at >= cap - 1)
		return;
	if (n > cap - 1 - at)
		n = cap - 1 - at;
	memcpy(buf + at, s, n);
}

static size_t utf8_put(char *buf, size_t cap, size_t at, uint32_t cp)
{
	unsigned char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	put(buf, cap, at, u, n);
	return n;
}

/* After the backslash at p: the escape's bytes into buf at len; its decoded length, 0: invalid. */
static size_t escape(const unsigned char **pp, const unsigned char *end, char *buf, size_t cap,
		     size_t len)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const unsigned char *p = *pp;
	const char *c;
	uint32_t cp, lo;

	if (p >= end)
		return 0;
	if (*p != 'u') {
		c = *p ? strchr(from, *p) : NULL;
		if (!c)
			return 0;
		put(buf, cap, len, &to[c - from], 1);
		*pp = p + 1;
		return 1;
	}
	if (hex4(p + 1, end, &cp))
		return 0;
	p += 5;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		/* a high surrogate: a low one must follow */
		if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return 0;
		p += 6;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || !cp) {
		/* \u0000: jansson refuses it without JSON_ALLOW_NUL */
		return 0;
	}
	*pp = p;
	return utf8_put(buf, cap, len, cp);
}

/*
 * The string at r->p (its opening quote), validated as jansson's lexer
 * does.  Its decoded length in *n; its bytes, NUL-terminated and cut at
 * cap - 1 as strlcpy0() cuts, in buf when buf.
 */
static int str(struct rd *r, char *buf, size_t cap, size_t *n)
{
	const unsigned char *p = r->p + 1, *end = r->end;
	size_t len = 0, l;

	for (;;) {
		const unsigned char *s = p;

		p = plain_run(p, end);
		put(buf, cap, len, s, (size_t)(p - s));
		len += (size_t)(p - s);
		if (p >= end)
			return SYNTAX;
		switch (str_class[*p]) {
		case 1:
			r->p = p + 1;
			if (buf)
				buf[len < cap - 1 ? len : cap - 1] = '\0';
			if (n)
				*n = len;
			return 0;
		case 3:
			return SYNTAX;
		case 4:
			l = utf8_seq(p, end);
			if (!l)
				return SYNTAX;
			put(buf, cap, len, p, l);
			len += l;
			p += l;
			continue;
		default:
			p++;
			l = escape(&p, end, buf, cap, len);
			if (!l)
				return SYNTAX;
			len += l;
		}
	}
}

static bool digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/*
 * The end of a number or a literal, p past its last byte.  jansson reads
 * one byte too many there and puts it back, and a NUL put back is lost: one
 * NUL right after such a token is as if it were not there.
 */
static const unsigned char *token_end(const unsigned char *p, const unsigned char *end)
{
	return p < end && !*p ? p + 1 : p;
}

/* JSON values as jansson types them (the order of its type names) */
enum jtype {
	J_OBJECT,
	J_ARRAY,
	J_STRING,
	J_INTEGER,
	J_REAL,
	J_TRUE,
	J_FALSE,
	J_NULL
};

static const char *const jtype_names[] = { "object", "array", "string", "integer",
					   "real",   "true",  "false",	"null" };

struct jv {
	enum jtype t;
	int64_t i;
	double d;
	size_t n; /* a string's decoded length */
};

static double jv_number(const struct jv *v)
{
	return v->t == J_REAL ? v->d : (double)v->i;
}

/*
 * A number, as jansson reads it: an integer when it has neither fraction nor
 * exponent (an error outside 64 bits), else a real (an error on overflow).
 */
static int number(struct rd *r, struct jv *v)
{
	const unsigned char *s = r->p, *p = s, *end = r->end;
	bool neg = false, big = false;
	uint64_t u = 0;

	v->t = J_INTEGER;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (!digit(p, end))
		return SYNTAX;
	if (*p == '0') {
		p++;
	} else {
		const unsigned char *d = p;

		while (digit(p, end))
			p++;
		/* 19 digits may not fit, 21 never do */
		if (p - d > 20)
			big = true;
		for (; d < p && !big; d++)
			big = __builtin_mul_overflow(u, 10, &u) ||
			      __builtin_add_overflow(u, (uint64_t)(*d - '0'), &u);
	}
	if (p < end && *p == '.') {
		v->t = J_REAL;
		if (!digit(++p, end))
			return SYNTAX;
		while (digit(p, end))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		v->t = J_REAL;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!digit(p, end))
			return SYNTAX;
		while (digit(p, end))
			p++;
	}
	r->p = token_end(p, end);
	if (v->t == J_REAL) {
		char tmp[64], *t = tmp;
		size_t n = (size_t)(p - s);

		/* the document need not end in a NUL: strtod() reads a copy */
		if (n >= sizeof(tmp) && !(t = malloc(n + 1)))
			return -ENOMEM;
		memcpy(t, s, n);
		t[n] = '\0';
		v->d = strtod(t, NULL);
		if (t != tmp)
			free(t);
		/* overflow is jansson's error, underflow is not */
		return isinf(v->d) ? SYNTAX : 0;
	}
	if (big || u > (uint64_t)INT64_MAX + neg)
		return SYNTAX;
	v->i = neg ? -(int64_t)(u - !!u) - !!u : (int64_t)u;
	return 0;
}

static int literal(struct rd *r, const char *word, size_t n)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return SYNTAX;
	r->p = token_end(r->p + n, r->end);
	return 0;
}

/* ---- keys ---- */

/* Keys differ at their ends (rx_prio3_pause, tx_prio3_pause): the first and last 8 bytes. */
static uint32_t key_hash(const unsigned char *s, size_t n)
{
	uint64_t a = 0, b = 0;

	if (n >= 8) {
		a = load8(s);
		b = load8(s + n - 8);
	} else {
		memcpy(&a, s, n);
	}
	a = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ n;
	return (uint32_t)(a >> 32) ^ (uint32_t)a;
}

/* A new object opens at r->depth: its key set starts empty. */
static int keys_begin(struct rd *r)
{
	if (r->depth >= r->n_sets) {
		int n = r->n_sets ? r->n_sets * 2 : 16;
		struct key_set *s;

		while (n <= r->depth)
			n *= 2;
		s = realloc(r->sets, (size_t)n * sizeof(*s));
		if (!s)
			return -ENOMEM;
		memset(s + r->n_sets, 0, (size_t)(n - r->n_sets) * sizeof(*s));
		r->sets = s;
		r->n_sets = n;
	}
	r->sets[r->depth].gen++;
	r->sets[r->depth].n = 0;
	return 0;
}

static int keys_grow(struct key_set *ks)
{
	uint32_t cap = ks->cap ? ks->cap * 2 : 16;
	struct key_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < ks->cap; i++) {
		struct key_slot *o = &ks->slot[i];
		uint32_t j;

		if (o->gen != ks->gen)
			continue;
		for (j = o->hash & (cap - 1); t[j].gen == ks->gen; j = (j + 1) & (cap - 1))
			;
		t[j] = *o;
	}
	free(ks->slot);
	ks->slot = t;
	ks->cap = cap;
	return 0;
}

/* Key s (n bytes, decoded) of the object open at r->depth: SYNTAX when it is there twice. */
static int key_new(struct rd *r, const unsigned char *s, size_t n)
{
	struct key_set *ks = &r->sets[r->depth];
	uint32_t h = key_hash(s, n), mask;
	struct key_slot *e;

	if (r->allow_dups)
		return 0;
	if (ks->n * 2 >= ks->cap && keys_grow(ks))
		return -ENOMEM;
	mask = ks->cap - 1;
	for (e = &ks->slot[h & mask]; e->gen == ks->gen; e = &ks->slot[(e - ks->slot + 1) & mask])
		if (e->hash == h && e->n == n && !memcmp(e->s, s, n))
			return SYNTAX;
	e->gen = ks->gen;
	e->hash = h;
	e->s = s;
	e->n = (uint32_t)n;
	ks->n++;
	return 0;
}

/*
 * The key at r->p (its quote), checked against the object's others; *k and
 * *n: the key decoded (in place when it has no escape), not NUL-terminated.
 */
static int key(struct rd *r, const char **k, size_t *n)
{
	const unsigned char *s = r->p + 1, *e = plain_run(s, r->end);
	struct owned *o;
	int ret;

	if (e < r->end && *e == '"') {
		r->p = e + 1;
		*k = (const char *)s;
		*n = (size_t)(e - s);
		return key_new(r, s, *n);
	}
	/* its length first (it is validated on the way), then its bytes */
	if ((ret = str(r, NULL, 0, n)))
		return ret;
	r->p = s - 1;
	o = malloc(sizeof(*o) + *n + 1);
	if (!o)
		return -ENOMEM;
	o->next = r->owned;
	r->owned = o;
	str(r, (char *)o->s, *n + 1, n);
	/* a NUL in a key: jansson refuses it (str() already refused \u0000) */
	*k = (const char *)o->s;
	return key_new(r, o->s, *n);
}

/* An object's "key": at r->p, with r->p left at its value. */
static int member_key(struct rd *r, const char **k, size_t *n)
{
	int ret;

	if (peek(r) != '"')
		return SYNTAX;
	if ((ret = key(r, k, n)))
		return ret;
	if (peek(r) != ':')
		return SYNTAX;
	r->p++;
	return peek(r) < 0 ? SYNTAX : 0;
}

/* ---- any value ---- */

/*
 * Any value at r->p, validated only (a member no reader reads): without
 * recursion, so 2048 levels cost no stack.
 */
static int skip(struct rd *r)
{
	const int base = r->depth;
	const char *k;
	size_t n;
	struct jv v;
	int c, ret;

	if (!r->open && !(r->open = malloc(MAX_DEPTH + 2)))
		return -ENOMEM;
value:
	/* a value inside 2048 containers is one too deep */
	if (r->depth >= MAX_DEPTH)
		return SYNTAX;
	switch (*r->p) {
	case '{':
		r->open[++r->depth] = '{';
		if ((ret = keys_begin(r)))
			return ret;
		r->p++;
		c = peek(r);
		if (c == '}') {
			r->p++;
			r->depth--;
			goto after;
		}
		goto member;
	case '[':
		r->open[++r->depth] = '[';
		r->p++;
		c = peek(r);
		if (c == ']') {
			r->p++;
			r->depth--;
			goto after;
		}
		if (c < 0)
			return SYNTAX;
		goto value;
	case '"':
		ret = str(r, NULL, 0, NULL);
		break;
	case 't':
		ret = literal(r, "true", 4);
		break;
	case 'f':
		ret = literal(r, "false", 5);
		break;
	case 'n':
		ret = literal(r, "null", 4);
		break;
	default:
		ret = number(r, &v);
	}
	if (ret)
		return ret;
after:
	if (r->depth == base)
		return 0;
	c = peek(r);
	if (c == ',') {
		r->p++;
		c = peek(r);
		if (r->open[r->depth] == '{')
			goto member;
		if (c < 0)
			return SYNTAX;
		goto value;
	}
	if (c != (r->open[r->depth] == '{' ? '}' : ']'))
		return SYNTAX;
	r->p++;
	r->depth--;
	goto after;
member:
	if ((ret = member_key(r, &k, &n)))
		return ret;
	goto value;
}

/*
 * The value at r->p, typed; a string decoded into buf (cut at cap - 1),
 * an object or array validated and passed over.
 */
static int jvalue(struct rd *r, struct jv *v, char *buf, size_t cap)
{
	switch (*r->p) {
	case '"':
		v->t = J_STRING;
		return str(r, buf, cap, &v->n);
	case '{':
		v->t = J_OBJECT;
		return skip(r);
	case '[':
		v->t = J_ARRAY;
		return skip(r);
	case 't':
		v->t = J_TRUE;
		return literal(r, "true", 4);
	case 'f':
		v->t = J_FALSE;
		return literal(r, "false", 5);
	case 'n':
		v->t = J_NULL;
		return literal(r, "null", 4);
	default:
		return number(r, v);
	}
}

/*
 * The members of the object at r->p: fn gets each key (decoded, klen bytes,
 * not NUL-terminated) with r->p at its value, and consumes the value.
 */
typedef int member_fn(struct rd *r, void *ctx, const char *key, size_t klen);

/*
 * The items of the object or array at r->p, up to its closing byte:
 * item(r, arg) consumes each (an object's item reads its key first).
 */
static int items(struct rd *r, int close, int (*item)(struct rd *r, void *arg), void *arg)
{
	int c, ret;

	if (r->depth >= MAX_DEPTH)
		return SYNTAX;
	r->depth++;
	if (close == '}' && (ret = keys_begin(r)))
		return ret;
	r->p++;
	c = peek(r);
	while (c != close) {
		if ((ret = item(r, arg)))
			return ret;
		c = peek(r);
		if (c == close)
			break;
		if (c != ',')
			return SYNTAX;
		r->p++;
		c = peek(r);
	}
	r->p++;
	r->depth--;
	return 0;
}

struct member_call {
	member_fn *fn;
	void *ctx;
};

static int member_item(struct rd *r, void *arg)
{
	struct member_call *mc = arg;
	const char *k;
	size_t n;
	int ret;

	if ((ret = member_key(r, &k, &n)))
		return ret;
	return mc->fn(r, mc->ctx, k, n);
}

static int members(struct rd *r, member_fn *fn, void *ctx)
{
	struct member_call mc = { fn, ctx };

	return items(r, '}', member_item, &mc);
}

/* The elements of the array at r->p: fn(r, ctx, index) consumes each. */
typedef int element_fn(struct rd *r, void *ctx, size_t i);

struct element_call {
	element_fn *fn;
	void *ctx;
	size_t i;
};

static int element_item(struct rd *r, void *arg)
{
	struct element_call *ec = arg;

	if (peek(r) < 0)
		return SYNTAX;
	return ec->fn(r, ec->ctx, ec->i++);
}

static int elements(struct rd *r, element_fn *fn, void *ctx)
{
	struct element_call ec = { fn, ctx, 0 };

	return items(r, ']', element_item, &ec);
}

static bool key_is(const char *key, size_t klen, const char *word)
{
	return klen == strlen(word) && !memcmp(key, word, klen);
}

/* A non-negative integer, or a real of at least 2^63 as the writer's u64_json() writes it. */
static bool jv_u64(const struct jv *v, uint64_t *out)
{
	if (v->t == J_INTEGER && v->i >= 0) {
		*out = (uint64_t)v->i;
		return true;
	}
	if (v->t != J_REAL || !(v->d >= 0x1p63))
		return false;
	*out = v->d >= 0x1p64 ? UINT64_MAX : (uint64_t)v->d;
	return true;
}

/* A counter's value: most are an integer of at most 18 digits, read here in one loop. */
static int u64_value(struct rd *r, struct jv *v, uint64_t *out, bool *ok)
{
	const unsigned char *p = r->p, *d = p, *end = r->end;
	uint64_t u = 0;
	int ret;

	while (digit(p, end))
		p++;
	if (p > d && p - d <= 18 && (*d != '0' || p - d == 1) &&
	    (p >= end || (*p != '.' && *p != 'e' && *p != 'E'))) {
		for (; d < p; d++)
			u = u * 10 + (uint64_t)(*d - '0');
		*out = u;
		r->p = token_end(p, end);
		*ok = true;
		return 0;
	}
	ret = jvalue(r, v, NULL, 0);
	*ok = !ret && jv_u64(v, out);
	return ret;
}

/* ---- a field's value, as the format types it ---- */

/* Where a value read goes: field id of o; o NULL: only checked (an object in error, or not kept).
 */
struct dest {
	struct object *o;
	int id;
	const struct where *w;
};

/* A set of 0..n-1 (n > 0) or, n == 0, a per-priority array of u64 or null. */
struct set_ctx {
	struct dest *d;
	int n;
	uint64_t bits;
	size_t count, bad; /* bad: the first element in error, + 1 */
};

static int set_element(struct rd *r, void *ctx, size_t i)
{
	struct set_ctx *sc = ctx;
	struct jv v;
	uint64_t u;
	bool ok;
	int ret;

	sc->count++;
	if (sc->n) {
		if ((ret = jvalue(r, &v, NULL, 0)))
			return ret;
		if (v.t != J_INTEGER || v.i < 0 || v.i >= sc->n)
			failw(r, sc->d->w, "element %zu: expected an integer 0..%d", i, sc->n - 1);
		else
			sc->bits |= 1ULL << v.i;
		return 0;
	}
	if (*r->p == 'n')
		return literal(r, "null", 4);
	if ((ret = u64_value(r, &v, &u, &ok)))
		return ret;
	if (!ok && !sc->bad)
		sc->bad = i + 1;
	else if (ok && sc->d->o && i < RW_PRIO_COUNT)
		field_set_prio(sc->d->o, sc->d->id, (int)i, u);
	return 0;
}

static int set_value(struct rd *r, struct dest *d, int n)
{
	struct set_ctx sc = { d, n, 0, 0, 0 };
	int ret;

	if (*r->p != '[') {
		failw(r, d->w, "expected an array of integers 0..%d", n - 1);
		return skip(r);
	}
	if ((ret = elements(r, set_element, &sc)) || !d->o)
		return ret;
	if (n == RW_PRIO_COUNT)
		field_set_set(d->o, d->id, (uint8_t)sc.bits);
	else
		field_set_dset(d->o, d->id, sc.bits);
	return 0;
}

/* 8 entries, null where the driver has none; the count is judged before the elements */
static int prio_array_value(struct rd *r, struct dest *d)
{
	struct set_ctx sc = { d, 0, 0, 0, 0 };
	struct object *o = d->o;
	int ret;

	if (*r->p != '[') {
		failw(r, d->w, "expected an array of 8 integers or nulls");
		return skip(r);
	}
	if ((ret = elements(r, set_element, &sc)))
		return ret;
	if (sc.count != RW_PRIO_COUNT)
		failw(r, d->w, "expected an array of 8 integers or nulls");
	else if (sc.bad)
		failw(r, d->w, "element %zu: expected a non-negative integer or null", sc.bad - 1);
	else if (o && o->f[d->id].state != ABS_NONE) { /* all null: present but empty */
		o->f[d->id].state = ABS_NONE;
		o->f[d->id].mask = 0;
	}
	return 0;
}

struct dscp_ctx {
	struct dest *d;
	int8_t map[RW_DSCP_COUNT];
};

static int dscp_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct dscp_ctx *dc = ctx;
	char k[32], *kp = k;
	int64_t dscp;
	struct jv v;
	int ret = 0;

	if (klen >= sizeof(k) && !(kp = malloc(klen + 1)))
		return -ENOMEM;
	memcpy(kp, key, klen);
	kp[klen] = '\0';
	if (parse_i64(kp, &dscp) || dscp < 0 || dscp >= RW_DSCP_COUNT) {
		failw(r, dc->d->w, "key '%s': expected a DSCP 0..63", kp);
		ret = skip(r);
	} else if (!(ret = jvalue(r, &v, NULL, 0))) {
		if (v.t != J_INTEGER || v.i < 0 || v.i >= RW_PRIO_COUNT)
			failw(r, dc->d->w, "DSCP %s: expected a priority 0..7", kp);
		else
			dc->map[dscp] = (int8_t)v.i;
	}
	if (kp != k)
		free(kp);
	return ret;
}

static int dscp_map_value(struct rd *r, struct dest *d)
{
	struct dscp_ctx dc = { d, { 0 } };
	int ret;

	if (*r->p != '{') {
		failw(r, d->w, "expected an object mapping DSCP to priority");
		return skip(r);
	}
	memset(dc.map, -1, sizeof(dc.map));
	if (!(ret = members(r, dscp_member, &dc)) && d->o)
		field_set_dscp_map(d->o, d->id, dc.map);
	return ret;
}

/*
 * An entry of a GID table, a PCI path list or the wire view, read as
 * json_unpack_ex(JSON_STRICT) reads it, its messages word for word: the
 * format's keys in order (a string 's', an integer 'i' or 'I', optional
 * or not), then the members it did not name.
 */
#define UNPACK_MAX 6
#define UNPACK_STR 256

struct unpack {
	const char *keys; /* "name:t" or "name?t", space-separated */
	int n;		  /* keys in it */
	const char *name[UNPACK_MAX];
	size_t nlen[UNPACK_MAX];
	char type[UNPACK_MAX];
	bool opt[UNPACK_MAX], got[UNPACK_MAX];
	struct jv v[UNPACK_MAX];
	char s[UNPACK_MAX][UNPACK_STR];
	long left;	    /* members it does not name */
	char leftover[200]; /* their names, as jansson lists them */
	size_t llen;
};

static void unpack_init(struct unpack *u, const char *keys)
{
	const char *p = keys;

	memset(u, 0, offsetof(struct unpack, v));
	u->left = 0;
	u->llen = 0;
	u->leftover[0] = '\0';
	while (*p && u->n < UNPACK_MAX) {
		const char *sep = p + strcspn(p, ":?");

		u->name[u->n] = p;
		u->nlen[u->n] = (size_t)(sep - p);
		u->opt[u->n] = *sep == '?';
		u->type[u->n] = sep[1];
		u->got[u->n] = false;
		u->n++;
		p = sep + 2;
		p += *p == ' ';
	}
}

static int unpack_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct unpack *u = ctx;
	size_t room;
	int i;

	for (i = 0; i < u->n; i++)
		if (u->nlen[i] == klen && !memcmp(u->name[i], key, klen))
			break;
	if (i < u->n) {
		u->got[i] = true;
		return jvalue(r, &u->v[i], u->s[i], sizeof(u->s[i]));
	}
	/* jansson's text is cut at 158 bytes: the list need not be longer */
	room = sizeof(u->leftover) - 1 - u->llen;
	if (u->left++ && room >= 2) {
		memcpy(u->leftover + u->llen, ", ", 2);
		u->llen += 2;
		room -= 2;
	}
	if (klen > room)
		klen = room;
	memcpy(u->leftover + u->llen, key, klen);
	u->llen += klen;
	u->leftover[u->llen] = '\0';
	return skip(r);
}

/* The entry at r->p: 0 and text "" when it unpacks, else text says why as jansson does. */
static int unpack(struct rd *r, struct unpack *u, char *text, size_t len)
{
	char full[256];
	size_t n;
	int ret;

	text[0] = '\0';
	if (*r->p != '{') {
		struct jv v;

		if ((ret = jvalue(r, &v, NULL, 0)))
			return ret;
		snprintf(full, sizeof(full), "Expected object, got %s", jtype_names[v.t]);
		goto cut;
	}
	if ((ret = members(r, unpack_member, u)))
		return ret;
	for (int i = 0; i < u->n; i++) {
		bool want_str = u->type[i] == 's';

		if (!u->got[i] && u->opt[i])
			continue;
		if (!u->got[i]) {
			snprintf(full, sizeof(full), "Object item not found: %.*s", (int)u->nlen[i],
				 u->name[i]);
			goto cut;
		}
		if (u->v[i].t != (want_str ? J_STRING : J_INTEGER)) {
			snprintf(full, sizeof(full), "Expected %s, got %s",
				 want_str ? "string" : "integer", jtype_names[u->v[i].t]);
			goto cut;
		}
	}
	if (!u->left)
		return 0;
	snprintf(full, sizeof(full), "%ld object item(s) left unpacked: %s", u->left, u->leftover);
cut:
	/* jansson keeps JSON_ERROR_TEXT_LENGTH - 2 bytes of its text */
	n = strnlen(full, len - 1 < 158 ? len - 1 : 158);
	memcpy(text, full, n);
	text[n] = '\0';
	return 0;
}

static int entry_gid(struct rd *r, struct dest *d, size_t i)
{
	struct gid_table *t;
	struct unpack u;
	char why[160];
	int ret;

	unpack_init(&u, "index:I gid:s type:s netdev?s");
	if ((ret = unpack(r, &u, why, sizeof(why))))
		return ret;
	if (why[0]) {
		failw(r, d->w, "entry %zu: %s", i, why);
		return 0;
	}
	if (!d->o)
		return 0;
	t = &d->o->gids;
	if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
		return -ENOMEM;
	t->e[t->n].index = (uint32_t)u.v[0].i;
	strlcpy0(t->e[t->n].gid, u.s[1], sizeof(t->e[t->n].gid));
	strlcpy0(t->e[t->n].type, u.s[2], sizeof(t->e[t->n].type));
	strlcpy0(t->e[t->n].netdev, u.got[3] ? u.s[3] : "", sizeof(t->e[t->n].netdev));
	t->n++;
	return 0;
}

static int entry_pci(struct rd *r, struct dest *d, size_t i)
{
	struct unpack u;
	struct pci_pairs *t;
	char why[160];
	size_t p;
	int ret;

	unpack_init(&u, "gpu:s nic:s path:s");
	if ((ret = unpack(r, &u, why, sizeof(why))))
		return ret;
	if (why[0]) {
		failw(r, d->w, "entry %zu: %s", i, why);
		return 0;
	}
	for (p = 1; p < SNAPSHOT_PCI_PATHS; p++)
		if (u.v[2].n == strlen(snapshot_pci_path_names[p]) &&
		    !strcmp(snapshot_pci_path_names[p], u.s[2]))
			break;
	if (p == SNAPSHOT_PCI_PATHS) {
		failw(r, d->w, "entry %zu: unknown path '%s' (PIX, PXB, PHB, SYS)", i, u.s[2]);
		return 0;
	}
	if (!d->o)
		return 0;
	t = &d->o->pairs;
	if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
		return -ENOMEM;
	strlcpy0(t->e[t->n].gpu, u.s[0], sizeof(t->e[t->n].gpu));
	strlcpy0(t->e[t->n].nic, u.s[1], sizeof(t->e[t->n].nic));
	t->e[t->n].path = (enum pci_path)p;
	t->n++;
	return 0;
}

static int entry_element(struct rd *r, void *ctx, size_t i)
{
	struct dest *d = ctx;

	return fields[d->id].type == VT_GIDS ? entry_gid(r, d, i) : entry_pci(r, d, i);
}

static int entries_value(struct rd *r, struct dest *d)
{
	bool gids = fields[d->id].type == VT_GIDS;
	struct object *o = d->o;
	int ret;

	if (*r->p != '[') {
		failw(r, d->w,
		      gids ? "expected an array of GID entries"
			   : "expected an array of GPU/NIC paths");
		return skip(r);
	}
	if (o && gids)
		o->gids.n = 0;
	else if (o)
		o->pairs.n = 0;
	if ((ret = elements(r, entry_element, d)) || !o)
		return ret;
	o->f[d->id].state = ABS_NONE;
	if (gids)
		o->f[d->id].v.gids = &o->gids;
	else
		o->f[d->id].v.pairs = &o->pairs;
	return 0;
}

/* An integer, boolean, real or string field's value. */
static int scalar_value(struct rd *r, struct dest *d)
{
	enum value_type t = fields[d->id].type;
	char s[RW_STR_MAX];
	struct jv v;
	int ret = jvalue(r, &v, s, sizeof(s));

	if (ret)
		return ret;
	if (t == VT_INT && v.t != J_INTEGER)
		failw(r, d->w, "expected an integer");
	else if (t == VT_BOOL && v.t != J_TRUE && v.t != J_FALSE)
		failw(r, d->w, "expected true or false");
	else if (t == VT_FLOAT && v.t != J_INTEGER && v.t != J_REAL)
		failw(r, d->w, "expected a number");
	else if (t == VT_STR && v.t != J_STRING)
		failw(r, d->w, "expected a string");
	else if (t == VT_STR && v.n >= RW_STR_MAX)
		failw(r, d->w, "string longer than %d bytes", RW_STR_MAX - 1);
	else if (d->o && t == VT_INT)
		field_set_int(d->o, d->id, v.i);
	else if (d->o && t == VT_BOOL)
		field_set_bool(d->o, d->id, v.t == J_TRUE);
	else if (d->o && t == VT_FLOAT)
		field_set_float(d->o, d->id, jv_number(&v));
	else if (d->o)
		field_set_str(d->o, d->id, s);
	return 0;
}

/*
 * A field's value as its type allows it, set in d (when d->o) as the
 * collectors set it.  A new value type is read here (no default: -Wswitch
 * names this switch too; see the value-type recipe in docs/hacking.md).
 */
static int typed_value(struct rd *r, struct dest *d)
{
	switch (fields[d->id].type) {
	case VT_INT:
	case VT_BOOL:
	case VT_FLOAT:
	case VT_STR:
		return scalar_value(r, d);
	case VT_PRIOSET:
		return set_value(r, d, RW_PRIO_COUNT);
	case VT_DSCPSET:
		return set_value(r, d, RW_DSCP_COUNT);
	case VT_PRIO_ARRAY:
		return prio_array_value(r, d);
	case VT_DSCP_MAP:
		return dscp_map_value(r, d);
	case VT_GIDS:
	case VT_PCI_PAIRS:
		return entries_value(r, d);
	}
	failw(r, d->w, "unsupported type");
	return skip(r);
}

/* ---- a node, netdev or rdma_port object ---- */

#define ID_WORDS ((F__COUNT + 63) / 64)

struct octx {
	struct node_model *m;
	enum obj_kind kind;
	struct object *o; /* NULL until made; still NULL after, when its name is wrong */
	bool made;
	char where[160];
	/* a netdev's name, a port's device and number, as far as read */
	bool has_name, has_port;
	struct jv namev, portv;
	char name[RW_NAME_MAX];
	int ifindex;
	uint64_t in_fields[ID_WORDS], in_absent[ID_WORDS];
	int32_t absent_at[F__COUNT]; /* its entry in "absent", + 1 */
	int n_absent;
};

static bool has_id(const uint64_t *set, int id)
{
	return set[id / 64] & 1ULL << (id % 64);
}

static void set_at(struct rd *r, uint32_t sect, uint32_t entry)
{
	r->at[AT_SECT] = sect;
	r->at[AT_ENTRY] = entry;
}

/* Read ahead in the object for the members that name it (a name after its facts). */
static void name_ahead(struct rd *r, struct octx *oc)
{
	const unsigned char *save = r->p;
	int depth = r->depth;

	if (skip(r))
		goto out;
	for (;;) {
		const unsigned char *s, *e;
		char kb[16];
		const char *k;
		size_t n;
		int ret;

		if (peek(r) != ',')
			break;
		r->p++;
		if (peek(r) != '"')
			break;
		s = r->p + 1;
		e = plain_run(s, r->end);
		if (e < r->end && *e == '"') {
			k = (const char *)s;
			n = (size_t)(e - s);
			r->p = e + 1;
		} else if (!str(r, kb, sizeof(kb), &n)) {
			k = kb;
		} else {
			break;
		}
		if (peek(r) != ':')
			break;
		r->p++;
		if (peek(r) < 0)
			break;
		if (!oc->has_name && key_is(k, n, oc->kind == OBJ_NETDEV ? "name" : "device")) {
			ret = jvalue(r, &oc->namev, oc->name, sizeof(oc->name));
			oc->has_name = !ret;
		} else if (!oc->has_port && oc->kind == OBJ_RDMA_PORT && key_is(k, n, "port")) {
			ret = jvalue(r, &oc->portv, NULL, 0);
			oc->has_port = !ret;
		} else {
			ret = skip(r);
		}
		if (ret)
			break;
	}
out:
	r->p = save;
	r->depth = depth;
}

/* object_from_json()'s start: a reload replaces the object's facts, nothing lingers */
static void object_reset(struct object *o)
{
	for (int i = 0; i < F__COUNT; i++)
		if (fields[i].obj == o->kind)
			field_absent(o, i, ABS_NOT_COLLECTED, 0);
	for (int c = 0; c < CSET__COUNT; c++)
		cset_clear(&o->cs[c]);
}

/* The object, once its facts start (ahead: r->p at a member's value, the name may follow). */
static int object_make(struct rd *r, struct octx *oc, bool ahead)
{
	struct node_model *m = oc->m;
	const char *nm = oc->name;
	struct object *o;
	uint32_t port;

	if (oc->made)
		return 0;
	oc->made = true;
	if (ahead && (!oc->has_name || (oc->kind == OBJ_RDMA_PORT && !oc->has_port)))
		name_ahead(r, oc);
	set_at(r, S_NAME, 0);
	if (oc->kind == OBJ_NETDEV) {
		if (!oc->has_name || oc->namev.t != J_STRING || !oc->namev.n ||
		    oc->namev.n >= RW_NAME_MAX) {
			fail(r, oc->where, "name: expected a non-empty string");
			return 0;
		}
		set_at(r, S_DUPLICATE, 0);
		if (model_netdev(m, nm) && model_netdev(m, nm)->seen) {
			fail(r, oc->where, "duplicate netdev '%s'", nm);
			return 0;
		}
		o = model_add_netdev(m, nm);
	} else {
		if (!oc->has_name || oc->namev.t != J_STRING || !oc->namev.n ||
		    oc->namev.n >= RW_NAME_MAX || !oc->has_port || oc->portv.t != J_INTEGER ||
		    oc->portv.i < 0) {
			fail(r, oc->where, "expected a device name and a port number");
			return 0;
		}
		port = (uint32_t)oc->portv.i;
		set_at(r, S_DUPLICATE, 0);
		o = model_port(m, nm, port);
		if (o && o->seen) {
			fail(r, oc->where, "duplicate port %s/%d", nm, (int)oc->portv.i);
			return 0;
		}
		o = model_add_port(m, nm, port);
	}
	if (!o)
		return -ENOMEM;
	o->seen = true;
	object_reset(o);
	oc->o = o;
	return 0;
}

/* A member of the object's "fields". */
static int field_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct octx *oc = ctx;
	struct where w = { oc->where, "fields", key, klen };
	int id = lookup(r->k, oc->kind, key, klen);
	struct dest d = { NULL, id, &w };

	set_at(r, S_FIELDS, 0);
	if (id < 0) {
		failw(r, &w, "unknown %s field", obj_kind_name(oc->kind));
		return skip(r);
	}
	oc->in_fields[id / 64] |= 1ULL << (id % 64);
	if (oc->o && r->k->keep[id])
		d.o = oc->o;
	return typed_value(r, &d);
}

struct absent_ctx {
	bool reason, errno_;
	struct jv rv, ev;
	char rs[32];
};

static int absent_inner(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct absent_ctx *ac = ctx;

	if (key_is(key, klen, "reason")) {
		ac->reason = true;
		return jvalue(r, &ac->rv, ac->rs, sizeof(ac->rs));
	}
	if (key_is(key, klen, "errno")) {
		ac->errno_ = true;
		return jvalue(r, &ac->ev, NULL, 0);
	}
	return skip(r);
}

/*
 * A member of the object's "absent".  Entry j's own errors are at 2j + 1,
 * after "both present and absent" (2j), which object_end() judges once
 * "fields" has been read wherever it stands.
 */
static int absent_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct octx *oc = ctx;
	struct where w = { oc->where, "absent", key, klen };
	int id = lookup(r->k, oc->kind, key, klen), j = oc->n_absent++, reason = 0, ret;
	struct absent_ctx ac = { 0 };
	struct jv v;

	set_at(r, S_ABSENT, 2 * (uint32_t)j);
	if (id < 0) {
		failw(r, &w, "unknown %s field", obj_kind_name(oc->kind));
		return skip(r);
	}
	oc->in_absent[id / 64] |= 1ULL << (id % 64);
	oc->absent_at[id] = j + 1;
	if (*r->p == '{')
		ret = members(r, absent_inner, &ac);
	else
		ret = jvalue(r, &v, NULL, 0);
	if (ret)
		return ret;
	set_at(r, S_ABSENT, 2 * (uint32_t)j + 1);
	if (!ac.reason || ac.rv.t != J_STRING || ac.rv.n >= sizeof(ac.rs) ||
	    (reason = absent_reason_parse(ac.rs)) <= 0)
		failw(r, &w,
		      "expected {\"reason\": "
		      "\"unsupported|permission|error|not_collected|no_data\"}");
	else if (ac.errno_ && ac.ev.t != J_INTEGER)
		failw(r, &w, "errno must be an integer");
	else if (oc->o && r->k->keep[id])
		field_absent(oc->o, id, (enum absent_reason)reason, ac.errno_ ? (int)ac.ev.i : 0);
	return 0;
}

/*
 * One counter set, {"name": value, ...}: hundreds of names on an mlx5
 * netdev, most of a snapshot's bytes, so read in a loop of its own.
 */
static int counter_set(struct rd *r, struct octx *oc, int c, const struct where *w)
{
	struct counter_set *cs = oc->o ? &oc->o->cs[c] : NULL;
	/*
	 * Into a set that had no names (a fresh model), the keys are unique
	 * (jansson's rule, checked here): append them, instead of searching
	 * hundreds of names for each (quadratic for an mlx5 netdev).
	 */
	bool fresh = cs && !cs->n, keep = cs && !r->no_counters;
	char name[RW_CNAME_MAX];
	int ch, ret;

	if (cs && r->no_counters)
		cset_free(cs);
	if (r->depth >= MAX_DEPTH)
		return SYNTAX;
	r->depth++;
	if ((ret = keys_begin(r)))
		return ret;
	r->p++;
	ch = peek(r);
	while (ch != '}') {
		const char *k;
		size_t n;
		uint64_t u;
		struct jv v;
		bool ok;

		if ((ret = member_key(r, &k, &n)))
			return ret;
		if ((ret = u64_value(r, &v, &u, &ok)))
			return ret;
		if (!ok) {
			failw(r, w, "counter '%.*s': expected a non-negative integer", (int)n, k);
		} else if (n >= RW_CNAME_MAX) {
			failw(r, w, "counter name '%.*s' too long", (int)n, k);
		} else if (keep) {
			memcpy(name, k, n);
			name[n] = '\0';
			if ((fresh ? cset_append(cs, name, u) : cset_set(cs, name, u)) < 0)
				return -ENOMEM;
		}
		ch = peek(r);
		if (ch == '}')
			break;
		if (ch != ',')
			return SYNTAX;
		r->p++;
		ch = peek(r);
	}
	r->p++;
	r->depth--;
	return 0;
}

static int cset_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct octx *oc = ctx;
	struct where w = { oc->where, "counters", key, klen };
	int c;

	for (c = 0; c < CSET__COUNT; c++)
		if (key_is(key, klen, snapshot_cset_names[c]))
			break;
	set_at(r, S_COUNTERS, 0);
	if (c == CSET__COUNT) {
		failw(r, &w, "unknown counter set (ethtool, hw, port, cc)");
		return skip(r);
	}
	if (*r->p != '{') {
		failw(r, &w, "expected an object of counters");
		return skip(r);
	}
	return counter_set(r, oc, c, &w);
}

static int wire_entry(struct rd *r, void *ctx, size_t i)
{
	static const struct where w0 = { NULL, "wire", NULL, 0 };
	struct octx *oc = ctx;
	struct where w = w0;
	struct unpack u;
	char why[160];
	int dscp, ecn, c, dir, ret;

	w.base = oc->where;
	unpack_init(&u, "direction:s dscp:i ecn:i class:s packets:I bytes:I");
	if ((ret = unpack(r, &u, why, sizeof(why))))
		return ret;
	set_at(r, S_WIRE, 0);
	if (why[0]) {
		failw(r, &w, "entry %zu: %s", i, why);
		return 0;
	}
	for (c = 0; c < WIRE__CLASSES; c++)
		if (!strcmp(snapshot_wire_class_names[c], u.s[3]))
			break;
	dscp = (int)u.v[1].i;
	ecn = (int)u.v[2].i;
	dir = !strcmp(u.s[0], "egress") ? 1 : !strcmp(u.s[0], "ingress") ? 0 : -1;
	if (c == WIRE__CLASSES || u.v[3].n >= UNPACK_STR || dscp < 0 || dscp > 63 || ecn < 0 ||
	    ecn > 3 || dir < 0 || u.v[0].n >= UNPACK_STR || u.v[4].i < 0 || u.v[5].i < 0) {
		failw(r, &w, "entry %zu: value out of range", i);
		return 0;
	}
	if (oc->o) {
		oc->o->wire->packets[dir][dscp][ecn][c] = (uint64_t)u.v[4].i;
		oc->o->wire->bytes[dir][dscp][ecn][c] = (uint64_t)u.v[5].i;
	}
	return 0;
}

static int wire_value(struct rd *r, struct octx *oc)
{
	struct where w = { oc->where, "wire", NULL, 0 };
	struct object *o = oc->o;

	set_at(r, S_WIRE, 0);
	if (*r->p != '[') {
		failw(r, &w, "expected an array");
		return skip(r);
	}
	if (o && !o->wire && !(o->wire = calloc(1, sizeof(*o->wire))))
		return -ENOMEM;
	if (o)
		memset(o->wire, 0, sizeof(*o->wire));
	return elements(r, wire_entry, oc);
}

/* "fields", "absent" or "counters" (fn reads its members): each must be an object */
static int section(struct rd *r, struct octx *oc, member_fn *fn)
{
	int ret = object_make(r, oc, true);

	if (ret)
		return ret;
	if (*r->p == '{')
		return members(r, fn, oc);
	set_at(r, S_SHAPE, 0);
	fail(r, oc->where, "fields, absent and counters must be objects");
	return skip(r);
}

static int object_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct octx *oc = ctx;
	int ret;

	if (key_is(key, klen, "fields"))
		return section(r, oc, field_member);
	if (key_is(key, klen, "absent"))
		return section(r, oc, absent_member);
	if (key_is(key, klen, "counters"))
		return section(r, oc, cset_member);
	if (key_is(key, klen, "wire")) {
		ret = object_make(r, oc, true);
		return ret ? ret : wire_value(r, oc);
	}
	if (oc->kind == OBJ_NODE)
		return skip(r);
	if (key_is(key, klen, "ifindex")) {
		struct jv v;

		ret = jvalue(r, &v, NULL, 0);
		oc->ifindex = !ret && v.t == J_INTEGER ? (int)v.i : 0;
		return ret;
	}
	/* read ahead already when the facts came first */
	if (oc->made)
		return skip(r);
	if (key_is(key, klen, oc->kind == OBJ_NETDEV ? "name" : "device")) {
		oc->has_name = true;
		return jvalue(r, &oc->namev, oc->name, sizeof(oc->name));
	}
	if (oc->kind == OBJ_RDMA_PORT && key_is(key, klen, "port")) {
		oc->has_port = true;
		return jvalue(r, &oc->portv, NULL, 0);
	}
	return skip(r);
}

/* After the object's last member: its name judged if nothing made it, both present and absent. */
static int object_end(struct rd *r, struct octx *oc)
{
	int ret = object_make(r, oc, false), first = -1;

	if (ret)
		return ret;
	if (oc->o && oc->kind != OBJ_NODE)
		oc->o->ifindex = oc->ifindex;
	for (int id = 0; id < F__COUNT; id++)
		if (has_id(oc->in_fields, id) && has_id(oc->in_absent, id) &&
		    (first < 0 || oc->absent_at[id] < oc->absent_at[first]))
			first = id;
	if (first >= 0) {
		struct where w = { oc->where, "absent", fields[first].path,
				   strlen(fields[first].path) };

		set_at(r, S_ABSENT, 2 * (uint32_t)(oc->absent_at[first] - 1));
		failw(r, &w, "field is both present and absent");
	}
	return 0;
}

/* The node (a netdev or a port: element i of its list) at r->p, where names it. */
static int object(struct rd *r, struct node_model *m, enum obj_kind kind, const char *where)
{
	struct octx *oc = calloc(1, sizeof(*oc));
	int ret;

	if (!oc)
		return -ENOMEM;
	oc->m = m;
	oc->kind = kind;
	strlcpy0(oc->where, where, sizeof(oc->where));
	if (kind == OBJ_NODE) {
		oc->made = true;
		oc->o = &m->node;
		object_reset(oc->o);
	}
	ret = members(r, object_member, oc);
	if (!ret)
		ret = object_end(r, oc);
	free(oc);
	return ret;
}

/* ---- the snapshot ---- */

struct snap_ctx {
	struct node_model *m;
	const char *where;
	bool schema, version, host, ns, node, netdevs, ports;
	bool in_ports;		   /* the list being read */
	const unsigned char *time; /* the "time" member's value, judged at the end */
	int ncoll;
};

static int list_element(struct rd *r, void *ctx, size_t i)
{
	struct snap_ctx *sc = ctx;
	enum obj_kind kind = sc->in_ports ? OBJ_RDMA_PORT : OBJ_NETDEV;
	char w[160];

	snprintf(w, sizeof(w), "%s.%s[%zu]", sc->where, sc->in_ports ? "rdma_ports" : "netdevs", i);
	r->at[AT_PART] = sc->in_ports ? P_PORTS : P_NETDEVS;
	r->at[AT_OBJ] = (uint32_t)i;
	if (*r->p == '{')
		return object(r, sc->m, kind, w);
	set_at(r, S_NAME, 0);
	fail(r, w,
	     kind == OBJ_NETDEV ? "name: expected a non-empty string"
				: "expected a device name and a port number");
	return skip(r);
}

struct coll_ctx {
	struct collector_status *cs;
	bool failed;
};

static int coll_field(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct coll_ctx *cc = ctx;
	struct jv v;
	int ret;

	if (key_is(key, klen, "error"))
		return jvalue(r, &v, cc->cs->detail, sizeof(cc->cs->detail));
	if ((ret = jvalue(r, &v, NULL, 0)))
		return ret;
	if (key_is(key, klen, "enabled"))
		cc->cs->enabled = v.t == J_TRUE;
	else if (key_is(key, klen, "success"))
		cc->failed = v.t == J_FALSE;
	else if (key_is(key, klen, "duration_seconds") && (v.t == J_INTEGER || v.t == J_REAL))
		cc->cs->duration = jv_number(&v);
	return 0;
}

static int coll_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct snap_ctx *sc = ctx;
	struct coll_ctx cc;
	int ret;

	/* more than the model holds: the rest are left out */
	if (sc->ncoll >= RW_MAX_COLLECTORS)
		return skip(r);
	cc.cs = &sc->m->coll[sc->ncoll++];
	cc.failed = false;
	if (klen >= sizeof(cc.cs->name))
		klen = sizeof(cc.cs->name) - 1;
	memcpy(cc.cs->name, key, klen);
	cc.cs->name[klen] = '\0';
	ret = *r->p == '{' ? members(r, coll_field, &cc) : skip(r);
	cc.cs->ran = cc.cs->enabled;
	cc.cs->err = cc.failed && cc.cs->enabled ? -EIO : 0;
	return ret;
}

static int snap_list(struct rd *r, struct snap_ctx *sc, bool ports)
{
	enum obj_kind kind = ports ? OBJ_RDMA_PORT : OBJ_NETDEV;
	int ret;

	r->at[AT_PART] = P_LISTS;
	if (*r->p != '[') {
		fail(r, sc->where, "netdevs and rdma_ports must be arrays");
		return skip(r);
	}
	if (ports)
		sc->ports = true;
	else
		sc->netdevs = true;
	sc->in_ports = ports;
	model_begin(sc->m, kind);
	ret = elements(r, list_element, sc);
	model_sweep(sc->m, kind);
	return ret;
}

static int snap_member(struct rd *r, void *ctx, const char *key, size_t klen)
{
	struct snap_ctx *sc = ctx;
	struct node_model *m = sc->m;
	char s[sizeof(SNAPSHOT_SCHEMA) + 1];
	char w[160];
	struct jv v;
	int ret;

	memset(r->at + AT_PART, 0, sizeof(r->at) - sizeof(r->at[0]));
	if (key_is(key, klen, "node")) {
		sc->node = true;
		r->at[AT_PART] = P_NODE;
		snprintf(w, sizeof(w), "%s.node", sc->where);
		if (*r->p == '{')
			return object(r, m, OBJ_NODE, w);
		fail(r, sc->where, "node: expected an object");
		return skip(r);
	}
	if (key_is(key, klen, "netdevs") || key_is(key, klen, "rdma_ports"))
		return snap_list(r, sc, key[0] == 'r');
	if (key_is(key, klen, "collectors")) {
		r->at[AT_PART] = P_COLLECTORS;
		if (*r->p == '{')
			return members(r, coll_member, sc);
		fail(r, sc->where, "collectors: expected an object");
		return skip(r);
	}
	if (key_is(key, klen, "time")) {
		sc->time = r->p; /* judged at the end, unless time_unix_ns is there */
		return skip(r);
	}
	if (key_is(key, klen, "host")) {
		sc->host = true;
		r->at[AT_PART] = P_HOST;
		/* cut as strlcpy0() cuts it */
		if ((ret = jvalue(r, &v, *r->p == '"' ? m->host : NULL, sizeof(m->host))))
			return ret;
		if (v.t != J_STRING)
			fail(r, sc->where, "host: expected a string");
		return 0;
	}
	if (!key_is(key, klen, "schema") && !key_is(key, klen, "schema_version") &&
	    !key_is(key, klen, "time_unix_ns"))
		return skip(r); /* a member the reader does not read ("probe", the version) */
	if ((ret = jvalue(r, &v, s, sizeof(s))))
		return ret;
	if (key[0] == 't') {
		sc->ns = true;
		r->at[AT_PART] = P_NS;
		if (v.t != J_INTEGER)
			fail(r, sc->where, "time_unix_ns: expected an integer");
		else if (v.i < 0)
			fail(r, sc->where, "time_unix_ns: %" PRId64 " is before 1970", v.i);
		else
			m->time = ns_ts(v.i);
	} else if (klen == strlen("schema")) {
		sc->schema = true;
		r->at[AT_PART] = P_SCHEMA;
		if (v.t != J_STRING || v.n != strlen(SNAPSHOT_SCHEMA) || strcmp(s, SNAPSHOT_SCHEMA))
			fail(r, sc->where, "not a rocewatch snapshot (schema must be \"%s\")",
			     SNAPSHOT_SCHEMA);
	} else {
		sc->version = true;
		r->at[AT_PART] = P_VERSION;
		if (v.t != J_INTEGER || v.i < SNAPSHOT_VERSION_MIN || v.i > SNAPSHOT_VERSION)
			fail(r, sc->where,
			     "unsupported schema_version (this rocewatch reads %d to %d)",
			     SNAPSHOT_VERSION_MIN, SNAPSHOT_VERSION);
	}
	return 0;
}

/* What apply_one() checked after the members: those missing, the time, the lists' end. */
static void snap_end(struct rd *r, struct snap_ctx *sc)
{
	struct node_model *m = sc->m;

	memset(r->at + AT_PART, 0, sizeof(r->at) - sizeof(r->at[0]));
	r->at[AT_PART] = P_SCHEMA;
	if (!sc->schema)
		fail(r, sc->where, "not a rocewatch snapshot (schema must be \"%s\")",
		     SNAPSHOT_SCHEMA);
	r->at[AT_PART] = P_VERSION;
	if (!sc->version)
		fail(r, sc->where, "unsupported schema_version (this rocewatch reads %d to %d)",
		     SNAPSHOT_VERSION_MIN, SNAPSHOT_VERSION);
	r->at[AT_PART] = P_HOST;
	if (!sc->host)
		fail(r, sc->where, "host: expected a string");
	r->at[AT_PART] = P_TIME;
	if (!sc->ns && sc->time) {
		char t[512];
		struct jv v;
		int64_t ns;
		int tr;

		/* validated once already: it reads again */
		r->p = sc->time;
		if (jvalue(r, &v, t, sizeof(t)) || v.t != J_STRING) {
			fail(r, sc->where, "time: expected an RFC 3339 UTC time");
		} else if ((tr = parse_rfc3339(t, &ns)) == -ERANGE) {
			fail(r, sc->where,
			     "time: '%s' is outside 1970 to 2262 (nanoseconds since the epoch in "
			     "64 bits)",
			     t);
		} else if (tr) {
			fail(r, sc->where, "time: '%s' is not an RFC 3339 UTC time", t);
		} else {
			m->time = ns_ts(ns);
		}
	}
	r->at[AT_PART] = P_NODE;
	if (!sc->node)
		fail(r, sc->where, "node: expected an object");
	r->at[AT_PART] = P_LISTS;
	if (!sc->netdevs)
		fail(r, sc->where, "netdevs and rdma_ports must be arrays");
	if (!sc->ports) {
		model_begin(m, OBJ_RDMA_PORT);
		model_sweep(m, OBJ_RDMA_PORT);
	}
}

/* One snapshot, at r->p, into m (after model_init, or the model of the last one read). */
static int snapshot(struct rd *r, struct node_model *m, const char *where)
{
	struct snap_ctx sc = { .m = m, .where = where };
	const unsigned char *end;
	int ret;

	memset(r->at + AT_PART, 0, sizeof(r->at) - sizeof(r->at[0]));
	if (*r->p != '{') {
		fail(r, where, "expected a snapshot object");
		return skip(r);
	}
	memset(m->coll, 0, sizeof(m->coll));
	if ((ret = members(r, snap_member, &sc)))
		return ret;
	end = r->p;
	snap_end(r, &sc);
	r->p = end;
	if (!r->failed) {
		model_link_ports(m);
		/* a snapshot from before the driver-independent counters: derive them */
		vendor_fill_model(m, true);
	}
	return 0;
}

/* Where each snapshot of a sequence starts and ends (snapshot_open()). */
struct span {
	size_t off, len;
};

struct doc_ctx {
	struct node_model *m;
	struct span *spans;
	size_t n, cap;
};

static int doc_element(struct rd *r, void *ctx, size_t i)
{
	struct doc_ctx *dc = ctx;
	const unsigned char *start = r->p;
	char where[32];
	int ret;

	snprintf(where, sizeof(where), "$[%zu]", i);
	r->at[AT_SNAP] = (uint32_t)i;
	/* the earlier samples are validated too, in a model of their own; the last one stays */
	if (i) {
		model_free(dc->m);
		model_init(dc->m);
	}
	if ((ret = snapshot(r, dc->m, where)))
		return ret;
	dc->n = i + 1;
	if (!dc->spans)
		return 0;
	if (array_grow(&dc->spans, &dc->cap, i, sizeof(*dc->spans), 8))
		return -ENOMEM;
	dc->spans[i].off = (size_t)(start - r->start);
	dc->spans[i].len = (size_t)(r->p - start);
	return 0;
}

/* The document: one snapshot or a sequence of them, each read into dc->m in turn. */
static int document(struct rd *r, struct doc_ctx *dc)
{
	int c = peek(r), ret;

	if (c == '{') {
		ret = snapshot(r, dc->m, "$");
		if (!ret && dc->spans) {
			dc->spans[0].off = 0;
			dc->spans[0].len = (size_t)(r->end - r->start);
		}
		dc->n = 1;
	} else if (c == '[') {
		ret = elements(r, doc_element, dc);
		if (!ret && !dc->n) {
			memset(r->at, 0, sizeof(r->at));
			fail(r, "$", "empty snapshot sequence");
		}
	} else {
		ret = SYNTAX; /* jansson reads only an object or an array here */
	}
	if (!ret && peek(r) >= 0)
		ret = SYNTAX; /* trailing bytes */
	return ret;
}

static void rd_init(struct rd *r, const char *name, const char *buf, size_t len, char *err,
		    size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->p = r->start = (const unsigned char *)buf;
	r->end = r->p + len;
	r->file = name;
	r->err = err;
	r->errlen = errlen;
	r->k = keep_or_all(NULL);
	if (errlen)
		err[0] = '\0';
}

static void json_err(const json_error_t *je, const char *name, char *err, size_t errlen)
{
	if (je->line < 0)
		snprintf(err, errlen, "%s: %s", name, je->text);
	else
		snprintf(err, errlen, "%s:%d:%d: %s", name, je->line, je->column, je->text);
}

/*
 * The pass's end: 0, -EINVAL (err says why), -ENOMEM.  JSON that is not
 * JSON is worded by jansson, as it always was: its messages and places are
 * what users and tests know.
 */
static int rd_done(struct rd *r, int ret, unsigned jflags)
{
	json_error_t je;
	json_t *j;

	for (int i = 0; i < r->n_sets; i++)
		free(r->sets[i].slot);
	free(r->sets);
	free(r->open);
	while (r->owned) {
		struct owned *o = r->owned;

		r->owned = o->next;
		free(o);
	}
	if (ret == -ENOMEM) {
		snprintf(r->err, r->errlen, "%s: out of memory", r->file);
		return ret;
	}
	if (ret != SYNTAX)
		return r->failed ? -EINVAL : 0;
	j = json_loadb((const char *)r->start, (size_t)(r->end - r->start), jflags, &je);
	if (!j) {
		json_err(&je, r->file, r->err, r->errlen);
	} else {
		/* not to happen: the two disagree on what JSON is; say where this pass stopped */
		json_decref(j);
		snprintf(r->err, r->errlen, "%s: not JSON as rocewatch reads it, at byte %zu",
			 r->file, (size_t)(r->p - r->start));
	}
	return -EINVAL;
}

/* ---- the API ---- */

int snapshot_read_last_kept(const char *name, const char *buf, size_t len,
			    const struct snapshot_keep *k, struct node_model *m, char *err,
			    size_t errlen)
{
	struct doc_ctx dc = { .m = m };
	struct rd r;

	rd_init(&r, name, buf, len, err, errlen);
	r.k = keep_or_all(k);
	r.no_counters = true;
	return rd_done(&r, document(&r, &dc), JSON_REJECT_DUPLICATES);
}

int snapshot_read_last(const char *name, const char *buf, size_t len, unsigned flags,
		       struct node_model *m, char *err, size_t errlen)
{
	struct doc_ctx dc = { .m = m };
	struct rd r;

	rd_init(&r, name, buf, len, err, errlen);
	r.no_counters = flags & SNAPSHOT_NO_COUNTERS;
	return rd_done(&r, document(&r, &dc), JSON_REJECT_DUPLICATES);
}

struct snapshot_file {
	char *path;
	char *buf;
	size_t len, n;
	struct span *spans;
	bool sequence;
};

/* buf (malloc'd, taken) as the file name: every snapshot in it validated up front */
static int open_owned(const char *name, char *buf, size_t len, struct snapshot_file **out,
		      char *err, size_t errlen)
{
	struct snapshot_file *sf = calloc(1, sizeof(*sf));
	struct node_model tmp;
	struct doc_ctx dc = { .m = &tmp };
	struct rd r;
	int ret;

	if (!sf || !(sf->path = strdup(name)) || !(dc.spans = calloc(1, sizeof(*dc.spans)))) {
		snprintf(err, errlen, "%s: out of memory", name);
		free(buf);
		snapshot_close(sf);
		return -ENOMEM;
	}
	dc.cap = 1;
	sf->buf = buf;
	sf->len = len;
	/* a bad sample must not surface mid-replay */
	model_init(&tmp);
	rd_init(&r, name, buf, len, err, errlen);
	sf->sequence = peek(&r) == '[';
	ret = rd_done(&r, document(&r, &dc), JSON_REJECT_DUPLICATES);
	model_free(&tmp);
	sf->spans = dc.spans;
	sf->n = dc.n;
	if (ret) {
		snapshot_close(sf);
		return ret;
	}
	*out = sf;
	return 0;
}

int snapshot_open(const char *path, struct snapshot_file **out, char *err, size_t errlen)
{
	/*
	 * A cap read as it reads keeps /dev/zero or a 200 MB file from taking
	 * the memory of the host it checks; a directory is said to be one.
	 */
	char *buf = NULL, why[160];
	size_t len = 0;
	int r = read_file_max(path, RW_MAX_SNAPSHOT_BYTES, &buf, &len);

	if (r == -EISDIR) {
		snprintf(err, errlen,
			 "%s: is a directory, not a snapshot file (rocewatch snapshot -o FILE "
			 "writes one)",
			 path);
		return r;
	}
	if (r) {
		snprintf(
		    err, errlen, "%s: %s", path,
		    read_error_text(r, RW_MAX_SNAPSHOT_BYTES, "a snapshot file", why, sizeof(why)));
		return r;
	}
	return open_owned(path, buf, len, out, err, errlen);
}

int snapshot_open_buffer(const char *name, const char *buf, size_t len, struct snapshot_file **out,
			 char *err, size_t errlen)
{
	char *copy = malloc(len + 1);

	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	memcpy(copy, buf, len);
	return open_owned(name, copy, len, out, err, errlen);
}

size_t snapshot_count(const struct snapshot_file *sf)
{
	return sf->n;
}

int snapshot_apply(const struct snapshot_file *sf, size_t i, struct node_model *m, char *err,
		   size_t errlen)
{
	char where[32] = "$";
	struct rd r;

	if (i >= sf->n) {
		snprintf(err, errlen, "%s: no snapshot %zu", sf->path, i);
		return -EINVAL;
	}
	if (sf->sequence)
		snprintf(where, sizeof(where), "$[%zu]", i);
	rd_init(&r, sf->path, sf->buf + sf->spans[i].off, sf->spans[i].len, err, errlen);
	r.at[AT_SNAP] = (uint32_t)i;
	peek(&r);
	return rd_done(&r, snapshot(&r, m, where), JSON_REJECT_DUPLICATES | JSON_DECODE_ANY);
}

void snapshot_close(struct snapshot_file *sf)
{
	if (!sf)
		return;
	free(sf->spans);
	free(sf->buf);
	free(sf->path);
	free(sf);
}

/* ---- one field at a time (the recorder's configuration history) ---- */

int snapshot_value_parse(struct object *o, int id, const char *text, char *err, size_t errlen)
{
	struct where w = { fields[id].path, NULL, NULL, 0 };
	struct dest d = { o, id, &w };
	struct rd r;
	json_error_t je;
	json_t *j;
	int ret;

	rd_init(&r, "value", text, strlen(text), err, errlen);
	/* jansson read these without JSON_REJECT_DUPLICATES: a DSCP map's last key wins */
	r.allow_dups = true;
	ret = peek(&r) < 0 ? SYNTAX : typed_value(&r, &d);
	if (!ret && peek(&r) >= 0)
		ret = SYNTAX;
	if (ret != SYNTAX)
		return rd_done(&r, ret, 0);
	rd_done(&r, 0, 0);
	/* its own form of jansson's words: the field, no place */
	j = json_loads(text, JSON_DECODE_ANY, &je);
	if (j) {
		json_decref(j);
		snprintf(err, errlen, "%s: not JSON as rocewatch reads it", fields[id].path);
	} else {
		snprintf(err, errlen, "%s: %s", fields[id].path, je.text);
	}
	return -EINVAL;
}
