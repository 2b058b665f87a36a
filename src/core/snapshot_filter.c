// SPDX-License-Identifier: MIT
/*
 * The pass is a recursive descent over the document that validates all of
 * it as jansson would (RFC 8259 syntax, strings with their escapes and
 * UTF-8, integers in 64 bits, reals that do not overflow, duplicate keys
 * where no jansson reads after it) and what it drops as apply_one() in
 * snapshot.c would, and gives up (-EAGAIN) at the first thing it does not
 * accept.  It never decides an error: the full reader, on the original
 * bytes, does that.  Two walks share it: the filter, which writes what it
 * keeps for jansson, and the direct reader, which sets it in the model
 * through the same field setters as json_to_value().
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_filter.h"
#include "util.h"
#include "vendors.h"

/*
 * Deeper than any snapshot (root array, snapshot, netdevs, netdev, fields,
 * gids, entry: 7) and far below jansson's 2048, so a depth bomb is the full
 * reader's to refuse, and the recursion here stays shallow.
 */
#define SF_MAX_DEPTH 64
/* Longer keys match no field path: kept, for the full reader to judge. */
#define SF_KEY_MAX 128
#define SF_SLOTS   1024

_Static_assert(F__COUNT < SF_SLOTS / 2, "field hash table too small");

struct snapshot_keep {
	bool keep[F__COUNT];
	int16_t slot[SF_SLOTS]; /* (kind, path) hash -> field id + 1; 0: free */
};

static uint32_t sf_hash(uint32_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

static uint32_t path_hash(enum obj_kind kind, const char *path, size_t n)
{
	return sf_hash(2166136261u ^ (uint32_t)kind, path, n);
}

/* field_lookup() without its linear search: the filter looks up every field of every object. */
static int lookup(const struct snapshot_keep *k, enum obj_kind kind, const char *path, size_t n)
{
	uint32_t h = path_hash(kind, path, n) & (SF_SLOTS - 1);

	for (; k->slot[h]; h = (h + 1) & (SF_SLOTS - 1)) {
		int id = k->slot[h] - 1;

		if (fields[id].obj == kind && !strncmp(fields[id].path, path, n) &&
		    !fields[id].path[n])
			return id;
	}
	return -1;
}

struct snapshot_keep *snapshot_keep_new(const bool keep[F__COUNT])
{
	struct snapshot_keep *k = calloc(1, sizeof(*k));
	static const enum field_id pfc[] = {
		F_NETDEV_PFC_RX_PAUSE,	  F_NETDEV_PFC_TX_PAUSE, F_NETDEV_PFC_SOURCE,
		F_NETDEV_PFC_INDICATIONS, F_NETDEV_PFC_REQUESTS,
	};
	bool any = false;

	if (!k)
		return NULL;
	for (int i = 0; i < F__COUNT; i++) {
		uint32_t h;

		k->keep[i] = !keep || keep[i];
		if (!fields[i].path)
			continue;
		h = path_hash(fields[i].obj, fields[i].path, strlen(fields[i].path)) &
		    (SF_SLOTS - 1);
		while (k->slot[h])
			h = (h + 1) & (SF_SLOTS - 1);
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

/* ---- the pass ---- */

#define DOUBT (-EAGAIN)

/* One counter name seen in the set being read (a duplicate is jansson's error). */
struct name_slot {
	uint32_t gen, hash;
	const unsigned char *s;
	uint32_t n;
};

struct sf {
	const unsigned char *p, *end;
	const struct snapshot_keep *k;
	struct strbuf *out;
	int depth;
	struct name_slot *names;
	uint32_t names_cap, names_n, gen;
};

/* Emission state of one object or array being copied. */
struct level {
	bool first;
};

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
static int skip_ws(struct sf *sf)
{
	const unsigned char *p = sf->p, *end = sf->end;

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
	sf->p = p;
	return p < end ? *p : -1;
}

/* The next byte that is not whitespace, -1 at the end; most often the very next one. */
static inline int peek(struct sf *sf)
{
	const unsigned char *p = sf->p;

	if (p < sf->end && !ws(*p))
		return *p;
	/* the space after a colon */
	if (sf->end - p > 1 && *p == ' ' && !ws(p[1])) {
		sf->p = p + 1;
		return p[1];
	}
	return skip_ws(sf);
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
		return DOUBT;
	for (int i = 0; i < 4; i++) {
		int v = rw_hex_digit(p[i]);

		if (v < 0)
			return DOUBT;
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

/*
 * The string at sf->p (its opening quote), validated as jansson's lexer
 * does.  Its decoded length in *n; its bytes, NUL-terminated and cut at
 * cap - 1, in buf when buf.  \u0000 is refused: jansson refuses it without
 * JSON_ALLOW_NUL, and a name with a NUL would not be the name it looks like.
 */
static int str(struct sf *sf, char *buf, size_t cap, size_t *n)
{
	const unsigned char *p = sf->p + 1, *end = sf->end;
	size_t len = 0;

	for (;;) {
		const unsigned char *s = p;
		uint32_t cp, lo;
		size_t l;

		p = plain_run(p, end);
		put(buf, cap, len, s, (size_t)(p - s));
		len += (size_t)(p - s);
		if (p >= end)
			return DOUBT;
		switch (str_class[*p]) {
		case 1:
			sf->p = p + 1;
			if (buf)
				buf[len < cap - 1 ? len : cap - 1] = '\0';
			if (n)
				*n = len;
			return 0;
		case 3:
			return DOUBT;
		case 4:
			l = utf8_seq(p, end);
			if (!l)
				return DOUBT;
			put(buf, cap, len, p, l);
			len += l;
			p += l;
			continue;
		default:
			break;
		}
		/* an escape */
		if (++p >= end)
			return DOUBT;
		switch (*p) {
		case '"':
		case '\\':
		case '/':
			put(buf, cap, len, p, 1);
			len++;
			p++;
			continue;
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't': {
			static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";

			put(buf, cap, len, &to[strchr(from, *p) - from], 1);
			len++;
			p++;
			continue;
		}
		case 'u':
			break;
		default:
			return DOUBT;
		}
		if (hex4(p + 1, end, &cp))
			return DOUBT;
		p += 5;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			/* a high surrogate: a low one must follow */
			if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) ||
			    lo < 0xDC00 || lo > 0xDFFF)
				return DOUBT;
			p += 6;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || !cp) {
			return DOUBT;
		}
		len += utf8_put(buf, cap, len, cp);
	}
}

struct num {
	bool real;
	int64_t i;
	double d;
};

static bool digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/*
 * A number, as jansson reads it: an integer when it has neither fraction nor
 * exponent (an error outside 64 bits), else a real (an error on overflow;
 * underflow is refused here too, being rare and worth no care).
 */
static int number(struct sf *sf, struct num *v)
{
	const unsigned char *s = sf->p, *p = s, *end = sf->end;
	bool neg = false, big = false;
	uint64_t u = 0;

	v->real = false;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (!digit(p, end))
		return DOUBT;
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
		v->real = true;
		if (!digit(++p, end))
			return DOUBT;
		while (digit(p, end))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		v->real = true;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!digit(p, end))
			return DOUBT;
		while (digit(p, end))
			p++;
	}
	sf->p = p;
	if (v->real) {
		char tmp[64];
		size_t n = (size_t)(p - s);

		if (n >= sizeof(tmp))
			return DOUBT;
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		errno = 0;
		v->d = strtod(tmp, NULL);
		return errno == ERANGE || !isfinite(v->d) ? DOUBT : 0;
	}
	if (big || u > (uint64_t)INT64_MAX + neg)
		return DOUBT;
	v->i = neg ? -(int64_t)(u - !!u) - !!u : (int64_t)u;
	return 0;
}

