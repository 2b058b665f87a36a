// SPDX-License-Identifier: MIT
/*
 * The floor of the sysfs path: what reading the RDMA counters costs with
 * nothing around it.  Opens every counter file of every port once
 * (SYSFS_ROOT/class/infiniband/DEV/ports/N/{counters,hw_counters}/NAME, as
 * rocewatch's fast poll reads them), then each iteration preads each at
 * offset 0 and parses the decimal value, the least any reader of these files
 * can do.  Paced like `serve --interval`, so caches are as cold as rocewatch's.
 *
 * Usage: floor SYSFS_ROOT [--interval-ms N] [--iterations N] [--classic-only | --hw-only]
 *                         [--open-read-close | --netlink]
 *        floor --peak-rss CMD [ARG...]
 * --peak-rss: run CMD and print its peak RSS (wait4's ru_maxrss, KiB) as
 * {"peak_rss_kib": N}.  From this small process, not from the benchmark's
 * Python: a child's ru_maxrss starts at what its parent had when it forked.
 * --open-read-close: open, read and close each file every iteration, as
 * node_exporter (and rocewatch's ports on a fresh descriptor) do.
 * --netlink: the hw counters over RDMA netlink instead, one
 * RDMA_NLDEV_CMD_STAT_GET per port (the live machine only; SYSFS_ROOT is
 * not read): the floor of rocewatch's live path.  "files" is then the
 * number of counters one iteration got.
 * Prints one JSON object: files, iterations, CPU ns per iteration (this
 * process's CPU clock around the reads, the opening excluded), the same with
 * the pacing in (the sleep's system calls and wake-up, which a daemon's
 * poll pays as well) and a checksum of the values.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>

struct files {
	int *fd;
	char **path;
	size_t n, cap;
};

static int add(struct files *f, const char *path, int fd)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		int *nfd = realloc(f->fd, cap * sizeof(*nfd));

		if (!nfd)
			return -ENOMEM;
		f->fd = nfd;
		char **np = realloc(f->path, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		f->path = np;
		f->cap = cap;
	}
	f->path[f->n] = strdup(path);
	if (!f->path[f->n])
		return -ENOMEM;
	f->fd[f->n++] = fd;
	return 0;
}

/* Every regular entry of dir, opened (or only named, when keep is false). */
static int add_dir(struct files *f, const char *dir, int keep)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		int fd = -1;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (keep) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				fprintf(stderr, "floor: %s: %s\n", path, strerror(errno));
				closedir(d);
				return -errno;
			}
		}
		if (add(f, path, fd)) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	return 0;
}

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The decimal value of a counter file; what any reader must do with the bytes. */
static uint64_t parse(const char *b, ssize_t n)
{
	uint64_t v = 0;

	for (ssize_t i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(b[i] - '0');
	return v;
}

/* ---- --netlink: RDMA_NLDEV_CMD_STAT_GET per port ---- */

struct nlport {
	uint32_t dev, port;
};

static char nlbuf[65536] __attribute__((aligned(8)));

static int nl_send(int fd, uint16_t type, uint16_t flags, uint32_t dev, uint32_t port)
{
	struct {
		struct nlmsghdr h;
		struct nlattr a1;
		uint32_t dev;
		struct nlattr a2;
		uint32_t port;
	} req = {
		.h = { .nlmsg_len = sizeof(req),
		       .nlmsg_type = type,
		       .nlmsg_flags = NLM_F_REQUEST | flags },
		.a1 = { .nla_len = NLA_HDRLEN + 4, .nla_type = RDMA_NLDEV_ATTR_DEV_INDEX },
		.dev = dev,
		.a2 = { .nla_len = NLA_HDRLEN + 4, .nla_type = RDMA_NLDEV_ATTR_PORT_INDEX },
		.port = port,
	};

	/* a dump of every device carries no attributes */
	if (flags & NLM_F_DUMP)
		req.h.nlmsg_len = NLMSG_HDRLEN;
	return send(fd, &req, req.h.nlmsg_len, 0) < 0 ? -errno : 0;
}

/* Call fn on each top-level attribute of each message of one reply (until DONE). */
static int nl_recv(int fd, int (*fn)(const struct nlattr *, void *), void *arg)
{
	for (;;) {
		ssize_t n = recv(fd, nlbuf, sizeof(nlbuf), 0);

		if (n < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)nlbuf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			for (const struct nlattr *a = (const void *)((char *)h + NLMSG_HDRLEN);
			     (const char *)a + NLA_HDRLEN <= (char *)h + h->nlmsg_len &&
			     a->nla_len >= NLA_HDRLEN;
			     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len)))
				if (fn(a, arg))
					return -EBADMSG;
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

struct devs {
	struct nlport *p;
	size_t n, cap;
	uint32_t dev;
};

static int on_dev_attr(const struct nlattr *a, void *arg)
{
	struct devs *d = arg;
	uint32_t v;

	if (a->nla_len < NLA_HDRLEN + 4)
		return 0;
	memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
	if ((a->nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_ATTR_DEV_INDEX)
		d->dev = v;
	else if ((a->nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_ATTR_PORT_INDEX) {
		/* a device's PORT_INDEX is its last port */
		for (uint32_t p = 1; p <= v; p++) {
			if (d->n == d->cap) {
				size_t cap = d->cap ? 2 * d->cap : 16;
				struct nlport *np = realloc(d->p, cap * sizeof(*np));

				if (!np)
					return -ENOMEM;
				d->p = np;
				d->cap = cap;
			}
			d->p[d->n++] = (struct nlport){ d->dev, p };
		}
	}
	return 0;
}

struct sum {
	uint64_t sum, n;
};

/* STAT_HWCOUNTERS { ENTRY { NAME, VALUE } ... }: what any reader must walk. */
static int on_stat_attr(const struct nlattr *a, void *arg)
{
	struct sum *s = arg;
	const char *end = (const char *)a + a->nla_len;

	if ((a->nla_type & NLA_TYPE_MASK) != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)
		return 0;
	for (const struct nlattr *e = (const void *)((const char *)a + NLA_HDRLEN);
	     (const char *)e + NLA_HDRLEN <= end && e->nla_len >= NLA_HDRLEN;
	     e = (const void *)((const char *)e + NLA_ALIGN(e->nla_len))) {
		const char *eend = (const char *)e + e->nla_len;

		for (const struct nlattr *f = (const void *)((const char *)e + NLA_HDRLEN);
		     (const char *)f + NLA_HDRLEN <= eend && f->nla_len >= NLA_HDRLEN;
		     f = (const void *)((const char *)f + NLA_ALIGN(f->nla_len))) {
			uint64_t v;

			if ((f->nla_type & NLA_TYPE_MASK) !=
				RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE ||
			    f->nla_len < NLA_HDRLEN + 8)
				continue;
			memcpy(&v, (const char *)f + NLA_HDRLEN, 8);
			s->sum += v;
			s->n++;
		}
	}
	return 0;
}

static int run_netlink(long iterations, long interval_ms)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	struct devs d = { 0 };
	struct sum s = { 0 };
	int64_t cpu = 0;
	int r;

	if (fd < 0) {
		fprintf(stderr, "floor: RDMA netlink: %s\n", strerror(errno));
		return 1;
	}
	r = nl_send(fd, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_DUMP, 0, 0);
	if (!r)
		r = nl_recv(fd, on_dev_attr, &d);
	if (r || !d.n) {
		fprintf(stderr, "floor: RDMA netlink: %s\n", r ? strerror(-r) : "no RDMA ports");
		return 1;
	}
	for (long it = 0; it < iterations; it++) {
		struct timespec gap = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
		int64_t t0 = cpu_ns();

		s.n = 0;
		for (size_t i = 0; i < d.n; i++) {
			r = nl_send(fd, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0,
				    d.p[i].dev, d.p[i].port);
			if (!r)
				r = nl_recv(fd, on_stat_attr, &s);
			if (r) {
				fprintf(stderr, "floor: STAT_GET %u/%u: %s\n", d.p[i].dev,
					d.p[i].port, strerror(-r));
				return 1;
			}
		}
		cpu += cpu_ns() - t0;
		if (interval_ms > 0)
			nanosleep(&gap, NULL);
	}
	printf("{\"files\": %llu, \"ports\": %zu, \"iterations\": %ld, \"cpu_ns_per_iteration\": "
	       "%.0f, \"checksum\": %llu}\n",
	       (unsigned long long)s.n, d.n, iterations, (double)cpu / (double)iterations,
	       (unsigned long long)s.sum);
	free(d.p);
	close(fd);
	return 0;
}

static int peak_rss(char **cmd)
{
	struct rusage ru;
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		perror("floor: fork");
		return 2;
	}
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "floor: %s did not run and exit 0\n", cmd[0]);
		return 2;
	}
	printf("{\"peak_rss_kib\": %ld}\n", ru.ru_maxrss);
	return 0;
}

