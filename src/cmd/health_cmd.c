// SPDX-License-Identifier: MIT
/*
 * rocewatch health reset RULE OBJECT: an operator's acknowledgement after a
 * repair.  A degraded rule that failed escalate_after times in its window is
 * fatal until those episodes age out (24 h by default), even after the cable
 * was replaced; this forgets the episodes of one rule on one object in the
 * state directory, and nothing else of the node's memory.  A running serve
 * holds the directory (health.state.lock): it is asked through its API
 * instead, which does the same under its own lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "engine.h"
#include "rules_serve.h"
#include "util.h"

static const char health_usage[] =
    "Acknowledge a repair: forget the failure episodes of the degraded rule RULE on\n"
    "OBJECT (a netdev such as eth2, an RDMA port such as mlx5_0/1, or node) in\n"
    "DIR/health.state, so a rule escalated to fatal by its past failures is judged\n"
    "afresh.  Every other rule and object keeps its memory.  The profiles must be\n"
    "those serve runs (default " RULES_DEFAULT_PROFILE ").\n\n"
    "A serve running on DIR holds it: ask that serve instead, with\n"
    "  curl -X POST 'http://HOST:PORT/api/v1/health/reset?rule=RULE&object=OBJECT'\n"
    "(serve --web.enable-health-api, behind --web.config.file's auth).\n\n"
    "Exit status: 0 reset (or nothing to forget), 1 it could not be done, 2 bad usage.\n\n"
    "Options:\n";

struct health_args {
	struct rules_spec spec;
	const char *state_dir;
};

static const struct cli_opt health_opts[] = {
	CLI_OPT_RULES(struct health_args, spec,
		      "the profiles serve runs (repeatable; default " RULES_DEFAULT_PROFILE ")"),
	{ .name = "state-dir",
	  CLI_STRING_AT(struct health_args, state_dir),
	  .metavar = "DIR",
	  .help = "serve's --state-dir (default $STATE_DIRECTORY,\n"
		  "else /var/lib/rocewatch)" },
	{ .name = "help", .short_name = 'h', .kind = CLI_HELP },
	{ 0 },
};

const struct cli_cmd health_cli = {
	.name = "health reset",
	.synopsis = "RULE OBJECT [--state-dir DIR] [--profile NAME|FILE]...\n"
		    "[--param KEY=VALUE]...",
	.head = health_usage,
	.tables = { CLI_TABLE(health_opts) },
};

static void boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n ")] = '\0';
	fclose(f);
}

static int reset(struct health_args *a, const char *rule, const char *object)
{
	char dir[4000], path[4100], holder[32], msg[1024], err[256], boot[40];
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	int fd = -1, r, rc = 1;
	size_t n = 0;

	if (a->state_dir)
		strlcpy0(dir, a->state_dir, sizeof(dir));
	else if (getenv("STATE_DIRECTORY") && *getenv("STATE_DIRECTORY"))
		strlcpy0(dir, getenv("STATE_DIRECTORY"), sizeof(dir));
	else
		strlcpy0(dir, "/var/lib/rocewatch", sizeof(dir));
	dir[strcspn(dir, ":")] = '\0'; /* systemd's list: the first is serve's */
	snprintf(path, sizeof(path), "%s/health.state", dir);
	if (access(path, F_OK)) {
		fprintf(stderr, "rocewatch health reset: %s: %s: no health memory to reset\n", path,
			strerror(errno));
		return 1;
	}
	r = rules_state_lock(dir, &fd, holder, sizeof(holder));
	if (r == -EBUSY) {
		fprintf(stderr,
			"rocewatch health reset: %s is held by a running rocewatch serve (pid %s): "
			"ask it instead: curl -X POST "
			"'http://HOST:PORT/api/v1/health/reset?rule=%s&object=%s' (serve "
			"--web.enable-health-api)\n",
			dir, holder, rule, object);
		return 1;
	}
	if (r) {
		fprintf(stderr, "rocewatch health reset: %s/health.state.lock: %s\n", dir,
			r == -EINVAL ? "not a regular file" : strerror(-r));
		return 1;
	}
	r = rules_load(&a->spec, &e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch health reset: %s\n", line);
	}
	rules_diags_free(&dg);
	if (r)
		goto out;
	boot_id(boot, sizeof(boot));
	r = rules_health_load(e, path, boot, msg, sizeof(msg));
	if (r) {
		/* never replace a file it could not read: that memory is not ours to drop */
		fprintf(stderr, "rocewatch health reset: %s\n", msg);
		goto out;
	}
	if (msg[0])
		fprintf(stderr, "rocewatch health reset: %s\n", msg);
	r = rules_health_forget(e, rule, object, &n, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch health reset: %s\n", err);
		rc = r == -EINVAL && strstr(err, "is not one") ? 2 : 1;
		goto out;
	}
	r = rules_health_save(e, path, boot);
	if (r) {
		fprintf(stderr, "rocewatch health reset: cannot write %s: %s\n", path,
			strerror(-r));
		goto out;
	}
	printf("%s on %s: %zu failure episode%s forgotten (%s)\n", rule, object, n,
	       n == 1 ? "" : "s", path);
	rc = 0;
out:
	rules_free(e);
	if (fd >= 0)
		close(fd);
	return rc;
}

int cmd_health(int argc, char **argv)
{
	struct health_args a = { 0 };
	int r, first, rc = 2;

	if (argc < 2 || strcmp(argv[1], "reset")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			cli_print_help(&health_cli, stdout);
			return 0;
		}
		fprintf(stderr,
			"rocewatch health: %s (the command is 'health reset RULE OBJECT')\n",
			argc < 2 ? "no subcommand" : "unknown subcommand");
		return 2;
	}
	argc--;
	argv++;
	r = cli_parse(&health_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	else if (r)
		;
	else if (argc - first != 2)
		fprintf(stderr, "rocewatch health reset: give RULE and OBJECT (see --help)\n");
	else
		rc = reset(&a, argv[first], argv[first + 1]);
	rules_spec_free(&a.spec);
	return rc;
}
