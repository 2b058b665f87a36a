// SPDX-License-Identifier: MIT
/*
 * Who owns which field: the table's .src column, the collectors' .source,
 * and what a failing collector blanks.  A device that fails must lose
 * exactly the fields of that collector's source — all of them, so none
 * keeps a stale value, and no other, so the other collectors' facts stand.
 * Every object starts with every field present; after the failure the
 * fields are compared with the table, not with a list written here.  And a
 * fast poll writes no configuration fact but the table's .fast rows: serve
 * leaves the configuration rules alone on a fast poll on that promise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector.h"
#include "netdev.h"
#include "util.h"
#include "wire_fields.h"

extern const struct collector ethtool_collector;
extern const struct collector dcb_collector;
extern const struct collector qos_sysfs_collector;
extern const struct collector rdma_collector;

/* Every field of o's kind present with some value. */
static void fill_all(struct object *o)
{
	int8_t map[RW_DSCP_COUNT];

	memset(map, 2, sizeof(map));
	for (int id = 0; id < F__COUNT; id++) {
		if (fields[id].obj != o->kind)
			continue;
		switch (fields[id].type) {
		case VT_INT:
		case VT_BOOL:
			field_set_int(o, id, 1);
			break;
		case VT_FLOAT:
			field_set_float(o, id, 0.5);
			break;
		case VT_STR:
			field_set_str(o, id, "x");
			break;
		case VT_PRIOSET:
			field_set_set(o, id, 1 << 3);
			break;
		case VT_DSCPSET:
			field_set_dset(o, id, 1ULL << 26);
			break;
		case VT_PRIO_ARRAY:
			field_set_prio(o, id, 3, 7);
			break;
		case VT_DSCP_MAP:
			field_set_dscp_map(o, id, map);
			break;
		case VT_GIDS:
			o->f[id].state = ABS_NONE;
			o->f[id].v.gids = &o->gids;
			break;
		case VT_PCI_PAIRS:
			o->f[id].state = ABS_NONE;
			o->f[id].v.pairs = &o->pairs;
			break;
		}
		assert_int_equal(o->f[id].state, ABS_NONE);
	}
}

/*
 * After a failure of src (in part): the fields of src and part are absent
 * with err, every other field of the kind is still present.
 */
static void expect_blanked(const struct object *o, enum field_source src, unsigned int part,
			   int err)
{
	for (int id = 0; id < F__COUNT; id++) {
		const struct field_desc *d = &fields[id];
		bool owned =
		    d->src == src && (part & (d->config ? FIELDS_CONFIG : FIELDS_COUNTERS));

		if (d->obj != o->kind)
			continue;
		if (owned && (o->f[id].state == ABS_NONE || o->f[id].err != err))
			fail_msg("%s/%s: %s kept its value (state %d, err %d; want err %d)",
				 obj_kind_name(o->kind), o->name, d->path, o->f[id].state,
				 o->f[id].err, err);
		if (!owned && o->f[id].state != ABS_NONE)
			fail_msg("%s/%s: %s (another source's) was blanked", obj_kind_name(o->kind),
				 o->name, d->path);
	}
}

static void every_field_has_one_collector(void **state)
{
	int owner[SRC__COUNT];

	(void)state;
	for (int s = 0; s < SRC__COUNT; s++)
		owner[s] = -1;
	for (int i = 0; i < n_collectors; i++) {
		enum field_source s = collectors[i]->source;

		if (s == SRC_NONE || s >= SRC__COUNT)
			fail_msg("collector %s names no source", collectors[i]->name);
		if (owner[s] >= 0)
			fail_msg("collectors %s and %s claim one source",
				 collectors[owner[s]]->name, collectors[i]->name);
		owner[s] = i;
	}
	for (int id = 0; id < F__COUNT; id++) {
		if (fields[id].src == SRC_NONE) {
			/* the model's own: F_NETDEV_RDMA, set by model_link_ports() */
			assert_int_equal(id, F_NETDEV_RDMA);
			continue;
		}
		if (fields[id].src == SRC_JOB)
			continue; /* no collector: nccl_apply() from check --nccl */
		if (fields[id].src == SRC_FABRIC)
			continue; /* no collector: fabric_derive() after every collection */
		if (owner[fields[id].src] < 0)
			fail_msg("%s: no collector fills source %d", fields[id].path,
				 fields[id].src);
	}
}

static void absent_source_is_the_table(void **state)
{
	static const unsigned int parts[] = { FIELDS_CONFIG, FIELDS_COUNTERS, FIELDS_ALL };
	struct node_model m;

	(void)state;
	model_init(&m);
	model_add_netdev(&m, "eth2");
	model_add_port(&m, "mlx5_0", 1);
	for (int s = SRC_LINK; s < SRC__COUNT; s++) {
		for (size_t p = 0; p < ARRAY_SIZE(parts); p++) {
			struct object *objs[] = { &m.node, m.netdevs[0], m.ports[0] };

			for (size_t k = 0; k < ARRAY_SIZE(objs); k++) {
				fill_all(objs[k]);
				field_absent_source_errno(objs[k], s, parts[p], -EIO);
				expect_blanked(objs[k], s, parts[p], EIO);
			}
		}
	}
	model_free(&m);
}