int main(int argc, char **argv)
{
	struct files f = { 0 };
	long interval_ms = 100, iterations = 50;
	int classic_only = 0, hw_only = 0, orc = 0, netlink = 0;
	char ib[4096], dir[4096];
	struct dirent *de;
	uint64_t sum = 0;
	int64_t cpu = 0, paced0, paced;
	DIR *d;

	if (argc > 2 && !strcmp(argv[1], "--peak-rss"))
		return peak_rss(argv + 2);
	if (argc < 2) {
		fprintf(stderr, "usage: floor SYSFS_ROOT [--interval-ms N] [--iterations N] "
				"[--classic-only | --hw-only] [--open-read-close | --netlink]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc)
			interval_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = atol(argv[++i]);
		else if (!strcmp(argv[i], "--classic-only"))
			classic_only = 1;
		else if (!strcmp(argv[i], "--hw-only"))
			hw_only = 1;
		else if (!strcmp(argv[i], "--open-read-close"))
			orc = 1;
		else if (!strcmp(argv[i], "--netlink"))
			netlink = 1;
		else {
			fprintf(stderr, "floor: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (netlink)
		return run_netlink(iterations, interval_ms);
	snprintf(ib, sizeof(ib), "%s/class/infiniband", argv[1]);
	d = opendir(ib);
	if (!d) {
		fprintf(stderr, "floor: %s: %s\n", ib, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char ports[4096];
		struct dirent *pe;
		DIR *pd;

		if (de->d_name[0] == '.')
			continue;
		/* paths too long for the buffers are not counter files of this tree */
		if (snprintf(ports, sizeof(ports), "%s/%s/ports", ib, de->d_name) >=
		    (int)sizeof(ports))
			continue;
		pd = opendir(ports);
		if (!pd)
			continue;
		while ((pe = readdir(pd))) {
			if (pe->d_name[0] == '.')
				continue;
			if (!hw_only && (snprintf(dir, sizeof(dir), "%s/%s/counters", ports,
						  pe->d_name) >= (int)sizeof(dir) ||
					 add_dir(&f, dir, !orc)))
				return 1;
			if (classic_only)
				continue;
			if (snprintf(dir, sizeof(dir), "%s/%s/hw_counters", ports, pe->d_name) >=
				(int)sizeof(dir) ||
			    add_dir(&f, dir, !orc))
				return 1;
		}
		closedir(pd);
	}
	closedir(d);
	if (!f.n) {
		fprintf(stderr, "floor: no counter files under %s\n", ib);
		return 1;
	}
	paced0 = cpu_ns();
	for (long it = 0; it < iterations; it++) {
		struct timespec gap = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
		int64_t t0 = cpu_ns();

		for (size_t i = 0; i < f.n; i++) {
			char buf[64];
			ssize_t n;

			if (orc) {
				int fd = open(f.path[i], O_RDONLY | O_CLOEXEC);

				if (fd < 0)
					continue;
				n = read(fd, buf, sizeof(buf));
				close(fd);
			} else {
				n = pread(f.fd[i], buf, sizeof(buf), 0);
			}
			if (n > 0)
				sum += parse(buf, n);
		}
		cpu += cpu_ns() - t0;
		if (interval_ms > 0)
			nanosleep(&gap, NULL);
	}
	paced = cpu_ns() - paced0;
	printf("{\"files\": %zu, \"iterations\": %ld, \"cpu_ns_per_iteration\": %.0f, "
	       "\"paced_cpu_ns_per_iteration\": %.0f, \"checksum\": %llu}\n",
	       f.n, iterations, (double)cpu / (double)iterations,
	       (double)paced / (double)iterations, (unsigned long long)sum);
	for (size_t i = 0; i < f.n; i++) {
		if (f.fd[i] >= 0)
			close(f.fd[i]);
		free(f.path[i]);
	}
	free(f.fd);
	free(f.path);
	return 0;
}
