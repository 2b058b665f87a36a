// SPDX-License-Identifier: MIT
/* rocewatch snapshot: one collection, written as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "daemon.h"
#include "snapshot.h"
#include "util.h"

struct snapshot_args {
	struct rw_config cfg;
	const char *out;
	bool json; /* -j: JSON is all it writes */
};

static const struct cli_opt snapshot_opts[] = {
	CLI_OPT_OUTPUT(struct snapshot_args, out),
	{ .name = "",
	  .short_name = 'j',
	  CLI_FLAG_AT(struct snapshot_args, json),
	  .help = "JSON (the only format; taken as every command\n"
		  "takes it)" },
	{ 0 },
};

const struct cli_cmd snapshot_cli = {
	.name = "snapshot",
	.synopsis = "[-o FILE] [--from FILE] [OPTIONS]",
	.head = "Collect once (configuration and counters) and write the node model as JSON:\n"
		"every object, every field with its value or the reason it is absent, counter\n"
		"sets, collector outcomes, host, time and version.  The schema is described in\n"
		"docs/snapshot.md.  The output can be replayed with --from.\n\n"
		"Exit status: 0 written, 1 the machine or --from FILE cannot be read, or the\n"
		"output not written, 2 bad usage.\n\n"
		"Options:\n",
	.help_after = cli_print_collectors,
	.tables = { CLI_TABLE(snapshot_opts), CLI_SUB(cli_common_opts, struct snapshot_args, cfg) },
};

/* One collection written to a.out: the exit status. */
static int snapshot_run(struct snapshot_args *a)
{
	struct model_source *src;
	struct daemon *d = NULL;
	char err[512] = "";
	int rc = 0, r;

	r = model_source_open(&src, &a->cfg, err, sizeof(err));
	if (!r && (r = daemon_open(&d, &a->cfg, src)))
		snprintf(err, sizeof(err), "out of memory");
	if (!r)
		r = daemon_start(d, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch snapshot: %s\n", err[0] ? err : strerror(-r));
		daemon_close(d);
		return 1;
	}
	daemon_collect(d, COLLECT_SLOW | COLLECT_FAST);
	r = snapshot_write_file(a->out, daemon_model(d));
	if (r) {
		fprintf(stderr, "rocewatch snapshot: %s: %s\n", a->out, strerror(-r));
		rc = 1;
	}
	daemon_close(d);
	return rc;
}

int cmd_snapshot(int argc, char **argv)
{
	struct snapshot_args a = { .out = "-" };
	int rc = 2, r, first;

	config_defaults(&a.cfg);
	r = cli_parse(&snapshot_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	else if (r)
		;
	else if (first < argc)
		fprintf(stderr, "rocewatch snapshot: unexpected argument '%s'\n", argv[first]);
	else
		rc = snapshot_run(&a);
	config_free(&a.cfg);
	return rc;
}
