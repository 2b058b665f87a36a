// SPDX-License-Identifier: MIT
/* A node's slice of a fleet probe plan, and its results, as they travel (probe_slice.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "probe_slice.h"
#include "util.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* two base64 digits for every 12 bits: half the lookups, a slice is hundreds of KB */
static char b64_pair[4096][2];
/* 0-63 for a base64 digit, 64 for '=', 255 for anything else */
static uint8_t b64_tab[256];
static pthread_once_t b64_once = PTHREAD_ONCE_INIT;

static void b64_init(void)
{
	for (int v = 0; v < 4096; v++) {
		b64_pair[v][0] = b64[v >> 6];
		b64_pair[v][1] = b64[v & 63];
	}
	memset(b64_tab, 255, sizeof(b64_tab));
	for (int i = 0; i < 64; i++)
		b64_tab[(unsigned char)b64[i]] = (uint8_t)i;
	b64_tab['='] = 64;
}

static void b64_encode(struct strbuf *sb, const uint8_t *p, size_t n)
{
	size_t out = (n + 2) / 3 * 4, i = 0;
	char *w;

	if (sb_reserve(sb, out + 1))
		return;
	pthread_once(&b64_once, b64_init);
	w = sb->buf + sb->len;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		memcpy(w, b64_pair[v >> 12], 2);
		memcpy(w + 2, b64_pair[v & 4095], 2);
		w += 4;
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		*w++ = b64[v >> 18 & 63];
		*w++ = b64[v >> 12 & 63];
		*w++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*w++ = '=';
	}
	sb->len += out;
	sb->buf[sb->len] = 0;
}

/* Exactly want bytes from s (padded base64, no white space): 0 or -EBADMSG. */
static int b64_decode(const char *s, size_t len, uint8_t *out, size_t want)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, full;

	pthread_once(&b64_once, b64_init);
	if (len % 4 || len / 4 * 3 < want || len / 4 * 3 >= want + 3)
		return -EBADMSG;
	/* every quad but the last has no padding: the fast loop */
	full = len ? len - 4 : 0;
	for (size_t i = 0; i < full; i += 4) {
		uint8_t a = b64_tab[u[i]], b = b64_tab[u[i + 1]], c = b64_tab[u[i + 2]],
			d = b64_tab[u[i + 3]];

		if ((a | b | c | d) & 0xc0)
			return -EBADMSG;
		out[o] = (uint8_t)(a << 2 | b >> 4);
		out[o + 1] = (uint8_t)(b << 4 | c >> 2);
		out[o + 2] = (uint8_t)(c << 6 | d);
		o += 3;
	}
	if (len) {
		uint8_t v[4];

		for (int k = 0; k < 4; k++)
			v[k] = b64_tab[u[full + k]];
		/* padding only at the end: "xx==", "xxx=" */
		if (v[0] > 63 || v[1] > 63 || v[2] == 255 || v[3] == 255 ||
		    (v[2] == 64 && v[3] != 64))
			return -EBADMSG;
		for (int k = 2; k < 4; k++)
			if (v[k] == 64)
				v[k] = 0;
		uint8_t last[3] = { (uint8_t)(v[0] << 2 | v[1] >> 4),
				    (uint8_t)(v[1] << 4 | v[2] >> 2), (uint8_t)(v[2] << 6 | v[3]) };

		for (int k = 0; k < 3 && o < want; k++)
			out[o++] = last[k];
	}
	return o == want ? 0 : -EBADMSG;
}

/* The header line and the data line after it (its newline off): 0 or -EBADMSG. */
static int split_body(const char *body, size_t len, size_t *hlen, const char **data, size_t *dlen)
{
	const char *nl = memchr(body, '\n', len);

	if (!nl)
		return -EBADMSG;
	*hlen = (size_t)(nl - body);
	*data = nl + 1;
	*dlen = len - *hlen - 1;
	if (*dlen && (*data)[*dlen - 1] == '\n')
		(*dlen)--;
	return 0;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			sb_putc(sb, '\\');
			sb_putc(sb, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			sb_printf(sb, "\\u%04x", c);
		} else {
			sb_putc(sb, (char)c);
		}
	}
	sb_putc(sb, '"');
}

void probe_plan_id_text(uint64_t id, char buf[17])
{
	snprintf(buf, 17, "%016" PRIx64, id);
}

