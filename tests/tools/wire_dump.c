// SPDX-License-Identifier: MIT
/*
 * wire_dump: attach the wire view to devices, wait, print its counters,
 * detach.  Drives the loader API the way the exporter will, and gives the
 * netns test a handle on it: with -c it takes commands on stdin, one per
 * line, and ends each answer with a line "ok" or "error: ...".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire_loader.h"

#define EXIT_PERM 3

static volatile sig_atomic_t stop;

struct row {
	struct wire_key key;
	uint64_t packets;
	uint64_t bytes;
};

struct dump {
	struct wire *w;
	bool json;
	struct row *rows;
	size_t n_rows;
	size_t cap_rows;
};

static const char *const level_name[] = { "error", "warning", "info", "debug" };
static const char *const dir_name[WIRE_DIR_MAX] = { "ingress", "egress" };
static const char *const class_name[WIRE_CLASS_MAX] = { "data", "cnp", "ack" };

static void print_log(int level, const char *msg)
{
	fprintf(stderr, "%s: %s\n", level >= 0 && level <= WIRE_LOG_DEBUG ? level_name[level] : "?",
		msg);
}

/* The log callback takes no context: one function per verbosity instead of a global. */
static void log_quiet(int level, const char *msg)
{
	if (level <= WIRE_LOG_ERROR)
		print_log(level, msg);
}

static void log_normal(int level, const char *msg)
{
	if (level <= WIRE_LOG_INFO)
		print_log(level, msg);
}

static void log_verbose(int level, const char *msg)
{
	print_log(level, msg);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fputs("usage: wire_dump [options] IFNAME...\n"
	      "Count RoCEv2 packets on IFNAMEs per direction, DSCP, ECN and class, then print\n"
	      "lines 'ifname dir dscp ecn class packets bytes' sorted, or JSON with -j.\n"
	      "  -p, --port N       RoCEv2 UDP port (4791)\n"
	      "  -m, --mode M       auto, tcx or clsact (auto)\n"
	      "  -d, --duration S   print and exit after S seconds (default: at SIGINT/SIGTERM)\n"
	      "  -c, --commands     read commands on stdin instead of waiting:\n"
	      "                       read | attach IF | detach IF | kind IF | quit\n"
	      "  -j, --json         JSON output\n"
	      "  -v, --verbose      also print libbpf's debug messages\n"
	      "  -q, --quiet        only errors on stderr\n"
	      "exit: 0 ok, 1 failure, 2 usage, 3 not permitted (needs CAP_BPF + CAP_NET_ADMIN)\n",
	      f);
}