static int literal(struct sf *sf, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(sf->end - sf->p) < n || memcmp(sf->p, word, n))
		return DOUBT;
	sf->p += n;
	return 0;
}

static int value(struct sf *sf);

/*
 * The members of the object at sf->p: fn gets each key (decoded, klen bytes
 * not NUL-terminated, cut at SF_KEY_MAX - 1 when it had to be decoded; klen
 * its whole decoded length; [kraw, kend) as written) with sf->p at its
 * value, and consumes the value.
 */
typedef int member_fn(struct sf *sf, void *ctx, const char *key, size_t klen,
		      const unsigned char *kraw, const unsigned char *kend);

static int members(struct sf *sf, member_fn *fn, void *ctx)
{
	char key[SF_KEY_MAX];
	int c, r;

	if (++sf->depth > SF_MAX_DEPTH)
		return DOUBT;
	sf->p++;
	c = peek(sf);
	if (c == '}') {
		sf->p++;
		sf->depth--;
		return 0;
	}
	for (;;) {
		const unsigned char *kraw = sf->p, *kend;
		const char *k;
		size_t klen;

		if (c != '"')
			return DOUBT;
		/* most keys have nothing to decode: they are read where they are */
		kend = plain_run(kraw + 1, sf->end);
		if (kend < sf->end && *kend == '"') {
			k = (const char *)kraw + 1;
			klen = (size_t)(kend - kraw) - 1;
			sf->p = ++kend;
		} else {
			r = str(sf, key, sizeof(key), &klen);
			if (r)
				return r;
			k = key;
			kend = sf->p;
		}
		if (peek(sf) != ':')
			return DOUBT;
		sf->p++;
		if (peek(sf) < 0)
			return DOUBT;
		r = fn(sf, ctx, k, klen, kraw, kend);
		if (r)
			return r;
		c = peek(sf);
		if (c == '}')
			break;
		if (c != ',')
			return DOUBT;
		sf->p++;
		c = peek(sf);
	}
	sf->p++;
	sf->depth--;
	return 0;
}

/* The elements of the array at sf->p: fn(sf, ctx, index) consumes each. */
typedef int element_fn(struct sf *sf, void *ctx, size_t i);

static int elements(struct sf *sf, element_fn *fn, void *ctx)
{
	size_t i = 0;
	int c, r;

	if (++sf->depth > SF_MAX_DEPTH)
		return DOUBT;
	sf->p++;
	c = peek(sf);
	if (c == ']') {
		sf->p++;
		sf->depth--;
		return 0;
	}
	for (;;) {
		if (c < 0)
			return DOUBT;
		r = fn(sf, ctx, i++);
		if (r)
			return r;
		c = peek(sf);
		if (c == ']')
			break;
		if (c != ',')
			return DOUBT;
		sf->p++;
		c = peek(sf);
	}
	sf->p++;
	sf->depth--;
	return 0;
}

static int any_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		      const unsigned char *kraw, const unsigned char *kend)
{
	(void)ctx, (void)key, (void)klen, (void)kraw, (void)kend;
	return value(sf);
}

static int any_element(struct sf *sf, void *ctx, size_t i)
{
	(void)ctx, (void)i;
	return value(sf);
}

/* Any value, validated only: what is kept (jansson then finds duplicate keys in it). */
static int value(struct sf *sf)
{
	struct num v;

	switch (*sf->p) {
	case '"':
		return str(sf, NULL, 0, NULL);
	case '{':
		return members(sf, any_member, NULL);
	case '[':
		return elements(sf, any_element, NULL);
	case 't':
		return literal(sf, "true");
	case 'f':
		return literal(sf, "false");
	case 'n':
		return literal(sf, "null");
	default:
		return number(sf, &v);
	}
}

/* ---- copying ---- */

static void emit_sep(struct sf *sf, struct level *lv)
{
	if (!lv->first)
		sb_putc(sf->out, ',');
	lv->first = false;
}

static void emit_key(struct sf *sf, struct level *lv, const unsigned char *kraw,
		     const unsigned char *kend)
{
	emit_sep(sf, lv);
	sb_add(sf->out, (const char *)kraw, (size_t)(kend - kraw));
	sb_putc(sf->out, ':');
}

/*
 * The value at sf->p, validated and copied without its whitespace: jansson
 * reads a byte through a function call, and an indented DSCP map is half
 * spaces.
 */
