/* SPDX-License-Identifier: MIT */
/* `rocewatch serve`: the exporter, its stages in serve_cmd.c's pipeline. */
#ifndef ROCEWATCH_SERVE_CMD_H
#define ROCEWATCH_SERVE_CMD_H

struct cli_cmd;
int cmd_serve(int argc, char **argv);
/* its option table (cli.h), for --help and the tests */
extern const struct cli_cmd serve_cli;

#endif
