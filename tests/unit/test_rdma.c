// SPDX-License-Identifier: MIT
/*
 * The rdma collector over sysfs trees laid out as the kernel lays them out
 * (tests/fixtures/sysfs/mlx5-roce, rxe), and over copies of them changed
 * between polls: counters rewritten in place, reset, unreadable; devices
 * removed and added; a netdev renamed or moved to another namespace.  On
 * this host's own /sys (no RDMA stack) it must find nothing, quietly.
 *
 * argv[1]: tests/fixtures/sysfs
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "helpers.h"

extern const struct collector rdma_collector;

static const char *fixtures;

struct run {
	struct rw_config cfg;
	struct collector_ctx cc;
	struct node_model m;
};

static void run_start(struct run *r, const char *sysroot)
{
	config_defaults(&r->cfg);
	r->cfg.sysfs_root = sysroot;
	memset(&r->cc, 0, sizeof(r->cc));
	r->cc.cfg = &r->cfg;
	r->cc.idx = collector_index("rdma");
	assert_true(r->cc.idx >= 0);
	model_init(&r->m);
	r->m.obj_free_cb[r->cc.idx] = rdma_collector.obj_free;
	assert_int_equal(rdma_collector.init(&r->cc), 0);
}

static int run_poll(struct run *r, unsigned what)
{
	return rdma_collector.collect(&r->cc, &r->m, what);
}

static void run_stop(struct run *r)
{
	model_free(&r->m);
	rdma_collector.fini(&r->cc);
}

static uint64_t counter(struct object *o, enum cset_id c, const char *name, bool *present)
{
	int i = cset_find(&o->cs[c], name);

	*present = i >= 0 && o->cs[c].present[i];
	return *present ? o->cs[c].vals[i] : 0;
}

static void assert_counter(struct object *o, enum cset_id c, const char *name, uint64_t want)
{
	bool present;
	uint64_t v = counter(o, c, name, &present);

	if (!present)
		fail_msg("%s/%u: counter %s absent", o->name, o->port, name);
	assert_int_equal(v, want);
}

static void assert_no_counter(struct object *o, enum cset_id c, const char *name)
{
	bool present;

	counter(o, c, name, &present);
	if (present)
		fail_msg("%s/%u: counter %s present", o->name, o->port, name);
}

static unsigned present_count(const struct counter_set *cs)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < cs->n; i++)
		n += cs->present[i];
	return n;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A private copy of a fixture tree the test may change. */
static void copy_tree(const char *name, char *out, size_t size)
{
	char tmpl[] = "/tmp/rocewatch-rdma.XXXXXX", cmd[PATH_MAX * 2 + 32];

	assert_non_null(mkdtemp(tmpl));
	snprintf(out, size, "%s/%s", tmpl, name);
	snprintf(cmd, sizeof(cmd), "cp -a '%s/%s' '%s'", fixtures, name, out);
	assert_int_equal(system(cmd), 0);
}

static void remove_tree(const char *path)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
	/* and the mkdtemp() parent */
	snprintf(cmd, sizeof(cmd), "rmdir \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
}

