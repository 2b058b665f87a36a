// SPDX-License-Identifier: MIT
/* Reading a peer's /api/v1/probe (probe_info.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "probe_info.h"
#include "probe_pkt.h"

/* jansson quotes the input near an error: a newline or escape from a peer stays out */
static int clean(int r, char *err)
{
	for (char *c = err; r && *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	return r;
}

/* An optional string member: fits and is printable, else -EBADMSG naming it. */
static int opt_str(json_t *o, const char *key, char *dst, size_t size, char *err, size_t errlen)
{
	json_t *x = json_object_get(o, key);
	const char *v;

	dst[0] = 0;
	if (!x)
		return 0;
	if (!json_is_string(x) || json_string_length(x) >= size) {
		snprintf(err, errlen, "\"%s\": not a string of at most %zu bytes", key, size - 1);
		return -EBADMSG;
	}
	v = json_string_value(x);
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(err, errlen, "\"%s\": holds a control character", key);
			return -EBADMSG;
		}
	if (strlen(v) != json_string_length(x)) {
		snprintf(err, errlen, "\"%s\": holds a NUL", key);
		return -EBADMSG;
	}
	memcpy(dst, v, json_string_length(x) + 1);
	return 0;
}

static int opt_count(json_t *o, const char *key, int64_t *v, char *err, size_t errlen)
{
	json_t *x = json_object_get(o, key);

	*v = -1;
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0) {
		snprintf(err, errlen, "\"counters\": \"%s\": not a count", key);
		return -EBADMSG;
	}
	*v = json_integer_value(x);
	return 0;
}

static int parse_port(json_t *e, struct probe_info *pi, char *err, size_t errlen)
{
	json_error_t je;
	const char *gid = NULL, *state = NULL;
	json_int_t qpn = -1, qkey = -1, port = 0, mtu = 0;
	json_t *c;

	memset(pi, 0, sizeof(*pi));
	pi->link_downed = pi->carrier_changes = pi->symbol_errors = -1;
	if (!json_is_object(e) ||
	    json_unpack_ex(e, &je, 0, "{s:s, s:I, s:I, s?:I, s?:I, s?:s}", "gid", &gid, "qpn", &qpn,
			   "qkey", &qkey, "port", &port, "active_mtu", &mtu, "state", &state)) {
		snprintf(err, errlen, "%s", json_is_object(e) ? je.text : "not an object");
		return -EBADMSG;
	}
	if (inet_pton(AF_INET6, gid, pi->gid_raw) != 1 || qpn <= 0 || qpn > 0xffffff || qkey < 0 ||
	    qkey > 0xffffffffLL || port < 0 || port > 255 || mtu < 0 || mtu > PROBE_MAX_SIZE) {
		snprintf(err, errlen,
			 "GID '%.48s', QPN %lld, Q_Key %lld, port %lld or active_mtu %lld out of "
			 "range",
			 gid, (long long)qpn, (long long)qkey, (long long)port, (long long)mtu);
		return -EBADMSG;
	}
	if (opt_str(e, "device", pi->device, sizeof(pi->device), err, errlen) ||
	    opt_str(e, "role", pi->role, sizeof(pi->role), err, errlen) ||
	    opt_str(e, "rail", pi->rail, sizeof(pi->rail), err, errlen) ||
	    opt_str(e, "leaf", pi->leaf, sizeof(pi->leaf), err, errlen))
		return -EBADMSG;
	c = json_object_get(e, "counters");
	if (c && !json_is_object(c)) {
		snprintf(err, errlen, "\"counters\": not an object");
		return -EBADMSG;
	}
	if (c && (opt_count(c, "link_downed", &pi->link_downed, err, errlen) ||
		  opt_count(c, "carrier_changes", &pi->carrier_changes, err, errlen) ||
		  opt_count(c, "symbol_errors", &pi->symbol_errors, err, errlen)))
		return -EBADMSG;
	snprintf(pi->gid, sizeof(pi->gid), "%s", gid);
	pi->qpn = (uint32_t)qpn;
	pi->qkey = (uint32_t)qkey;
	pi->port = (unsigned)port;
	pi->active_mtu = (unsigned)mtu;
	/* a serve from before "state" existed published ACTIVE ports only in practice */
	pi->active = !state || !strcmp(state, "ACTIVE");
	return 0;
}

static json_t *load_ports(const char *body, size_t len, json_t **doc, char *err, size_t errlen)
{
	json_error_t je;
	json_t *ports;

	*doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!*doc || !json_is_object(*doc)) {
		snprintf(err, errlen, "not rocewatch probe info: %s",
			 *doc ? "not a JSON object" : je.text);
		return NULL;
	}
	ports = json_object_get(*doc, "ports");
	if (!json_is_array(ports)) {
		snprintf(err, errlen, "not rocewatch probe info: no \"ports\" array");
		return NULL;
	}
	return ports;
}

int probe_info_parse(const char *body, size_t len, struct probe_info *pi, char *err, size_t errlen)
{
	json_t *doc, *ports;
	char why[200];
	int r = -EBADMSG;

	memset(pi, 0, sizeof(*pi));
	ports = load_ports(body, len, &doc, err, errlen);
	if (!ports)
		goto out;
	if (!json_array_size(ports)) {
		snprintf(err, errlen,
			 "not rocewatch probe info: no probe port (the node has no RoCE "
			 "port with an IPv4 GID)");
		goto out;
	}
	if (parse_port(json_array_get(ports, 0), pi, why, sizeof(why))) {
		snprintf(err, errlen, "not rocewatch probe info: %s", why);
		goto out;
	}
	r = 0;
out:
	json_decref(doc);
	return clean(r, err);
}

void probe_doc_free(struct probe_doc *d)
{
	if (!d)
		return;
	free(d->ports);
	memset(d, 0, sizeof(*d));
}

int probe_info_parse_all(const char *body, size_t len, struct probe_doc *d, char *err,
			 size_t errlen)
{
	json_t *doc, *ports, *e;
	char why[200];
	size_t k;
	int r = -EBADMSG;

	memset(d, 0, sizeof(*d));
	ports = load_ports(body, len, &doc, err, errlen);
	if (!ports)
		goto out;
	if (json_array_size(ports) > PROBE_INFO_MAX_PORTS) {
		snprintf(err, errlen, "not rocewatch probe info: %zu ports, at most %d",
			 json_array_size(ports), PROBE_INFO_MAX_PORTS);
		goto out;
	}
	if (opt_str(doc, "host", d->host, sizeof(d->host), why, sizeof(why))) {
		snprintf(err, errlen, "not rocewatch probe info: %s", why);
		goto out;
	}
	d->ports = calloc(json_array_size(ports) ? json_array_size(ports) : 1, sizeof(*d->ports));
	if (!d->ports) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	json_array_foreach(ports, k, e)
	{
		if (parse_port(e, &d->ports[k], why, sizeof(why))) {
			snprintf(err, errlen, "not rocewatch probe info: port %zu: %s", k + 1, why);
			goto out;
		}
		for (size_t j = 0; j < k; j++)
			if (!strcmp(d->ports[j].device, d->ports[k].device) &&
			    d->ports[j].port == d->ports[k].port) {
				snprintf(
				    err, errlen,
				    "not rocewatch probe info: port %zu: %.64s/%u listed twice",
				    k + 1, d->ports[k].device, d->ports[k].port);
				goto out;
			}
		d->n = k + 1;
	}
	r = 0;
out:
	json_decref(doc);
	if (r)
		probe_doc_free(d);
	return clean(r, err);
}
