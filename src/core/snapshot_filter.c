// SPDX-License-Identifier: MIT
/*
 * The filter is a recursive-descent pass over the document, one byte at a
 * time, that validates all of it as jansson would (RFC 8259 syntax, strings
 * with their escapes and UTF-8, integers in 64 bits, reals that do not
 * overflow) and what it drops as apply_one() in snapshot.c would, and gives
 * up (-EAGAIN) at the first thing it does not accept.  It never decides an
 * error: the full reader, on the original bytes, does that.
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

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
	*cp = 0;
	if (end - p < 4)
		return DOUBT;
	for (int i = 0; i < 4; i++) {
		int v = hexval(p[i]);

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

/* ---- what is dropped, validated as apply_one() validates it ---- */

/* json_u64(): a non-negative integer, or a real from 2^63 (u64_json() writes those) */
static int u64_value(struct sf *sf)
{
	const unsigned char *p = sf->p, *d = p, *end = sf->end;
	struct num v;

	/* most counters: an integer of at most 18 digits (it fits), without a leading zero */
	while (digit(p, end))
		p++;
	if (p > d && p - d <= 18 && (*d != '0' || p - d == 1) &&
	    (p >= end || (*p != '.' && *p != 'e' && *p != 'E'))) {
		sf->p = p;
		return 0;
	}

	if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
		return DOUBT;
	if (number(sf, &v))
		return DOUBT;
	return (v.real ? v.d >= 0x1p63 : v.i >= 0) ? 0 : DOUBT;
}

static int int_value(struct sf *sf, int64_t lo, int64_t hi)
{
	struct num v;

	if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
		return DOUBT;
	if (number(sf, &v) || v.real || v.i < lo || v.i > hi)
		return DOUBT;
	return 0;
}

static int string_value(struct sf *sf, size_t max)
{
	size_t n;

	if (*sf->p != '"' || str(sf, NULL, 0, &n))
		return DOUBT;
	return n < max ? 0 : DOUBT;
}

struct set_ctx {
	int64_t n;
	size_t count;
};

static int set_element(struct sf *sf, void *ctx, size_t i)
{
	struct set_ctx *sc = ctx;

	(void)i;
	sc->count++;
	if (*sf->p == 'n') { /* a null element of a per-priority array */
		if (sc->n)
			return DOUBT;
		return literal(sf, "null");
	}
	return sc->n ? int_value(sf, 0, sc->n - 1) : u64_value(sf);
}

static int dscp_member(struct sf *sf, void *ctx, const char *key, size_t klen,
		       const unsigned char *kraw, const unsigned char *kend)
{
	uint64_t *seen = ctx;
	char k[24];
	int64_t dscp;

	(void)kraw, (void)kend;
	if (klen >= sizeof(k))
		return DOUBT;
	memcpy(k, key, klen);
	k[klen] = '\0';
	if (parse_i64(k, &dscp) || dscp < 0 || dscp >= RW_DSCP_COUNT)
		return DOUBT;
	/* "3" twice is jansson's error, "3" and "03" the reader's last-wins: either, not sure */
	if (*seen & 1ULL << dscp)
		return DOUBT;
	*seen |= 1ULL << dscp;
	return int_value(sf, 0, RW_PRIO_COUNT - 1);
}

/* The members of a json_unpack_ex(JSON_STRICT) entry: all strings but "index". */
struct entry_ctx {
	const char *const *keys; /* NULL-terminated */
	unsigned required, seen;
	bool pci;
};

static int entry_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			const unsigned char *kraw, const unsigned char *kend)
{
	struct entry_ctx *ec = ctx;
	char s[8];
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
		return int_value(sf, INT64_MIN, INT64_MAX);
	if (*sf->p != '"' || str(sf, s, sizeof(s), &n))
		return DOUBT;
	/* a PCI path's "path": PIX, PXB, PHB or SYS */
	if (ec->pci && i == 2 && !key_is(s, n, "PIX") && !key_is(s, n, "PXB") &&
	    !key_is(s, n, "PHB") && !key_is(s, n, "SYS"))
		return DOUBT;
	return 0;
}

