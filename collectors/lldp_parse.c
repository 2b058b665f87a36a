// SPDX-License-Identifier: MIT
/*
 * LLDPDUs and lldpcli's JSON into struct lldp_nb (lldp.h says the contract).
 *
 * The TLV layout is IEEE 802.1AB-2016 clause 8: a 16-bit header of a 7-bit
 * type and a 9-bit length, then that many bytes.  An LLDPDU starts with
 * Chassis ID, Port ID and Time To Live, in that order (8.2, and 9.2.7.7.1
 * discards one that does not); End Of LLDPDU (type 0, length 0) ends it, and
 * since 802.1AB-2016 it may be left out when the TLVs fill the frame.  IDs
 * are written as lldpd's lldpctl writes them (its atoms/chassis.c and
 * atoms/port.c), so a neighbour reads the same from either source.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lldp.h"
#include "util.h"

const uint8_t lldp_nearest_bridge[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };

enum {
	TLV_END = 0,
	TLV_CHASSIS_ID = 1,
	TLV_PORT_ID = 2,
	TLV_TTL = 3,
	TLV_PORT_DESCR = 4,
	TLV_SYSTEM_NAME = 5,
};

/* 8.5.2.2 and 8.5.3.2: the subtypes whose ID is text, a MAC, or a network address */
enum id_form {
	ID_HEX,
	ID_TEXT,
	ID_MAC,
	ID_ADDR
};

static enum id_form chassis_form(uint8_t subtype)
{
	switch (subtype) {
	case 2: /* interface alias */
	case 6: /* interface name */
	case 7: /* locally assigned */
		return ID_TEXT;
	case 4:
		return ID_MAC;
	case 5:
		return ID_ADDR;
	default: /* 1 chassis component, 3 port component, reserved: lldpd dumps them */
		return ID_HEX;
	}
}

static enum id_form port_form(uint8_t subtype)
{
	switch (subtype) {
	case 1: /* interface alias */
	case 5: /* interface name */
	case 7: /* locally assigned */
		return ID_TEXT;
	case 3:
		return ID_MAC;
	case 4:
		return ID_ADDR;
	default: /* 2 port component, 6 agent circuit ID, reserved */
		return ID_HEX;
	}
}

static const char *tlv_name(unsigned type)
{
	static const char *const names[] = {
		"End Of LLDPDU",      "Chassis ID",	     "Port ID",
		"Time To Live",	      "Port Description",    "System Name",
		"System Description", "System Capabilities", "Management Address",
	};

	if (type < ARRAY_SIZE(names))
		return names[type];
	return type == 127 ? "Organizationally Specific" : "reserved";
}

/*
 * Printable ASCII as is, anything else '?': a fact is a Prometheus label and
 * a JSON string, and a switch's bytes need be neither valid UTF-8 nor clean.
 * Cut at RW_STR_MAX - 1.
 */
static void put_text(char *dst, const void *src, size_t n)
{
	const uint8_t *p = src;
	size_t i;

	for (i = 0; i < n && i < RW_STR_MAX - 1; i++)
		dst[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	dst[i] = '\0';
}

/* "02:00:00:00:05:01" (sep ':') or "01 02 03" (sep ' '), lowercase, cut at whole bytes. */
static void put_hex(char *dst, const uint8_t *p, size_t n, char sep)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n && o + (i ? 3 : 2) <= RW_STR_MAX - 1; i++) {
		if (i)
			dst[o++] = sep;
		dst[o++] = digits[p[i] >> 4];
		dst[o++] = digits[p[i] & 15];
	}
	dst[o] = '\0';
}

/*
 * A network address ID is an IANA address family number and the address
 * (8.5.2.3): 1 IPv4, 2 IPv6, as lldpd writes them; any other, in hex.
 */
