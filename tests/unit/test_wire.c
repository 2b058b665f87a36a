// SPDX-License-Identifier: MIT
/*
 * The wire view's model side: the wire.* fields and their window
 * (collectors/wire_fields.c), the roce_wire_* exposition, and the snapshot
 * round trip of obj->wire and of the no_data reason.  The BPF side is tested
 * against real packets in tests/netns/wire/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "prom.h"
#include "snapshot.h"
#include "wire_fields.h"

#define SEC 1000000000LL

enum {
	IN,
	OUT
};

static struct object *wire_netdev(struct node_model *m, const char *name)
{
	struct object *o = model_add_netdev(m, name);

	assert_non_null(o);
	o->wire = calloc(1, sizeof(*o->wire));
	assert_non_null(o->wire);
	return o;
}

static void add(struct object *o, int dir, int dscp, int ecn, int cls, uint64_t packets,
		uint64_t size)
{
	o->wire->packets[dir][dscp][ecn][cls] += packets;
	o->wire->bytes[dir][dscp][ecn][cls] += packets * size;
}

static void no_traffic_is_no_data(void **state)
{
	struct node_model m;
	struct wire_window win;
	struct object *o;

	(void)state;
	model_init(&m);
	o = wire_netdev(&m, "eth2");
	wire_window_reset(&win, 0);
	/* ACKs alone are not data */
	add(o, IN, 26, 2, WIRE_ACK, 10, 60);
	wire_fields_derive(o, &win, 1 * SEC);
	assert_true(field_present(o, F_NETDEV_WIRE_DATA_PACKETS));
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 0);
	assert_int_equal(o->f[F_NETDEV_WIRE_CNP_PACKETS].v.i, 0);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_DSCP].state, ABS_NO_DATA);
	assert_int_equal(o->f[F_NETDEV_WIRE_CNP_DSCP].state, ABS_NO_DATA);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_NOT_ECT].state, ABS_NO_DATA);
	assert_int_equal(o->f[F_NETDEV_WIRE_CE_RATIO].state, ABS_NO_DATA);
	assert_string_equal(absent_reason_name(ABS_NO_DATA), "no_data");
	assert_int_equal(absent_reason_parse("no_data"), ABS_NO_DATA);
	model_free(&m);
}

static void fields_from_counts(void **state)
{
	struct node_model m;
	struct wire_window win;
	struct object *o;

	(void)state;
	model_init(&m);
	o = wire_netdev(&m, "eth2");
	wire_window_reset(&win, 0);
	add(o, IN, 26, 2, WIRE_DATA, 50, 90);
	add(o, OUT, 26, 3, WIRE_DATA, 30, 90); /* CE */
	add(o, OUT, 0, 0, WIRE_DATA, 20, 90);  /* not-ECT on DSCP 0 */
	add(o, IN, 48, 1, WIRE_CNP, 7, 74);
	add(o, OUT, 46, 1, WIRE_CNP, 1, 74);
	add(o, IN, 10, 2, WIRE_ACK, 99, 62); /* ACKs count nowhere here */
	wire_fields_derive(o, &win, 1 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 100);
	assert_true(field_present(o, F_NETDEV_WIRE_DATA_DSCP));
	assert_true(o->f[F_NETDEV_WIRE_DATA_DSCP].v.dset == ((1ULL << 26) | (1ULL << 0)));
	assert_int_equal(o->f[F_NETDEV_WIRE_CNP_PACKETS].v.i, 8);
	assert_true(o->f[F_NETDEV_WIRE_CNP_DSCP].v.dset == ((1ULL << 48) | (1ULL << 46)));
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_NOT_ECT].v.i, 20);
	assert_true(fabs(o->f[F_NETDEV_WIRE_CE_RATIO].v.d - 0.30) < 1e-12);
	model_free(&m);
}