static int entry_element(struct sf *sf, void *ctx, size_t i)
{
	static const char *const gid_keys[] = { "index", "gid", "type", "netdev", NULL };
	static const char *const pci_keys[] = { "gpu", "nic", "path", NULL };
	bool pci = *(bool *)ctx;
	struct entry_ctx ec = { pci ? pci_keys : gid_keys, pci ? 7u : 7u, 0, pci };
	int r;

	(void)i;
	if (*sf->p != '{')
		return DOUBT;
	r = members(sf, entry_member, &ec);
	if (r)
		return r;
	return (ec.seen & ec.required) == ec.required ? 0 : DOUBT;
}

/* A field's value as json_to_value() accepts it for its type. */
static int typed_value(struct sf *sf, enum value_type t)
{
	struct set_ctx sc = { 0, 0 };
	uint64_t seen = 0;
	struct num v;
	bool pci;
	int r;

	switch (t) {
	case VT_INT:
		return int_value(sf, INT64_MIN, INT64_MAX);
	case VT_BOOL:
		return *sf->p == 't' ? literal(sf, "true") : literal(sf, "false");
	case VT_FLOAT:
		if (*sf->p != '-' && (*sf->p < '0' || *sf->p > '9'))
			return DOUBT;
		return number(sf, &v);
	case VT_STR:
		return string_value(sf, RW_STR_MAX);
	case VT_PRIOSET:
	case VT_DSCPSET:
		sc.n = t == VT_PRIOSET ? RW_PRIO_COUNT : RW_DSCP_COUNT;
		return *sf->p == '[' ? elements(sf, set_element, &sc) : DOUBT;
	case VT_PRIO_ARRAY:
		if (*sf->p != '[')
			return DOUBT;
		r = elements(sf, set_element, &sc);
		return r ? r : sc.count == RW_PRIO_COUNT ? 0 : DOUBT;
	case VT_DSCP_MAP:
		return *sf->p == '{' ? members(sf, dscp_member, &seen) : DOUBT;
	case VT_GIDS:
	case VT_PCI_PAIRS:
		pci = t == VT_PCI_PAIRS;
		return *sf->p == '[' ? elements(sf, entry_element, &pci) : DOUBT;
	}
	return DOUBT;
}

/* {"reason": one of the absent reasons, "errno": an integer, "error": a string} */
static int absent_member(struct sf *sf, void *ctx, const char *key, size_t klen,
			 const unsigned char *kraw, const unsigned char *kend)
{
	unsigned *seen = ctx;
	char s[32];
	size_t n;

	(void)kraw, (void)kend;
	if (key_is(key, klen, "errno")) {
		if (*seen & 2u)
			return DOUBT;
		*seen |= 2u;
		return int_value(sf, INT64_MIN, INT64_MAX);
	}
	if (key_is(key, klen, "error")) {
		if (*seen & 4u)
			return DOUBT;
		*seen |= 4u;
		return *sf->p == '"' ? str(sf, NULL, 0, NULL) : DOUBT;
	}
	if (!key_is(key, klen, "reason") || *seen & 1u)
		return DOUBT;
	*seen |= 1u;
	if (*sf->p != '"' || str(sf, s, sizeof(s), &n) || n >= sizeof(s) ||
	    absent_reason_parse(s) <= 0)
		return DOUBT;
	return 0;
}

static int absent_value(struct sf *sf)
{
	unsigned seen = 0;
	int r;

	if (*sf->p != '{')
		return DOUBT;
	r = members(sf, absent_member, &seen);
	return r ? r : (seen & 1u) ? 0 : DOUBT;
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
		r = u64_value(sf);
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

	if (id < 0 || sf->k->keep[id]) {
		/* an unknown field is kept: the reader says it is unknown */
		emit_key(sf, lv, kraw, kend);
		return copy_value(sf);
	}
	if (d[id / 64] & 1ULL << (id % 64))
		return DOUBT; /* twice (jansson's error) */
	d[id / 64] |= 1ULL << (id % 64);
	return oc->absent ? absent_value(sf) : typed_value(sf, fields[id].type);
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

int snapshot_read_last_kept(const char *name, const char *buf, size_t len,
			    const struct snapshot_keep *k, struct node_model *m, char *err,
			    size_t errlen)
{
	struct strbuf sb = { 0 };
	int r = k ? snapshot_filter(k, buf, len, &sb) : DOUBT;

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
