// SPDX-License-Identifier: MIT
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "util.h"

const struct rw_command cli_commands[] = {
	{ "check",
	  cmd_check,
	  "pre-flight: collect once, evaluate the rules, exit 0/1/2/3",
	  { &check_cli } },
	{ "export",
	  cmd_export,
	  "a recording or capture as OpenMetrics (Prometheus backfill)",
	  { &export_cli } },
	{ "fleet",
	  cmd_fleet,
	  "fleet check: compare the nodes of a job before it starts",
	  { &fleet_cli, &fleet_probe_cli } },
	{ "health",
	  cmd_health,
	  "health reset: acknowledge a repair (forget one rule's escalation)",
	  { &health_cli } },
	{ "probe",
	  cmd_probe,
	  "RDMA probes to other nodes: loss, RTT, the MTU on the path",
	  { &probe_cli } },
	{ "report",
	  cmd_report,
	  "what moved in a recording or capture: pauses, retries, changes",
	  { &report_cli } },
	{ "replay",
	  cmd_replay,
	  "run the rules over a recording: when alerts would have fired",
	  { &replay_cli } },
	{ "rules",
	  cmd_rules,
	  "lint rule files, list the rules of a profile",
	  { &rules_lint_cli, &rules_list_cli } },
	{ "serve", cmd_serve, "run the exporter: poll, evaluate, serve /metrics", { &serve_cli } },
	{ "snapshot",
	  cmd_snapshot,
	  "collect once and write the node model as JSON",
	  { &snapshot_cli } },
	{ "version", cmd_version, "print the version" },
	{ NULL },
};

int cmd_version(int argc, char **argv)
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

/* `rocewatch fleet check|probe ...` */
int cmd_fleet(int argc, char **argv)
{
	if (argc < 2 || (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_print_help(&fleet_cli, argc < 2 ? stderr : stdout);
		return argc < 2 ? RULES_UNKNOWN : 0;
	}
	if (!strcmp(argv[1], "probe"))
		return cmd_fleet_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "check")) {
		if (rw_typo_close(rw_edit_distance(argv[1], "check"), strlen(argv[1])))
			fprintf(stderr,
				"rocewatch fleet: unknown subcommand '%s'; did you mean 'check'?\n",
				argv[1]);
		else if (rw_typo_close(rw_edit_distance(argv[1], "probe"), strlen(argv[1])))
			fprintf(stderr,
				"rocewatch fleet: unknown subcommand '%s'; did you mean 'probe'?\n",
				argv[1]);
		else
			/* a node list or an option where the subcommand goes */
			fprintf(
			    stderr,
			    "rocewatch fleet: unknown subcommand '%s'; the subcommands are check "
			    "and probe: rocewatch fleet check %s%s\n",
			    argv[1], argv[1], argc > 2 ? " ..." : "");
		return RULES_UNKNOWN;
	}
	return cmd_fleet_check(argc - 1, argv + 1);
}
