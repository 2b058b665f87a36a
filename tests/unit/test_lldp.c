// SPDX-License-Identifier: MIT
/*
 * The lldp collector's parts on real bytes: LLDPDUs as Debian's lldpd 1.0.16
 * sent them on a veth, and `lldpcli -f json show neighbors` as it answered
 * with one neighbour and with two (tests/fixtures/lldp/README.md).  Malformed
 * LLDPDUs are those frames' TLVs re-encoded with one thing wrong; every cut
 * of every frame is parsed too.  The neighbour table runs on a test clock.
 *
 * argv[1]: tests/fixtures/lldp
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lldp.h"
#include "util.h"

static const char *fixtures;

static uint8_t *load(const char *name, size_t *len)
{
	char path[PATH_MAX], *buf = NULL;

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	assert_int_equal(read_file_all(path, &buf, len), 0);
	return (uint8_t *)buf;
}

static void parse_ok(const char *name, struct lldp_nb *nb)
{
	char err[160] = "";
	uint8_t src[6];
	size_t len;
	uint8_t *f = load(name, &len);
	int r = lldp_parse_frame(f, len, nb, src, err, sizeof(err));

	if (r)
		fail_msg("%s: %s", name, err);
	assert_memory_equal(src, ((const uint8_t[]){ 2, 0, 0, 0, 5, 1 }), 6);
	free(f);
}

/* ---- the frames lldpd sent ---- */

static void frames_from_lldpd(void **state)
{
	struct lldp_nb nb;

	(void)state;
	parse_ok("leaf-r5-mac.bin", &nb);
	assert_string_equal(nb.chassis_id, "02:00:00:00:05:01");
	assert_int_equal(nb.chassis_subtype, 4);
	assert_string_equal(nb.port_id, "02:00:00:00:05:01");
	assert_int_equal(nb.port_subtype, 3);
	assert_int_equal(nb.ttl, 4);
	assert_true(nb.has_system_name);
	assert_string_equal(nb.system_name, "leaf-r5");
	assert_true(nb.has_port_description);
	assert_string_equal(nb.port_description, "swp5");

	parse_ok("leaf-r5-ifname.bin", &nb);
	assert_string_equal(nb.port_id, "swp5");
	assert_int_equal(nb.port_subtype, 5);

	parse_ok("leaf-r5-local.bin", &nb);
	assert_string_equal(nb.port_id, "Ethernet5/1");
	assert_int_equal(nb.port_subtype, 7);
	assert_string_equal(nb.port_description, "leaf-r5 Ethernet5/1 to gpu12 nic3");

	parse_ok("leaf-r5-chassis-local.bin", &nb);
	assert_string_equal(nb.chassis_id, "leaf-r5-chassis");
	assert_int_equal(nb.chassis_subtype, 7);
	assert_string_equal(nb.system_name, "leaf-r5");

	parse_ok("leaf-r5-ttl120.bin", &nb);
	assert_int_equal(nb.ttl, 120);

	/* 802.1AB 8.5.4.1: the three mandatory TLVs, TTL 0, End */
	parse_ok("leaf-r5-shutdown.bin", &nb);
	assert_int_equal(nb.ttl, 0);
	assert_string_equal(nb.chassis_id, "leaf-r5-chassis");
	assert_string_equal(nb.port_id, "Ethernet5/1");
	assert_false(nb.has_system_name);
	assert_string_equal(nb.system_name, "");
}

/* ---- TLVs: a frame taken apart and put back together ---- */

struct tlv {
	unsigned type, len;
	uint8_t v[512];
};

struct pdu {
	uint8_t hdr[14];
	struct tlv t[32];
	size_t n;
};

