// SPDX-License-Identifier: MIT
/*
 * The format is NFD's "local" feature source (node-feature-discovery,
 * docs/usage/customization-guide.md, "Local feature source"): files in
 * /etc/kubernetes/node-feature-discovery/features.d/, one `<namespace>/<name>
 * [=<value>]` per line, `#` comments, an optional `# +expiry-time=<RFC 3339>`
 * directive after which the content is ignored, at most 64 kB, and dot files
 * ignored so that a writer can write `.name` and rename it into place.
 * Values become Kubernetes label values: at most 63 characters of
 * [A-Za-z0-9._-], alphanumeric at both ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfd.h"
#include "util.h"

static const char *const status_names[] = { "ok", "warning", "critical", "unknown" };

/* A profile's own status, as rules_status() computes the whole engine's. */
static enum rules_status profile_status(const struct rules_engine *e,
					const struct rules_profile_info *pi)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);
	enum rules_status st = pi->requirements_met ? RULES_OK : RULES_UNKNOWN;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].rule->profile, pi->name) ||
		    rule_result_severity(&res[i]) == SEV_INFO)
			continue;
		any = true;
		st = rules_status_worse(st, rule_result_status(&res[i]));
	}
	return any ? st : rules_status_worse(st, RULES_UNKNOWN);
}

/* A label name part from a profile name: [a-z0-9._-], at most 40 characters. */
static void label_part(struct strbuf *sb, const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p && n < 40; p++, n++) {
		char c = *p;

		sb_putc(sb, (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
				    c == '-' || c == '_'
				? c
			    : c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a')
						   : '_');
	}
}

/* The lowest active_mtu of the RDMA ports: the one a job across all of them gets. */
static bool min_active_mtu(const struct node_model *m, int64_t *mtu)
{
	bool found = false;

	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];

		if (!field_present(p, F_PORT_ACTIVE_MTU))
			continue;
		if (!found || p->f[F_PORT_ACTIVE_MTU].v.i < *mtu)
			*mtu = p->f[F_PORT_ACTIVE_MTU].v.i;
		found = true;
	}
	return found;
}

/*
 * PFC priorities of the netdevs that carry RDMA ports, when they all agree:
 * "3", "3_4" (a set), "none"; "mixed" when they differ.  false: none known.
 */
static bool pfc_label(const struct node_model *m, char *buf, size_t len)
{
	int set = -1;
	size_t o = 0;

	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *nd = m->ports[i]->netdev;

		if (!nd || !field_present(nd, F_NETDEV_PFC_ENABLED))
			continue;
		if (set >= 0 && set != nd->f[F_NETDEV_PFC_ENABLED].v.set) {
			snprintf(buf, len, "mixed");
			return true;
		}
		set = nd->f[F_NETDEV_PFC_ENABLED].v.set;
	}
	if (set < 0)
		return false;
	buf[0] = '\0';
	for (int p = 0; p < RW_PRIO_COUNT; p++)
		if (set & (1 << p))
			o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "_" : "", p);
	if (!set)
		snprintf(buf, len, "none");
	return true;
}

void nfd_render(struct strbuf *out, const struct rules_engine *e, const struct node_model *m,
		int64_t expiry_unix)
{
	enum rules_status st = rules_status(e);
	char pfc[32];
	int64_t mtu = 0;

	sb_puts(out, "# rocewatch: RoCE configuration of this node for node-feature-discovery\n");
	if (!rules_evaluations(e)) {
		/* no verdict yet: no label at all, never a "ready" nobody decided */
		sb_puts(out, "# no verdict yet: labels follow the first evaluation\n");
		return;
	}
	if (expiry_unix > 0) {
		time_t t = (time_t)expiry_unix;
		struct tm tm;

		gmtime_r(&t, &tm);
		sb_printf(out, "# +expiry-time=%04d-%02d-%02dT%02d:%02d:%02dZ\n", tm.tm_year + 1900,
			  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	/* ready: nothing critical and nothing undecided (unknown is not pass) */
	sb_printf(out, NFD_PREFIX "roce-ready=%s\n",
		  st == RULES_OK || st == RULES_WARNING ? "true" : "false");
	sb_printf(out, NFD_PREFIX "status=%s\n", status_names[st]);
	/* healthy, degraded, fatal, unknown: a NodeFeatureRule taints fatal NoSchedule
	 * (contrib/node-problem-detector/nodefeaturerule-noschedule.yaml) */
	sb_printf(out, NFD_PREFIX "health=%s\n", node_verdict_name(rules_verdict(e)));
	for (size_t p = 0; p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);

		sb_puts(out, NFD_PREFIX "profile.");
		label_part(out, pi->name);
		sb_printf(out, "=%s\n", status_names[profile_status(e, pi)]);
	}
	if (min_active_mtu(m, &mtu))
		sb_printf(out, NFD_PREFIX "active-mtu=%lld\n", (long long)mtu);
	if (pfc_label(m, pfc, sizeof(pfc)))
		sb_printf(out, NFD_PREFIX "pfc-priority=%s\n", pfc);
}

int nfd_write_file(const char *path, const struct strbuf *content)
{
	const char *slash = strrchr(path, '/');
	char tmp[4096];
	int fd;

	/* .NAME beside NAME: same filesystem, so rename() replaces it atomically */
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", slash ? (int)(slash - path + 1) : 0, path,
		     slash ? slash + 1 : path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	return rw_replace_file(fd, tmp, path, content->buf ? content->buf : "", content->len);
}