static int copy_value(struct sf *sf)
{
	const unsigned char *p = sf->p, *end;
	int r = value(sf);

	if (r)
		return r;
	end = sf->p;
	while (p < end) {
		const unsigned char *s = p;

		while (p < end && !ws(*p)) {
			if (*p++ != '"')
				continue;
			/* a string, whole (it was validated: it ends) */
			while (*p != '"')
				p += *p == '\\' ? 2 : 1;
			p++;
		}
		sb_add(sf->out, (const char *)s, (size_t)(p - s));
		while (p < end && ws(*p))
			p++;
	}
	return 0;
}

static bool key_is(const char *key, size_t klen, const char *word)
{
	return klen == strlen(word) && !memcmp(key, word, klen);
}

/* ---- values as apply_one() validates them (and sets them, for the direct reader) ---- */

/*
 * Where a value read is stored (the direct reader): the field id of object
 * o; o NULL: only validated.
 */
struct dest {
	struct object *o;
	int id;
};

/* json_u64(): a non-negative integer, or a real from 2^63 (u64_json() writes those) */
static int u64_value(struct sf *sf, uint64_t *out)
{
	const unsigned char *p = sf->p, *d = p, *end = sf->end;
	struct num v;

	/* most counters: an integer of at most 18 digits (it fits), without a leading zero */
	while (digit(p, end))
		p++;
	if (p > d && p - d <= 18 && (*d != '0' || p - d == 1) &&
	    (p >= end || (*p != '.' && *p != 'e' && *p != 'E'))) {
		if (out) {
			uint64_t u = 0;

			for (; d < p; d++)
				u = u * 10 + (uint64_t)(*d - '0');
			*out = u;
		}
		sf->p = p;
		return 0;
	}
	if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
		return DOUBT;
	if (number(sf, &v))
		return DOUBT;
	if (!(v.real ? v.d >= 0x1p63 : v.i >= 0))
		return DOUBT;
	if (out)
		*out = !v.real ? (uint64_t)v.i : v.d >= 0x1p64 ? UINT64_MAX : (uint64_t)v.d;
	return 0;
}

static int int_value(struct sf *sf, int64_t lo, int64_t hi, int64_t *out)
{
	struct num v;

	if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
		return DOUBT;
	if (number(sf, &v) || v.real || v.i < lo || v.i > hi)
		return DOUBT;
	if (out)
		*out = v.i;
	return 0;
}

/* A string of fewer than max bytes decoded, into buf (max bytes) when buf. */
static int string_value(struct sf *sf, char *buf, size_t max)
{
	size_t n;

	if (*sf->p != '"' || str(sf, buf, max, &n))
		return DOUBT;
	return n < max ? 0 : DOUBT;
}

struct set_ctx {
	int64_t n; /* a set of 0..n-1; 0: a per-priority array of u64 or null */
	size_t count;
	uint64_t bits;
	struct dest *d;
};

static int set_element(struct sf *sf, void *ctx, size_t i)
{
	struct set_ctx *sc = ctx;
	int64_t v;
	uint64_t u;
	int r;

	sc->count++;
	if (*sf->p == 'n') { /* a null element of a per-priority array */
		if (sc->n)
			return DOUBT;
		return literal(sf, "null");
	}
	if (sc->n) {
		r = int_value(sf, 0, sc->n - 1, &v);
		sc->bits |= r ? 0 : 1ULL << v;
		return r;
	}
	r = u64_value(sf, &u);
	if (!r && sc->d->o && i < RW_PRIO_COUNT)
		field_set_prio(sc->d->o, sc->d->id, (int)i, u);
	return r;
}

struct dscp_ctx {
	uint64_t seen;
	int8_t map[RW_DSCP_COUNT];
};

static int dscp_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		       const unsigned char *kraw, const unsigned char *kend)
{
	struct dscp_ctx *dc = ctx;
	char k[24];
	int64_t dscp, prio;
	int r;

	(void)kraw, (void)kend;
	if (klen >= sizeof(k))
		return DOUBT;
	memcpy(k, key, klen);
	k[klen] = '\0';
	if (parse_i64(k, &dscp) || dscp < 0 || dscp >= RW_DSCP_COUNT)
		return DOUBT;
	/* "3" twice is jansson's error, "3" and "03" the reader's last-wins: either, not sure */
	if (dc->seen & 1ULL << dscp)
		return DOUBT;
	dc->seen |= 1ULL << dscp;
	r = int_value(sf, 0, RW_PRIO_COUNT - 1, &prio);
	if (!r)
		dc->map[dscp] = (int8_t)prio;
	return r;
}

/* The members of a json_unpack_ex(JSON_STRICT) entry: all strings but a GID's "index". */
struct entry_ctx {
	const char *const *keys; /* NULL-terminated */
	unsigned required, seen;
	bool pci;
	int64_t index;
	char s[3][RW_NAME_MAX]; /* gid, type, netdev; gpu, nic, path */
};

static int entry_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			const unsigned char *kraw, const unsigned char *kend)
{
	struct entry_ctx *ec = ctx;
	char *s;
	size_t n;
	int i;

	(void)kraw, (void)kend;
	for (i = 0; ec->keys[i]; i++)
		if (key_is(key, klen, ec->keys[i]))
			break;
	if (!ec->keys[i] || ec->seen & 1u << i)
		return DOUBT;
	ec->seen |= 1u << i;
	if (!ec->pci && i == 0) /* a GID's "index": json_unpack's I */
		return int_value(sf, INT64_MIN, INT64_MAX, &ec->index);
	s = ec->s[ec->pci ? i : i - 1];
	/* decoded as strlcpy0() would cut it */
	if (*sf->p != '"' || str(sf, s, RW_NAME_MAX, &n))
		return DOUBT;
	/* a PCI path's "path": PIX, PXB, PHB or SYS */
	if (ec->pci && i == 2 && strcmp(s, "PIX") && strcmp(s, "PXB") && strcmp(s, "PHB") &&
	    strcmp(s, "SYS"))
		return DOUBT;
	return 0;
}