static void window_moves(void **state)
{
	struct node_model m;
	struct wire_window win;
	struct object *o;

	(void)state;
	model_init(&m);
	o = wire_netdev(&m, "eth2");
	wire_window_reset(&win, 0);
	/* a mis-marked burst at start */
	add(o, OUT, 0, 0, WIRE_DATA, 5, 90);
	add(o, OUT, 26, 2, WIRE_DATA, 10, 90);
	wire_fields_derive(o, &win, 10 * SEC);
	assert_true(o->f[F_NETDEV_WIRE_DATA_DSCP].v.dset == ((1ULL << 26) | 1ULL));

	/* first move (300 s): the window still reaches back to the start */
	add(o, OUT, 26, 2, WIRE_DATA, 10, 90);
	wire_fields_derive(o, &win, 300 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 25);
	assert_true(o->f[F_NETDEV_WIRE_DATA_DSCP].v.dset == ((1ULL << 26) | 1ULL));

	/* still inside the second window: nothing forgotten yet */
	add(o, OUT, 26, 2, WIRE_DATA, 1, 90);
	wire_fields_derive(o, &win, 599 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 26);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_NOT_ECT].v.i, 5);

	/* second move (600 s): only what came after 300 s is left */
	add(o, OUT, 26, 2, WIRE_DATA, 4, 90);
	wire_fields_derive(o, &win, 600 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 5);
	assert_true(o->f[F_NETDEV_WIRE_DATA_DSCP].v.dset == 1ULL << 26);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_NOT_ECT].v.i, 0);

	/* quiet for two windows: unknown again, not a pass */
	wire_fields_derive(o, &win, 900 * SEC);
	wire_fields_derive(o, &win, 1200 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 0);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_DSCP].state, ABS_NO_DATA);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_NOT_ECT].state, ABS_NO_DATA);

	/* counters that went down (a new attachment) start the window over */
	memset(o->wire, 0, sizeof(*o->wire));
	add(o, IN, 34, 2, WIRE_DATA, 3, 90);
	wire_fields_derive(o, &win, 1201 * SEC);
	assert_int_equal(o->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 3);
	assert_true(o->f[F_NETDEV_WIRE_DATA_DSCP].v.dset == 1ULL << 34);
	model_free(&m);
}

static void absent_all(void **state)
{
	struct node_model m;
	struct object *o;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "ib0");
	wire_fields_absent(o, ABS_UNSUPPORTED, -95);
	for (int id = F_NETDEV_WIRE_DATA_PACKETS; id <= F_NETDEV_WIRE_CE_RATIO; id++) {
		assert_int_equal(o->f[id].state, ABS_UNSUPPORTED);
		assert_int_equal(o->f[id].err, 95);
	}
	model_free(&m);
}

/* The wire families of the exposition, in full. */
static void exposition(void **state)
{
	static const char want[] = "roce_wire_packets_total{device=\"eth2\",direction=\"ingress\","
				   "dscp=\"26\",ecn=\"2\",class=\"data\"} 50\n"
				   "roce_wire_packets_total{device=\"eth2\",direction=\"ingress\","
				   "dscp=\"48\",ecn=\"1\",class=\"cnp\"} 7\n"
				   "roce_wire_packets_total{device=\"eth2\",direction=\"egress\","
				   "dscp=\"26\",ecn=\"2\",class=\"ack\"} 4\n"
				   "roce_wire_packets_total{device=\"eth2\",direction=\"egress\","
				   "dscp=\"26\",ecn=\"3\",class=\"data\"} 2\n"
				   "# HELP roce_wire_bytes_total ";
	static const char want_bytes[] = "# TYPE roce_wire_bytes_total counter\n"
					 "roce_wire_bytes_total{device=\"eth2\",direction="
					 "\"ingress\",dscp=\"26\",ecn=\"2\",class=\"data\"} 4500\n"
					 "roce_wire_bytes_total{device=\"eth2\",direction="
					 "\"ingress\",dscp=\"48\",ecn=\"1\",class=\"cnp\"} 518\n"
					 "roce_wire_bytes_total{device=\"eth2\",direction="
					 "\"egress\",dscp=\"26\",ecn=\"2\",class=\"ack\"} 248\n"
					 "roce_wire_bytes_total{device=\"eth2\",direction="
					 "\"egress\",dscp=\"26\",ecn=\"3\",class=\"data\"} 220\n";
	struct node_model m;
	struct prom_renderer pr = { 0 };
	struct poll_stats st = { 0 };
	struct prom_input in = { .m = &m, .stats = &st };
	struct strbuf out = { 0 };
	struct wire_window win;
	struct object *o;
	const char *p;

	(void)state;
	model_init(&m);
	model_add_netdev(&m, "eth3"); /* not watched: no series */
	o = wire_netdev(&m, "eth2");
	add(o, IN, 26, 2, WIRE_DATA, 50, 90);
	add(o, IN, 48, 1, WIRE_CNP, 7, 74);
	add(o, OUT, 26, 2, WIRE_ACK, 4, 62);
	add(o, OUT, 26, 3, WIRE_DATA, 2, 110);
	wire_window_reset(&win, 0);
	wire_fields_derive(o, &win, SEC);
	assert_int_equal(prom_render(&pr, &out, &in), 0);

	p = strstr(out.buf, "# TYPE roce_wire_packets_total counter\n");
	assert_non_null(p);
	p += strlen("# TYPE roce_wire_packets_total counter\n");
	assert_memory_equal(p, want, strlen(want));
	p = strstr(out.buf, want_bytes);
	assert_non_null(p);
	assert_non_null(
	    strstr(out.buf, "# HELP roce_wire_packets_total RoCE v2 packets seen at tc"));
	assert_null(strstr(out.buf, "device=\"eth3\",direction"));
	/* 2 CE out of 52 data packets */
	assert_non_null(strstr(out.buf, "roce_wire_ce_ratio{device=\"eth2\"} 0.03846"));
	assert_null(strstr(out.buf, "roce_wire_ce_ratio{device=\"eth3\"}"));
	sb_free(&out);
	prom_renderer_free(&pr);
	model_free(&m);
}

