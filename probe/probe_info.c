// SPDX-License-Identifier: MIT
/* Reading a peer's /api/v1/probe (probe_info.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "probe_info.h"
#include "probe_pkt.h"

int probe_info_parse(const char *body, size_t len, struct probe_info *pi, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc, *ports, *e;
	const char *gid = NULL, *dev = "";
	json_int_t qpn = -1, qkey = -1, port = 0, mtu = 0;
	int r = -EBADMSG;

	memset(pi, 0, sizeof(*pi));
	doc = json_loadb(body, len, 0, &je);
	if (!doc || !json_is_object(doc)) {
		snprintf(err, errlen, "not rocewatch probe info: %s",
			 doc ? "not a JSON object" : je.text);
		goto out;
	}
	ports = json_object_get(doc, "ports");
	e = json_is_array(ports) ? json_array_get(ports, 0) : NULL;
	if (!e ||
	    json_unpack_ex(e, &je, 0, "{s:s, s:I, s:I, s?:s, s?:I, s?:I}", "gid", &gid, "qpn", &qpn,
			   "qkey", &qkey, "device", &dev, "port", &port, "active_mtu", &mtu)) {
		snprintf(err, errlen, "not rocewatch probe info: %s",
			 !json_is_array(ports)	   ? "no \"ports\" array"
			 : !json_array_size(ports) ? "no probe port (the node has no RoCE port "
						     "with an IPv4 GID)"
						   : je.text);
		goto out;
	}
	if (inet_pton(AF_INET6, gid, pi->gid_raw) != 1 || qpn <= 0 || qpn > 0xffffff || qkey < 0 ||
	    qkey > 0xffffffffLL || port < 0 || port > 255 || mtu < 0 || mtu > PROBE_MAX_SIZE) {
		snprintf(
		    err, errlen,
		    "not rocewatch probe info: GID '%.48s', QPN %lld, Q_Key %lld, port %lld or "
		    "active_mtu %lld out of range",
		    gid, (long long)qpn, (long long)qkey, (long long)port, (long long)mtu);
		goto out;
	}
	snprintf(pi->gid, sizeof(pi->gid), "%s", gid);
	snprintf(pi->device, sizeof(pi->device), "%s", dev);
	pi->qpn = (uint32_t)qpn;
	pi->qkey = (uint32_t)qkey;
	pi->port = (unsigned)port;
	pi->active_mtu = (unsigned)mtu;
	r = 0;
out:
	json_decref(doc);
	/* jansson quotes the input near an error: a newline or escape from a peer stays out */
	for (char *c = err; r && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return r;
}
