/* SPDX-License-Identifier: MIT */
/*
 * `rocewatch fleet`, private to its files:
 *   fleet_cmd.c     flags, gathering the node models, per-node rules, verdict
 *   fleet_report.c  the text table and the JSON report
 *   fleet_reason.c  the verdict as one line (--format reason: a job's comment)
 */
#ifndef ROCEWATCH_CMD_FLEET_H
#define ROCEWATCH_CMD_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "strmap.h"
#include "model.h"
#include "nccl.h"
#include "snapshot_filter.h"
#include "term.h"

enum fleet_format {
	FLEET_FMT_TEXT,
	FLEET_FMT_JSON,
	FLEET_FMT_REASON,
};

enum fleet_source {
	FSRC_HTTP,	 /* a node's serve: /api/v1/state */
	FSRC_FILE,	 /* a snapshot file */
	FSRC_PROMETHEUS, /* its series in a Prometheus */
	/*
	 * not a node: the job's node list (--job) came from a partial answer,
	 * so nodes may be missing from the check; UNKNOWN, with the warning
	 */
	FSRC_JOB_LIST,
};

/* A per-node rule that did not pass, kept for the report. */
struct fleet_node_result {
	const struct rule_info *rule;
	enum rule_outcome outcome;
	char object[FLEET_OBJECT_MAX];
	char text[RULE_SUMMARY_MAX]; /* summary (fail) or reason (unknown) */
};

struct fleet_share;

struct fleet_member {
	char *name;
	enum fleet_source src;
	char *where; /* URL, file or instance */
	bool answered;
	char *reason;	/* why not (fleet_member_say()), NULL while nothing is wrong */
	double seconds; /* fetch time (HTTP) */
	/*
	 * Its model only while it is being evaluated: each node's model goes
	 * through the per-node rules and into the fleet rules' units as soon
	 * as it is read, then is freed, so that thousands of nodes never sit
	 * in memory at once (an 8-NIC model is over 100 KiB).
	 */
	char host[RW_NAME_MAX]; /* the model's host name */
	/* per-node rules (--profile) */
	bool evaluated;
	enum rules_status status;
	char *outcome; /* "OK", "CRITICAL: netdev_mtu, active_mtu_4096" */
	struct fleet_node_result *res;
	size_t n_res, cap_res;
	size_t counts[RULE__OUTCOMES];
	/*
	 * --nccl-env: what the job's NCCL does on this node, space-separated:
	 * the devices it uses in its order ("mlx5_0:1 mlx5_1:1"), the rail of each
	 * ("0 1"; a fused NIC's "0+1"), and per port it uses the GID index
	 * ("mlx5_0:1=3")
	 */
	char *job_hca, *job_rails, *job_gids;
	/*
	 * --job on the engine: the group of nodes alike by their fleet digest
	 * it is in (1 + index into fleet_run.share, 0 none); share_rep: the one
	 * fetched for them; gathered: asked of Prometheus already
	 */
	size_t share;
	bool share_rep, gathered;
};

struct fleet_run {
	struct fleet_member *nodes;
	size_t n, cap;
	struct strmap names;	   /* a node's name -> its index in nodes */
	struct fleet_node *fnodes; /* what the engine sees, parallel to nodes */
	struct rules_engine *e;
	/* the fields the rules read: all that a snapshot is read for */
	struct snapshot_keep *keep;
	bool per_node; /* per-node profiles loaded */
	enum fleet_format format;
	enum term_color color; /* of the text report, wherever it goes */
	bool verbose;
	size_t max_names;
	size_t max_bytes;	 /* of the reason line */
	const char *report_file; /* also the text report here */
	const char *prometheus;
	/* --nccl-env FILE (or the job's own environment with --slurm): judged on every node */
	struct nccl_env *job;
	const char *job_from; /* the file, or "the environment" */
	/*
	 * --job with --prometheus: fleet rules compared on the engine where they
	 * can be (--prometheus.compare engine, the default there); how many were
	 * and how many the client compared, for the report
	 */
	bool engine;
	size_t told, untold;
	/*
	 * nodes alike by their fleet digest: one fetched stands for the others
	 * (shared of them, in shared_groups groups)
	 */
	struct fleet_share *share;
	size_t n_share, shared, shared_groups;
	int64_t started_ns, gathered_ns;
	enum rules_status status;
	bool node_unknown; /* some node did not answer */
	bool multi;	   /* node rules from several profiles: name them profile/rule */
	bool oom;	   /* evaluating a node ran out of memory */
};

/*
 * What one result of rule ri (a fleet result, a node's own) says of the
 * verdict: OK for an info rule or one that passed or was skipped.
 */
enum rules_status fleet_outcome_status(const struct rule_info *ri, enum rule_outcome o);
enum rules_status fleet_verdict(struct fleet_run *fr);
/* Why node nm is not answered, printf-style (at most FLEET_REASON_MAX bytes). */
#define FLEET_REASON_MAX 640
void fleet_member_say(struct fleet_member *nm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Its reason, "" when none. */
static inline const char *fleet_member_reason(const struct fleet_member *nm)
{
	return nm->reason ? nm->reason : "";
}
int fleet_report_text(const struct fleet_run *fr, FILE *f);
int fleet_report_json(const struct fleet_run *fr);
/* One line on stdout, at most fr->max_bytes before its newline: 0 or -ENOMEM. */
int fleet_report_reason(const struct fleet_run *fr);

/* `rocewatch fleet check` (argv[0] "check"), and its option table (cli.h) for --help and the tests.
 */
struct cli_cmd;
int cmd_fleet_check(int argc, char **argv);
extern const struct cli_cmd fleet_cli;

#endif
