// SPDX-License-Identifier: MIT
/*
 * The fleet probe end to end above the verbs calls: slices and results as
 * they travel (src/probe/probe_slice.h, hostile ones too), the executor of
 * serve (src/probe/probe_exec.h) against a link that drops, pushes back and
 * runs late, and the coordinator (src/probe/probe_fleet.h) over the simulated
 * transport (probe_sim.h) with faults and a node that dies mid-run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe_ahs.h"
#include "probe_sim.h"

static void sample_slice(struct probe_slice *s, struct probe_slice_port *ports,
			 struct probe_slice_entry *e)
{
	memset(s, 0, sizeof(*s));
	s->plan = 0x0123456789abcdefULL;
	s->session = 77;
	snprintf(s->node, sizeof(s->node), "gpu\"01\n");
	s->start_ns = 1000000000000LL;
	s->slot_ns = 1750000;
	s->probe_ns = 125000;
	s->wait_ns = 250000000;
	s->n_slots = 3;
	s->repeats = 2;
	s->paths = 8;
	s->dscp = 26;
	strcpy(ports[0].device, "mlx5_0");
	ports[0].port = 1;
	strcpy(ports[0].gid, "::ffff:10.0.0.1");
	strcpy(ports[1].device, "mlx5_1");
	ports[1].port = 1;
	strcpy(ports[1].gid, "::ffff:10.1.0.1");
	s->ports = ports;
	s->n_ports = 2;
	e[0] = (struct probe_slice_entry){ .slot = 0,
					   .mtu = 4096,
					   .port = 0,
					   .labels = 8,
					   .kind = PROBE_PAIR_RAIL,
					   .qpn = 0xabcdef };
	e[1] = (struct probe_slice_entry){
		.slot = 1, .mtu = 1024, .port = 1, .labels = 0, .kind = PROBE_PAIR_HOST, .qpn = 17
	};
	e[2] = (struct probe_slice_entry){
		.slot = 2, .mtu = 4096, .port = 1, .labels = 0, .kind = PROBE_PAIR_LOOP, .qpn = 18
	};
	for (int k = 0; k < 3; k++)
		for (int b = 0; b < 16; b++)
			e[k].gid[b] = (uint8_t)(k * 16 + b);
	s->e = e;
	s->n = 3;
}

static void slice_round_trip(void **state)
{
	struct probe_slice s, d;
	struct probe_slice_port ports[2];
	struct probe_slice_entry e[3];
	struct strbuf sb = { 0 };
	char err[256];

	(void)state;
	sample_slice(&s, ports, e);
	assert_int_equal(probe_slice_encode(&sb, &s), 0);
	assert_int_equal(probe_slice_decode(sb.buf, sb.len, &d, err, sizeof(err)), 0);
	assert_true(d.plan == s.plan);
	assert_string_equal(d.node, s.node);
	assert_true(d.start_ns == s.start_ns && d.slot_ns == s.slot_ns && d.wait_ns == s.wait_ns);
	assert_int_equal(d.n_slots, 3);
	assert_int_equal(d.n_ports, 2);
	assert_string_equal(d.ports[1].gid, "::ffff:10.1.0.1");
	assert_int_equal(d.n, 3);
	assert_memory_equal(d.e, e, sizeof(e));
	probe_slice_free(&d);
	sb_free(&sb);
}

/* Hostile plans: each refused with a line that names what is wrong. */
static void slice_hostile(void **state)
{
	static const struct {
		const char *body, *err;
	} cases[] = {
		{ "{}", "plan: not a header line and a data line" },
		{ "[1]\n", "plan: not a JSON object" },
		{ "{\"version\":2}\n", "plan: version 2, this rocewatch reads 1" },
		{ "{\"version\":1,\"plan\":\"xyz\"}\n", "\"plan\": not 16 hex digits" },
		{ "{\"version\":1,\"plan\":\"0123456789abcdef\",\"node\":\"n\",\"session\":1,"
		  "\"start_ns\":1,\"slot_ns\":5,\"probe_ns\":1,\"wait_ns\":0,\"slots\":1,"
		  "\"repeats\":1,\"paths\":0,\"dscp\":26}\n",
		  "\"slot_ns\": 5 out of range 1000..1000000000" },
		{ "{\"version\":1,\"plan\":\"0123456789abcdef\",\"node\":\"n\",\"session\":1,"
		  "\"start_ns\":1,\"slot_ns\":5000,\"probe_ns\":1,\"wait_ns\":0,\"slots\":1,"
		  "\"repeats\":1,\"paths\":0,\"dscp\":26,\"ports\":[{\"device\":\"d\"}]}\n",
		  "\"ports\"[0]: \"gid\": missing" },
		{ "{\"version\":1,\"plan\":\"0123456789abcdef\",\"node\":\"n\",\"session\":1,"
		  "\"start_ns\":1,\"slot_ns\":5000,\"probe_ns\":1,\"wait_ns\":0,\"slots\":1,"
		  "\"repeats\":1,\"paths\":0,\"dscp\":26,\"ports\":[],\"entries\":1}\n!!\n",
		  "data line: not base64 of 1 entries of 28 bytes" },
		/* one entry, port 0 of no ports */
		{ "{\"version\":1,\"plan\":\"0123456789abcdef\",\"node\":\"n\",\"session\":1,"
		  "\"start_ns\":1,\"slot_ns\":5000,\"probe_ns\":1,\"wait_ns\":0,\"slots\":1,"
		  "\"repeats\":1,\"paths\":0,\"dscp\":26,\"ports\":[],\"entries\":1}"
		  "\nAAAAABAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAA==\n",
		  "entry 0: slot 0 (of 1, in order), port 0 (of 0), 0 flow labels (of 0), kind 0, "
		  "MTU 4096 or QPN 1 out of range" },
		{ "{\"version\":1,\"entries\":1e400}\n", "plan: not a JSON object: real number "
							 "overflow near '1e400'" },
	};
	struct probe_slice d;
	char err[256];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		assert_int_equal(
		    probe_slice_decode(cases[k].body, strlen(cases[k].body), &d, err, sizeof(err)),
		    -EBADMSG);
		assert_string_equal(err, cases[k].err);
		probe_slice_free(&d);
	}
}