/* ---- real collectors failing for one device ---- */

static int failing_ioctl(void *arg, const char *ifname, void *cmd)
{
	(void)arg;
	(void)ifname;
	(void)cmd;
	return -ENODEV; /* unregistered under us */
}

static void ethtool_device_gone(void **state)
{
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };
	struct node_model m;
	struct object *o, *other;

	(void)state;
	config_defaults(&cfg);
	cc.cfg = &cfg;
	cc.idx = collector_index("ethtool");
	assert_int_equal(ethtool_collector.init(&cc), 0);
	ethtool_set_ioctl(&cc, failing_ioctl, NULL);
	model_init(&m);
	m.obj_free_cb[cc.idx] = ethtool_collector.obj_free;
	o = model_add_netdev(&m, "rwtgone0");
	other = model_add_port(&m, "mlx5_0", 1);
	fill_all(o);
	fill_all(other);
	cset_set(&o->cs[CSET_ETHTOOL], "rx_vport_unicast_packets", 5);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST), 0);
	expect_blanked(o, SRC_ETHTOOL, FIELDS_ALL, ENODEV);
	expect_blanked(other, SRC_ETHTOOL, FIELDS_ALL, ENODEV); /* a port: nothing of ethtool's */
	for (uint32_t i = 0; i < o->cs[CSET_ETHTOOL].n; i++)
		assert_false(o->cs[CSET_ETHTOOL].present[i]);
	model_free(&m);
	ethtool_collector.fini(&cc);
}

/*
 * dcb over the real rtnetlink socket, for a device that does not exist: the
 * kernel answers ENODEV (EOPNOTSUPP without CONFIG_DCB); either way every
 * dcb field, and only those, goes absent.
 */
static void dcb_device_gone(void **state)
{
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };
	struct node_model m;
	struct object *o;
	int err;

	(void)state;
	config_defaults(&cfg);
	cc.cfg = &cfg;
	cc.idx = collector_index("dcb");
	if (dcb_collector.init(&cc)) {
		dcb_collector.fini(&cc);
		skip(); /* no rtnetlink here */
	}
	model_init(&m);
	m.obj_free_cb[cc.idx] = dcb_collector.obj_free;
	o = model_add_netdev(&m, "rwt-nodev-0");
	fill_all(o);
	/* a fast poll first: only the counters go */
	assert_int_equal(dcb_collector.collect(&cc, &m, COLLECT_FAST), 0);
	err = o->f[F_NETDEV_PFC_REQUESTS].err;
	assert_true(err == ENODEV || err == EOPNOTSUPP || err == EINVAL);
	expect_blanked(o, SRC_DCB, FIELDS_COUNTERS, err);
	fill_all(o);
	assert_int_equal(dcb_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST), 0);
	expect_blanked(o, SRC_DCB, FIELDS_ALL, err);
	model_free(&m);
	dcb_collector.fini(&cc);
}

/* qos_sysfs with a root so long no path under it can be made. */
static void qos_sysfs_path_too_long(void **state)
{
	static char root[8192];
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };
	struct node_model m;
	struct object *o;

	(void)state;
	memset(root, 'a', sizeof(root) - 1);
	root[0] = '/';
	config_defaults(&cfg);
	cfg.sysfs_root = root;
	cc.cfg = &cfg;
	cc.idx = collector_index("qos_sysfs");
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	fill_all(o);
	assert_int_equal(qos_sysfs_collector.collect(&cc, &m, COLLECT_SLOW), 0);
	expect_blanked(o, SRC_QOS_SYSFS, FIELDS_ALL, ENAMETOOLONG);
	model_free(&m);
}

static void wire_fields_blank_their_source(void **state)
{
	struct node_model m;
	struct object *o;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	fill_all(o);
	wire_fields_absent(o, ABS_ERROR, EIO);
	expect_blanked(o, SRC_WIRE, FIELDS_ALL, EIO);
	model_free(&m);
}

/*
 * A collector whose whole source fails (rdma on a class/infiniband that is
 * a file): the daemon blanks its fields on every object (collector_blank).
 */