static int collect(const struct wire_key *k, uint64_t packets, uint64_t bytes, void *arg)
{
	struct dump *d = arg;
	struct row *grown;
	size_t cap;

	if (d->n_rows == d->cap_rows) {
		cap = d->cap_rows ? 2 * d->cap_rows : 64;
		grown = realloc(d->rows, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->rows = grown;
		d->cap_rows = cap;
	}
	d->rows[d->n_rows++] = (struct row){ .key = *k, .packets = packets, .bytes = bytes };
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct wire_key *x = &((const struct row *)a)->key;
	const struct wire_key *y = &((const struct row *)b)->key;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir - y->dir;
	if (x->dscp != y->dscp)
		return x->dscp - y->dscp;
	if (x->ecn != y->ecn)
		return x->ecn - y->ecn;
	return x->class - y->class;
}

static int print_counts(struct dump *d)
{
	char name[IF_NAMESIZE];
	const struct row *r;
	size_t i;
	int err;

	d->n_rows = 0;
	err = wire_read(d->w, collect, d);
	if (err)
		return err;
	if (d->n_rows)
		qsort(d->rows, d->n_rows, sizeof(*d->rows), row_cmp);
	if (d->json)
		printf("[");
	for (i = 0; i < d->n_rows; i++) {
		r = &d->rows[i];
		if (!if_indextoname(r->key.ifindex, name))
			snprintf(name, sizeof(name), "if%u", r->key.ifindex);
		if (d->json)
			printf("%s\n {\"ifindex\": %u, \"ifname\": \"%s\", \"dir\": \"%s\", "
			       "\"dscp\": %u, \"ecn\": %u, \"class\": \"%s\", "
			       "\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			       i ? "," : "", r->key.ifindex, name,
			       r->key.dir < WIRE_DIR_MAX ? dir_name[r->key.dir] : "?", r->key.dscp,
			       r->key.ecn,
			       r->key.class < WIRE_CLASS_MAX ? class_name[r->key.class] : "?",
			       r->packets, r->bytes);
		else
			printf("%s %s %u %u %s %" PRIu64 " %" PRIu64 "\n", name,
			       r->key.dir < WIRE_DIR_MAX ? dir_name[r->key.dir] : "?", r->key.dscp,
			       r->key.ecn,
			       r->key.class < WIRE_CLASS_MAX ? class_name[r->key.class] : "?",
			       r->packets, r->bytes);
	}
	if (d->json)
		printf("%s]\n", d->n_rows ? "\n" : "");
	fflush(stdout);
	return 0;
}

static int ifindex_of(const char *name)
{
	unsigned int idx = if_nametoindex(name);

	if (!idx) {
		fprintf(stderr, "wire_dump: %s: no such device\n", name);
		return -ENODEV;
	}
	return idx;
}

/* One command line; its answer ends with "ok" or "error: ...". */
static int run_command(struct dump *d, char *line, bool *quit)
{
	char *cmd = strtok(line, " \t\n"), *arg = strtok(NULL, " \t\n");
	int idx, err = 0, kind;

	if (!cmd)
		return 0;
	if (!strcmp(cmd, "quit")) {
		*quit = true;
	} else if (!strcmp(cmd, "read")) {
		err = print_counts(d);
	} else if (arg &&
		   (!strcmp(cmd, "attach") || !strcmp(cmd, "detach") || !strcmp(cmd, "kind"))) {
		idx = ifindex_of(arg);
		if (idx < 0)
			err = idx;
		else if (!strcmp(cmd, "attach"))
			err = wire_attach(d->w, idx);
		else if (!strcmp(cmd, "detach"))
			err = wire_detach(d->w, idx);
		else if ((kind = wire_attach_kind(d->w, idx)) < 0)
			err = kind;
		else
			printf("%s\n", kind == WIRE_ATTACH_TCX ? "tcx" : "clsact");
	} else {
		err = -EINVAL;
	}
	if (err)
		printf("error: %s\n", strerror(-err));
	else
		printf("ok\n");
	fflush(stdout);
	return err;
}

static void wait_for_stop(double seconds)
{
	struct timespec nap = { .tv_nsec = 50 * 1000 * 1000 }, t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (seconds > 0 &&
		    (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "commands", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	enum wire_attach_mode mode = WIRE_ATTACH_AUTO;
	wire_log_fn log = log_normal;
	struct dump d = { 0 };
	bool commands = false, quit = false;
	double seconds = 0;
	char line[256];
	long port = 0;
	int c, i, idx, err, ret = 1;

	while ((c = getopt_long(argc, argv, "p:m:d:cjvqh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = strtol(optarg, NULL, 0);
			if (port < 1 || port > 65535) {
				fprintf(stderr, "wire_dump: bad port '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				mode = WIRE_ATTACH_AUTO;
			else if (!strcmp(optarg, "tcx"))
				mode = WIRE_ATTACH_TCX;
			else if (!strcmp(optarg, "clsact"))
				mode = WIRE_ATTACH_CLSACT;
			else {
				fprintf(stderr, "wire_dump: bad mode '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd':
			seconds = atof(optarg);
			break;
		case 'c':
			commands = true;
			break;
		case 'j':
			d.json = true;
			break;
		case 'v':
			log = log_verbose;
			break;
		case 'q':
			log = log_quiet;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc && !commands) {
		usage(stderr);
		return 2;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = wire_open(&d.w, port, log);
	if (err) {
		ret = err == -EPERM ? EXIT_PERM : 1;
		goto cleanup;
	}
	wire_set_attach_mode(d.w, mode);
	for (i = optind; i < argc; i++) {
		idx = ifindex_of(argv[i]);
		err = idx < 0 ? idx : wire_attach(d.w, idx);
		if (err) {
			ret = err == -EPERM ? EXIT_PERM : 1;
			goto cleanup;
		}
	}

	if (commands) {
		printf("ready\n");
		fflush(stdout);
		while (!quit && !stop && fgets(line, sizeof(line), stdin))
			run_command(&d, line, &quit);
		ret = 0;
		goto cleanup;
	}

	if (log != log_quiet)
		fprintf(stderr, "wire_dump: counting; %s\n",
			seconds > 0 ? "waiting" : "Ctrl-C to print and stop");
	wait_for_stop(seconds);
	ret = print_counts(&d) ? 1 : 0;

cleanup:
	wire_close(d.w);
	free(d.rows);
	return ret;
}