static int entry_element(struct sf *sf, void *ctx, size_t i)
{
	static const char *const gid_keys[] = { "index", "gid", "type", "netdev", NULL };
	static const char *const pci_keys[] = { "gpu", "nic", "path", NULL };
	static const char *const paths[] = { "", "PIX", "PXB", "PHB", "SYS" };
	struct set_ctx *sc = ctx;
	bool pci = fields[sc->d->id].type == VT_PCI_PAIRS;
	struct entry_ctx ec = { pci ? pci_keys : gid_keys, 7u, 0, pci, 0, { "", "", "" } };
	struct object *o = sc->d->o;
	int r;

	(void)i;
	if (*sf->p != '{')
		return DOUBT;
	r = members(sf, entry_member, &ec);
	if (r)
		return r;
	if ((ec.seen & ec.required) != ec.required)
		return DOUBT;
	if (!o)
		return 0;
	if (pci) {
		struct pci_pairs *t = &o->pairs;
		size_t p;

		for (p = 1; strcmp(paths[p], ec.s[2]); p++)
			;
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			return -ENOMEM;
		strlcpy0(t->e[t->n].gpu, ec.s[0], sizeof(t->e[t->n].gpu));
		strlcpy0(t->e[t->n].nic, ec.s[1], sizeof(t->e[t->n].nic));
		t->e[t->n].path = (enum pci_path)p;
		t->n++;
	} else {
		struct gid_table *t = &o->gids;

		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			return -ENOMEM;
		t->e[t->n].index = (uint32_t)ec.index;
		strlcpy0(t->e[t->n].gid, ec.s[0], sizeof(t->e[t->n].gid));
		strlcpy0(t->e[t->n].type, ec.s[1], sizeof(t->e[t->n].type));
		strlcpy0(t->e[t->n].netdev, ec.s[2], sizeof(t->e[t->n].netdev));
		t->n++;
	}
	return 0;
}

/* A field's value as json_to_value() accepts it for its type (and sets it, as it does, in d). */
static int typed_value(struct sf *sf, enum value_type t, struct dest *d)
{
	struct set_ctx sc = { 0, 0, 0, d };
	struct dscp_ctx dc = { 0, { 0 } };
	struct object *o = d->o;
	char s[RW_STR_MAX];
	int64_t i;
	struct num v;
	int r;

	switch (t) {
	case VT_INT:
		r = int_value(sf, INT64_MIN, INT64_MAX, &i);
		if (!r && o)
			field_set_int(o, d->id, i);
		return r;
	case VT_BOOL:
		i = *sf->p == 't';
		r = i ? literal(sf, "true") : literal(sf, "false");
		if (!r && o)
			field_set_bool(o, d->id, i);
		return r;
	case VT_FLOAT:
		if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
			return DOUBT;
		r = number(sf, &v);
		if (!r && o)
			field_set_float(o, d->id, v.real ? v.d : (double)v.i);
		return r;
	case VT_STR:
		r = string_value(sf, o ? s : NULL, RW_STR_MAX);
		if (!r && o)
			field_set_str(o, d->id, s);
		return r;
	case VT_PRIOSET:
	case VT_DSCPSET:
		sc.n = t == VT_PRIOSET ? RW_PRIO_COUNT : RW_DSCP_COUNT;
		r = *sf->p == '[' ? elements(sf, set_element, &sc) : DOUBT;
		if (!r && o && t == VT_PRIOSET)
			field_set_set(o, d->id, (uint8_t)sc.bits);
		else if (!r && o)
			field_set_dset(o, d->id, sc.bits);
		return r;
	case VT_PRIO_ARRAY:
		if (*sf->p != '[')
			return DOUBT;
		r = elements(sf, set_element, &sc);
		if (r || sc.count != RW_PRIO_COUNT)
			return DOUBT;
		if (o && o->f[d->id].state != ABS_NONE) { /* all null: present but empty */
			o->f[d->id].state = ABS_NONE;
			o->f[d->id].mask = 0;
		}
		return 0;
	case VT_DSCP_MAP:
		memset(dc.map, -1, sizeof(dc.map));
		r = *sf->p == '{' ? members(sf, dscp_member, &dc) : DOUBT;
		if (!r && o)
			field_set_dscp_map(o, d->id, dc.map);
		return r;
	case VT_GIDS:
	case VT_PCI_PAIRS:
		if (*sf->p != '[')
			return DOUBT;
		if (o && t == VT_GIDS)
			o->gids.n = 0;
		else if (o)
			o->pairs.n = 0;
		r = elements(sf, entry_element, &sc);
		if (r || !o)
			return r;
		o->f[d->id].state = ABS_NONE;
		if (t == VT_GIDS)
			o->f[d->id].v.gids = &o->gids;
		else
			o->f[d->id].v.pairs = &o->pairs;
		return 0;
	}
	return DOUBT;
}

/* {"reason": one of the absent reasons, "errno": an integer, "error": a string} */
struct absent_ctx {
	unsigned seen;
	int reason;
	int64_t err;
};

static int absent_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			 const unsigned char *kraw, const unsigned char *kend)
{
	struct absent_ctx *ac = ctx;
	char s[32];
	size_t n;

	(void)kraw, (void)kend;
	if (key_is(key, klen, "errno")) {
		if (ac->seen & 2u)
			return DOUBT;
		ac->seen |= 2u;
		return int_value(sf, INT64_MIN, INT64_MAX, &ac->err);
	}
	if (key_is(key, klen, "error")) {
		if (ac->seen & 4u)
			return DOUBT;
		ac->seen |= 4u;
		return *sf->p == '"' ? str(sf, NULL, 0, NULL) : DOUBT;
	}
	if (!key_is(key, klen, "reason") || ac->seen & 1u)
		return DOUBT;
	ac->seen |= 1u;
	if (*sf->p != '"' || str(sf, s, sizeof(s), &n) || n >= sizeof(s) ||
	    (ac->reason = absent_reason_parse(s)) <= 0)
		return DOUBT;
	return 0;
}