static void take_apart(const char *name, struct pdu *p)
{
	size_t len, off = 14;
	uint8_t *f = load(name, &len);

	memset(p, 0, sizeof(*p));
	memcpy(p->hdr, f, 14);
	while (off + 2 <= len) {
		struct tlv *t = &p->t[p->n++];

		t->type = f[off] >> 1;
		t->len = (unsigned)(f[off] & 1) << 8 | f[off + 1];
		assert_true(off + 2 + t->len <= len);
		memcpy(t->v, f + off + 2, t->len);
		off += 2 + t->len;
		if (!t->type)
			break;
	}
	free(f);
}

/* The frame of p; tlv len may lie about its bytes (wire_len: what is written). */
static size_t put_together(const struct pdu *p, uint8_t *out, size_t cap)
{
	size_t o = 14;

	memcpy(out, p->hdr, 14);
	for (size_t i = 0; i < p->n; i++) {
		const struct tlv *t = &p->t[i];
		size_t body = t->len > sizeof(t->v) ? sizeof(t->v) : t->len;

		assert_true(o + 2 + body <= cap);
		out[o++] = (uint8_t)(t->type << 1 | (t->len >> 8 & 1));
		out[o++] = (uint8_t)(t->len & 0xff);
		memcpy(out + o, t->v, body);
		o += body;
	}
	return o;
}

static void pdu_del(struct pdu *p, size_t i)
{
	memmove(&p->t[i], &p->t[i + 1], (p->n - i - 1) * sizeof(p->t[0]));
	p->n--;
}

static void pdu_ins(struct pdu *p, size_t i, unsigned type, const void *v, unsigned len)
{
	memmove(&p->t[i + 1], &p->t[i], (p->n - i) * sizeof(p->t[0]));
	p->n++;
	p->t[i].type = type;
	p->t[i].len = len;
	memcpy(p->t[i].v, v, len);
}

static size_t find_tlv(const struct pdu *p, unsigned type)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->t[i].type == type)
			return i;
	fail_msg("no TLV of type %u", type);
	return 0;
}

static int parse_pdu(const struct pdu *p, struct lldp_nb *nb, char *err, size_t errlen)
{
	uint8_t buf[4096];
	size_t len = put_together(p, buf, sizeof(buf));

	err[0] = '\0';
	return lldp_parse_frame(buf, len, nb, NULL, err, errlen);
}

#define REFUSED(p, want)                                                            \
	do {                                                                        \
		char err_[160];                                                     \
		struct lldp_nb nb_;                                                 \
		assert_int_equal(parse_pdu(p, &nb_, err_, sizeof(err_)), -EBADMSG); \
		if (!strstr(err_, want))                                            \
			fail_msg("error '%s', want '%s'", err_, want);              \
	} while (0)

static void malformed_lldpdus(void **state)
{
	struct pdu p, base;
	struct lldp_nb nb;
	char err[160];
	size_t i;

	(void)state;
	take_apart("leaf-r5-local.bin", &base);
	/* Chassis ID, Port ID, TTL, Sys Name, Sys Descr, Caps, 2 x Mgmt, Port Descr, 2 x 127, End
	 */
	assert_int_equal(base.n, 12);
	assert_int_equal(parse_pdu(&base, &nb, err, sizeof(err)), 0);

	p = base;
	p.t[0] = base.t[1];
	p.t[1] = base.t[0];
	REFUSED(&p, "TLV 1 is Port ID (type 2), want Chassis ID");

	p = base;
	pdu_del(&p, 2);
	REFUSED(&p, "TLV 3 is System Name (type 5), want Time To Live");

	p = base;
	pdu_ins(&p, 5, 1, base.t[0].v, base.t[0].len);
	REFUSED(&p, "a second Chassis ID TLV (TLV 6)");

	p = base;
	p.t[0].len = 1;
	REFUSED(&p, "Chassis ID TLV: length 1, want 2 to 256");

	p = base;
	p.t[1].len = 1;
	REFUSED(&p, "Port ID TLV: length 1, want 2 to 256");

	p = base;
	p.t[2].len = 1;
	REFUSED(&p, "Time To Live TLV: length 1, want 2");

	p = base;
	p.t[p.n - 1].len = 2;
	REFUSED(&p, "End Of LLDPDU TLV: length 2, want 0");

	/* a length past the frame: the body written is shorter than it says */
	p = base;
	i = find_tlv(&p, 5);
	p.n = i + 1;
	p.t[i].len = 300;
	{
		uint8_t buf[4096];
		size_t len = put_together(&p, buf, sizeof(buf)) - (300 - 7);

		assert_int_equal(lldp_parse_frame(buf, len, &nb, NULL, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "System Name TLV (TLV 4): length 300, only 7 bytes"));
	}

	p = base;
	p.n = 1;
	pdu_ins(&p, 1, 0, "", 0);
	REFUSED(&p, "no Port ID TLV");

	p.n = 0;
	REFUSED(&p, "0 bytes and no Chassis ID TLV");

	p = base;
	p.hdr[12] = 0x08;
	p.hdr[13] = 0x00;
	REFUSED(&p, "ethertype 0x0800, not LLDP (0x88cc)");
	assert_int_equal(lldp_parse_frame(base.hdr, 13, &nb, NULL, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "frame of 13 bytes"));

	/* 802.1AB-2016: End Of LLDPDU may be left out */
	p = base;
	p.n--;
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.system_name, "leaf-r5");
}

