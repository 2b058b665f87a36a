// SPDX-License-Identifier: MIT
/* The RDMA probe's packet format, RTT percentiles and diagnosis (src/probe/probe_pkt.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "probe_info.h"
#include "probe_pkt.h"

static void packet_layout(void **state)
{
	uint8_t buf[64];
	struct probe_hdr h = { .version = PROBE_VERSION,
			       .type = PROBE_REQUEST,
			       .size = 64,
			       .session = 0xa1b2c3d4,
			       .seq = 0x0102030405060708ULL,
			       .t_send_ns = 0x1122334455667788ULL };
	/* the header as it goes on the wire: network byte order, fields at fixed offsets */
	static const uint8_t want[PROBE_HDR_LEN] = {
		'R', 'W', 'P', 'R', 1, 1, 0, 0, 0,    0,    0,	  64,	0xa1, 0xb2, 0xc3, 0xd4,
		1,   2,	  3,   4,   5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	struct probe_hdr g;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	probe_pkt_encode(buf, &h);
	assert_memory_equal(buf, want, PROBE_HDR_LEN);
	assert_int_equal(probe_pkt_decode(buf, sizeof(buf), &g), 0);
	assert_int_equal(g.type, PROBE_REQUEST);
	assert_int_equal(g.size, 64);
	assert_int_equal(g.session, 0xa1b2c3d4);
	assert_true(g.seq == h.seq);
	assert_true(g.t_send_ns == h.t_send_ns);

	/* the reply differs in the type byte only */
	probe_pkt_make_reply(buf);
	assert_int_equal(buf[5], PROBE_REPLY);
	assert_int_equal(probe_pkt_decode(buf, sizeof(buf), &g), 0);
	assert_int_equal(g.type, PROBE_REPLY);
	assert_true(g.seq == h.seq);
}

static void packet_rejects(void **state)
{
	uint8_t buf[PROBE_MAX_SIZE + 8];
	struct probe_hdr h = { .version = PROBE_VERSION,
			       .type = PROBE_REQUEST,
			       .size = 256,
			       .seq = 7 },
			 g;

	(void)state;
	probe_pkt_encode(buf, &h);
	/* short, or a length other than the one it claims */
	assert_int_equal(probe_pkt_decode(buf, PROBE_HDR_LEN - 1, &g), -EBADMSG);
	assert_int_equal(probe_pkt_decode(buf, 255, &g), -EBADMSG);
	assert_int_equal(probe_pkt_decode(buf, 257, &g), -EBADMSG);
	/* a damaged payload byte, anywhere */
	buf[200] ^= 0x01;
	assert_int_equal(probe_pkt_decode(buf, 256, &g), -EILSEQ);
	buf[200] ^= 0x01;
	assert_int_equal(probe_pkt_decode(buf, 256, &g), 0);
	/* not ours: magic, type, version */
	buf[0] = 'X';
	assert_int_equal(probe_pkt_decode(buf, 256, &g), -EBADMSG);
	buf[0] = 'R';
	buf[5] = 9;
	assert_int_equal(probe_pkt_decode(buf, 256, &g), -EBADMSG);
	buf[5] = PROBE_REQUEST;
	buf[4] = 2;
	assert_int_equal(probe_pkt_decode(buf, 256, &g), -EPROTONOSUPPORT);
	buf[4] = PROBE_VERSION;
	/* neighbouring probes carry different payloads: a stale buffer is not a good reply */
	{
		uint8_t other[256];
		struct probe_hdr o = h;

		o.seq = 8;
		probe_pkt_encode(other, &o);
		assert_memory_not_equal(buf + PROBE_HDR_LEN, other + PROBE_HDR_LEN,
					256 - PROBE_HDR_LEN);
	}
	/* the largest probe: a 4096-byte RoCE MTU, and no larger */
	h.size = PROBE_MAX_SIZE;
	probe_pkt_encode(buf, &h);
	assert_int_equal(probe_pkt_decode(buf, PROBE_MAX_SIZE, &g), 0);
}