/* An absent entry as object_from_json() accepts it (and marks d absent, as it does). */
static int absent_value(struct sf *sf, struct dest *d)
{
	struct absent_ctx ac = { 0, 0, 0 };
	int r;

	if (*sf->p != '{')
		return DOUBT;
	r = members(sf, absent_member, &ac);
	if (r || !(ac.seen & 1u))
		return r ? r : DOUBT;
	if (d->o)
		field_absent(d->o, d->id, (enum absent_reason)ac.reason, (int)ac.err);
	return 0;
}

/* Names differ at their ends (rx_prio3_pause, tx_prio3_pause): the first and last 8 bytes. */
static uint32_t name_hash(const unsigned char *s, size_t n)
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

/* A counter name not seen before in its set?  Names with escapes are not compared: doubt. */
static int name_new(struct sf *sf, const unsigned char *s, size_t n)
{
	uint32_t h = name_hash(s, n), mask;
	struct name_slot *e;

	if (sf->names_n * 2 >= sf->names_cap) {
		uint32_t cap = sf->names_cap ? sf->names_cap * 2 : 512;
		struct name_slot *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (uint32_t i = 0; i < sf->names_cap; i++) {
			struct name_slot *o = &sf->names[i];
			uint32_t j;

			if (o->gen != sf->gen)
				continue;
			for (j = o->hash & (cap - 1); t[j].gen; j = (j + 1) & (cap - 1))
				;
			t[j] = *o;
		}
		free(sf->names);
		sf->names = t;
		sf->names_cap = cap;
	}
	mask = sf->names_cap - 1;
	for (e = &sf->names[h & mask]; e->gen == sf->gen;
	     e = &sf->names[(e - sf->names + 1) & mask])
		if (e->hash == h && e->n == n && !memcmp(e->s, s, n))
			return DOUBT;
	e->gen = sf->gen;
	e->hash = h;
	e->s = s;
	e->n = (uint32_t)n;
	sf->names_n++;
	return 0;
}

/*
 * One counter set, {"name": value, ...}: hundreds of names on an mlx5
 * netdev, most of a snapshot's bytes, so read in a loop of its own.  A
 * name that is not plain ASCII as written is not sure (it would need
 * decoding to be compared).
 */
static int counter_set(struct sf *sf)
{
	int c, r;

	if (++sf->depth > SF_MAX_DEPTH)
		return DOUBT;
	/* a new generation: the table forgets the last set's names without being cleared */
	sf->gen++;
	sf->names_n = 0;
	sf->p++;
	c = peek(sf);
	if (c == '}') {
		sf->p++;
		sf->depth--;
		return 0;
	}
	for (;;) {
		const unsigned char *s = sf->p + 1, *e;

		if (c != '"')
			return DOUBT;
		e = plain_run(s, sf->end);
		/* short enough to keep (the reader refuses longer ones) */
		if (e >= sf->end || *e != '"' || (size_t)(e - s) >= RW_CNAME_MAX)
			return DOUBT;
		r = name_new(sf, s, (size_t)(e - s));
		if (r)
			return r;
		sf->p = e + 1;
		if (peek(sf) != ':')
			return DOUBT;
		sf->p++;
		if (peek(sf) < 0)
			return DOUBT;
		r = u64_value(sf, NULL);
		if (r)
			return r;
		c = peek(sf);
		if (c == '}')
			break;
		if (c != ',')
			return DOUBT;
		sf->p++;
		c = peek(sf);
	}
	sf->p++;
	sf->depth--;
	return 0;
}

static int cset_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		       const unsigned char *kraw, const unsigned char *kend)
{
	static const char *const names[] = { "ethtool", "hw", "port", "cc" };
	unsigned *seen = ctx;
	size_t c;

	(void)kraw, (void)kend;
	for (c = 0; c < ARRAY_SIZE(names); c++)
		if (key_is(key, klen, names[c]))
			break;
	if (c == ARRAY_SIZE(names) || *seen & 1u << c || *sf->p != '{')
		return DOUBT;
	*seen |= 1u << c;
	return counter_set(sf);
}

/* ---- the snapshot's structure ---- */

#define ID_WORDS ((F__COUNT + 63) / 64)

struct obj_ctx {
	struct level lv;
	enum obj_kind kind;
	bool counters;
	uint64_t dropped[2][ID_WORDS]; /* field ids dropped from "fields", from "absent" */
	bool absent;		       /* in "absent" */
};

static int field_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			const unsigned char *kraw, const unsigned char *kend)
{
	struct obj_ctx *oc = ctx;
	struct level *lv = &oc->lv;
	int id = klen < SF_KEY_MAX ? lookup(sf->k, oc->kind, key, klen) : -1;
	uint64_t *d = oc->dropped[oc->absent];
	struct dest dest = { NULL, 0 };

	if (id < 0 || sf->k->keep[id]) {
		/* an unknown field is kept: the reader says it is unknown */
		emit_key(sf, lv, kraw, kend);
		return copy_value(sf);
	}
	if (d[id / 64] & 1ULL << (id % 64))
		return DOUBT; /* twice (jansson's error) */
	d[id / 64] |= 1ULL << (id % 64);
	dest.id = id;
	return oc->absent ? absent_value(sf, &dest) : typed_value(sf, fields[id].type, &dest);
}

static int fields_object(struct sf *sf, struct obj_ctx *oc, bool absent)
{
	struct level saved = oc->lv;
	int r;

	sb_putc(sf->out, '{');
	oc->lv.first = true;
	oc->absent = absent;
	r = members(sf, field_member, oc);
	oc->lv = saved;
	sb_putc(sf->out, '}');
	return r;
}

static int object_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			 const unsigned char *kraw, const unsigned char *kend)
{
	struct obj_ctx *oc = ctx;
	unsigned sets = 0;

	if (key_is(key, klen, "counters")) {
		if (oc->counters || *sf->p != '{')
			return DOUBT;
		oc->counters = true;
		return members(sf, cset_member, &sets);
	}
	emit_key(sf, &oc->lv, kraw, kend);
	if (*sf->p == '{' && (key_is(key, klen, "fields") || key_is(key, klen, "absent")))
		return fields_object(sf, oc, key[0] == 'a');
	return copy_value(sf);
}

