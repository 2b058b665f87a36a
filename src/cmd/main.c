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

static void usage(FILE *f)
{
	fprintf(f, "Usage: rocewatch COMMAND [OPTIONS]\n\n"
		   "RoCE fabric configuration validator and telemetry exporter.\n\nCommands:\n");
	for (const struct rw_command *c = cli_commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
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
	for (const struct rw_command *c = cli_commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	{
		const char *best = NULL;
		int bd = 99;

		for (const struct rw_command *c = cli_commands; c->name; c++) {
			int d = rw_edit_distance(argv[1], c->name);

			if (d < bd && rw_typo_close(d, strlen(argv[1]))) {
				bd = d;
				best = c->name;
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