/* Every cut of every frame: refused with a reason unless it falls between TLVs past the TTL. */
static void every_cut(void **state)
{
	static const char *const names[] = {
		"leaf-r5-mac.bin",	     "leaf-r5-ifname.bin", "leaf-r5-local.bin",
		"leaf-r5-chassis-local.bin", "leaf-r5-ttl120.bin", "leaf-r5-shutdown.bin",
	};

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		size_t len, bounds[64], nb_ = 0, off = 14, ttl_end = 0;
		uint8_t *f = load(names[k], &len);

		/* where each TLV ends */
		while (off + 2 <= len) {
			unsigned type = f[off] >> 1, l = (unsigned)(f[off] & 1) << 8 | f[off + 1];

			off += 2 + l;
			bounds[nb_++] = off;
			if (type == 3)
				ttl_end = off;
			if (!type)
				break;
		}
		for (size_t cut = 0; cut < len; cut++) {
			uint8_t *c = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees past */
			struct lldp_nb nb;
			char err[160] = "";
			bool boundary = false;
			int r;

			memcpy(c, f, cut);
			for (size_t b = 0; b < nb_; b++)
				boundary |= bounds[b] == cut;
			r = lldp_parse_frame(c, cut, &nb, NULL, err, sizeof(err));
			if (boundary && cut >= ttl_end) {
				if (r)
					fail_msg("%s cut at %zu: %s", names[k], cut, err);
			} else if (r != -EBADMSG || !err[0]) {
				fail_msg("%s cut at %zu: %d '%s'", names[k], cut, r, err);
			}
			free(c);
		}
		free(f);
	}
}