/* Rewrite a sysfs-like file in place (same inode, as the kernel regenerates text). */
static void rewrite(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mlx5_roce_tree(void **state)
{
	char root[PATH_MAX];
	struct run r;
	struct object *p0, *p1;

	(void)state;
	snprintf(root, sizeof(root), "%s/mlx5-roce", fixtures);
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 2);
	assert_int_equal(r.m.node.f[F_NODE_RDMA_DEVICES].v.i, 2);
	p0 = model_port(&r.m, "mlx5_0", 1);
	p1 = model_port(&r.m, "mlx5_1", 1);
	assert_non_null(p0);
	assert_non_null(p1);

	assert_string_equal(p0->f[F_PORT_STATE].v.s, "ACTIVE");
	assert_string_equal(p0->f[F_PORT_PHYS_STATE].v.s, "LinkUp");
	assert_int_equal(p0->f[F_PORT_RATE].v.i, 100000); /* Mb/s */
	assert_string_equal(p0->f[F_PORT_LINK_LAYER].v.s, "Ethernet");
	assert_string_equal(p0->f[F_PORT_NODE_GUID].v.s, "0c42:a103:0065:7a3e");
	assert_string_equal(p0->f[F_PORT_FW].v.s, "22.39.1002");
	assert_string_equal(p0->f[F_PORT_NETDEV].v.s, "ens1f0np0");
	/* a fixture's ifindex would name one of this host's netdevs: not used */
	assert_int_equal(p0->ifindex, 0);

	/* GID table: six populated entries of sixteen, types by link layer */
	assert_true(field_present(p0, F_PORT_GIDS));
	assert_int_equal(p0->gids.n, 6);
	assert_int_equal(p0->gids.e[3].index, 3);
	assert_string_equal(p0->gids.e[3].gid, "0000:0000:0000:0000:0000:ffff:c0a8:0a07");
	assert_string_equal(p0->gids.e[3].type, "RoCE v2");
	assert_string_equal(p0->gids.e[2].type, "RoCE v1");
	assert_string_equal(p0->gids.e[3].netdev, "ens1f0np0");
	assert_int_equal(p0->f[F_PORT_ROCEV2_IPV4_GID_INDEX].v.i, 3);
	/* mlx5_1: IPv4 only on a VLAN above the port's netdev: no index, with a reason */
	assert_false(field_present(p1, F_PORT_ROCEV2_IPV4_GID_INDEX));
	assert_int_equal(p1->f[F_PORT_ROCEV2_IPV4_GID_INDEX].state, ABS_UNSUPPORTED);
	assert_int_equal(p1->gids.n, 6);

	/* counters: raw values; port_xmit_data stays in 4-byte words */
	assert_counter(p0, CSET_HW, "out_of_sequence", 2054);
	assert_counter(p0, CSET_HW, "np_cnp_sent", 1882731);
	assert_counter(p0, CSET_HW, "rx_write_requests", 2215876044ULL);
	assert_counter(p0, CSET_PORT, "port_xmit_data", 2361844193751ULL);
	assert_counter(p0, CSET_PORT, "VL15_dropped", 0);
	/* "lifespan" is the kernel's cache time, not a counter */
	assert_no_counter(p0, CSET_HW, "lifespan");
	assert_int_equal(present_count(&p0->cs[CSET_HW]), 31);
	assert_int_equal(present_count(&p0->cs[CSET_PORT]), 21);
	/* verbs' fields are not this collector's */
	assert_int_equal(p0->f[F_PORT_ACTIVE_MTU].state, ABS_NOT_COLLECTED);
	run_stop(&r);
}

static void rxe_tree(void **state)
{
	char root[PATH_MAX];
	struct run r;
	struct object *p;

	(void)state;
	snprintf(root, sizeof(root), "%s/rxe", fixtures);
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 1);
	p = model_port(&r.m, "rxe0", 1);
	assert_non_null(p);
	assert_string_equal(p->f[F_PORT_NETDEV].v.s, "ens3");
	/* virtio-net has no speed: the kernel reports 1X SDR */
	assert_int_equal(p->f[F_PORT_RATE].v.i, 2500);
	/* rxe has no firmware: fw_ver is an empty line */
	assert_int_equal(p->f[F_PORT_FW].state, ABS_UNSUPPORTED);
	/* rxe is RoCE v2 only: one GID per address, the IPv4 one at 1 (perftest's -x 1) */
	assert_int_equal(p->gids.n, 3);
	assert_string_equal(p->gids.e[0].type, "RoCE v2");
	assert_int_equal(p->f[F_PORT_ROCEV2_IPV4_GID_INDEX].v.i, 1);
	/* the set `rdma statistic show` prints for rxe; no classic counters (no PMA) */
	assert_int_equal(present_count(&p->cs[CSET_HW]), 15);
	assert_counter(p, CSET_HW, "retry_exceeded_err", 1);
	assert_counter(p, CSET_HW, "completer_retry_err", 56);
	assert_counter(p, CSET_HW, "out_of_seq_request", 42);
	assert_no_counter(p, CSET_HW, "lifespan");
	assert_int_equal(present_count(&p->cs[CSET_PORT]), 0);
	run_stop(&r);
}

