// SPDX-License-Identifier: MIT
/* rocewatch: RoCE fabric configuration validator and telemetry exporter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "term.h"
#include "util.h"

static int cmd_version(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("Usage: rocewatch version\n\nPrint the version and exit.\n\n"
		       "Exit status: 0, or 2 bad usage.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "rocewatch version: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	cli_print_version();
	return 0;
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "check", cmd_check, "pre-flight: collect once, evaluate the rules, exit 0/1/2/3" },
	{ "export", cmd_export, "a recording or capture as OpenMetrics (Prometheus backfill)" },
	{ "fleet", cmd_fleet, "fleet check: compare the nodes of a job before it starts" },
	{ "health", cmd_health,
	  "health reset: acknowledge a repair (forget one rule's escalation)" },
	{ "probe", cmd_probe, "RDMA probes to other nodes: loss, RTT, the MTU on the path" },
	{ "report", cmd_report, "what moved in a recording or capture: pauses, retries, changes" },
	{ "replay", cmd_replay, "run the rules over a recording: when alerts would have fired" },
	{ "rules", cmd_rules, "lint rule files, list the rules of a profile" },
	{ "serve", cmd_serve, "run the exporter: poll, evaluate, serve /metrics" },
	{ "snapshot", cmd_snapshot, "collect once and write the node model as JSON" },
	{ "version", cmd_version, "print the version" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: rocewatch COMMAND [OPTIONS]\n\n"
		   "RoCE fabric configuration validator and telemetry exporter.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\nRun 'rocewatch COMMAND --help' for the options of a command.\n"
		"Exit status: check, probe and replay follow the Nagios plugin convention (0 OK,\n"
		"1 WARNING, 2 CRITICAL, 3 UNKNOWN, bad usage included); every other command\n"
		"exits 0 on success, 1 when it cannot do its work, 2 on bad usage.\n");
}

int main(int argc, char **argv)
{
	term_guard_stderr();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	{
		const char *best = NULL;
		int bd = 99;

		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
			int d = rw_edit_distance(argv[1], commands[i].name);

			if (d < bd && rw_typo_close(d, strlen(argv[1]))) {
				bd = d;
				best = commands[i].name;
			}
		}
		if (best)
			fprintf(stderr, "rocewatch: unknown command '%s'; did you mean '%s'?\n",
				argv[1], best);
		else
			fprintf(stderr,
				"rocewatch: unknown command '%s' (try 'rocewatch --help')\n",
				argv[1]);
	}
	return 2;
}
