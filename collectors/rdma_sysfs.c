// SPDX-License-Identifier: MIT
/*
 * The rdma collector's sysfs side (drivers/infiniband/core/sysfs.c): the
 * port texts (state, phys_state, rate), the devices and ports under
 * class/infiniband when RDMA netlink is missing or refuses (and always for
 * a fixture tree), the netdev binding, and the counter directories
 * (hw_counters/, counters/) whose files stay open between polls and are
 * re-read with pread() at offset 0, as sysfs regenerates the text on every
 * read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdma.h"
#include "util.h"

/* ---- port texts ---- */

/* drivers/infiniband/core/sysfs.c: state_show() and phys_state_to_str(). */
const char *rdma_port_state_name(unsigned int state)
{
	static const char *const names[] = { "NOP",   "DOWN",	"INIT",
					     "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return state < ARRAY_SIZE(names) ? names[state] : "UNKNOWN";
}

const char *rdma_phys_state_name(unsigned int state)
{
	static const char *const names[] = { "<unknown>",
					     "Sleep",
					     "Polling",
					     "Disabled",
					     "PortConfigurationTraining",
					     "LinkUp",
					     "LinkErrorRecovery",
					     "Phy Test" };

	return state < ARRAY_SIZE(names) ? names[state] : "<unknown>";
}

int rdma_parse_state(const char *text, char *out, size_t size)
{
	const char *colon = strchr(text, ':');
	size_t len;
	char *end;

	if (!colon || !size || *text < '0' || *text > '9')
		return -EINVAL;
	strtoul(text, &end, 10);
	if (end != colon)
		return -EINVAL;
	colon++;
	while (*colon == ' ')
		colon++;
	/* out may be text itself: move, not copy. */
	len = strlen(colon);
	if (len >= size)
		len = size - 1;
	memmove(out, colon, len);
	out[len] = '\0';
	rstrip(out);
	/* "4: " and "4: \n" name no state (found by fuzzing) */
	return out[0] ? 0 : -EINVAL;
}

/*
 * rate_show() prints "%d%s Gb/sec (%dX%s)" with ".5" as the only fraction
 * (2.5 Gb/s SDR lanes); any decimal is accepted here.
 */
int rdma_parse_rate(const char *text, int64_t *mbps)
{
	char *end;
	double gbps;

	errno = 0;
	gbps = strtod(text, &end);
	if (errno || end == text || gbps < 0 || gbps > 1e6 || strncmp(end, " Gb/sec", 7))
		return -EINVAL;
	*mbps = (int64_t)(gbps * 1000.0 + 0.5);
	return 0;
}

void rdma_format_guid(uint64_t guid, char *out, size_t size)
{
	snprintf(out, size, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

/* ---- counter directories ---- */

void rdma_cdir_close(struct cdir *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->f[i].fd >= 0)
			close(d->f[i].fd);
	free(d->f);
	d->f = NULL;
	d->n = 0;
	d->dev = 0;
	d->ino = 0;
}

static size_t count_open(const struct cdir *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++)
		n += d->f[i].fd >= 0;
	return n;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct cfile *)a)->name, ((const struct cfile *)b)->name);
}

/*
 * List a counter directory and keep its files open.  The open set is kept
 * when the names did not change, so a slow poll costs one readdir.  The
 * sysfs hw_counters/ directory also holds "lifespan", the kernel's cache
 * time of the values in milliseconds (core/sysfs.c), not a counter: skipped
 * so that the set equals what `rdma statistic` shows.
 */