static void snapshot_round_trip(void **state)
{
	struct node_model m, back;
	struct strbuf a = { 0 }, b = { 0 };
	struct snapshot_file *sf;
	struct wire_window win;
	struct object *o, *q;
	char path[] = "/tmp/rocewatch-wire-XXXXXX", err[512];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	model_init(&m);
	o = wire_netdev(&m, "eth2");
	q = wire_netdev(&m, "eth3"); /* watched, nothing seen */
	add(o, IN, 26, 2, WIRE_DATA, 50, 90);
	add(o, OUT, 48, 1, WIRE_CNP, 3, 74);
	wire_window_reset(&win, 0);
	wire_fields_derive(o, &win, SEC);
	wire_window_reset(&win, 0);
	wire_fields_derive(q, &win, SEC);
	model_link_ports(&m); /* as a collection does: the reader sets "rdma" too */

	assert_int_equal(snapshot_write_file(path, &m), 0);
	assert_int_equal(snapshot_open(path, &sf, err, sizeof(err)), 0);
	model_init(&back);
	assert_int_equal(snapshot_apply(sf, 0, &back, err, sizeof(err)), 0);
	assert_int_equal(snapshot_write(&a, &m, 1), 0);
	assert_int_equal(snapshot_write(&b, &back, 1), 0);
	assert_string_equal(a.buf, b.buf);
	sb_free(&b);
	assert_int_equal(snapshot_write(&b, &back, 0), 0);
	assert_non_null(strstr(b.buf, "\"wire.data_dscp\":[26]"));
	assert_non_null(strstr(b.buf, "\"wire.data_dscp\":{\"reason\":\"no_data\"}"));

	o = back.netdevs[0];
	q = back.netdevs[1];
	assert_non_null(o->wire);
	assert_int_equal(o->wire->packets[IN][26][2][WIRE_DATA], 50);
	assert_int_equal(o->wire->bytes[IN][26][2][WIRE_DATA], 4500);
	assert_int_equal(o->wire->packets[OUT][48][1][WIRE_CNP], 3);
	assert_true(o->f[F_NETDEV_WIRE_CNP_DSCP].v.dset == 1ULL << 48);
	assert_non_null(q->wire);
	assert_int_equal(q->f[F_NETDEV_WIRE_DATA_DSCP].state, ABS_NO_DATA);
	assert_int_equal(q->f[F_NETDEV_WIRE_CE_RATIO].state, ABS_NO_DATA);
	assert_int_equal(q->f[F_NETDEV_WIRE_DATA_PACKETS].v.i, 0);
	snapshot_close(sf);
	model_free(&back);
	model_free(&m);
	sb_free(&a);
	sb_free(&b);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_traffic_is_no_data),
		cmocka_unit_test(fields_from_counts),
		cmocka_unit_test(window_moves),
		cmocka_unit_test(absent_all),
		cmocka_unit_test(exposition),
		cmocka_unit_test(snapshot_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
