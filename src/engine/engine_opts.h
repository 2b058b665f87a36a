/* SPDX-License-Identifier: MIT */
/*
 * The option rows of the engine's inputs, shared by every command that takes
 * them: the collectors and their filters, the roots, --from (base: struct
 * rw_config), and the rules (--profile, --param, --rail-map).
 */
#ifndef ROCEWATCH_ENGINE_OPTS_H
#define ROCEWATCH_ENGINE_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "config.h"

/* "Collectors:" and each collector's name, default and help: a command's .help_after. */
void cli_print_collectors(FILE *f);
/*
 * --profile NAME (param false) or --param KEY=VALUE (param true) added to spec:
 * 0, or -EINVAL / -ENOMEM after one line naming the command and the flag.
 */
struct rules_spec;
int cli_rules_option(const char *cmd, struct rules_spec *spec, bool param, const char *arg);
/*
 * Rows that read the same in every command that takes them.  CLI_OPT_RULES is two
 * rows: --profile (its help says what the command does with the rules) and
 * --param KEY=VALUE, both handed to f, which adds them to a rules_spec.
 */
#define CLI_OPT_RULES(f, profile_usage)                                                        \
	{ .name = "profile", .kind = CLI_CALL, .fn = (f), .usage = (profile_usage) },          \
	{                                                                                      \
		.name = "param", .kind = CLI_CALL, .fn = (f),                                  \
		.usage =                                                                       \
		    "  --param KEY=VALUE          override a profile parameter (repeatable)\n" \
	}
/* --rail-map FILE, the site's cabling: read by rules_fabric_setup() (rules_serve.h) */
#define CLI_OPT_RAIL_MAP(type, member)                                                            \
	{                                                                                         \
		.name = "rail-map", .kind = CLI_STRING, CLI_AT(type, member),                     \
		.usage =                                                                          \
		    "  --rail-map FILE            the site's rails: YAML 'rails:' PCI address,\n" \
		    "                             netdev or RDMA device -> rail name (the\n"      \
		    "                             first rail source; see rocewatch-rules(5))\n"   \
	}
/* The option rows every collecting command takes; base: struct rw_config. */
extern const struct cli_opt cli_common_opts[];

#endif