int rdma_cdir_scan(struct cdir *d, const char *path, const char *what)
{
	struct cfile *nf = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir = opendir(path);
	struct stat st;
	bool same;
	int dfd;

	if (!dir) {
		int e = errno;

		if (e == EMFILE || e == ENFILE) {
			/*
			 * Out of descriptors is not a property of the directory: the
			 * files already open still read, so keep them; the ones never
			 * opened are missing until a later scan lists the directory.
			 */
			d->nofd = true;
			rw_log_once(LOG_LVL_WARN, path,
				    "rdma: %s: %s; its %s counters are %s until a descriptor is "
				    "free (tried again every configuration poll)",
				    path, rw_strerror(e), what,
				    d->n ? "not listed again" : "missing");
			return -e;
		}
		if (e != ENOENT)
			rw_log_once(LOG_LVL_INFO, path,
				    "rdma: %s: %s; its %s counters are left out", path,
				    rw_strerror(e), what);
		rdma_cdir_close(d);
		return e == ENOENT ? 0 : -e;
	}
	dfd = dirfd(dir);
	if (fstat(dfd, &st))
		memset(&st, 0, sizeof(st));
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		if (strlen(de->d_name) >= RW_CNAME_MAX) {
			rw_log_once(LOG_LVL_WARN, de->d_name,
				    "rdma: %s/%s: counter name too long; skipped", path,
				    de->d_name);
			continue;
		}
		if (array_grow(&nf, &cap, n, sizeof(*nf), 64)) {
			free(nf);
			closedir(dir);
			return -ENOMEM;
		}
		strlcpy0(nf[n].name, de->d_name, sizeof(nf[n].name));
		nf[n].fd = -1;
		nf[n].slot = -1;
		nf[n].slot_gen = 0;
		nf[n].bad = false;
		nf[n].said = false;
		n++;
	}
	if (n > 1)
		qsort(nf, n, sizeof(*nf), cmp_name);
	/*
	 * A device unregistered and registered again under the same name (a
	 * reset) has new files with the old names: a new directory inode.
	 */
	same = n == d->n && st.st_dev == d->dev && st.st_ino == d->ino;
	for (size_t i = 0; same && i < n; i++)
		same = !strcmp(nf[i].name, d->f[i].name);
	if (same) {
		/*
		 * Same files: keep the descriptors, forget past read failures, and
		 * open again what could not be opened (out of descriptors then:
		 * EMFILE is not a property of the counter).
		 */
		size_t back = 0;

		for (size_t i = 0; i < n; i++) {
			struct cfile *f = &d->f[i];

			if (f->fd < 0) {
				f->fd = open_kfile_at(dfd, f->name);
				back += f->fd >= 0;
			}
			f->bad = f->fd < 0;
		}
		if (back || d->nofd) {
			log_info("rdma: %s: %zu %s counters open again", path,
				 d->nofd ? count_open(d) : back, what);
			rw_log_once_reset(path);
		}
		d->nofd = false;
		free(nf);
		closedir(dir);
		return 0;
	}
	rdma_cdir_close(d);
	for (size_t i = 0; i < n; i++) {
		nf[i].fd = open_kfile_at(dfd, nf[i].name);
		if (nf[i].fd < 0) {
			int err = -nf[i].fd;
			bool nofd = err == EMFILE || err == ENFILE;

			nf[i].bad = true;
			rw_log_once(nofd ? LOG_LVL_WARN : LOG_LVL_INFO, path,
				    "rdma: %s/%s: %s; that %s counter is %s", path, nf[i].name,
				    rw_strerror(err), what,
				    nofd ? "missing until a descriptor is free (tried again every "
					   "configuration poll)"
					 : "left out until a configuration poll opens it again");
		}
	}
	closedir(dir);
	if (d->nofd) {
		size_t open_n = 0;

		for (size_t i = 0; i < n; i++)
			open_n += nf[i].fd >= 0;
		if (open_n)
			log_info("rdma: %s: %zu %s counters open again", path, open_n, what);
		rw_log_once_reset(path);
		d->nofd = false;
	}
	d->f = nf;
	d->n = n;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	return 0;
}