static void put_id(char *dst, enum id_form form, const uint8_t *p, size_t n)
{
	char ip[INET6_ADDRSTRLEN];

	switch (form) {
	case ID_TEXT:
		put_text(dst, p, n);
		return;
	case ID_MAC:
		put_hex(dst, p, n, n == 6 ? ':' : ' ');
		return;
	case ID_ADDR:
		if ((n == 5 && p[0] == 1 && inet_ntop(AF_INET, p + 1, ip, sizeof(ip))) ||
		    (n == 17 && p[0] == 2 && inet_ntop(AF_INET6, p + 1, ip, sizeof(ip)))) {
			strlcpy0(dst, ip, RW_STR_MAX);
			return;
		}
		break;
	case ID_HEX:
		break;
	}
	put_hex(dst, p, n, ' ');
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* The three TLVs every LLDPDU starts with: their lengths (8.5.2 to 8.5.4). */
static int check_mandatory(unsigned idx, unsigned type, size_t vlen, char *err, size_t errlen)
{
	static const unsigned want[3] = { TLV_CHASSIS_ID, TLV_PORT_ID, TLV_TTL };

	if (idx < 3 && type != want[idx])
		return bad(err, errlen, "TLV %u is %s (type %u), want %s", idx + 1, tlv_name(type),
			   type, tlv_name(want[idx]));
	if (idx >= 3 && type >= TLV_CHASSIS_ID && type <= TLV_TTL)
		return bad(err, errlen, "a second %s TLV (TLV %u)", tlv_name(type), idx + 1);
	if ((type == TLV_CHASSIS_ID || type == TLV_PORT_ID) && (vlen < 2 || vlen > 256))
		return bad(err, errlen, "%s TLV: length %zu, want 2 to 256", tlv_name(type), vlen);
	/* 8.5.4: two bytes; lldpd takes longer ones too, and so do we */
	if (type == TLV_TTL && vlen < 2)
		return bad(err, errlen, "Time To Live TLV: length %zu, want 2", vlen);
	return 0;
}

int lldp_parse_pdu(const uint8_t *p, size_t len, struct lldp_nb *nb, char *err, size_t errlen)
{
	size_t off = 0;
	unsigned idx = 0;
	int r;

	memset(nb, 0, sizeof(*nb));
	while (off < len) {
		unsigned type, vlen;
		const uint8_t *v;

		if (len - off < 2)
			return bad(err, errlen, "1 byte after TLV %u: not a TLV header", idx);
		type = p[off] >> 1;
		vlen = ((p[off] & 1u) << 8) | p[off + 1];
		off += 2;
		if (vlen > len - off)
			return bad(err, errlen, "%s TLV (TLV %u): length %u, only %zu bytes left",
				   tlv_name(type), idx + 1, vlen, len - off);
		v = p + off;
		off += vlen;
		if (type == TLV_END) {
			if (vlen)
				return bad(err, errlen, "End Of LLDPDU TLV: length %u, want 0",
					   vlen);
			break; /* what follows is the frame's padding */
		}
		r = check_mandatory(idx, type, vlen, err, errlen);
		if (r)
			return r;
		idx++;
		switch (type) {
		case TLV_CHASSIS_ID:
			nb->chassis_subtype = v[0];
			put_id(nb->chassis_id, chassis_form(v[0]), v + 1, vlen - 1);
			break;
		case TLV_PORT_ID:
			nb->port_subtype = v[0];
			put_id(nb->port_id, port_form(v[0]), v + 1, vlen - 1);
			break;
		case TLV_TTL:
			nb->ttl = (uint32_t)v[0] << 8 | v[1];
			break;
		/* at most one of each (8.5.5, 8.5.6): a second one is not read */
		case TLV_PORT_DESCR:
			if (!nb->has_port_description)
				put_text(nb->port_description, v, vlen);
			nb->has_port_description = true;
			break;
		case TLV_SYSTEM_NAME:
			if (!nb->has_system_name)
				put_text(nb->system_name, v, vlen);
			nb->has_system_name = true;
			break;
		default: /* known to us or not, its length was checked: skipped */
			break;
		}
	}
	if (idx < 3)
		return bad(err, errlen, "%u bytes and no %s TLV", (unsigned)len,
			   tlv_name(TLV_CHASSIS_ID + idx));
	return 0;
}

int lldp_parse_frame(const uint8_t *buf, size_t len, struct lldp_nb *nb, uint8_t *src, char *err,
		     size_t errlen)
{
	unsigned ethertype;

	memset(nb, 0, sizeof(*nb));
	if (len < 14)
		return bad(err, errlen, "frame of %zu bytes: shorter than an Ethernet header", len);
	if (src)
		memcpy(src, buf + 6, 6);
	ethertype = (unsigned)buf[12] << 8 | buf[13];
	if (ethertype != LLDP_ETHERTYPE)
		return bad(err, errlen, "ethertype 0x%04x, not LLDP (0x%04x)", ethertype,
			   LLDP_ETHERTYPE);
	return lldp_parse_pdu(buf + 14, len - 14, nb, err, errlen);
}

bool lldp_nb_same(const struct lldp_nb *a, const struct lldp_nb *b)
{
	return a->chassis_subtype == b->chassis_subtype && a->port_subtype == b->port_subtype &&
	       a->has_system_name == b->has_system_name &&
	       a->has_port_description == b->has_port_description &&
	       !strcmp(a->chassis_id, b->chassis_id) && !strcmp(a->port_id, b->port_id) &&
	       !strcmp(a->system_name, b->system_name) &&
	       !strcmp(a->port_description, b->port_description);
}

/* ---- lldpcli -f json ---- */

/* lldpctl's words for the subtypes it names (atoms/chassis.c, atoms/port.c) */
static uint8_t cli_subtype(const char *type, bool chassis)
{
	static const struct {
		const char *word;
		uint8_t chassis, port;
	} map[] = {
		{ "ifalias", 2, 1 }, { "mac", 4, 3 },	{ "ip", 5, 4 },
		{ "ifname", 6, 5 },  { "local", 7, 7 },
	};

	for (size_t i = 0; type && i < ARRAY_SIZE(map); i++)
		if (!strcmp(type, map[i].word))
			return chassis ? map[i].chassis : map[i].port;
	return 0;
}

/* "id": {"type": "mac", "value": "..."}; a bare string where a writer dropped the type. */
static bool cli_id(json_t *id, char *dst, uint8_t *subtype, bool chassis)
{
	json_t *v = json_is_object(id) ? json_object_get(id, "value") : id;

	if (!json_is_string(v) || !json_string_length(v))
		return false;
	put_text(dst, json_string_value(v), json_string_length(v));
	*subtype = cli_subtype(json_string_value(json_object_get(id, "type")), chassis);
	return true;
}

/*
 * lldpd's writer moves a chassis's "name" out as the key of an object around
 * it: {"leaf-r5": {"id": ...}}; without a system name it is {"id": ...}.  So a
 * single member whose value has an "id" of its own is a name (even "id").
 */
static json_t *cli_chassis(json_t *c, const char **name)
{
	const char *k;
	json_t *v;

	*name = NULL;
	if (json_object_size(c) == 1) {
		json_object_foreach(c, k, v)
		{
			if (json_is_object(v) && json_object_get(v, "id")) {
				*name = k;
				return v;
			}
		}
	}
	return c;
}

static int cli_ttl(json_t *t, uint32_t *ttl)
{
	uint64_t v;

	if (!t) {
		*ttl = 0;
		return 0;
	}
	if (json_is_integer(t) && json_integer_value(t) >= 0 && json_integer_value(t) <= 65535) {
		*ttl = (uint32_t)json_integer_value(t);
		return 0;
	}
	if (json_is_string(t) && !parse_u64(json_string_value(t), &v) && v <= 65535) {
		*ttl = (uint32_t)v;
		return 0;
	}
	return -EBADMSG;
}

static int cli_neighbour(const char *ifname, json_t *v, struct lldp_cli_nb *e, char *err,
			 size_t errlen)
{
	json_t *chassis, *port, *descr;
	const char *name;

	memset(e, 0, sizeof(*e));
	strlcpy0(e->ifname, ifname, sizeof(e->ifname));
	if (!json_is_object(v))
		return bad(err, errlen, "interface %s: not an object", ifname);
	chassis = json_object_get(v, "chassis");
	port = json_object_get(v, "port");
	if (!json_is_object(chassis) || !json_is_object(port))
		return bad(err, errlen, "interface %s: no chassis or port object", ifname);
	chassis = cli_chassis(chassis, &name);
	if (!cli_id(json_object_get(chassis, "id"), e->nb.chassis_id, &e->nb.chassis_subtype, true))
		return bad(err, errlen, "interface %s: no chassis id", ifname);
	if (!cli_id(json_object_get(port, "id"), e->nb.port_id, &e->nb.port_subtype, false))
		return bad(err, errlen, "interface %s: no port id", ifname);
	if (name) {
		put_text(e->nb.system_name, name, strlen(name));
		e->nb.has_system_name = true;
	}
	descr = json_object_get(port, "descr");
	if (json_is_string(descr)) {
		put_text(e->nb.port_description, json_string_value(descr),
			 json_string_length(descr));
		e->nb.has_port_description = true;
	}
	if (cli_ttl(json_object_get(port, "ttl"), &e->nb.ttl))
		return bad(err, errlen, "interface %s: ttl is not a number of seconds", ifname);
	return 0;
}

struct cli_acc {
	struct lldp_cli_nb *e;
	size_t n, cap;
};

/* One {"eth2": {...}} member; an interface already read keeps its first neighbour. */
static int cli_add(struct cli_acc *a, const char *ifname, json_t *v, char *err, size_t errlen)
{
	int r;

	if (!ifname[0] || strlen(ifname) >= RW_NAME_MAX)
		return bad(err, errlen, "an interface name of %zu bytes", strlen(ifname));
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->e[i].ifname, ifname))
			return 0;
	if (a->n >= LLDP_CLI_MAX_NB)
		return bad(err, errlen, "more than %d interfaces", LLDP_CLI_MAX_NB);
	if (array_grow(&a->e, &a->cap, a->n, sizeof(*a->e), 8))
		return -ENOMEM;
	r = cli_neighbour(ifname, v, &a->e[a->n], err, errlen);
	if (!r)
		a->n++;
	return r;
}