/* A node, netdev or rdma_port object. */
static int object(struct sf *sf, enum obj_kind kind)
{
	struct obj_ctx oc = { .lv = { true }, .kind = kind };
	int r;

	sb_putc(sf->out, '{');
	r = members(sf, object_member, &oc);
	sb_putc(sf->out, '}');
	/* dropped from both "fields" and "absent": the reader's "both present and absent" */
	for (int i = 0; !r && i < ID_WORDS; i++)
		if (oc.dropped[0][i] & oc.dropped[1][i])
			r = DOUBT;
	return r;
}

struct array_ctx {
	struct level lv;
	enum obj_kind kind;
};

static int object_element(struct sf *sf, void *ctx, size_t i)
{
	struct array_ctx *ac = ctx;

	(void)i;
	emit_sep(sf, &ac->lv);
	return *sf->p == '{' ? object(sf, ac->kind) : copy_value(sf);
}

static int snapshot_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			   const unsigned char *kraw, const unsigned char *kend)
{
	struct level *lv = ctx;
	struct array_ctx ac = { { true }, OBJ_NETDEV };
	int r;

	emit_key(sf, lv, kraw, kend);
	if (*sf->p == '{' && key_is(key, klen, "node"))
		return object(sf, OBJ_NODE);
	if (*sf->p == '[' && (key_is(key, klen, "netdevs") || key_is(key, klen, "rdma_ports"))) {
		ac.kind = key[0] == 'n' ? OBJ_NETDEV : OBJ_RDMA_PORT;
		sb_putc(sf->out, '[');
		r = elements(sf, object_element, &ac);
		sb_putc(sf->out, ']');
		return r;
	}
	return copy_value(sf);
}

static int snapshot(struct sf *sf)
{
	struct level lv = { true };
	int r;

	sb_putc(sf->out, '{');
	r = members(sf, snapshot_member, &lv);
	sb_putc(sf->out, '}');
	return r;
}

static int snapshot_element(struct sf *sf, void *ctx, size_t i)
{
	(void)i;
	emit_sep(sf, ctx);
	return *sf->p == '{' ? snapshot(sf) : copy_value(sf);
}

int snapshot_filter(const struct snapshot_keep *k, const char *buf, size_t len, struct strbuf *out)
{
	struct sf sf = { .p = (const unsigned char *)buf,
			 .end = (const unsigned char *)buf + len,
			 .k = k,
			 .out = out };
	struct level lv = { true };
	int c = peek(&sf), r;

	/* most of a node's bytes are dropped: a quarter is plenty to start with */
	if (sb_reserve(out, len / 4 + 64))
		return -ENOMEM;
	if (c == '{') {
		r = snapshot(&sf);
	} else if (c == '[') {
		sb_putc(out, '[');
		r = elements(&sf, snapshot_element, &lv);
		sb_putc(out, ']');
	} else {
		r = DOUBT; /* jansson reads only an object or an array here */
	}
	if (!r && peek(&sf) >= 0)
		r = DOUBT; /* trailing bytes */
	free(sf.names);
	if (!r && out->oom)
		r = -ENOMEM;
	return r;
}

/* ---- the direct reader: one snapshot straight into the model ---- */

/*
 * The member names of one object, to find a duplicate (jansson's error).
 * Names that needed decoding, and objects of more than 32 members, are not
 * compared: not sure.
 */
struct keyset {
	const unsigned char *k[32];
	size_t n[32];
	int count;
};

static int keyset_add(struct keyset *ks, size_t klen, const unsigned char *kraw,
		      const unsigned char *kend)
{
	if (klen != (size_t)(kend - kraw) - 2 || ks->count == 32)
		return DOUBT;
	for (int i = 0; i < ks->count; i++)
		if (ks->n[i] == klen && !memcmp(ks->k[i], kraw + 1, klen))
			return DOUBT;
	ks->k[ks->count] = kraw + 1;
	ks->n[ks->count++] = klen;
	return 0;
}

static int strict_value(struct sf *sf);

static int strict_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			 const unsigned char *kraw, const unsigned char *kend)
{
	int r = keyset_add(ctx, klen, kraw, kend);

	(void)key;
	return r ? r : strict_value(sf);
}

static int strict_element(struct sf *sf, void *ctx, size_t i)
{
	(void)ctx, (void)i;
	return strict_value(sf);
}

/*
 * Any value, validated as jansson validates it, duplicate keys included: a
 * member the reader does not read is not parsed again by anyone.
 */
static int strict_value(struct sf *sf)
{
	struct keyset ks;

	if (*sf->p == '[')
		return elements(sf, strict_element, NULL);
	if (*sf->p != '{')
		return value(sf);
	ks.count = 0;
	return members(sf, strict_member, &ks);
}

/* A node, netdev or port being read, as object_in() and object_from_json() fill it. */
struct bobj {
	struct keyset ks;
	enum obj_kind kind;
	struct node_model *m;
	struct object *o; /* a netdev or port: NULL until its name is known */
	char name[RW_NAME_MAX];
	bool named, has_port, absent;
	int64_t port, ifindex;
	uint64_t got[2][ID_WORDS]; /* field ids in "fields", in "absent" */
};

/* The object, made when its name is known and its facts start. */
static int bobj_make(struct bobj *b)
{
	struct object *o;

	if (b->o)
		return 0;
	if (!b->named || (b->kind == OBJ_RDMA_PORT && !b->has_port))
		return DOUBT; /* the reader's error, or a name after the facts: not sure */
	if (b->kind == OBJ_NETDEV) {
		o = model_netdev(b->m, b->name);
		if (o && o->seen)
			return DOUBT; /* a duplicate */
		o = model_add_netdev(b->m, b->name);
	} else {
		o = model_port(b->m, b->name, (uint32_t)b->port);
		if (o && o->seen)
			return DOUBT;
		o = model_add_port(b->m, b->name, (uint32_t)b->port);
	}
	if (!o)
		return -ENOMEM;
	o->seen = true;
	b->o = o;
	/* object_from_json(): a reload replaces the object's facts */
	for (int i = 0; i < F__COUNT; i++)
		if (fields[i].obj == o->kind)
			field_absent(o, i, ABS_NOT_COLLECTED, 0);
	for (int c = 0; c < CSET__COUNT; c++)
		cset_clear(&o->cs[c]);
	return 0;
}