/*
 * mlx4 (older kernels, MLNX_OFED) has the 64-bit PortCountersExtended in
 * counters_ext/ beside the 32-bit counters/, which saturate at 2^32-1 on a
 * busy port.  Read after counters/, each replaces the counter it extends.
 */
static const char *ext_counter_name(const char *file)
{
	static const char *const map[][2] = {
		{ "port_xmit_data_64", "port_xmit_data" },
		{ "port_rcv_data_64", "port_rcv_data" },
		{ "port_xmit_packets_64", "port_xmit_packets" },
		{ "port_rcv_packets_64", "port_rcv_packets" },
		{ "port_unicast_xmit_packets", "unicast_xmit_packets" },
		{ "port_unicast_rcv_packets", "unicast_rcv_packets" },
		{ "port_multicast_xmit_packets", "multicast_xmit_packets" },
		{ "port_multicast_rcv_packets", "multicast_rcv_packets" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(file, map[i][0]))
			return map[i][1];
	return file;
}

static void cfile_key(char *key, size_t len, const char *dev, uint32_t port, const char *what,
		      const char *name)
{
	snprintf(key, len, "rdma:%s/%u/%s/%s", dev, port, what, name);
}

/* Re-read every kept file; a file that fails drops only its own counter. */
int rdma_cdir_read(struct cdir *d, struct counter_set *cs, const char *dev, uint32_t port,
		   const char *what)
{
	bool ext = !strcmp(what, "counters_ext");
	bool devwide = !strcmp(what, "device hw_counters");

	d->restricted_err = 0;
	for (size_t i = 0; i < d->n; i++) {
		struct cfile *f = &d->f[i];
		uint64_t v;
		int r;

		if (f->bad)
			continue;
		r = pread_u64(f->fd, &v);
		if (!r) {
			const char *name = ext ? ext_counter_name(f->name) : f->name;
			char dname[RW_CNAME_MAX + 8];

			if (f->said) {
				/* a rescan found it readable again: say so, and its next failure */
				char key[160];

				cfile_key(key, sizeof(key), dev, port, what, f->name);
				log_info("rdma: %s/%u: %s/%s: read again", dev, port, what,
					 f->name);
				rw_log_once_reset(key);
				f->said = false;
			}
			/* a device-wide counter may share a port counter's name (mana) */
			if (devwide) {
				snprintf(dname, sizeof(dname), "device:%.*s", RW_CNAME_MAX - 8,
					 f->name);
				name = dname;
			}
			/*
			 * Names are only ever appended to a set (cset_set): a slot
			 * found holding this name at this names_gen still does, so
			 * the fast poll's hundreds of counters skip the name check.
			 */
			if (f->slot_gen && f->slot_gen == cs->names_gen &&
			    (uint32_t)f->slot < cs->n) {
				cs->vals[f->slot] = v;
				cs->present[f->slot] = 1;
				continue;
			}
			if (rdma_cset_put(cs, &f->slot, name, v) < 0)
				return -ENOMEM;
			f->slot_gen = cs->names_gen;
			continue;
		}
		if (r == -ENODEV)
			return r; /* the device was unregistered under us */
		f->bad = true;
		if (r == -EIO || r == -EPERM || r == -EACCES || r == -EOPNOTSUPP) {
			/* the port backs off as a whole and says so once (rdma.c) */
			if (!d->restricted_err)
				d->restricted_err = -r;
			continue;
		}
		{
			char key[160];

			cfile_key(key, sizeof(key), dev, port, what, f->name);
			f->said = true;
			rw_log_once(LOG_LVL_INFO, key,
				    "rdma: %s/%u: %s/%s: %s; that counter is left out until a "
				    "configuration poll reads it again",
				    dev, port, what, f->name,
				    r == -EINVAL    ? "not a number (N/A, no PMA) or EINVAL"
				    : r == -ENODATA ? "read empty (caught while rewritten?)"
						    : rw_strerror(-r));
		}
	}
	return 0;
}

int rdma_sysfs_driver(struct rdma_priv *rp, const char *dev, char *out, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/device/driver", rp->ib, dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		base = strrchr(link, '/');
		base = base ? base + 1 : link;
		if (!*base || strlen(base) >= size)
			return -EINVAL;
		strlcpy0(out, base, size);
		return 0;
	}
	/* rxe_verbs.c: rxe registers without a parent and shows its netdev as "parent" */
	snprintf(path, sizeof(path), "%s/%s/device", rp->ib, dev);
	if (lstat(path, &st)) {
		snprintf(path, sizeof(path), "%s/%s/parent", rp->ib, dev);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			strlcpy0(out, "rdma_rxe", size);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- devices and ports ---- */

bool rdma_is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int rdma_sysfs_enumerate(struct rdma_priv *rp, struct found *f)
{
	DIR *dir = opendir(rp->ib), *pd;
	struct dirent *de, *pe;
	char path[PATH_MAX];

	if (!dir)
		return errno == ENOENT ? 0 : -errno; /* no RDMA stack: no devices */
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= RW_NAME_MAX)
			continue;
		/* excluded: not a file of it is opened, not even its ports/ directory */
		if (!config_rdma_wanted(rp->cfg, de->d_name))
			continue;
		if (array_grow(&f->d, &f->capd, f->nd, sizeof(*f->d), 8)) {
			closedir(dir);
			return -ENOMEM;
		}
		memset(&f->d[f->nd], 0, sizeof(f->d[f->nd]));
		strlcpy0(f->d[f->nd].name, de->d_name, sizeof(f->d[f->nd].name));
		f->nd++;
		snprintf(path, sizeof(path), "%s/%s/ports", rp->ib, de->d_name);
		pd = opendir(path);
		if (!pd) {
			int err = errno;

			/* gone since the readdir, or no ports/: a device without ports */
			if (err == ENOENT || err == ENOTDIR)
				continue;
			/*
			 * Anything else (out of descriptors above all) says nothing about
			 * the device: the listing is unknown, so the poll keeps what it
			 * had rather than report its ports gone.
			 */
			closedir(dir);
			return -err;
		}
		while ((pe = readdir(pd))) {
			uint64_t port;

			if (!rdma_is_number(pe->d_name) || parse_u64(pe->d_name, &port) || !port ||
			    port > UINT32_MAX)
				continue;
			if (array_grow(&f->p, &f->cap, f->n, sizeof(*f->p), 8)) {
				closedir(pd);
				closedir(dir);
				return -ENOMEM;
			}
			memset(&f->p[f->n], 0, sizeof(f->p[f->n]));
			strlcpy0(f->p[f->n].dev, de->d_name, sizeof(f->p[f->n].dev));
			f->p[f->n].port = (uint32_t)port;
			f->n++;
		}
		closedir(pd);
	}
	closedir(dir);
	return 0;
}

/* Read <ib>/<dev>/<rel> into buf; -errno. */
int rdma_ib_read(struct rdma_priv *rp, const char *dev, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", rp->ib, dev, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return read_file_str(path, buf, size);
}

/*
 * The port's netdev from sysfs: the netdev of GID 0 (the default GID every
 * RoCE port holds for its netdev), else the "parent" attribute of software
 * devices (rxe, siw), else the only netdev of the PCI function.
 */
int rdma_sysfs_netdev(struct rdma_priv *rp, const char *dev, uint32_t port, char *name, size_t size)
{
	char rel[96], path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(rel, sizeof(rel), "ports/%u/gid_attrs/ndevs/0", port);
	if (!rdma_ib_read(rp, dev, rel, name, size) && name[0])
		return 0;
	if (!rdma_ib_read(rp, dev, "parent", name, size) && name[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s/device/net", rp->ib, dev);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		strlcpy0(name, de->d_name, size);
		n++;
	}
	closedir(dir);
	return n == 1 ? 0 : -ENOENT;
}
