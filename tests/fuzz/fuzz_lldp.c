// SPDX-License-Identifier: MIT
/*
 * The lldp collector's parsers, one per input: byte 0 picks it, the rest is
 * what it reads.
 *   even  a received frame to lldp_parse_frame(), then the neighbour table and
 *         the facts (lldp_table_heard(), lldp_fill())
 *   odd   an lldpcli -f json answer to lldp_json_parse()
 * Contract: 0, or -EBADMSG with a reason (-ENOMEM for the JSON); what is
 * parsed is terminated, printable ASCII and shorter than RW_STR_MAX, IDs are
 * never empty, a TTL fits 16 bits, and an interface is read once.
 */
#include <errno.h>

#include "fuzz.h"
#include "lldp.h"

static bool clean(const char *s)
{
	size_t n = strnlen(s, RW_STR_MAX);

	if (n >= RW_STR_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static void check_nb(const struct lldp_nb *nb)
{
	FUZZ_CHECK(clean(nb->chassis_id) && clean(nb->port_id), "unclean ID");
	FUZZ_CHECK(clean(nb->system_name) && clean(nb->port_description), "unclean text");
	FUZZ_CHECK(nb->chassis_id[0] && nb->port_id[0], "an empty ID");
	FUZZ_CHECK(nb->has_system_name || !nb->system_name[0], "a name it did not have");
	FUZZ_CHECK(nb->has_port_description || !nb->port_description[0],
		   "a description it did not have");
	FUZZ_CHECK(nb->ttl <= 65535, "TTL %u", nb->ttl);
}

static void frame(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_copy(data, size), src[6];
	struct lldp_table t = { 0 };
	struct node_model m;
	struct lldp_nb nb;
	char err[160] = "";
	int r = lldp_parse_frame(buf, size, &nb, src, err, sizeof(err));

	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	if (!r) {
		check_nb(&nb);
		r = lldp_table_heard(&t, 3, &nb, 0);
		FUZZ_CHECK(r == (nb.ttl ? 1 : 0), "table: %d for TTL %u", r, nb.ttl);
		model_init(&m);
		lldp_fill(model_add_netdev(&m, "eth2"), &nb, "frames");
		model_free(&m);
		lldp_table_free(&t);
	}
	free(buf);
}

static void json(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), err[160] = "";
	struct lldp_cli_nb *e;
	size_t n;
	int r = lldp_json_parse(buf, size, &e, &n, err, sizeof(err));

	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM, "returned %d", r);
	FUZZ_CHECK(r != -EBADMSG || err[0], "-EBADMSG without a reason");
	FUZZ_CHECK(r || (n == 0) == (e == NULL), "%zu entries at %p", n, (void *)e);
	FUZZ_CHECK(!r || (!e && !n), "an answer with an error");
	FUZZ_CHECK(n <= LLDP_CLI_MAX_NB, "%zu entries", n);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(e[i].ifname[0] && strlen(e[i].ifname) < RW_NAME_MAX, "interface name");
		check_nb(&e[i].nb);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(e[i].ifname, e[j].ifname), "%s twice", e[i].ifname);
	}
	free(e);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		json(data + 1, size - 1);
	else
		frame(data + 1, size - 1);
	return 0;
}