int probe_plan_id_parse(const char *s, uint64_t *id)
{
	uint64_t v = 0;

	if (!s || strlen(s) != 16)
		return -EINVAL;
	for (const char *c = s; *c; c++) {
		int d = *c >= '0' && *c <= '9'	 ? *c - '0'
			: *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
						 : -1;

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*id = v;
	return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int probe_slice_encode(struct strbuf *out, const struct probe_slice *s)
{
	char id[17];
	uint8_t *raw = malloc(s->n ? s->n * PROBE_SLICE_ENTRY_LEN : 1);

	if (!raw)
		return -ENOMEM;
	for (size_t k = 0; k < s->n; k++) {
		const struct probe_slice_entry *e = &s->e[k];
		uint8_t *p = raw + k * PROBE_SLICE_ENTRY_LEN;

		put_u32(p, e->slot);
		p[4] = (uint8_t)(e->mtu >> 8);
		p[5] = (uint8_t)e->mtu;
		p[6] = e->port;
		p[7] = e->labels;
		put_u32(p + 8, e->qpn & 0xffffff);
		p[8] = e->kind;
		memcpy(p + 12, e->gid, 16);
	}
	probe_plan_id_text(s->plan, id);
	sb_printf(out, "{\"version\":%d,\"plan\":\"%s\",\"session\":%" PRIu32 ",\"node\":",
		  PROBE_SLICE_VERSION, id, s->session);
	json_str(out, s->node);
	sb_printf(out,
		  ",\"start_ns\":%" PRId64 ",\"slot_ns\":%" PRId64 ",\"probe_ns\":%" PRId64
		  ",\"wait_ns\":%" PRId64 ",\"slots\":%" PRIu32 ",\"repeats\":%u,\"paths\":%u,"
		  "\"dscp\":%u,\"ports\":[",
		  s->start_ns, s->slot_ns, s->probe_ns, s->wait_ns, s->n_slots, s->repeats,
		  s->paths, s->dscp);
	for (size_t k = 0; k < s->n_ports; k++) {
		sb_puts(out, k ? ",{\"device\":" : "{\"device\":");
		json_str(out, s->ports[k].device);
		sb_printf(out, ",\"port\":%u,\"gid\":", s->ports[k].port);
		json_str(out, s->ports[k].gid);
		sb_putc(out, '}');
	}
	sb_printf(out, "],\"entries\":%zu}\n", s->n);
	b64_encode(out, raw, s->n * PROBE_SLICE_ENTRY_LEN);
	sb_putc(out, '\n');
	free(raw);
	return out->oom ? -ENOMEM : 0;
}

void probe_slice_free(struct probe_slice *s)
{
	if (!s)
		return;
	free(s->ports);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

/* jansson quotes the input near an error: keep a hostile body's bytes out of our line */
static void clean_err(char *err)
{
	for (char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
}

static int bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -EBADMSG;
}

/* An integer member in [min, max]: 0, or -EBADMSG naming it. */
static int get_int(json_t *doc, const char *key, json_int_t min, json_int_t max, json_int_t *v,
		   char *err, size_t errlen)
{
	json_t *x = json_object_get(doc, key);

	if (!json_is_integer(x)) {
		snprintf(err, errlen, "\"%s\": %s", key, x ? "not an integer" : "missing");
		return -EBADMSG;
	}
	*v = json_integer_value(x);
	if (*v < min || *v > max) {
		snprintf(err, errlen, "\"%s\": %lld out of range %lld..%lld", key, (long long)*v,
			 (long long)min, (long long)max);
		return -EBADMSG;
	}
	return 0;
}

static int get_str(json_t *doc, const char *key, size_t max, const char **v, char *err,
		   size_t errlen)
{
	json_t *x = json_object_get(doc, key);

	if (!json_is_string(x)) {
		snprintf(err, errlen, "\"%s\": %s", key, x ? "not a string" : "missing");
		return -EBADMSG;
	}
	*v = json_string_value(x);
	if (json_string_length(x) >= max || strlen(*v) != json_string_length(x)) {
		snprintf(err, errlen, "\"%s\": longer than %zu bytes or holds a NUL", key, max - 1);
		return -EBADMSG;
	}
	return 0;
}

static json_t *load(const char *body, size_t len, const char *what, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	json_int_t v = 0;

	if (!doc || !json_is_object(doc)) {
		snprintf(err, errlen, "%s: not a JSON object%s%.80s", what, doc ? "" : ": ",
			 doc ? "" : je.text);
		clean_err(err);
		json_decref(doc);
		return NULL;
	}
	if (get_int(doc, "version", 0, 1000000, &v, err, errlen) || v != PROBE_SLICE_VERSION) {
		if (v != PROBE_SLICE_VERSION && json_is_integer(json_object_get(doc, "version")))
			snprintf(err, errlen, "%s: version %lld, this rocewatch reads %d", what,
				 (long long)v, PROBE_SLICE_VERSION);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static int decode_ports(json_t *doc, struct probe_slice *s, char *err, size_t errlen)
{
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t k;

	if (!json_is_array(ports) || json_array_size(ports) > PROBE_PLAN_MAX_PORTS)
		return bad(err, errlen, "\"ports\": not an array of at most 64 ports");
	s->n_ports = json_array_size(ports);
	s->ports = calloc(s->n_ports ? s->n_ports : 1, sizeof(*s->ports));
	if (!s->ports)
		return -ENOMEM;
	json_array_foreach(ports, k, p)
	{
		const char *dev, *gid;
		json_int_t port;
		char pe[200];

		if (!json_is_object(p) ||
		    get_str(p, "device", sizeof(s->ports[k].device), &dev, pe, sizeof(pe)) ||
		    get_str(p, "gid", sizeof(s->ports[k].gid), &gid, pe, sizeof(pe)) ||
		    get_int(p, "port", 1, 255, &port, pe, sizeof(pe))) {
			snprintf(err, errlen, "\"ports\"[%zu]: %s", k,
				 json_is_object(p) ? pe : "not an object");
			return -EBADMSG;
		}
		strlcpy0(s->ports[k].device, dev, sizeof(s->ports[k].device));
		strlcpy0(s->ports[k].gid, gid, sizeof(s->ports[k].gid));
		s->ports[k].port = (unsigned)port;
	}
	return 0;
}

static int decode_entries(json_t *doc, const char *data, size_t dlen, struct probe_slice *s,
			  char *err, size_t errlen)
{
	json_int_t n;
	uint8_t *raw;
	int r;

	if ((r = get_int(doc, "entries", 0, PROBE_SLICE_MAX_ENTRIES, &n, err, errlen)))
		return r;
	s->n = (size_t)n;
	raw = malloc(s->n ? s->n * PROBE_SLICE_ENTRY_LEN : 1);
	s->e = calloc(s->n ? s->n : 1, sizeof(*s->e));
	if (!raw || !s->e) {
		free(raw);
		return -ENOMEM;
	}
	if (b64_decode(data, dlen, raw, s->n * PROBE_SLICE_ENTRY_LEN)) {
		free(raw);
		snprintf(err, errlen, "data line: not base64 of %zu entries of %d bytes", s->n,
			 PROBE_SLICE_ENTRY_LEN);
		return -EBADMSG;
	}
	for (size_t k = 0; k < s->n; k++) {
		const uint8_t *p = raw + k * PROBE_SLICE_ENTRY_LEN;
		struct probe_slice_entry *e = &s->e[k];
		unsigned sizes = 0;

		e->slot = get_u32(p);
		e->mtu = (uint16_t)(p[4] << 8 | p[5]);
		e->port = p[6];
		e->labels = p[7];
		e->kind = p[8];
		e->qpn = get_u32(p + 8) & 0xffffff;
		memcpy(e->gid, p + 12, 16);
		if (e->mtu >= 64 && e->mtu <= 4096)
			sizes = 1;
		if (e->slot >= s->n_slots || (k && e->slot < s->e[k - 1].slot) ||
		    e->port >= s->n_ports || e->labels > s->paths || e->kind > PROBE_PAIR_LOOP ||
		    !sizes || !e->qpn) {
			free(raw);
			snprintf(err, errlen,
				 "entry %zu: slot %u (of %u, in order), port %u (of %zu), %u flow "
				 "labels (of %u), kind %u, MTU %u or QPN %u out of range",
				 k, e->slot, s->n_slots, e->port, s->n_ports, e->labels, s->paths,
				 e->kind, e->mtu, e->qpn);
			return -EBADMSG;
		}
	}
	free(raw);
	return 0;
}

int probe_slice_decode(const char *body, size_t len, struct probe_slice *s, char *err,
		       size_t errlen)
{
	json_t *doc;
	json_int_t v;
	const char *str, *data;
	size_t hlen, dlen;
	int r = -EBADMSG;

	memset(s, 0, sizeof(*s));
	err[0] = 0;
	if (split_body(body, len, &hlen, &data, &dlen))
		return bad(err, errlen, "plan: not a header line and a data line");
	if (!(doc = load(body, hlen, "plan", err, errlen)))
		return -EBADMSG;
	if (get_str(doc, "plan", 17, &str, err, errlen))
		goto out;
	if (probe_plan_id_parse(str, &s->plan)) {
		snprintf(err, errlen, "\"plan\": not 16 hex digits");
		goto out;
	}
	if (get_str(doc, "node", sizeof(s->node), &str, err, errlen))
		goto out;
	strlcpy0(s->node, str, sizeof(s->node));
#define INT(key, min, max, dst)                                   \
	do {                                                      \
		if (get_int(doc, key, min, max, &v, err, errlen)) \
			goto out;                                 \
		dst = v;                                          \
	} while (0)
	INT("session", 0, UINT32_MAX, s->session);
	INT("start_ns", 0, INT64_MAX, s->start_ns);
	INT("slot_ns", 1000, 1000000000LL, s->slot_ns);
	INT("probe_ns", 1, 1000000000LL, s->probe_ns);
	INT("wait_ns", 0, 60000000000LL, s->wait_ns);
	INT("slots", 1, PROBE_SLICE_MAX_SLOTS, s->n_slots);
	INT("repeats", 1, PROBE_PLAN_MAX_REPEATS, s->repeats);
	INT("paths", 0, PROBE_PLAN_MAX_PATHS, s->paths);
	INT("dscp", 0, 63, s->dscp);
#undef INT
	if ((r = decode_ports(doc, s, err, errlen)) ||
	    (r = decode_entries(doc, data, dlen, s, err, errlen)))
		goto out;
	r = 0;
out:
	json_decref(doc);
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (r && !err[0])
		snprintf(err, errlen, "malformed");
	if (r)
		r = r == -ENOMEM ? r : -EBADMSG;
	return r;
}

json_t *probe_ah_stats_json(const struct probe_ah_stats *ah)
{
	uint64_t calls = ah->made + ah->failed;

	return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:o, s:b}", "made", (json_int_t)ah->made,
			 "failed", (json_int_t)ah->failed, "lazy", (json_int_t)ah->lazy,
			 "create_seconds", (double)ah->create_ns / 1e9, "mean_seconds",
			 calls ? (double)ah->create_ns / 1e9 / (double)calls : 0.0, "max_seconds",
			 (double)ah->max_ns / 1e9, "ready_seconds",
			 ah->ready_ns >= 0 ? json_real((double)ah->ready_ns / 1e9) : json_null(),
			 "before_start", ah->before_start);
}

static int ah_encode(struct strbuf *out, const struct probe_ah_stats *ah)
{
	json_t *o = probe_ah_stats_json(ah);
	char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!txt)
		return -ENOMEM;
	sb_printf(out, ",\"address_handles\":%s", txt);
	free(txt);
	return 0;
}

/* A count or a duration that is no lie: 0 .. a day's worth. */
static int ah_num(json_t *o, const char *key, bool seconds, int64_t *v, char *err, size_t errlen)
{
	json_t *x = json_object_get(o, key);
	double d = json_is_number(x) ? json_number_value(x) : -1;

	if (!x || (seconds ? !json_is_number(x) : !json_is_integer(x)) || !(d >= 0) ||
	    d > (seconds ? 86400.0
			 : (double)PROBE_SLICE_MAX_ENTRIES * (PROBE_PLAN_MAX_PATHS + 1))) {
		snprintf(err, errlen, "\"address_handles\": \"%s\": %s", key,
			 x ? "not a number in range" : "missing");
		return -EBADMSG;
	}
	*v = seconds ? (int64_t)(d * 1e9 + 0.5) : (int64_t)json_integer_value(x);
	return 0;
}

static int ah_decode(json_t *doc, struct probe_ah_stats *ah, char *err, size_t errlen)
{
	json_t *o = json_object_get(doc, "address_handles"), *rd, *bs;
	int64_t made, failed, lazy;

	memset(ah, 0, sizeof(*ah));
	ah->ready_ns = -1;
	if (!o)
		return 0;
	rd = json_object_get(o, "ready_seconds");
	bs = json_object_get(o, "before_start");
	if (!json_is_object(o) || !json_is_boolean(bs)) {
		snprintf(err, errlen, "\"address_handles\": not an object with \"before_start\"");
		return -EBADMSG;
	}
	if (ah_num(o, "made", false, &made, err, errlen) ||
	    ah_num(o, "failed", false, &failed, err, errlen) ||
	    ah_num(o, "lazy", false, &lazy, err, errlen) ||
	    ah_num(o, "create_seconds", true, &ah->create_ns, err, errlen) ||
	    ah_num(o, "max_seconds", true, &ah->max_ns, err, errlen) ||
	    (!json_is_null(rd) && ah_num(o, "ready_seconds", true, &ah->ready_ns, err, errlen)))
		return -EBADMSG;
	ah->made = (uint64_t)made;
	ah->failed = (uint64_t)failed;
	ah->lazy = (uint64_t)lazy;
	ah->before_start = json_is_true(bs);
	ah->known = true;
	return 0;
}

int probe_results_encode(struct strbuf *out, uint64_t plan, const char *node, bool done,
			 const struct probe_result *r, size_t n, const struct probe_ah_stats *ah)
{
	char id[17];
	uint8_t *raw = malloc(n ? n * PROBE_RESULT_LEN : 1);

	if (!raw)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint8_t *p = raw + k * PROBE_RESULT_LEN;

		memcpy(p, r[k].sent, 3);
		memcpy(p + 3, r[k].recv, 3);
		p[6] = r[k].damaged;
		p[7] = r[k].labels_sent;
		put_u32(p + 8, r[k].labels_lost);
		put_u32(p + 12, r[k].rtt_ns);
	}
	probe_plan_id_text(plan, id);
	sb_printf(out, "{\"version\":%d,\"plan\":\"%s\",\"node\":", PROBE_SLICE_VERSION, id);
	json_str(out, node);
	sb_printf(out, ",\"state\":\"%s\",\"entries\":%zu", done ? "done" : "running",
		  done ? n : 0);
	if (ah && ah_encode(out, ah)) {
		free(raw);
		return -ENOMEM;
	}
	sb_puts(out, "}\n");
	if (done)
		b64_encode(out, raw, n * PROBE_RESULT_LEN);
	sb_putc(out, '\n');
	free(raw);
	return out->oom ? -ENOMEM : 0;
}

int probe_results_decode(const char *body, size_t len, uint64_t plan, size_t n,
			 struct probe_result *out, struct probe_ah_stats *ah, char *err,
			 size_t errlen)
{
	json_t *doc;
	const char *str, *data;
	size_t hlen, dlen;
	json_int_t got;
	uint64_t id;
	uint8_t *raw = NULL;
	int r = -EBADMSG;

	err[0] = 0;
	if (split_body(body, len, &hlen, &data, &dlen))
		return bad(err, errlen, "results: not a header line and a data line");
	if (!(doc = load(body, hlen, "results", err, errlen)))
		return -EBADMSG;
	if (get_str(doc, "plan", 17, &str, err, errlen))
		goto out;
	if (probe_plan_id_parse(str, &id) || id != plan) {
		snprintf(err, errlen, "\"plan\": not this plan's id");
		goto out;
	}
	if (get_str(doc, "state", 16, &str, err, errlen))
		goto out;
	if (!strcmp(str, "running")) {
		r = 1;
		goto out;
	}
	if (strcmp(str, "done")) {
		snprintf(err, errlen, "\"state\": neither running nor done");
		goto out;
	}
	if (get_int(doc, "entries", 0, PROBE_SLICE_MAX_ENTRIES, &got, err, errlen))
		goto out;
	if ((size_t)got != n) {
		snprintf(err, errlen, "\"entries\": %lld results for a slice of %zu",
			 (long long)got, n);
		goto out;
	}
	if (ah && ah_decode(doc, ah, err, errlen))
		goto out;
	raw = malloc(n ? n * PROBE_RESULT_LEN : 1);
	if (!raw) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	if (b64_decode(data, dlen, raw, n * PROBE_RESULT_LEN)) {
		snprintf(err, errlen, "data line: not base64 of %zu results of %d bytes", n,
			 PROBE_RESULT_LEN);
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = raw + k * PROBE_RESULT_LEN;
		struct probe_result *x = &out[k];

		memcpy(x->sent, p, 3);
		memcpy(x->recv, p + 3, 3);
		x->damaged = p[6];
		x->labels_sent = p[7];
		x->labels_lost = get_u32(p + 8);
		x->rtt_ns = get_u32(p + 12);
		/* more back than sent is not a count: refuse it rather than believe it */
		if (x->recv[0] > x->sent[0] || x->recv[1] > x->sent[1] || x->recv[2] > x->sent[2] ||
		    x->labels_sent > PROBE_PLAN_MAX_PATHS) {
			snprintf(err, errlen,
				 "result %zu: more replies than probes, or over %d flow labels", k,
				 PROBE_PLAN_MAX_PATHS);
			goto out;
		}
	}
	r = 0;
out:
	free(raw);
	json_decref(doc);
	return r;
}