static void results_round_trip(void **state)
{
	struct probe_result r[2] = { { .sent = { 2, 2, 2 },
				       .recv = { 2, 1, 0 },
				       .damaged = 1,
				       .labels_sent = 8,
				       .labels_lost = 0x81,
				       .rtt_ns = 5123 },
				     { .sent = { 2, 2 }, .rtt_ns = PROBE_RTT_NONE } },
			    d[2];
	struct probe_ah_stats ah, ah_in = { .made = 18,
					    .failed = 1,
					    .lazy = 2,
					    .create_ns = 4500000,
					    .max_ns = 1000000,
					    .ready_ns = -1 };
	struct strbuf sb = { 0 };
	char err[256];
	const char *bad_ah = "{\"version\":1,\"plan\":\"0000000000000001\",\"node\":\"n\","
			     "\"state\":\"done\",\"entries\":0,\"address_handles\":{\"made\":-1,"
			     "\"failed\":0,\"lazy\":0,\"create_seconds\":0,\"max_seconds\":0,"
			     "\"ready_seconds\":null,\"before_start\":true}}\n\n";
	const char *liar = "{\"version\":1,\"plan\":\"0000000000000001\",\"node\":\"n\","
			   "\"state\":\"done\",\"entries\":1}\nAQEBCQkJAAAAAAAAAAAAAA==\n";

	(void)state;
	assert_int_equal(probe_results_encode(&sb, 1, "n", true, r, 2, NULL), 0);
	assert_int_equal(probe_results_decode(sb.buf, sb.len, 1, 2, d, &ah, err, sizeof(err)), 0);
	assert_memory_equal(d, r, sizeof(r));
	assert_false(ah.known); /* a serve that does not say */
	/* the address handles as they travel: microseconds survive, null ready_seconds */
	sb_reset(&sb);
	assert_int_equal(probe_results_encode(&sb, 1, "n", true, r, 2, &ah_in), 0);
	assert_non_null(strstr(sb.buf, "\"address_handles\":{\"made\":18,"));
	assert_int_equal(probe_results_decode(sb.buf, sb.len, 1, 2, d, &ah, err, sizeof(err)), 0);
	assert_true(ah.known);
	assert_int_equal(ah.made, 18);
	assert_int_equal(ah.failed, 1);
	assert_int_equal(ah.lazy, 2);
	assert_true(ah.create_ns > 4499000 && ah.create_ns < 4501000);
	assert_true(ah.max_ns > 999000 && ah.max_ns < 1001000);
	assert_int_equal(ah.ready_ns, -1);
	assert_false(ah.before_start);
	sb_reset(&sb);
	assert_int_equal(probe_results_encode(&sb, 1, "n", true, r, 2, NULL), 0);
	/* another plan, another count, still running */
	assert_int_equal(probe_results_decode(sb.buf, sb.len, 2, 2, d, NULL, err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err, "\"plan\": not this plan's id");
	assert_int_equal(probe_results_decode(sb.buf, sb.len, 1, 3, d, NULL, err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err, "\"entries\": 2 results for a slice of 3");
	sb_reset(&sb);
	assert_int_equal(probe_results_encode(&sb, 1, "n", false, NULL, 0, NULL), 0);
	assert_int_equal(probe_results_decode(sb.buf, sb.len, 1, 2, d, NULL, err, sizeof(err)), 1);
	/* more replies than probes is no count */
	assert_int_equal(probe_results_decode(liar, strlen(liar), 1, 1, d, NULL, err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err, "result 0: more replies than probes, or over 32 flow labels");
	assert_int_equal(
	    probe_results_decode(bad_ah, strlen(bad_ah), 1, 0, d, &ah, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "\"address_handles\": \"made\": not a number in range");
	sb_free(&sb);
}

/* A link that loses label 3 and the 4096-byte probes, pushes back once, and answers late. */
struct fake {
	struct probe_exec *ex;
	int64_t now;
	int nobufs;
	unsigned sent;
};

static int fake_send(void *ctx, size_t entry, const struct probe_slice_entry *e, unsigned fl,
		     struct probe_hdr *h)
{
	struct fake *f = ctx;
	struct probe_hdr r = *h;

	(void)entry, (void)e;
	if (f->sent == 3 && f->nobufs++ == 0)
		return -ENOBUFS;
	f->sent++;
	h->t_send_ns = (uint64_t)f->now;
	if (fl == 3 || h->size == 4096)
		return 0;
	r.t_send_ns = h->t_send_ns;
	r.type = PROBE_REPLY;
	probe_exec_reply(f->ex, &r, true, f->now + 7000);
	probe_exec_reply(f->ex, &r, true, f->now + 9000); /* a duplicate: not counted */
	return 0;
}

static void executor(void **state)
{
	struct probe_slice s;
	struct probe_slice_port ports[2];
	struct probe_slice_entry e[3];
	struct probe_exec ex;
	struct fake f = { .ex = &ex };
	struct probe_link link = { .send = fake_send, .ctx = &f };
	const struct probe_result *r;
	int64_t t, steps = 0;

	(void)state;
	sample_slice(&s, ports, e);
	assert_int_equal(probe_exec_init(&ex, &s, &link), 0);
	/* nothing before the start */
	assert_true(probe_exec_step(&ex, s.start_ns - 1) == s.start_ns);
	for (t = s.start_ns; t != INT64_MAX; t = probe_exec_step(&ex, t)) {
		f.now = t;
		steps++;
	}
	/* the lost probes are waited for, then given up */
	assert_false(probe_exec_done(&ex, f.now));
	assert_true(probe_exec_done(&ex, ex.last_due_ns + s.wait_ns));
	r = probe_exec_results(&ex);
	/* entry 0: 64, 1024, 4096 x 2, then 8 labels; 4096 and label 3 lost */
	assert_int_equal(r[0].sent[0], 2);
	assert_int_equal(r[0].recv[0], 2);
	assert_int_equal(r[0].recv[1], 2);
	assert_int_equal(r[0].sent[2], 2);
	assert_int_equal(r[0].recv[2], 0);
	assert_int_equal(r[0].labels_sent, 8);
	assert_int_equal(r[0].labels_lost, 1u << 2);
	assert_int_equal(r[0].rtt_ns, 7000);
	/* entry 1: MTU 1024, two sizes, no labels */
	assert_int_equal(r[1].sent[0], 2);
	assert_int_equal(r[1].sent[1], 2);
	assert_int_equal(r[1].sent[2], 0);
	assert_int_equal(r[1].recv[1], 2);
	assert_int_equal(ex.sent, 14 + 4 + 6);
	probe_exec_free(&ex);

	/*
	 * woken two slots late: the late slots' probes are not sent on time, the rest are;
	 * the second pass sends them, slot s at start + (n_slots + s) * slot_ns
	 */
	f = (struct fake){ .ex = &ex, .nobufs = 1 };
	assert_int_equal(probe_exec_init(&ex, &s, &link), 0);
	t = s.start_ns + 2 * s.slot_ns + s.slot_ns / 2;
	for (f.now = t; (t = probe_exec_step(&ex, f.now)) != INT64_MAX; f.now = t) {
		if (ex.pass == 1)
			assert_true(t >= s.start_ns + (int64_t)s.n_slots * s.slot_ns);
		/* slot 2 is not run again: none of its probes was late */
		assert_true(ex.pass != 1 || ex.slot < 2);
	}
	r = probe_exec_results(&ex);
	assert_int_equal(r[0].sent[0], 2);
	assert_int_equal(r[0].recv[0], 2);
	assert_int_equal(r[0].labels_sent, 8);
	assert_int_equal(r[0].labels_lost, 1u << 2);
	assert_int_equal(r[1].sent[0], 2);
	assert_int_equal(r[2].sent[0], 2);
	assert_true(ex.late == 0 && ex.retried == 14 + 4 && ex.sent == 14 + 4 + 6);
	/* the wait counts from the second pass's last probe */
	assert_true(ex.last_due_ns >= s.start_ns + (int64_t)(s.n_slots + 1) * s.slot_ns);
	assert_true(ex.replied < ex.sent); /* the fake loses 4096 and label 3 */
	assert_false(probe_exec_done(&ex, ex.last_due_ns + s.wait_ns - 1));
	assert_true(probe_exec_done(&ex, ex.last_due_ns + s.wait_ns));
	probe_exec_free(&ex);

	/* late on both passes: given up, not sent, and said */
	f = (struct fake){ .ex = &ex, .nobufs = 1 };
	assert_int_equal(probe_exec_init(&ex, &s, &link), 0);
	t = s.start_ns + 2 * s.slot_ns + s.slot_ns / 2;
	for (f.now = t; (t = probe_exec_step(&ex, f.now)) != INT64_MAX; f.now = t)
		if (ex.pass == 1)
			t = s.start_ns + (int64_t)(s.n_slots + 2) * s.slot_ns + s.slot_ns / 2;
	r = probe_exec_results(&ex);
	assert_int_equal(r[0].sent[0], 0);
	assert_int_equal(r[0].labels_sent, 0);
	assert_int_equal(r[1].sent[0], 0);
	assert_int_equal(r[2].sent[0], 2);
	assert_true(ex.late == 14 + 4 && ex.retried == 0 && ex.sent == 6);
	assert_true(probe_exec_done(&ex, ex.last_due_ns + s.wait_ns));
	probe_exec_free(&ex);
}

/* The coordinator over the simulated transport: faults found, the dead node named. */
static void end_to_end(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts po;
	struct probe_fleet_opts fo = { .plan_id = 42, .session = 7, .dscp = 26, .batch = 10 };
	struct probe_fleet_out out;
	struct probe_transport t;
	struct sim sim;
	char err[256];
	size_t seen = 0;
	uint64_t made = 0;

	(void)state;
	assert_int_equal(fabric_init(&fb, 48, 4, 8, true), 0);
	fabric_fault(&fb, FAB_PORT_CABLE, 5, 2, 0, 0, 0);
	fabric_fault(&fb, FAB_SPINE, 0, 1, 3, 6, 0);
	fabric_fault(&fb, FAB_NODE_DOWN, 20, 0, 0, 0, 0);
	probe_plan_defaults(&po);
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &po, err, sizeof(err)), 0);
	assert_int_equal(sim_init(&sim, &fb, &p, true), 0);
	t = sim_transport(&sim);
	assert_int_equal(probe_fleet_run(&p, sim.addr, &t, &fo, &out), 0);
	assert_int_equal(out.failed, 1);
	assert_non_null(out.err[20]);
	assert_string_equal(out.err[20], "no results: connection refused");
	assert_null(out.res[20]);
	/* one sender per port and slot: 14 probes at most, the slot's worst pair */
	assert_int_equal(sim.heard_max, 14);
	for (size_t k = 0; k < out.f.n; k++) {
		const struct probe_finding *f = &out.f.f[k];

		printf("# %s: %s\n", probe_class_name(f->cls), f->evidence);
		if (f->cls == PROBE_NODE_RAIL && f->nodes[0] == 5 && f->n_rails == 1 &&
		    f->rails[0] == 2)
			seen |= 1;
		else if (f->cls == PROBE_NODE_RAIL && f->nodes[0] == 20 && f->n_rails == 4)
			seen |= 2;
		else if (f->cls == PROBE_SPINE_PATHS && !strcmp(f->leaf, "leaf-r1-3"))
			seen |= 4;
	}
	assert_int_equal(out.f.n, 3);
	assert_int_equal(seen, 7);
	assert_true(out.st.slice_bytes > 0 && out.st.result_bytes > 0);
	/* the 47 nodes that answered said what their address handles took: summed, the max */
	assert_int_equal(out.ah_nodes, 47);
	assert_int_equal(out.ah_late, 0);
	assert_true(out.ah.known && out.ah.before_start);
	for (size_t i = 0; i < p.n_nodes; i++)
		made += i == 20 ? 0 : probe_plan_slice_len(&p, i);
	assert_int_equal(out.ah.made, made);
	assert_int_equal(out.ah.create_ns, 1000 * (int64_t)made);
	assert_int_equal(out.ah.max_ns, 1000);
	assert_true(out.ah.ready_ns > 0);
	probe_fleet_out_free(&out, p.n_nodes);
	sim_free(&sim);
	probe_plan_free(&p);
	fabric_free(&fb);
}

/*
 * A slice's address handle table without a device: one handle per (port,
 * GID, flow label) its entries use, made lazily on the send path or ahead by
 * its thread, each once; a port without its probe QP gets none.
 */
static void ahs_table(void **state)
{
	struct probe_slice_port ports[2] = { { .device = "rxe0", .port = 1 },
					     { .device = "rxe1", .port = 1 } };
	struct probe_slice_entry e[4] = {
		{ .slot = 0, .port = 0, .labels = 2, .gid = { [15] = 1 } },
		{ .slot = 1, .port = 0, .labels = 0, .gid = { [15] = 1 } },
		{ .slot = 1, .port = 1, .labels = 0, .gid = { [15] = 1 } },
		{ .slot = 2, .port = 0, .labels = 1, .gid = { [15] = 2 } },
	};
	struct probe_slice s = {
		.ports = ports, .n_ports = 2, .e = e, .n = 4, .start_ns = INT64_MAX
	};
	struct probe_ep *ep_of[2] = { NULL, NULL };
	struct probe_ahs *t;
	struct probe_ah_stats st;
	struct ibv_ah *ah;

	(void)state;
	assert_int_equal(probe_ahs_new(&t, &s, ep_of, 0x6a), 0);
	assert_int_equal(probe_ahs_get(t, 0, 1, &ah), -EHOSTUNREACH);
	assert_int_equal(probe_ahs_get(t, 0, 1, &ah), -EHOSTUNREACH); /* tried once */
	assert_int_equal(probe_ahs_get(t, 0, 3, &ah), -EHOSTUNREACH); /* no such label */
	probe_ahs_stats(t, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.ready_ns, -1);
	assert_string_equal(probe_ahs_error(t),
			    "port rxe0/1 to GID ::1 flow label 1: its probe QP is gone");
	/* ahead: the rest of (0, ::1) x 3 labels, (1, ::1), (0, ::2) x 2 */
	assert_int_equal(probe_ahs_start(t), 0);
	for (probe_ahs_stats(t, &st); st.ready_ns < 0; probe_ahs_stats(t, &st))
		usleep(1000);
	assert_int_equal(st.failed, 6);
	assert_int_equal(st.made + st.lazy, 0);
	assert_true(st.before_start);
	assert_null(probe_ahs_find(t, 0, e[0].gid, 0x6a));
	assert_null(probe_ahs_find(t, 1, e[3].gid, 0x6a));
	/* after the run: released by a thread of their own, none given out since */
	probe_ahs_stop(t);
	probe_ahs_release(t, -1);
	assert_int_equal(probe_ahs_get(t, 2, 0, &ah), -EHOSTUNREACH);
	probe_ahs_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slice_round_trip),   cmocka_unit_test(slice_hostile),
		cmocka_unit_test(results_round_trip), cmocka_unit_test(executor),
		cmocka_unit_test(end_to_end),	      cmocka_unit_test(ahs_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