/* IDs as lldpd writes them; text cleaned for labels and JSON. */
static void ids_and_text(void **state)
{
	static const uint8_t v4[] = { 5, 1, 192, 0, 2, 1 };
	static const uint8_t v6[] = { 5, 2, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,
				      0, 0, 0,	  0,	0,    0,    0, 0, 1 };
	static const uint8_t odd[] = { 5, 6, 1, 2, 3 };
	static const uint8_t comp[] = { 1, 0xde, 0xad };
	static const uint8_t agent[] = { 6, 0x01, 0x02, 0xff };
	uint8_t name[255];
	struct pdu base, p;
	struct lldp_nb nb;
	char err[160];

	(void)state;
	take_apart("leaf-r5-local.bin", &base);

	p = base;
	p.t[0].len = sizeof(v4);
	memcpy(p.t[0].v, v4, sizeof(v4));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.chassis_id, "192.0.2.1");
	p.t[0].len = sizeof(v6);
	memcpy(p.t[0].v, v6, sizeof(v6));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.chassis_id, "2001:db8::1");
	p.t[0].len = sizeof(odd); /* address family 6 (802): not an IP */
	memcpy(p.t[0].v, odd, sizeof(odd));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.chassis_id, "06 01 02 03");
	p.t[0].len = sizeof(comp); /* chassis component: lldpd dumps it */
	memcpy(p.t[0].v, comp, sizeof(comp));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.chassis_id, "de ad");
	p.t[1].len = sizeof(agent); /* port: agent circuit ID */
	memcpy(p.t[1].v, agent, sizeof(agent));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.port_id, "01 02 ff");

	/* control bytes, UTF-8 and a name of 255: printable ASCII, cut at 63 */
	p = base;
	memset(name, 'x', sizeof(name));
	memcpy(name, "leaf\x01r5\xc3\xa9", 9);
	p.t[3].len = sizeof(name);
	memcpy(p.t[3].v, name, sizeof(name));
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_int_equal(strlen(nb.system_name), RW_STR_MAX - 1);
	assert_memory_equal(nb.system_name, "leaf?r5??xx", 11);

	/* a second System Name: the first stands; unknown TLV types are skipped */
	p = base;
	pdu_ins(&p, 4, 5, "spine-1", 7);
	pdu_ins(&p, 4, 42, "\x00\x01", 2);
	pdu_ins(&p, 4, 127, "\x00\x80\xc2\x01\x00\x05", 6);
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_string_equal(nb.system_name, "leaf-r5");
	/* an empty System Name is one, and empty */
	p = base;
	p.t[3].len = 0;
	assert_int_equal(parse_pdu(&p, &nb, err, sizeof(err)), 0);
	assert_true(nb.has_system_name);
	assert_string_equal(nb.system_name, "");
}

/* ---- lldpcli -f json ---- */

static struct lldp_cli_nb *json_file(const char *name, size_t *n)
{
	struct lldp_cli_nb *e;
	char err[160] = "";
	size_t len;
	char *buf = (char *)load(name, &len);
	int r = lldp_json_parse(buf, len, &e, n, err, sizeof(err));

	if (r)
		fail_msg("%s: %s", name, err);
	free(buf);
	return e;
}

static void lldpcli_one_and_several(void **state)
{
	struct lldp_cli_nb *e;
	size_t n;

	(void)state;
	/* one neighbour: "interface" is an object */
	e = json_file("lldpcli-one.json", &n);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].ifname, "ens1f0np0");
	assert_string_equal(e[0].nb.system_name, "leaf-r5");
	assert_string_equal(e[0].nb.chassis_id, "02:00:00:00:05:01");
	assert_int_equal(e[0].nb.chassis_subtype, 4);
	assert_string_equal(e[0].nb.port_id, "swp5");
	assert_int_equal(e[0].nb.port_subtype, 5);
	assert_string_equal(e[0].nb.port_description, "swp5");
	assert_int_equal(e[0].nb.ttl, 4);
	free(e);

	/* two: an array of one-member objects */
	e = json_file("lldpcli-two.json", &n);
	assert_int_equal(n, 2);
	assert_string_equal(e[0].ifname, "ens1f0np0");
	assert_string_equal(e[0].nb.system_name, "leaf-r5");
	assert_string_equal(e[1].ifname, "ens1f1np1");
	assert_string_equal(e[1].nb.system_name, "leaf-r6");
	assert_string_equal(e[1].nb.chassis_id, "leaf-r6-chassis");
	assert_int_equal(e[1].nb.chassis_subtype, 7);
	assert_string_equal(e[1].nb.port_id, "Ethernet6/1");
	assert_int_equal(e[1].nb.port_subtype, 7);
	assert_string_equal(e[1].nb.port_description, "Ethernet6/1 to gpu12 nic1");
	free(e);

	e = json_file("lldpcli-none.json", &n);
	assert_int_equal(n, 0);
	assert_null(e);
}