static void counters_kept_open(void **state)
{
	char root[PATH_MAX];
	struct run r;
	struct object *p;
	int fds;

	(void)state;
	copy_tree("mlx5-roce", root, sizeof(root));
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	fds = open_fds();
	p = model_port(&r.m, "mlx5_0", 1);

	/* the counter moves: the kept descriptor sees it, no file is reopened */
	rewrite(root, "class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence", "2100\n");
	rewrite(root, "class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "2361844200000\n");
	for (int i = 0; i < 3; i++)
		assert_int_equal(run_poll(&r, COLLECT_FAST), 0);
	assert_counter(p, CSET_HW, "out_of_sequence", 2100);
	assert_counter(p, CSET_PORT, "port_xmit_data", 2361844200000ULL);
	assert_int_equal(open_fds(), fds);

	/* a slow poll that finds the same files keeps the same descriptors */
	assert_int_equal(run_poll(&r, COLLECT_SLOW), 0);
	assert_int_equal(open_fds(), fds);

	/* a reset (driver reload) reads as the raw smaller value, never a negative one */
	rewrite(root, "class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence", "3\n");
	assert_int_equal(run_poll(&r, COLLECT_FAST), 0);
	assert_counter(p, CSET_HW, "out_of_sequence", 3);
	/* a 32-bit queue counter at its wrap point is kept as read */
	rewrite(root, "class/infiniband/mlx5_0/ports/1/hw_counters/packet_seq_err", "4294967295\n");
	assert_int_equal(run_poll(&r, COLLECT_FAST), 0);
	assert_counter(p, CSET_HW, "packet_seq_err", 4294967295ULL);
	run_stop(&r);
	remove_tree(root);
}

static void unreadable_counter_dropped(void **state)
{
	char root[PATH_MAX], path[PATH_MAX * 2];
	struct run r;
	struct object *p;

	(void)state;
	copy_tree("mlx5-roce", root, sizeof(root));
	/* what kernels without a PMA print, and a file that cannot be read as one */
	rewrite(root, "class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait", "N/A (no PMA)\n");
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer",
		 root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0); /* read() gives EISDIR */
	run_start(&r, root);
	for (int i = 0; i < 2; i++)
		assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	p = model_port(&r.m, "mlx5_0", 1);
	assert_no_counter(p, CSET_PORT, "port_xmit_wait");
	assert_no_counter(p, CSET_HW, "out_of_buffer");
	assert_counter(p, CSET_PORT, "port_xmit_data", 2361844193751ULL);
	assert_counter(p, CSET_HW, "out_of_sequence", 2054);
	assert_int_equal(present_count(&p->cs[CSET_PORT]), 20);
	assert_int_equal(present_count(&p->cs[CSET_HW]), 30);
	/* the other port is untouched */
	assert_int_equal(present_count(&model_port(&r.m, "mlx5_1", 1)->cs[CSET_PORT]), 21);
	/* the file recovers: the next slow poll retries it */
	rewrite(root, "class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait", "8812400\n");
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_counter(p, CSET_PORT, "port_xmit_wait", 8812400);
	run_stop(&r);
	remove_tree(root);
}

/*
 * A counter caught empty while it is rewritten (issue 42 item 11) is left out
 * until the next configuration poll, said so, and said again when it is back.
 */
static void empty_read_comes_back(void **state)
{
	char root[PATH_MAX], tmpl[] = "/tmp/rocewatch-stderr.XXXXXX", buf[2048];
	int fd = mkstemp(tmpl), saved = dup(2);
	struct object *p;
	struct run r;
	ssize_t n;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	copy_tree("mlx5-roce", root, sizeof(root));
	log_set_level(LOG_LVL_INFO);
	dup2(fd, 2);
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	p = model_port(&r.m, "mlx5_0", 1);
	rewrite(root, "class/infiniband/mlx5_0/ports/1/counters/link_downed", "");
	assert_int_equal(run_poll(&r, COLLECT_FAST), 0);
	assert_no_counter(p, CSET_PORT, "link_downed");
	rewrite(root, "class/infiniband/mlx5_0/ports/1/counters/link_downed", "7\n");
	assert_int_equal(run_poll(&r, COLLECT_FAST), 0);
	assert_no_counter(p, CSET_PORT, "link_downed"); /* until the configuration poll */
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_counter(p, CSET_PORT, "link_downed", 7);
	run_stop(&r);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	log_set_level(LOG_LVL_ERROR);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(tmpl);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf,
			       "rdma: mlx5_0/1: counters/link_downed: read empty (caught while "
			       "rewritten?); that counter is left out until a configuration "
			       "poll reads it again"));
	assert_non_null(strstr(buf, "rdma: mlx5_0/1: counters/link_downed: read again"));
	assert_null(strstr(buf, "dropped"));
	remove_tree(root);
}

