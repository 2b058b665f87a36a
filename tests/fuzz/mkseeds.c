// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpora of tests/fuzz/corpus/ (checked in; run again after
 * changing a builder):
 *
 *   build/tests/fuzz/mkseeds SOURCE_DIR
 *
 * netlink replies as the kernel lays them out (tests/unit/nlmsg_build.h, the
 * builders the unit tests use), the reproducers of tests/fixtures/netlink
 * without the selector byte of the harness they were found with (names
 * kept), recordings in the row format of recfuzz.h, value and sysfs texts
 * (the sysfs ones copied from tests/fixtures/sysfs), lldpd's frames and
 * lldpcli answers (tests/fixtures/lldp), the shipped rule
 * profiles and the small snapshot fixtures.  Existing files of the same
 * name are replaced; inputs the fuzzer added are left alone.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nlmsg_build.h"
#include "recfuzz.h"
#include "util.h"

static const char *src;

static void put(const char *harness, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/%s", src, harness);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/%s/%s", src, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* A text input of a selector harness: byte 0 picks the parser. */
static void put_text(const char *harness, const char *name, int sel, const char *text, size_t len)
{
	char *buf = malloc(len + 1);

	buf[0] = (char)sel;
	memcpy(buf + 1, text, len);
	put(harness, name, buf, len + 1);
	free(buf);
}

static void copy_file(const char *harness, const char *name, int sel, const char *rel)
{
	char path[4096], *data;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", src, rel);
	if (read_file_all(path, &data, &len)) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (sel < 0)
		put(harness, name, data, len);
	else
		put_text(harness, name, sel, data, len);
	free(data);
}

static void netlink(void)
{
	struct msgbuf mb;
	size_t len;

	put("dcb_ieee", "mlx5-ieee-get", mb.b, ieee_msg(&mb, BAD_NONE));
	put("dcb_ieee", "bad-buffer", mb.b, ieee_msg(&mb, BAD_BUFFER));
	put("dcb_ieee", "bad-pfc", mb.b, ieee_msg(&mb, BAD_PFC));
	put("dcb_ieee", "bad-maxrate", mb.b, ieee_msg(&mb, BAD_MAXRATE));
	put("dcb_ieee", "bad-app-dscp", mb.b, ieee_msg(&mb, BAD_APP));
	put("dcb_ieee", "bad-dcbx", mb.b, ieee_msg(&mb, BAD_DCBX));
	put("dcb_ieee", "cut-nest", mb.b, ieee_msg(&mb, CUT_NEST));
	put("dcb_dcbx", "host-ieee", mb.b,
	    gdcbx_msg(&mb, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE));
	put("dcb_dcbx", "lld-cee", mb.b,
	    gdcbx_msg(&mb, DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_CEE));
	put("ethtool_pause", "global-on-stats", mb.b, pause_msg(&mb, 0x15, true, false));
	put("ethtool_pause", "global-on-stats-pad", mb.b, pause_msg(&mb, 0x15, true, true));
	put("ethtool_pause", "no-stats", mb.b, pause_msg(&mb, 0x15, false, false));
	put("genl_family", "ethtool-family", mb.b, genl_family_msg(&mb, 0x15));

	memset(&mb, 0, sizeof(mb));
	len = nldev_dev_msg(&mb, 0, 3, "mlx5_0", "22.39.1002", 7);
	len = nldev_dev_msg(&mb, len, 5, "rxe0", NULL, 7);
	len = done_msg(&mb, len, 7, 0);
	put("rdma_nl", "dev-dump", mb.b, len);
	memset(&mb, 0, sizeof(mb));
	len = nldev_port_msg(&mb, 0, 3, "mlx5_0", "ens1f0np0", 8);
	len = nldev_port_msg(&mb, len, 3, "mlx5_0", NULL, 8);
	len = done_msg(&mb, len, 8, 0);
	put("rdma_nl", "port-dump", mb.b, len);
	memset(&mb, 0, sizeof(mb));
	put("rdma_nl", "stat-reply", mb.b, nldev_stat_msg(&mb, 0, 9));
	memset(&mb, 0, sizeof(mb));
	put("rdma_nl", "error-ext-ack", mb.b,
	    error_msg(&mb, 0, 9, -EINVAL, "Port index is not valid"));
	memset(&mb, 0, sizeof(mb));
	put("rdma_nl", "dump-failed", mb.b, done_msg(&mb, 0, 9, -EOPNOTSUPP));

	/* link_health: byte 0 picks the parser (0 FEC, 1 carrier, 2 optional counters) */
	{
		static const struct {
			const char *name;
			int sel;
		} seeds[] = { { "fec-4-lanes", 0 },	 { "fec-4-lanes-pad", 0 },
			      { "fec-totals", 0 },	 { "carrier-counts", 1 },
			      { "carrier-pre-4.16", 1 }, { "optional-off", 2 },
			      { "optional-on", 2 } };
		struct msgbuf in;

		for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
			memset(&mb, 0, sizeof(mb));
			switch (i) {
			case 0:
				len = fec_msg(&mb, 0x15, ETHTOOL_LINK_MODE_FEC_RS_BIT, 4, false,
					      false);
				break;
			case 1:
				len = fec_msg(&mb, 0x15, ETHTOOL_LINK_MODE_FEC_RS_BIT, 4, false,
					      true);
				break;
			case 2:
				len = fec_msg(&mb, 0x15, ETHTOOL_LINK_MODE_FEC_BASER_BIT, 0, true,
					      false);
				break;
			case 3:
				len = newlink_msg(&mb, 7, 5, 3, 2, true);
				break;
			case 4:
				len = newlink_msg(&mb, 7, 5, 0, 0, false);
				break;
			case 5:
				len = nldev_stat_status_msg(&mb, 0, 1, false);
				break;
			default:
				len = nldev_stat_status_msg(&mb, 0, 1, true);
				break;
			}
			in.b[0] = (char)seeds[i].sel;
			memcpy(in.b + 1, mb.b, len);
			put("link_health", seeds[i].name, in.b, len + 1);
		}
	}
}