/* The same neighbour from a frame and from lldpd: the same facts. */
static void both_sources_agree(void **state)
{
	struct lldp_cli_nb *e;
	struct lldp_nb nb;
	size_t n;

	(void)state;
	parse_ok("leaf-r5-ifname.bin", &nb);
	e = json_file("lldpcli-one.json", &n);
	assert_true(lldp_nb_same(&nb, &e[0].nb));
	assert_int_equal(nb.ttl, e[0].nb.ttl);
	free(e);
}

static int json_str(const char *s, struct lldp_cli_nb **e, size_t *n, char *err)
{
	return lldp_json_parse(s, strlen(s), e, n, err, 160);
}

static void lldpcli_odd_answers(void **state)
{
	struct lldp_cli_nb *e;
	char err[160];
	size_t n;

	(void)state;
	/* json_writer.c without a system name: the chassis is not wrapped */
	assert_int_equal(
	    json_str("{\"lldp\":{\"interface\":{\"eth2\":{\"chassis\":{\"id\":{"
		     "\"type\":\"mac\",\"value\":\"02:00:00:00:05:01\"}},\"port\":{"
		     "\"id\":{\"type\":\"ifname\",\"value\":\"swp5\"},\"ttl\":\"120\"}}}}}",
		     &e, &n, err),
	    0);
	assert_int_equal(n, 1);
	assert_false(e[0].nb.has_system_name);
	assert_false(e[0].nb.has_port_description);
	assert_string_equal(e[0].nb.chassis_id, "02:00:00:00:05:01");
	assert_int_equal(e[0].nb.ttl, 120);
	free(e);
	/* a system name "id" is still a name; a second neighbour on eth2 is not read */
	assert_int_equal(
	    json_str("{\"lldp\":{\"interface\":[{\"eth2\":{\"chassis\":{\"id\":{"
		     "\"id\":{\"type\":\"local\",\"value\":\"c1\"}}},\"port\":{\"id\":{"
		     "\"type\":\"local\",\"value\":\"p1\"}}}},{\"eth2\":{\"chassis\":{"
		     "\"x\":{\"id\":{\"value\":\"c2\"}}},\"port\":{\"id\":\"p2\"}}}]}}",
		     &e, &n, err),
	    0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].nb.system_name, "id");
	assert_string_equal(e[0].nb.chassis_id, "c1");
	free(e);

	assert_int_equal(json_str("{\"lldp\": ", &e, &n, err), -EBADMSG);
	assert_non_null(strstr(err, "line 1 column"));
	assert_int_equal(json_str("[]", &e, &n, err), -EBADMSG);
	assert_string_equal(err, "no \"lldp\" object");
	assert_int_equal(json_str("{\"lldp\":{\"interface\":\"eth2\"}}", &e, &n, err), -EBADMSG);
	assert_int_equal(json_str("{\"lldp\":{\"interface\":[1]}}", &e, &n, err), -EBADMSG);
	assert_string_equal(err, "interface 0: not an object");
	assert_int_equal(json_str("{\"lldp\":{\"interface\":{\"eth2\":{\"chassis\":{\"id\":{"
				  "\"value\":\"c\"}},\"port\":{}}}}}",
				  &e, &n, err),
			 -EBADMSG);
	assert_string_equal(err, "interface eth2: no port id");
	assert_int_equal(json_str("{\"lldp\":{\"interface\":{\"eth2\":{\"chassis\":{\"id\":{"
				  "\"value\":\"c\"}},\"port\":{\"id\":\"p\",\"ttl\":\"-1\"}}}}}",
				  &e, &n, err),
			 -EBADMSG);
	assert_null(e);
	assert_int_equal(n, 0);
}

/* ---- the neighbour table, on a test clock ---- */

static int said;
static void count_said(const struct lldp_heard *h, void *arg)
{
	(void)h;
	(void)arg;
	said++;
}