static void devices_come_and_go(void **state)
{
	char root[PATH_MAX], link[PATH_MAX * 2], target[PATH_MAX];
	struct run r;
	ssize_t n;
	int fds_one, fds_two;

	(void)state;
	copy_tree("mlx5-roce", root, sizeof(root));
	snprintf(link, sizeof(link), "%s/class/infiniband/mlx5_1", root);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';

	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 2);
	fds_two = open_fds();

	/* mlx5_1 is unregistered between polls */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 1);
	assert_null(model_port(&r.m, "mlx5_1", 1));
	assert_int_equal(r.m.node.f[F_NODE_RDMA_DEVICES].v.i, 1);
	fds_one = open_fds();
	/* its 52 counter files were closed with its object */
	assert_int_equal(fds_two - fds_one, 52);

	/* and comes back: a reappearance (issue 42), counted on it alone */
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 2);
	assert_counter(model_port(&r.m, "mlx5_1", 1), CSET_HW, "rx_write_requests", 90112);
	assert_int_equal(open_fds(), fds_two);
	assert_int_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_REAPPEARED].v.i, 1);
	assert_int_equal(model_port(&r.m, "mlx5_0", 1)->f[F_PORT_REAPPEARED].v.i, 0);
	/* polls that find it again and again count nothing */
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_REAPPEARED].v.i, 1);

	/* gone again, back with another node GUID: another device, not a return */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	{
		char rel[PATH_MAX + 16];

		snprintf(rel, sizeof(rel), "%s/node_guid", target + 6); /* past "../../" */
		rewrite(root, rel, "0c42:a103:00ff:bbbb\n");
	}
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_string_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_NODE_GUID].v.s,
			    "0c42:a103:00ff:bbbb");
	assert_int_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_REAPPEARED].v.i, 0);
	run_stop(&r);
	remove_tree(root);
}

/*
 * Out of descriptors in the middle of a configuration poll: a device whose
 * ports/ could not be listed is not a device without ports.  The poll that
 * could not finish keeps what it had (the CI once saw each port "gone" and
 * "back" every other poll, firing rdma_port_not_reappeared on a healthy node).
 */
static void out_of_descriptors_is_not_absence(void **state)
{
	char root[PATH_MAX];
	struct fds_held held;
	struct run r;

	(void)state;
	snprintf(root, sizeof(root), "%s/mlx5-roce", fixtures);
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 2);

	/* every descriptor but one taken: class/infiniband opens, a ports/ does not */
	assert_true(fds_exhaust(&held, 1) > 0);

	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), -EMFILE);
	assert_int_equal(r.m.n_ports, 2);
	assert_non_null(model_port(&r.m, "mlx5_0", 1));
	assert_non_null(model_port(&r.m, "mlx5_1", 1));

	fds_restore(&held);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 2);
	/* never gone, so never back */
	assert_int_equal(model_port(&r.m, "mlx5_0", 1)->f[F_PORT_REAPPEARED].v.i, 0);
	assert_int_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_REAPPEARED].v.i, 0);
	assert_counter(model_port(&r.m, "mlx5_1", 1), CSET_HW, "rx_write_requests", 90112);
	run_stop(&r);
}