static void percentiles(void **state)
{
	int64_t one[] = { 5 };
	int64_t ten[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 };
	int64_t hundred[100], r[7] = { 700, 100, 300, 200, 600, 500, 400 };
	struct probe_rtt q;

	(void)state;
	assert_int_equal(probe_percentile(one, 0, 50), 0);
	assert_int_equal(probe_percentile(one, 1, 50), 5);
	assert_int_equal(probe_percentile(one, 1, 99), 5);
	/* nearest rank: ceil(p * n / 100), a measured value, never an interpolation */
	assert_int_equal(probe_percentile(ten, 10, 50), 50);
	assert_int_equal(probe_percentile(ten, 10, 99), 100);
	assert_int_equal(probe_percentile(ten, 10, 90), 90);
	assert_int_equal(probe_percentile(ten, 10, 91), 100);
	assert_int_equal(probe_percentile(ten, 10, 100), 100);
	for (int i = 0; i < 100; i++)
		hundred[i] = i + 1;
	assert_int_equal(probe_percentile(hundred, 100, 50), 50);
	assert_int_equal(probe_percentile(hundred, 100, 99), 99);

	/* summarise sorts; 7 values: p50 is the 4th, p99 the 7th */
	probe_rtt_summarise(r, 7, &q);
	assert_int_equal(q.n, 7);
	assert_int_equal(q.min_ns, 100);
	assert_int_equal(q.p50_ns, 400);
	assert_int_equal(q.p99_ns, 700);
	assert_int_equal(q.max_ns, 700);
	assert_int_equal(q.outliers, 0);

	/* one probe stuck behind a scheduler tick: over 10x the median is an outlier */
	{
		int64_t s[5] = { 1000, 1100, 900, 50000, 1000 };

		probe_rtt_summarise(s, 5, &q);
		assert_int_equal(q.p50_ns, 1000);
		assert_int_equal(q.max_ns, 50000);
		assert_int_equal(q.outliers, 1);
	}
	probe_rtt_summarise(r, 0, &q);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.p50_ns, 0);
}

static const struct probe_thresholds th = { .loss_warning = 0, .loss_critical = 0.05 };

static void set(struct probe_size_result *s, unsigned size, unsigned sent, unsigned received)
{
	memset(s, 0, sizeof(*s));
	s->size = size;
	s->sent = sent;
	s->received = received;
	if (received) {
		s->rtt.n = received;
		s->rtt.min_ns = s->rtt.p50_ns = s->rtt.p99_ns = s->rtt.max_ns = 100000;
	}
}

static void diagnoses(void **state)
{
	struct probe_size_result r[3];
	struct probe_diagnosis d;

	(void)state;
	/* every size back */
	set(&r[0], 64, 20, 20), set(&r[1], 1024, 20, 20), set(&r[2], 4096, 20, 20);
	probe_diagnose(r, 3, 4096, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_OK);
	assert_string_equal(d.text[0], "every size came back");

	/* small sizes back, 4096 not: the MTU on the path, and the peer's port says why */
	set(&r[2], 4096, 20, 0);
	probe_diagnose(r, 3, 4096, 1024, &th, &d);
	assert_int_equal(d.verdict, PROBE_CRITICAL);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.text[0], "MTU on the path: 1024-byte probes come back, 4096-byte "
				       "probes do not (the peer's RoCE active_mtu is 1024)");
	/* both ends at 4096: something between them */
	probe_diagnose(r, 3, 4096, 4096, &th, &d);
	assert_non_null(strstr(d.text[0], "a link or switch port between them"));

	/* nothing back at any size: unreachable, and not three "100 % loss" lines */
	set(&r[0], 64, 20, 0), set(&r[1], 1024, 20, 0);
	probe_diagnose(r, 3, 4096, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_CRITICAL);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.text[0], "unreachable"));

	/* a size this port cannot send */
	set(&r[0], 64, 20, 20), set(&r[1], 1024, 20, 20), set(&r[2], 4096, 0, 0);
	r[2].not_sent = true;
	probe_diagnose(r, 3, 1024, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_CRITICAL);
	assert_string_equal(d.text[0], "MTU on the path: 4096-byte probes cannot be sent, this "
				       "port's RoCE active_mtu is 1024");

	/* loss: 1 of 200 warns (over 0), 40 of 200 is critical (over 5 %) */
	set(&r[0], 64, 200, 199);
	probe_diagnose(r, 1, 4096, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_WARNING);
	assert_string_equal(d.text[0], "loss 0.5% at 64 bytes (1 of 200 lost; over 0%)");
	set(&r[0], 64, 200, 160);
	probe_diagnose(r, 1, 4096, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_CRITICAL);
	assert_string_equal(d.text[0], "loss 20.0% at 64 bytes (40 of 200 lost; over 5%)");

	/* RTT: outliers are said, not judged; a p99 over --rtt-warning warns */
	set(&r[0], 64, 20, 20);
	r[0].rtt.outliers = 1;
	r[0].rtt.max_ns = 31500000;
	r[0].rtt.p50_ns = 2310000;
	r[0].rtt.p99_ns = 31500000;
	probe_diagnose(r, 1, 4096, 4096, &th, &d);
	assert_int_equal(d.verdict, PROBE_OK);
	assert_string_equal(d.text[0], "RTT outliers: 1 of 20 probes at 64 bytes over 10x the "
				       "median 2.31 ms (max 31.5 ms)");
	{
		struct probe_thresholds t = th;

		t.rtt_warning_ns = 10000000;
		probe_diagnose(r, 1, 4096, 4096, &t, &d);
		assert_int_equal(d.verdict, PROBE_WARNING);
		assert_string_equal(d.text[0], "RTT p99 31.5 ms at 64 bytes (over 10 ms)");
	}
	assert_string_equal(probe_verdict_name(PROBE_UNKNOWN), "UNKNOWN");
}