static int bfield_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			 const unsigned char *kraw, const unsigned char *kend)
{
	struct bobj *b = ctx;
	int id = klen < SF_KEY_MAX ? lookup(sf->k, b->kind, key, klen) : -1;
	uint64_t *got = b->got[b->absent];
	struct dest d;

	(void)kraw, (void)kend;
	/* an unknown field, or one twice: the reader's error */
	if (id < 0 || got[id / 64] & 1ULL << (id % 64))
		return DOUBT;
	got[id / 64] |= 1ULL << (id % 64);
	d.o = sf->k->keep[id] ? b->o : NULL;
	d.id = id;
	return b->absent ? absent_value(sf, &d) : typed_value(sf, fields[id].type, &d);
}

static int bobj_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		       const unsigned char *kraw, const unsigned char *kend)
{
	struct bobj *b = ctx;
	unsigned sets = 0;
	struct num v;
	size_t n;
	int r = keyset_add(&b->ks, klen, kraw, kend);

	if (r)
		return r;
	if (b->kind != OBJ_NODE && key_is(key, klen, b->kind == OBJ_NETDEV ? "name" : "device")) {
		if (b->o || *sf->p != '"' || str(sf, b->name, sizeof(b->name), &n) || !n ||
		    n >= RW_NAME_MAX)
			return DOUBT;
		b->named = true;
		return 0;
	}
	if (b->kind == OBJ_RDMA_PORT && key_is(key, klen, "port")) {
		if (b->o || int_value(sf, 0, INT64_MAX, &b->port))
			return DOUBT;
		b->has_port = true;
		return 0;
	}
	if (b->kind != OBJ_NODE && key_is(key, klen, "ifindex")) {
		/* object_in(): an integer, else 0 */
		if ((*sf->p == '-' || (*sf->p >= '0' && *sf->p <= '9'))) {
			if (number(sf, &v))
				return DOUBT;
			b->ifindex = v.real ? 0 : v.i;
			return 0;
		}
		return strict_value(sf);
	}
	if (key_is(key, klen, "fields") || key_is(key, klen, "absent")) {
		if (*sf->p != '{')
			return DOUBT;
		r = bobj_make(b);
		if (r)
			return r;
		b->absent = key[0] == 'a';
		return members(sf, bfield_member, b);
	}
	if (key_is(key, klen, "counters")) {
		if (*sf->p != '{')
			return DOUBT;
		r = bobj_make(b);
		return r ? r : members(sf, cset_member, &sets);
	}
	if (key_is(key, klen, "wire"))
		return DOUBT;	 /* the wire view (BPF) is rare: the reader reads it */
	return strict_value(sf); /* a member the reader does not read */
}

static int bobject(struct sf *sf, enum obj_kind kind, struct node_model *m)
{
	struct bobj *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->kind = kind;
	b->m = m;
	if (kind == OBJ_NODE) {
		b->o = &m->node;
		for (int i = 0; i < F__COUNT; i++)
			if (fields[i].obj == OBJ_NODE)
				field_absent(b->o, i, ABS_NOT_COLLECTED, 0);
		for (int c = 0; c < CSET__COUNT; c++)
			cset_clear(&b->o->cs[c]);
	}
	r = members(sf, bobj_member, b);
	if (!r)
		r = bobj_make(b);
	if (!r && kind != OBJ_NODE)
		b->o->ifindex = (int)b->ifindex;
	/* both present and absent: the reader's error */
	for (int i = 0; !r && i < ID_WORDS; i++)
		if (b->got[0][i] & b->got[1][i])
			r = DOUBT;
	free(b);
	return r;
}

struct bsnap {
	struct keyset ks;
	struct node_model *m;
	bool schema, version, host, ns, node, netdevs, ports;
	int64_t time_ns;
	const unsigned char *time; /* the "time" member's value */
	int ncoll;
};

static int bobject_element(struct sf *sf, void *ctx, size_t i)
{
	struct bsnap *bs = ctx;

	(void)i;
	if (*sf->p != '{')
		return DOUBT;
	return bobject(sf, bs->ports ? OBJ_RDMA_PORT : OBJ_NETDEV, bs->m);
}

/* apply_one()'s reading of one collector's outcome. */
struct coll_ctx {
	struct collector_status cs;
	unsigned seen;
};

static int coll_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		       const unsigned char *kraw, const unsigned char *kend)
{
	static const char *const keys[] = { "enabled", "success", "duration_seconds", "error" };
	struct coll_ctx *cc = ctx;
	struct collector_status *cs = &cc->cs;
	struct num v;
	size_t i;
	int r;

	(void)kraw, (void)kend;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (key_is(key, klen, keys[i]))
			break;
	/* a member it does not read, or one twice: not sure */
	if (i == ARRAY_SIZE(keys) || cc->seen & 1u << i)
		return DOUBT;
	cc->seen |= 1u << i;
	if (i < 2) {
		bool t = *sf->p == 't', f = *sf->p == 'f';

		r = t ? literal(sf, "true") : f ? literal(sf, "false") : strict_value(sf);
		if (!i)
			cs->enabled = t; /* json_is_true() */
		else
			cs->err = f; /* json_is_false(), judged with enabled below */
		return r;
	}
	if (i == 2) {
		if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
			return strict_value(sf); /* not a number: 0 */
		r = number(sf, &v);
		cs->duration = v.real ? v.d : (double)v.i;
		return r;
	}
	if (*sf->p != '"')
		return strict_value(sf); /* not a string: no detail */
	return str(sf, cs->detail, sizeof(cs->detail), NULL);
}

