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
#include "engine.h" /* struct rules_spec */

/* "Collectors:" and each collector's name, default and help: a command's .help_after. */
void cli_print_collectors(FILE *f);
/*
 * The RULES row kind: --profile (.value CLI_RULES_PROFILE) or --param
 * (CLI_RULES_PARAM) added to the struct rules_spec member; the errors name the
 * command being parsed.
 */
enum {
	CLI_RULES_PROFILE,
	CLI_RULES_PARAM
};
int cli_rules_row(const struct cli_opt *o, void *member, const char *arg);
#define CLI_RULES_AT(type, member, which)                                                     \
	CLI_AT_TYPED(type, member, struct rules_spec), .kind = CLI_CALL, .fn = cli_rules_row, \
						       .value = (which)
/*
 * Rows that read the same in every command that takes them.  CLI_OPT_RULES is two
 * rows: --profile (its help says what the command does with the rules) and
 * --param KEY=VALUE, both into the command's struct rules_spec member.
 */
#define CLI_OPT_RULES(type, member, profile_help)                                           \
	{ .name = "profile",                                                                \
	  CLI_RULES_AT(type, member, CLI_RULES_PROFILE),                                    \
	  .metavar = "NAME|FILE",                                                           \
	  .help = (profile_help) },                                                         \
	{                                                                                   \
		.name = "param", CLI_RULES_AT(type, member, CLI_RULES_PARAM),               \
		.metavar = "KEY=VALUE", .help = "override a profile parameter (repeatable)" \
	}
/* --rail-map FILE, the site's cabling: read by rules_fabric_setup() (rules_serve.h) */
#define CLI_OPT_RAIL_MAP(type, member)                                              \
	{                                                                           \
		.name = "rail-map", CLI_STRING_AT(type, member), .metavar = "FILE", \
		.help = "the site's rails: YAML 'rails:' PCI address,\n"            \
			"netdev or RDMA device -> rail name (the\n"                 \
			"first rail source; see rocewatch-rules(5))"                \
	}
/* The option rows every collecting command takes; base: struct rw_config. */
extern const struct cli_opt cli_common_opts[];

#endif