static void whole_source_fails(void **state)
{
	char dir[] = "/tmp/rwt-src-XXXXXX", path[256];
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };
	struct node_model m;
	struct object *port, *nd;
	FILE *f;
	int r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/class", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband", dir);
	f = fopen(path, "w"); /* not a directory: opendir says ENOTDIR */
	assert_non_null(f);
	fclose(f);
	config_defaults(&cfg);
	cfg.sysfs_root = dir;
	cc.cfg = &cfg;
	cc.idx = collector_index("rdma");
	assert_int_equal(rdma_collector.init(&cc), 0);
	model_init(&m);
	m.obj_free_cb[cc.idx] = rdma_collector.obj_free;
	port = model_add_port(&m, "mlx5_0", 1);
	nd = model_add_netdev(&m, "eth2");
	fill_all(port);
	fill_all(nd);
	fill_all(&m.node);
	r = rdma_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST);
	assert_int_equal(r, -ENOTDIR);
	collector_blank(&rdma_collector, &m, r);
	expect_blanked(port, SRC_RDMA, FIELDS_ALL, ENOTDIR);
	expect_blanked(&m.node, SRC_RDMA, FIELDS_ALL, ENOTDIR);
	expect_blanked(nd, SRC_RDMA, FIELDS_ALL, ENOTDIR);
	model_free(&m);
	rdma_collector.fini(&cc);
	unlink(path);
	snprintf(path, sizeof(path), "%s/class", dir);
	rmdir(path);
	rmdir(dir);
}

static const char *sysfs_dir;

/* The objects of kind k, the node too. */
static size_t objects_of(struct node_model *m, enum obj_kind k, struct object ***out)
{
	static struct object *node[1];

	if (k == OBJ_NODE) {
		node[0] = &m->node;
		*out = node;
		return 1;
	}
	return model_objects(m, k, out);
}

/*
 * The real collectors over the fixture trees: after a configuration poll,
 * every configuration fact (not .fast) of every object is poisoned; a fast
 * poll must leave every one as it was.
 */
static void fast_poll_writes_no_configuration(void **state)
{
	static const char *const trees[] = { "mlx5-roce", "mlx5-upstream", "mlx5-ofed",
					     "mlx4-vpi",  "rxe",	   "vendors" };
	char root[4096];

	(void)state;
	if (!sysfs_dir)
		skip();
	for (size_t t = 0; t < ARRAY_SIZE(trees); t++) {
		struct collector_ctx cc[RW_MAX_COLLECTORS] = { 0 };
		bool ready[RW_MAX_COLLECTORS] = { 0 };
		struct rw_config cfg;
		struct node_model m;
		size_t checked = 0;

		snprintf(root, sizeof(root), "%s/%s", sysfs_dir, trees[t]);
		config_defaults(&cfg);
		cfg.sysfs_root = root;
		model_init(&m);
		for (int i = 0; i < n_collectors; i++) {
			cc[i].cfg = &cfg;
			cc[i].idx = i;
			m.obj_free_cb[i] = collectors[i]->obj_free;
			ready[i] = collectors[i]->default_enabled &&
				   (!collectors[i]->init || !collectors[i]->init(&cc[i]));
		}
		for (int i = 0; i < n_collectors; i++)
			if (ready[i])
				collectors[i]->collect(&cc[i], &m, COLLECT_SLOW | COLLECT_FAST);
		model_link_ports(&m);
		for (int k = OBJ_NODE; k < OBJ__COUNT; k++) {
			struct object **objs;
			size_t n = objects_of(&m, (enum obj_kind)k, &objs);

			for (size_t i = 0; i < n; i++)
				for (int f = 0; f < F__COUNT; f++)
					if ((int)fields[f].obj == k &&
					    !field_fast((enum field_id)f) &&
					    fields[f].type != VT_GIDS &&
					    fields[f].type != VT_PCI_PAIRS)
						field_absent(objs[i], (enum field_id)f, ABS_ERROR,
							     EILSEQ);
		}
		for (int i = 0; i < n_collectors; i++)
			if (ready[i])
				collectors[i]->collect(&cc[i], &m, COLLECT_FAST);
		for (int k = OBJ_NODE; k < OBJ__COUNT; k++) {
			struct object **objs;
			size_t n = objects_of(&m, (enum obj_kind)k, &objs);

			for (size_t i = 0; i < n; i++) {
				for (int f = 0; f < F__COUNT; f++) {
					const struct field_val *v = &objs[i]->f[f];

					if ((int)fields[f].obj != k ||
					    field_fast((enum field_id)f) ||
					    fields[f].type == VT_GIDS ||
					    fields[f].type == VT_PCI_PAIRS)
						continue;
					checked++;
					if (v->state != ABS_ERROR || v->err != EILSEQ)
						fail_msg("%s: a fast poll wrote %s of %s %s (a "
							 "configuration fact: mark its row .fast)",
							 trees[t], fields[f].path,
							 obj_kind_name((enum obj_kind)k),
							 objs[i]->name);
				}
			}
		}
		assert_true(checked > 0);
		model_free(&m);
		for (int i = 0; i < n_collectors; i++)
			if (ready[i] && collectors[i]->fini)
				collectors[i]->fini(&cc[i]);
		config_free(&cfg);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_has_one_collector),
		cmocka_unit_test(absent_source_is_the_table),
		cmocka_unit_test(ethtool_device_gone),
		cmocka_unit_test(dcb_device_gone),
		cmocka_unit_test(qos_sysfs_path_too_long),
		cmocka_unit_test(wire_fields_blank_their_source),
		cmocka_unit_test(whole_source_fails),
		cmocka_unit_test(fast_poll_writes_no_configuration),
	};

	if (argc > 1)
		sysfs_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
