// SPDX-License-Identifier: MIT
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "util.h"

const struct cli_cmd *const cli_commands[] = {
	&check_cli, &export_cli,   &fleet_cli,	&fleet_probe_cli, &health_cli,
	&probe_cli, &report_cli,   &replay_cli, &rules_lint_cli,  &rules_list_cli,
	&serve_cli, &snapshot_cli, NULL,
};

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