static int bcoll_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			const unsigned char *kraw, const unsigned char *kend)
{
	struct bsnap *bs = ctx;
	struct coll_ctx cc;
	int r;

	/* names as written (no escape), shorter than the model's, at most its count, none twice */
	if (klen != (size_t)(kend - kraw) - 2 || klen >= sizeof(cc.cs.name) || *sf->p != '{' ||
	    bs->ncoll >= RW_MAX_COLLECTORS)
		return DOUBT;
	for (int i = 0; i < bs->ncoll; i++)
		if (!strncmp(bs->m->coll[i].name, key, klen) && !bs->m->coll[i].name[klen])
			return DOUBT;
	memset(&cc, 0, sizeof(cc));
	r = members(sf, coll_member, &cc);
	if (r)
		return r;
	memcpy(cc.cs.name, key, klen);
	cc.cs.name[klen] = '\0';
	cc.cs.ran = cc.cs.enabled;
	cc.cs.err = cc.cs.err && cc.cs.enabled ? -EIO : 0;
	bs->m->coll[bs->ncoll++] = cc.cs;
	return 0;
}

static int bsnap_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			const unsigned char *kraw, const unsigned char *kend)
{
	struct bsnap *bs = ctx;
	struct node_model *m = bs->m;
	char s[sizeof(SNAPSHOT_SCHEMA) + 1];
	int64_t v;
	size_t n;
	int r = keyset_add(&bs->ks, klen, kraw, kend);

	if (r)
		return r;
	if (key_is(key, klen, "schema")) {
		if (string_value(sf, s, sizeof(s)) || strcmp(s, SNAPSHOT_SCHEMA))
			return DOUBT;
		bs->schema = true;
		return 0;
	}
	if (key_is(key, klen, "schema_version")) {
		if (int_value(sf, SNAPSHOT_VERSION_MIN, SNAPSHOT_VERSION, &v))
			return DOUBT;
		bs->version = true;
		return 0;
	}
	if (key_is(key, klen, "host")) {
		/* cut as strlcpy0() cuts it */
		if (*sf->p != '"' || str(sf, m->host, sizeof(m->host), &n))
			return DOUBT;
		bs->host = true;
		return 0;
	}
	if (key_is(key, klen, "time_unix_ns")) {
		if (int_value(sf, 0, INT64_MAX, &bs->time_ns))
			return DOUBT;
		bs->ns = true;
		return 0;
	}
	if (key_is(key, klen, "time")) {
		bs->time = sf->p; /* read at the end, unless time_unix_ns is there */
		return strict_value(sf);
	}
	if (key_is(key, klen, "collectors"))
		return *sf->p == '{' ? members(sf, bcoll_member, bs) : DOUBT;
	if (key_is(key, klen, "node")) {
		bs->node = true;
		return *sf->p == '{' ? bobject(sf, OBJ_NODE, m) : DOUBT;
	}
	if (key_is(key, klen, "netdevs") || key_is(key, klen, "rdma_ports")) {
		enum obj_kind kind = key[0] == 'n' ? OBJ_NETDEV : OBJ_RDMA_PORT;

		/* netdevs, then ports, as the reader takes them */
		if (*sf->p != '[' || (kind == OBJ_RDMA_PORT && !bs->netdevs))
			return DOUBT;
		bs->netdevs = true;
		bs->ports = kind == OBJ_RDMA_PORT;
		model_begin(m, kind);
		r = elements(sf, bobject_element, bs);
		model_sweep(m, kind);
		return r;
	}
	return strict_value(sf); /* a member the reader does not read ("probe", the version) */
}

int snapshot_read_direct(const struct snapshot_keep *k, const char *buf, size_t len,
			 struct node_model *m)
{
	struct sf sf = { .p = (const unsigned char *)buf,
			 .end = (const unsigned char *)buf + len,
			 .k = k };
	struct bsnap *bs = calloc(1, sizeof(*bs));
	int r;

	if (!bs)
		return -ENOMEM;
	bs->m = m;
	memset(m->coll, 0, sizeof(m->coll));
	/* one snapshot; a sequence (rare outside replay) goes through the filter */
	r = peek(&sf) == '{' ? members(&sf, bsnap_member, bs) : DOUBT;
	if (!r && peek(&sf) >= 0)
		r = DOUBT; /* trailing bytes */
	if (!r && (!bs->schema || !bs->version || !bs->host || !bs->node || !bs->netdevs))
		r = DOUBT;
	if (!r && bs->ns) {
		m->time = ns_ts(bs->time_ns);
	} else if (!r && bs->time) {
		char t[64];
		int64_t ns;

		sf.p = bs->time;
		if (string_value(&sf, t, sizeof(t)) || parse_rfc3339(t, &ns))
			r = DOUBT;
		else
			m->time = ns_ts(ns);
	}
	if (!r && !bs->ports) {
		model_begin(m, OBJ_RDMA_PORT);
		model_sweep(m, OBJ_RDMA_PORT);
	}
	if (!r) {
		model_link_ports(m);
		/* a snapshot from before the driver-independent counters: derive them */
		vendor_fill_model(m, true);
	}
	free(sf.names);
	free(bs);
	return r;
}

int snapshot_read_last_kept(const char *name, const char *buf, size_t len,
			    const struct snapshot_keep *k, struct node_model *m, char *err,
			    size_t errlen)
{
	struct strbuf sb = { 0 };
	int r;

	if (k) {
		r = snapshot_read_direct(k, buf, len, m);
		if (!r)
			return 0;
		/* not sure: through jansson, with what the model got so far forgotten */
		model_free(m);
		model_init(m);
	}
	r = k ? snapshot_filter(k, buf, len, &sb) : DOUBT;
	if (!r) {
		r = snapshot_read_last(name, sb.buf, sb.len, SNAPSHOT_NO_COUNTERS, m, err, errlen);
		if (r) {
			/* the full reader says what is wrong, in its own words */
			model_free(m);
			model_init(m);
		}
	}
	sb_free(&sb);
	if (r)
		r = snapshot_read_last(name, buf, len, SNAPSHOT_NO_COUNTERS, m, err, errlen);
	return r;
}