/* The reproducers: byte 0 % 5 named the parser of the harness they were found with. */
static void reproducers(void)
{
	static const char *const harness[] = { "dcb_ieee", "dcb_dcbx", "ethtool_pause",
					       "genl_family", "rdma_nl" };
	char dir[4096], path[8192], *data;
	struct dirent *de;
	size_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/netlink", src);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "mkseeds: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_file_all(path, &data, &len) || !len)
			exit(1);
		put(harness[(unsigned char)data[0] % 5], de->d_name, data + 1, len - 1);
		free(data);
	}
	closedir(d);
}

static void values(void)
{
	static const struct {
		int sel;
		const char *name, *text;
	} v[] = {
		{ 0, "size-mib", "256MiB" },
		{ 0, "size-frac", "1.5K" },
		{ 0, "size-1e30", "1e30" },
		{ 0, "size-nanB", "nanB" },
		{ 1, "duration-compound", "1m30s" },
		{ 1, "duration-int64-max", "9223372036854775807ns" },
		{ 1, "duration-frac", "0.5ms" },
		{ 2, "rfc3339", "2025-12-02T10:40:00.123Z" },
		{ 2, "rfc3339-2263", "2263-01-01T00:00:00Z" },
		{ 3, "since-relative", "-1h30m" },
		{ 3, "since-offset", "2026-12-02T10:00:00+02:00" },
		{ 3, "since-now", "now" },
		{ 4, "pread-counter", "2215876044\n" },
		{ 4, "pread-na", "N/A (no PMA)\n" },
		{ 5, "u64-octal-looking", "010" },
		{ 5, "u64-max", "18446744073709551615" },
		{ 6, "format-max", "\xff\xff\xff\xff\xff\xff\xff\x7f" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		put_text("values", v[i].name, v[i].sel, v[i].text, strlen(v[i].text));
}

static void sysfs(void)
{
	static const struct {
		int sel;
		const char *name, *rel;
	} f[] = {
		{ 0, "trust-ofed",
		  "tests/fixtures/sysfs/mlx5-ofed/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "net/eth2/qos/trust" },
		{ 1, "dscp2prio-ofed",
		  "tests/fixtures/sysfs/mlx5-ofed/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "net/eth2/qos/dscp2prio" },
		{ 2, "tclass-ofed",
		  "tests/fixtures/sysfs/mlx5-ofed/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/tc/1/traffic_class" },
		{ 3, "state-mlx5",
		  "tests/fixtures/sysfs/mlx5-roce/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/ports/1/state" },
		{ 3, "phys-state-mlx5",
		  "tests/fixtures/sysfs/mlx5-roce/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/ports/1/phys_state" },
		{ 4, "rate-mlx5",
		  "tests/fixtures/sysfs/mlx5-roce/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/ports/1/rate" },
		{ 4, "rate-rxe",
		  "tests/fixtures/sysfs/rxe/devices/virtual/infiniband/rxe0/ports/1/rate" },
		{ 5, "gid-3",
		  "tests/fixtures/sysfs/mlx5-roce/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/ports/1/gids/3" },
		{ 5, "gid-type-3",
		  "tests/fixtures/sysfs/mlx5-roce/devices/pci0000:16/0000:16:02.0/0000:17:00.0/"
		  "infiniband/mlx5_0/ports/1/gid_attrs/types/3" },
	};
	static const char table[] = "0 fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e RoCE eth2\n"
				    "1 fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e v2 eth2\n"
				    "3 0000:0000:0000:0000:0000:ffff:c0a8:0102 v2 eth2\n"
				    "5 0000:0000:0000:0000:0000:ffff:0a00:0001 v2 eth2\n";
	static const char prio_lines[] = "dscp2prio mapping:\n"
					 "\tprio:0 dscp:07,06,05,04,03,02,01,00,\n"
					 "\tprio:3 dscp:26,\n";

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		copy_file("sysfs", f[i].name, f[i].sel, f[i].rel);
	put_text("sysfs", "gid-table", 6, table, strlen(table));
	put_text("sysfs", "dscp2prio-prio-lines", 1, prio_lines, strlen(prio_lines));
	put_text("sysfs", "trust-phrase", 0, "Priority trust state: dscp\n", 27);
	put_text("sysfs", "tclass-bare", 2, "106\n", 4);
}

/* lldpd's frames (byte 0 even) and lldpcli answers (odd), tests/fixtures/lldp */
static void lldp(void)
{
	static const char *const frames[] = { "leaf-r5-mac", "leaf-r5-ifname", "leaf-r5-local",
					      "leaf-r5-chassis-local", "leaf-r5-shutdown" };
	static const char *const answers[] = { "lldpcli-one", "lldpcli-two", "lldpcli-none" };
	char rel[256];

	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		snprintf(rel, sizeof(rel), "tests/fixtures/lldp/%s.bin", frames[i]);
		copy_file("lldp", frames[i], 0, rel);
	}
	for (size_t i = 0; i < ARRAY_SIZE(answers); i++) {
		snprintf(rel, sizeof(rel), "tests/fixtures/lldp/%s.json", answers[i]);
		copy_file("lldp", answers[i], 1, rel);
	}
}

static void files(const char *harness, const char *dir, const char *suffix, size_t max)
{
	char path[8192], rel[4096];
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", src, dir);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		snprintf(rel, sizeof(rel), "%s/%s", dir, de->d_name);
		snprintf(path, sizeof(path), "%s/%s", src, rel);
		if (n <= strlen(suffix) || strcmp(de->d_name + n - strlen(suffix), suffix) ||
		    stat(path, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
			continue;
		copy_file(harness, de->d_name, -1, rel);
	}
	closedir(d);
}

/* ---- recordings in recfuzz.h's rows ---- */

struct rec {
	uint8_t b[4096];
	size_t n;
};

static void b8(struct rec *r, uint8_t v)
{
	r->b[r->n++] = v;
}

static void bnum(struct rec *r, int64_t v)
{
	if (v >= 0 && v < 0xf0) {
		b8(r, (uint8_t)v);
		return;
	}
	b8(r, 0xf2);
	memcpy(r->b + r->n, &v, sizeof(v));
	r->n += sizeof(v);
}

/* A dictionary word (recfuzz_words) by its text. */
static void bword(struct rec *r, const char *w)
{
	for (size_t i = 0; i < ARRAY_SIZE(recfuzz_words); i++)
		if (!strcmp(recfuzz_words[i], w)) {
			b8(r, (uint8_t)i);
			return;
		}
	fprintf(stderr, "mkseeds: '%s' is not in recfuzz_words\n", w);
	exit(1);
}

static void series(struct rec *r, int64_t id, const char *obj, const char *dev, const char *src_,
		   const char *name, int prio, int config)
{
	b8(r, REC_ROW_SERIES);
	bnum(r, id);
	bword(r, obj);
	bword(r, dev);
	bnum(r, obj[0] == 'r' ? 1 : 0);
	bword(r, obj[0] == 'r' ? "eth2" : "");
	bword(r, src_);
	bword(r, name);
	if (prio < 0) {
		b8(r, 0xf3);
		b8(r, (uint8_t)-prio);
	} else {
		bnum(r, prio);
	}
	b8(r, (uint8_t)config);
}

static void poll_row(struct rec *r, int64_t seq, int64_t t_ms, int keyframe, int samples,
		     int config)
{
	b8(r, REC_ROW_POLL);
	bnum(r, seq);
	bnum(r, t_ms);
	bnum(r, 1);
	bnum(r, 3);
	b8(r, (uint8_t)keyframe);
	bnum(r, samples);
	bnum(r, config);
	bnum(r, 0);
}

static void sample(struct rec *r, int64_t t_ms, int64_t id, int64_t v)
{
	b8(r, REC_ROW_SAMPLE);
	bnum(r, t_ms);
	bnum(r, id);
	b8(r, 0);
	bnum(r, v);
}

static void config(struct rec *r, int64_t t_ms, int64_t id, const char *json, const char *absent)
{
	b8(r, REC_ROW_CONFIG);
	bnum(r, t_ms);
	bnum(r, id);
	if (json)
		bword(r, json);
	else
		b8(r, 0xff);
	if (absent)
		bword(r, absent);
	else
		b8(r, 0xff);
}

static void recordings(void)
{
	const int64_t t0 = 1764672000000LL;
	struct rec r = { .n = 0 };

	/* one run, two polls (a keyframe then a delta): counters, configuration, an alert */
	b8(&r, REC_ROW_RUN);
	bnum(&r, 1);
	bnum(&r, t0);
	bword(&r, "host");
	bword(&r, "9000");
	bnum(&r, 1000);
	bnum(&r, 42);
	b8(&r, REC_ROW_META);
	bword(&r, "host");
	bword(&r, "eth2");
	series(&r, 1, "netdev", "eth2", "field", "mtu", -1, 1);
	series(&r, 2, "netdev", "eth2", "field", "pfc.rx_pause", 3, 0);
	series(&r, 3, "netdev", "eth2", "ethtool", "rx_discards_phy", -1, 0);
	series(&r, 4, "rdma_port", "mlx5_0", "hw", "out_of_sequence", -1, 0);
	series(&r, 5, "netdev", "eth2", "field", "pfc.enabled", -1, 1);
	series(&r, 6, "netdev", "eth2", "field", "trust", -1, 1);
	series(&r, 7, "netdev", "eth2", "field", "wire.ce_ratio", -1, 0);
	poll_row(&r, 1, t0, 1, 3, 3);
	config(&r, t0, 1, "9000", NULL);
	config(&r, t0, 5, "[3]", NULL);
	config(&r, t0, 6, "\"dscp\"", NULL);
	sample(&r, t0, 2, 1234);
	sample(&r, t0, 3, 7);
	sample(&r, t0, 4, 12);
	b8(&r, REC_ROW_SAMPLE);
	bnum(&r, t0);
	bnum(&r, 7);
	b8(&r, 1);
	{
		double d = 0.25;

		memcpy(r.b + r.n, &d, sizeof(d));
		r.n += sizeof(d);
	}
	poll_row(&r, 2, t0 + 1000, 0, 2, 1);
	sample(&r, t0 + 1000, 2, 1300);
	b8(&r, REC_ROW_SAMPLE); /* went absent */
	bnum(&r, t0 + 1000);
	bnum(&r, 4);
	b8(&r, 2);
	config(&r, t0 + 1000, 6, NULL, "unsupported");
	b8(&r, REC_ROW_EVENT);
	bnum(&r, t0 + 1000);
	bword(&r, "alert");
	bword(&r, "netdev");
	bword(&r, "eth2");
	bword(&r, "mtu");
	bword(&r, "");
	put("recording", "two-polls", r.b, r.n);

	/* the reproducer of issue 16: one series with id 50,000,000 */
	r.n = 0;
	series(&r, 50000000, "netdev", "eth2", "field", "mtu", -1, 1);
	poll_row(&r, 1, t0, 1, 0, 1);
	config(&r, t0, 50000000, "9000", NULL);
	put("recording", "series-id-50000000", r.b, r.n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
		return 2;
	}
	src = argv[1];
	netlink();
	reproducers();
	values();
	sysfs();
	lldp();
	files("rules", "rules/profiles", ".yaml", 64 * 1024);
	files("snapshot", "tests/fixtures/snapshots", ".json", 16 * 1024);
	/* one whole node as `rocewatch snapshot` writes it */
	copy_file("snapshot", "good-single.json", -1,
		  "tests/fixtures/snapshots/rules/good-single.json");
	recordings();
	return 0;
}