/* Unregistered and registered again under the same name between two slow polls (a reset). */
static void device_reregistered(void **state)
{
	char root[PATH_MAX], cmd[PATH_MAX * 3];
	static const char *const dir = "class/infiniband/mlx5_0/ports/1/hw_counters";
	struct run r;
	struct object *p;

	(void)state;
	copy_tree("mlx5-roce", root, sizeof(root));
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	/* new files under the old names, the counters restarted; the old ones are gone */
	snprintf(cmd, sizeof(cmd), "cd '%s' && cp -a %s %s.new && rm -rf %s && mv %s.new %s", root,
		 dir, dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	rewrite(root, "class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence", "0\n");
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	p = model_port(&r.m, "mlx5_0", 1);
	/* read from the new file, not the deleted one the old descriptor still holds */
	assert_counter(p, CSET_HW, "out_of_sequence", 0);
	assert_counter(p, CSET_HW, "np_cnp_sent", 1882731);
	run_stop(&r);
	remove_tree(root);
}

static void netdev_renamed_or_moved(void **state)
{
	char root[PATH_MAX], link[PATH_MAX * 2], target[PATH_MAX], nl[PATH_MAX * 2];
	struct run r;
	struct object *p;
	ssize_t n;

	(void)state;
	copy_tree("mlx5-roce", root, sizeof(root));
	snprintf(link, sizeof(link), "%s/class/net/ens1f0np0", root);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	run_start(&r, root);
	assert_int_equal(run_poll(&r, COLLECT_SLOW), 0);

	/* moved to another network namespace: gone from this one's class/net */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(run_poll(&r, COLLECT_SLOW), 0);
	p = model_port(&r.m, "mlx5_0", 1);
	assert_false(field_present(p, F_PORT_NETDEV));
	assert_int_equal(p->f[F_PORT_NETDEV].state, ABS_UNSUPPORTED);
	assert_int_equal(p->f[F_PORT_ROCEV2_IPV4_GID_INDEX].state, ABS_UNSUPPORTED);
	assert_true(field_present(p, F_PORT_STATE)); /* the port itself is still there */

	/* renamed: the GID entries follow the new name */
	snprintf(nl, sizeof(nl), "%s/class/net/roce0", root);
	assert_int_equal(symlink(target, nl), 0);
	for (int i = 0; i < 6; i++) {
		char rel[96];

		snprintf(rel, sizeof(rel), "class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/%d", i);
		rewrite(root, rel, "roce0\n");
	}
	assert_int_equal(run_poll(&r, COLLECT_SLOW), 0);
	p = model_port(&r.m, "mlx5_0", 1);
	assert_string_equal(p->f[F_PORT_NETDEV].v.s, "roce0");
	assert_int_equal(p->f[F_PORT_ROCEV2_IPV4_GID_INDEX].v.i, 3);
	run_stop(&r);
	remove_tree(root);
}

static void no_rdma_stack(void **state)
{
	char tmpl[] = "/tmp/rocewatch-empty.XXXXXX";
	struct run r;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	run_start(&r, tmpl);
	assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(r.m.n_ports, 0);
	assert_true(field_present(&r.m.node, F_NODE_RDMA_DEVICES));
	assert_int_equal(r.m.node.f[F_NODE_RDMA_DEVICES].v.i, 0);
	run_stop(&r);
	rmdir(tmpl);
}

/* This machine: RDMA netlink or sysfs, whatever it has — never an error, never a log line. */
static void live_machine(void **state)
{
	char tmpl[] = "/tmp/rocewatch-stderr.XXXXXX", buf[512];
	struct stat st;
	struct run r;
	int fd = mkstemp(tmpl), saved = dup(2);
	ssize_t n;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	log_set_level(LOG_LVL_INFO);
	dup2(fd, 2);
	run_start(&r, "/sys");
	for (int i = 0; i < 3; i++)
		assert_int_equal(run_poll(&r, COLLECT_SLOW | COLLECT_FAST), 0);
	if (stat("/sys/class/infiniband", &st))
		assert_int_equal(r.m.n_ports, 0); /* no RDMA stack here */
	assert_true(field_present(&r.m.node, F_NODE_RDMA_DEVICES));
	run_stop(&r);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(tmpl);
	assert_true(n >= 0);
	buf[n] = '\0';
	if (stat("/sys/class/infiniband", &st))
		assert_string_equal(buf, "");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mlx5_roce_tree),
		cmocka_unit_test(rxe_tree),
		cmocka_unit_test(counters_kept_open),
		cmocka_unit_test(unreadable_counter_dropped),
		cmocka_unit_test(empty_read_comes_back),
		cmocka_unit_test(devices_come_and_go),
		cmocka_unit_test(out_of_descriptors_is_not_absence),
		cmocka_unit_test(device_reregistered),
		cmocka_unit_test(netdev_renamed_or_moved),
		cmocka_unit_test(no_rdma_stack),
		cmocka_unit_test(live_machine),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES/sysfs\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	/* quiet by default; live_machine raises the level to prove there is nothing to say */
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