static void table_ttl(void **state)
{
	const int64_t s = 1000000000LL;
	struct lldp_table t = { 0 };
	struct lldp_nb nb, other;

	(void)state;
	parse_ok("leaf-r5-ttl120.bin", &nb);
	parse_ok("leaf-r5-ifname.bin", &other);
	assert_int_equal(lldp_table_heard(&t, 7, &nb, 10 * s), 1);
	assert_int_equal(lldp_table_heard(&t, 7, &nb, 40 * s), 0); /* a refresh */
	assert_int_equal(lldp_table_expire(&t, 159 * s, count_said, NULL), 0);
	assert_int_equal(lldp_table_expire(&t, 160 * s, count_said, NULL), 1);
	assert_int_equal(said, 1);
	assert_true(lldp_table_find(&t, 7)->expired);
	assert_int_equal(lldp_table_expire(&t, 500 * s, count_said, NULL), 0); /* said once */
	assert_int_equal(lldp_table_heard(&t, 7, &nb, 501 * s), 1);	       /* back */
	assert_int_equal(lldp_table_heard(&t, 7, &other, 502 * s), 1);	       /* recabled */
	assert_int_equal(lldp_table_find(&t, 7)->expires_ns, 506 * s);	       /* its TTL 4 */
	/* a shutdown LLDPDU for another port ID (lldpd's, for the one it had) changes nothing */
	nb.ttl = 0;
	assert_int_equal(lldp_table_heard(&t, 7, &nb, 503 * s), 0);
	assert_false(lldp_table_find(&t, 7)->expired);
	/* one for this neighbour withdraws it at once; another changes nothing */
	other.ttl = 0;
	assert_int_equal(lldp_table_heard(&t, 7, &other, 503 * s), 1);
	assert_true(lldp_table_find(&t, 7)->expired);
	assert_int_equal(lldp_table_heard(&t, 7, &other, 504 * s), 0);
	assert_int_equal(lldp_table_heard(&t, 8, &nb, 504 * s), 0);
	assert_null(lldp_table_find(&t, 8));
	lldp_table_free(&t);
}

static bool keep_odd(int ifindex, void *arg)
{
	(void)arg;
	return ifindex & 1;
}

static void table_bounds(void **state)
{
	struct lldp_table t = { 0 };
	struct lldp_nb nb;

	(void)state;
	parse_ok("leaf-r5-mac.bin", &nb);
	for (int i = 1; i <= LLDP_TABLE_MAX; i++)
		assert_int_equal(lldp_table_heard(&t, i, &nb, 0), 1);
	assert_int_equal(lldp_table_heard(&t, LLDP_TABLE_MAX + 1, &nb, 0), -ENOSPC);
	assert_int_equal(lldp_table_heard(&t, 5, &nb, 0), 0); /* known ones still refresh */
	lldp_table_prune(&t, keep_odd, NULL);
	assert_int_equal(t.n, LLDP_TABLE_MAX / 2);
	assert_null(lldp_table_find(&t, 2));
	assert_non_null(lldp_table_find(&t, 3));
	assert_int_equal(lldp_table_heard(&t, LLDP_TABLE_MAX + 1, &nb, 0), 1);
	lldp_table_free(&t);
}

/* ---- the facts ---- */

