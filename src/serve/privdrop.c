// SPDX-License-Identifier: MIT
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cap-ng.h>

#include "collector.h"
#include "privdrop.h"
#include "util.h"

void priv_needs_of(struct priv_needs *pn, const struct rw_config *cfg, const bool *running,
		   const char *user)
{
	int wire = collector_index("wire"), qos = collector_index("qos_sysfs");
	char path[4096];
	struct stat st;

	memset(pn, 0, sizeof(*pn));
	pn->user = user;
	pn->wire = wire >= 0 && running[wire];
	if (qos >= 0 && running[qos] && user) {
		snprintf(path, sizeof(path), "%s/mlx5",
			 cfg->debugfs_root ? cfg->debugfs_root : "/sys/kernel/debug");
		pn->debugfs = !stat(path, &st) && S_ISDIR(st.st_mode);
	}
}

static int wanted(const struct priv_needs *pn, int *caps, int max)
{
	int n = 0;

	if (pn->wire && n + 2 <= max) {
		caps[n++] = CAP_BPF;
		caps[n++] = CAP_NET_ADMIN;
	}
	if (pn->debugfs && n < max)
		caps[n++] = CAP_DAC_READ_SEARCH;
	return n;
}

void priv_describe(const struct priv_needs *pn, char *buf, size_t len)
{
	int caps[4], n = wanted(pn, caps, 4);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *name = capng_capability_to_name((unsigned int)caps[i]);

		snprintf(buf + strlen(buf), len - strlen(buf), "%scap_%s", i ? "," : "",
			 name ? name : "?");
	}
	if (!n)
		strlcpy0(buf, "none", len);
}

static int lookup_user(const char *name, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	uint64_t n;
	int r = getpwnam_r(name, &pw, buf, sizeof(buf), &res);

	if (!r && res) {
		*uid = res->pw_uid;
		*gid = res->pw_gid;
		return 0;
	}
	/* A number that is no passwd entry (a container's arbitrary uid): its own group. */
	if (!parse_u64(name, &n) && n < 0xffffffffULL) {
		*uid = (uid_t)n;
		*gid = (gid_t)n;
		return 0;
	}
	snprintf(err, errlen, "--user: no such user '%s'%s%s", name, r ? ": " : "",
		 r ? strerror(r) : "");
	return -ENOENT;
}

int priv_drop(const struct priv_needs *pn, char *err, size_t errlen)
{
	int caps[4], n = wanted(pn, caps, 4), r;
	bool have[4];
	uid_t uid = 0;
	gid_t gid = 0;

	if (pn->user) {
		r = lookup_user(pn->user, &uid, &gid, err, errlen);
		if (r)
			return r;
	}
	if (capng_get_caps_process()) {
		snprintf(err, errlen, "cannot read this process's capabilities");
		return -EIO;
	}
	/* Not root and nothing granted: nothing to drop (but --user needs CAP_SETUID). */
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) == CAPNG_NONE) {
		if (pn->user && uid != geteuid()) {
			snprintf(err, errlen,
				 "--user %s: switching users needs root (or "
				 "CAP_SETUID and CAP_SETGID)",
				 pn->user);
			return -EPERM;
		}
		return 0;
	}
	/* A capability this process never had cannot be kept; the collector says so. */
	for (int i = 0; i < n; i++)
		have[i] = capng_have_capability(CAPNG_PERMITTED, (unsigned int)caps[i]);
	capng_clear(CAPNG_SELECT_BOTH);
	for (int i = 0; i < n; i++)
		if (have[i])
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
				     (unsigned int)caps[i]);
	if (pn->user) {
		/* initgroups: the user's groups (rdma, video) may be what opens /dev/infiniband */
		r = capng_change_id((int)uid, (int)gid, CAPNG_INIT_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
		if (r) {
			snprintf(err, errlen,
				 "--user %s: cannot switch to uid %u gid %u (libcap-ng "
				 "error %d)",
				 pn->user, (unsigned)uid, (unsigned)gid, r);
			return -EPERM;
		}
		return 0;
	}
	/* The bounding set too, where we may (CAP_SETPCAP): nothing can be regained by exec. */
	r = capng_apply(CAPNG_SELECT_BOTH);
	if (r)
		r = capng_apply(CAPNG_SELECT_CAPS);
	if (r) {
		snprintf(err, errlen, "cannot drop capabilities (libcap-ng error %d)", r);
		return -EPERM;
	}
	return 0;
}