static int cli_members(struct cli_acc *a, json_t *obj, char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	int r;

	json_object_foreach(obj, k, v)
	{
		r = cli_add(a, k, v, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

int lldp_json_parse(const char *buf, size_t len, struct lldp_cli_nb **out, size_t *n, char *err,
		    size_t errlen)
{
	struct cli_acc a = { 0 };
	json_error_t je;
	json_t *root, *lldp, *ifs, *el;
	size_t i;
	int r = 0;

	*out = NULL;
	*n = 0;
	root = json_loadb(buf, len, 0, &je);
	if (!root)
		return bad(err, errlen, "line %d column %d: %s", je.line, je.column, je.text);
	lldp = json_object_get(root, "lldp");
	if (!json_is_object(lldp)) {
		r = bad(err, errlen, "no \"lldp\" object");
		goto out_root;
	}
	ifs = json_object_get(lldp, "interface");
	/* one neighbour: {"eth2": {...}}; several: [{"eth2": {...}}, {"eth3": {...}}] */
	if (json_is_object(ifs)) {
		r = cli_members(&a, ifs, err, errlen);
	} else if (json_is_array(ifs)) {
		json_array_foreach(ifs, i, el)
		{
			r = json_is_object(el)
				? cli_members(&a, el, err, errlen)
				: bad(err, errlen, "interface %zu: not an object", i);
			if (r)
				break;
		}
	} else if (ifs) {
		r = bad(err, errlen, "\"interface\" is neither an object nor an array");
	}
	if (r) {
		free(a.e);
		goto out_root;
	}
	*out = a.e;
	*n = a.n;
out_root:
	json_decref(root);
	return r;
}