static void facts_and_reasons(void **state)
{
	struct node_model m;
	struct object *o;
	struct lldp_nb nb;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	parse_ok("leaf-r5-local.bin", &nb);
	lldp_fill(o, &nb, "frames");
	assert_string_equal(o->f[F_NETDEV_LLDP_SYSTEM_NAME].v.s, "leaf-r5");
	assert_string_equal(o->f[F_NETDEV_LLDP_CHASSIS_ID].v.s, "02:00:00:00:05:01");
	assert_string_equal(o->f[F_NETDEV_LLDP_PORT_ID].v.s, "Ethernet5/1");
	assert_string_equal(o->f[F_NETDEV_LLDP_PORT_DESCRIPTION].v.s,
			    "leaf-r5 Ethernet5/1 to gpu12 nic3");
	assert_string_equal(o->f[F_NETDEV_LLDP_SOURCE].v.s, "frames");
	assert_int_equal(o->f[F_NETDEV_LLDP_TTL].v.i, 4);
	assert_int_equal(field_lookup(OBJ_NETDEV, "lldp.system_name"), F_NETDEV_LLDP_SYSTEM_NAME);

	/* a neighbour without the optional TLVs */
	parse_ok("leaf-r5-shutdown.bin", &nb);
	lldp_fill(o, &nb, "lldpd");
	assert_true(field_present(o, F_NETDEV_LLDP_PORT_ID));
	assert_int_equal(o->f[F_NETDEV_LLDP_SYSTEM_NAME].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_LLDP_SYSTEM_NAME].err, ENODATA);
	assert_int_equal(o->f[F_NETDEV_LLDP_PORT_DESCRIPTION].state, ABS_UNSUPPORTED);

	lldp_absent(o, ABS_NO_DATA, RW_ENOLLDP);
	for (int id = F_NETDEV_LLDP_SYSTEM_NAME; id <= F_NETDEV_LLDP_TTL; id++) {
		assert_int_equal(o->f[id].state, ABS_NO_DATA);
		assert_int_equal(fields[id].src, SRC_LLDP);
	}
	assert_non_null(strstr(rw_strerror(o->f[F_NETDEV_LLDP_PORT_ID].err),
			       "no LLDP frame seen since rocewatch started"));
	assert_non_null(strstr(rw_strerror(o->f[F_NETDEV_LLDP_PORT_ID].err), "NIC firmware"));
	lldp_absent(o, ABS_NO_DATA, RW_ELLDPEXPIRED);
	assert_string_equal(rw_strerror(o->f[F_NETDEV_LLDP_TTL].err),
			    "LLDP neighbour expired: no frame within its TTL");
	model_free(&m);
}

/* ---- lldpcli as a child ---- */

static void cli_runs_bounded(void **state)
{
	char *ok[] = { "sh", "-c", "cat; echo hi; echo oops >&2; echo more >&2; exit 3", NULL };
	char *leak[] = { "sh", "-c", "test -e /proc/self/fd/57 && echo leaked || echo closed",
			 NULL };
	char *slow[] = { "sleep", "30", NULL };
	char *big[] = { "yes", NULL };
	char *none[] = { "rocewatch-no-such-program", NULL };
	struct lldp_cli_out r;
	int fd;

	(void)state;
	/* stdin is /dev/null (cat ends), stderr's first line kept */
	assert_int_equal(lldp_cli_run(ok, 10000, 4096, &r), 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 3);
	assert_string_equal(r.out, "hi\n");
	assert_string_equal(r.err, "oops");
	lldp_cli_out_free(&r);

	/* a descriptor opened without O_CLOEXEC does not reach the child */
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 57), 57);
	assert_int_equal(lldp_cli_run(leak, 10000, 4096, &r), 0);
	assert_string_equal(r.out, "closed\n");
	lldp_cli_out_free(&r);
	close(57);
	close(fd);

	assert_int_equal(lldp_cli_run(slow, 100, 4096, &r), -ETIMEDOUT);
	lldp_cli_out_free(&r);
	assert_int_equal(lldp_cli_run(big, 10000, 4096, &r), -EMSGSIZE);
	assert_true(r.len <= 4096);
	lldp_cli_out_free(&r);
	assert_int_equal(lldp_cli_run(none, 10000, 4096, &r), -ENOENT);
	lldp_cli_out_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_from_lldpd),
		cmocka_unit_test(malformed_lldpdus),
		cmocka_unit_test(every_cut),
		cmocka_unit_test(ids_and_text),
		cmocka_unit_test(lldpcli_one_and_several),
		cmocka_unit_test(both_sources_agree),
		cmocka_unit_test(lldpcli_odd_answers),
		cmocka_unit_test(table_ttl),
		cmocka_unit_test(table_bounds),
		cmocka_unit_test(facts_and_reasons),
		cmocka_unit_test(cli_runs_bounded),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES/lldp\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