/* /api/v1/probe with every port (serve --probe since issue 37), and hostile ones. */
static void probe_doc_all_ports(void **state)
{
	static const char good[] =
	    "{\"version\":1,\"qkey\":1381452593,\"host\":\"ACS redirects 2 GPU paths\","
	    "\"ports\":[{\"device\":\"mlx5_0\",\"port\":1,\"qpn\":77,\"qkey\":1381452593,"
	    "\"gid\":\"::ffff:10.0.0.1\",\"active_mtu\":4096,\"state\":\"ACTIVE\","
	    "\"role\":\"compute\",\"rail\":\"10.0.0.0/24\",\"leaf\":\"leaf-a\","
	    "\"counters\":{\"link_downed\":3,\"carrier_changes\":5}},"
	    "{\"device\":\"mlx5_1\",\"port\":1,\"qpn\":78,\"qkey\":1381452593,"
	    "\"gid\":\"::ffff:10.1.0.1\",\"active_mtu\":1024,\"state\":\"not active\"}]}";
	static const struct {
		const char *body, *err;
	} bad[] = {
		{ "{\"ports\":{}}", "not rocewatch probe info: no \"ports\" array" },
		{ "{\"ports\":[{\"gid\":\"::1\",\"qpn\":1,\"qkey\":1,\"rail\":\"a\\nb\"}]}",
		  "not rocewatch probe info: port 1: \"rail\": holds a control character" },
		{ "{\"ports\":[{\"gid\":\"::1\",\"qpn\":1,\"qkey\":1,\"device\":\"d\",\"port\":1},"
		  "{\"gid\":\"::2\",\"qpn\":2,\"qkey\":1,\"device\":\"d\",\"port\":1}]}",
		  "not rocewatch probe info: port 2: d/1 listed twice" },
		{ "{\"ports\":[{\"gid\":\"::1\",\"qpn\":1,\"qkey\":1,\"counters\":{\"link_downed\":"
		  "-1}}]}",
		  "not rocewatch probe info: port 1: \"counters\": \"link_downed\": not a count" },
		{ "{\"ports\":[{\"gid\":\"x\",\"qpn\":1,\"qkey\":1}]}",
		  "not rocewatch probe info: port 1: GID 'x', QPN 1, Q_Key 1, port 0 or active_mtu "
		  "0 "
		  "out of range" },
	};
	struct probe_doc d;
	char err[256], many[8192];
	size_t n;

	(void)state;
	assert_int_equal(probe_info_parse_all(good, strlen(good), &d, err, sizeof(err)), 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.host, "ACS redirects 2 GPU paths");
	assert_string_equal(d.ports[0].rail, "10.0.0.0/24");
	assert_string_equal(d.ports[0].leaf, "leaf-a");
	assert_string_equal(d.ports[0].role, "compute");
	assert_true(d.ports[0].active);
	assert_true(d.ports[0].link_downed == 3 && d.ports[0].carrier_changes == 5 &&
		    d.ports[0].symbol_errors == -1);
	assert_false(d.ports[1].active);
	assert_string_equal(d.ports[1].rail, "");
	assert_int_equal(d.ports[1].active_mtu, 1024);
	probe_doc_free(&d);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(
		    probe_info_parse_all(bad[k].body, strlen(bad[k].body), &d, err, sizeof(err)),
		    -EBADMSG);
		assert_string_equal(err, bad[k].err);
	}
	/* more ports than a node can have */
	n = (size_t)snprintf(many, sizeof(many), "{\"ports\":[");
	for (int k = 0; k < 65; k++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{}", k ? "," : "");
	snprintf(many + n, sizeof(many) - n, "]}");
	assert_int_equal(probe_info_parse_all(many, strlen(many), &d, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "not rocewatch probe info: 65 ports, at most 64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_doc_all_ports), cmocka_unit_test(packet_layout),
		cmocka_unit_test(packet_rejects),      cmocka_unit_test(percentiles),
		cmocka_unit_test(diagnoses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
