/* SPDX-License-Identifier: MIT */
/* The subcommands; each parses its own flags and returns the process exit code. */
#ifndef ROCEWATCH_COMMANDS_H
#define ROCEWATCH_COMMANDS_H

#include "fleet.h"     /* cmd_fleet_check, fleet_cli */
#include "serve_cmd.h" /* cmd_serve, serve_cli */

int cmd_check(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* fleet check or fleet probe */
int cmd_fleet(int argc, char **argv);
int cmd_fleet_probe(int argc, char **argv);
int cmd_health(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

/* Their option tables (cli.h), for --help and the tests. */
struct cli_cmd;
extern const struct cli_cmd check_cli, export_cli, fleet_probe_cli, health_cli, probe_cli,
    report_cli, replay_cli, rules_lint_cli, rules_list_cli, snapshot_cli;
int cmd_version(int argc, char **argv);

/*
 * The commands, registered once: main() dispatches on .name, `rocewatch
 * --help` lists .summary, and the tests hold every option table (.opts: the
 * subcommands' too) against the README and the man page.  .name NULL ends it.
 */
struct rw_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const struct cli_cmd *opts[3];
};
extern const struct rw_command cli_commands[];

#endif
