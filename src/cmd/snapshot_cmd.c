// SPDX-License-Identifier: MIT
/* rocewatch snapshot: one collection, written as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "daemon.h"
#include "snapshot.h"
#include "util.h"

static const char snapshot_usage[] =
    "Usage: rocewatch snapshot [-o FILE] [--from FILE] [OPTIONS]\n\n"
    "Collect once (configuration and counters) and write the node model as JSON:\n"
    "every object, every field with its value or the reason it is absent, counter\n"
    "sets, collector outcomes, host, time and version.  The schema is described in\n"
    "docs/snapshot.md.  The output can be replayed with --from.\n\n"
    "Exit status: 0 written, 1 the machine or --from FILE cannot be read, or the\n"
    "output not written, 2 bad usage.\n\n"
    "Options:\n"
    "  -o, --output FILE          write to FILE instead of standard output\n"
    "  -j                         JSON (the only format; taken as every command\n"
    "                             takes it)\n" COMMON_OPTIONS_HELP;

int cmd_snapshot(int argc, char **argv)
{
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct rw_config cfg;
	struct daemon d;
	const char *out = "-";
	struct option *opts = cli_options(own);
	char err[512] = "";
	int opt, idx, rc = 2, r;

	config_defaults(&cfg);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hjo:", opts, &idx)) != -1) {
		if (opt == 'h') {
			fputs(snapshot_usage, stdout);
			cli_print_collectors(stdout);
			rc = 0;
			goto free_opts;
		}
		if (opt == 'o') {
			out = optarg;
			continue;
		}
		if (opt == 'j') /* JSON is all it writes */
			continue;
		if (opt == '?' || opt == ':') {
			cli_bad_option("snapshot", argv, optind);
			goto free_opts;
		}
		r = cli_common(&cfg, opt, optarg, opts[idx].name);
		if (r)
			goto free_opts;
	}
	if (optind < argc) {
		fprintf(stderr, "rocewatch snapshot: unexpected argument '%s'\n", argv[optind]);
		goto free_opts;
	}
	r = daemon_init(&d, &cfg, err, sizeof(err));
	if (!r)
		r = daemon_start(&d, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch snapshot: %s\n", err[0] ? err : strerror(-r));
		rc = 1;
		goto fini;
	}
	daemon_collect(&d, COLLECT_SLOW | COLLECT_FAST);
	r = snapshot_write_file(out, &d.m);
	if (r) {
		fprintf(stderr, "rocewatch snapshot: %s: %s\n", out, strerror(-r));
		rc = 1;
	} else {
		rc = 0;
	}
fini:
	daemon_fini(&d);
free_opts:
	config_free(&cfg);
	free(opts);
	return rc;
}
