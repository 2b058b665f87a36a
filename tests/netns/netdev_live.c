// SPDX-License-Identifier: MIT
/*
 * netns tier, run by test-netdev.sh inside a private namespace holding the
 * veth pairs va/vb and vc/vd.  The real link collector lists them, then vc/vd
 * are deleted before ethtool, dcb and qos_sysfs read them: the deleted
 * devices must come out absent with ENODEV, the live ones with veth's real
 * answers (its ethtool -S stats; EOPNOTSUPP for pause, the tunable and DCB),
 * and every collector must still report success.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector.h"
#include "util.h"

extern const struct collector link_collector, ethtool_collector, dcb_collector, qos_sysfs_collector;

static const struct collector *const under_test[] = {
	&link_collector,
	&ethtool_collector,
	&dcb_collector,
	&qos_sysfs_collector,
};
#define N_TEST (sizeof(under_test) / sizeof(under_test[0]))

struct live {
	struct rw_config cfg;
	struct node_model m;
	struct collector_ctx cc[N_TEST];
};

static int run(struct live *l, size_t i, unsigned int what)
{
	return under_test[i]->collect(&l->cc[i], &l->m, what);
}

static void absent_is(const struct object *o, enum field_id id, enum absent_reason why, int err)
{
	if (o->f[id].state != why || o->f[id].err != err)
		fail_msg("%s: %s: state %s errno %d, expected %s errno %d", o->name,
			 fields[id].path, absent_reason_name(o->f[id].state), o->f[id].err,
			 absent_reason_name(why), err);
}

static uint64_t ethtool_stat(const struct object *o, const char *name)
{
	int i = cset_find(&o->cs[CSET_ETHTOOL], name);

	if (i < 0 || !o->cs[CSET_ETHTOOL].present[i])
		fail_msg("%s: no ethtool stat %s", o->name, name);
	return o->cs[CSET_ETHTOOL].vals[i];
}

static void veth_and_a_vanished_device(void **state)
{
	struct live *l = calloc(1, sizeof(*l));
	struct object *va, *vc;
	unsigned int vb_index = if_nametoindex("vb");

	(void)state;
	assert_non_null(l);
	assert_true(vb_index > 0);
	config_defaults(&l->cfg);
	model_init(&l->m);
	for (size_t i = 0; i < N_TEST; i++) {
		/* the real table index: obj->cpriv slots must not collide */
		l->cc[i].idx = collector_index(under_test[i]->name);
		l->cc[i].cfg = &l->cfg;
		assert_true(l->cc[i].idx >= 0);
		l->m.obj_free_cb[l->cc[i].idx] = under_test[i]->obj_free;
		if (under_test[i]->init)
			assert_int_equal(under_test[i]->init(&l->cc[i]), 0);
	}
	/* the listing ... */
	assert_int_equal(run(l, 0, COLLECT_SLOW), 0);
	va = model_netdev(&l->m, "va");
	vc = model_netdev(&l->m, "vc");
	assert_non_null(va);
	assert_non_null(vc);
	/* ... then the device goes away before anyone reads it */
	assert_int_equal(system("ip link del vc"), 0);
	for (size_t i = 1; i < N_TEST; i++)
		assert_int_equal(run(l, i, COLLECT_SLOW | COLLECT_FAST), 0);

	/* veth's real answers */
	assert_string_equal(va->f[F_NETDEV_DRIVER].v.s, "veth");
	absent_is(va, F_NETDEV_FIRMWARE, ABS_UNSUPPORTED, EOPNOTSUPP); /* veth reports none */
	assert_int_equal(va->f[F_NETDEV_SPEED].state, ABS_NONE);
	assert_int_equal(va->f[F_NETDEV_SPEED].v.i, 10000); /* veth_get_link_ksettings */
	assert_int_equal(ethtool_stat(va, "peer_ifindex"), vb_index);
	ethtool_stat(va, "rx_queue_0_xdp_packets");
	absent_is(va, F_NETDEV_PAUSE_RX, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_PAUSE_TX_FRAMES, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_PFC_PREVENTION_TOUT, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_PFC_RX_PAUSE, ABS_UNSUPPORTED, EOPNOTSUPP); /* no such stat */
	absent_is(va, F_NETDEV_PFC_ENABLED, ABS_UNSUPPORTED, EOPNOTSUPP);  /* no dcbnl_ops */
	absent_is(va, F_NETDEV_PFC_REQUESTS, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_TRUST, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_DCBX_MODE, ABS_UNSUPPORTED, EOPNOTSUPP);
	absent_is(va, F_NETDEV_ECN_NP, ABS_UNSUPPORTED, ENOENT); /* no ecn/ in veth's sysfs */
	absent_is(va, F_NETDEV_CNP_DSCP, ABS_UNSUPPORTED, ENOENT);

	/* the vanished one: absent with the reason, nothing invented */
	absent_is(vc, F_NETDEV_DRIVER, ABS_UNSUPPORTED, ENODEV);
	absent_is(vc, F_NETDEV_PAUSE_RX, ABS_UNSUPPORTED, ENODEV);
	absent_is(vc, F_NETDEV_RX_DISCARDS_PHY, ABS_UNSUPPORTED, ENODEV);
	absent_is(vc, F_NETDEV_PFC_ENABLED, ABS_UNSUPPORTED, ENODEV);
	assert_int_equal(
	    cset_find(&vc->cs[CSET_ETHTOOL], "peer_ifindex") >= 0 &&
		vc->cs[CSET_ETHTOOL].present[cset_find(&vc->cs[CSET_ETHTOOL], "peer_ifindex")],
	    0);

	/* fast polls keep working, and the next listing drops the device */
	for (size_t i = 1; i < N_TEST; i++)
		assert_int_equal(run(l, i, COLLECT_FAST), 0);
	assert_int_equal(ethtool_stat(va, "peer_ifindex"), vb_index);
	assert_int_equal(run(l, 0, COLLECT_SLOW), 0);
	assert_null(model_netdev(&l->m, "vc"));
	assert_null(model_netdev(&l->m, "vd"));

	/* the RTNLGRP_DCB listener is open, and quiet when nothing changed */
	assert_true(dcb_collector.event_fd(&l->cc[2]) >= 0);
	assert_int_equal(dcb_collector.event(&l->cc[2]), 0);

	model_free(&l->m);
	for (size_t i = 0; i < N_TEST; i++)
		if (under_test[i]->fini)
			under_test[i]->fini(&l->cc[i]);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(veth_and_a_vanished_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
