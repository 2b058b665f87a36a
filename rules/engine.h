/* SPDX-License-Identifier: MIT */
/*
 * The rule engine: loads profiles (YAML rule files with parameters), and
 * evaluates every rule against every object of its scope in a node model.
 * It never knows where a value came from; an absent value makes a rule
 * unknown, never a pass or a fail.
 *
 * Results are kept per (rule, object) in one array that is reused across
 * evaluations: in steady state (same rules, same objects) an evaluation
 * allocates nothing.  A result keeps its identity (rule_result.key) for as
 * long as its rule and object exist, so an alert layer can track it.
 *
 * The language and the profile format are described in docs/rules.md.
 */
#ifndef ROCEWATCH_RULES_ENGINE_H
#define ROCEWATCH_RULES_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabric.h"
#include "model.h"

struct strbuf;

#define RULES_DEFAULT_PROFILE "lossless-roce"
#define RULE_SUMMARY_MAX      256
#define RULE_REASON_MAX	      192
#define RULE_ESCALATE_MAX     32 /* failure episodes remembered per result */

enum rule_outcome {
	RULE_PASS,
	RULE_FAIL,
	RULE_UNKNOWN, /* a value it needs is absent (reason says which and why) */
	RULE_SKIP,    /* the `when` guard is false */
	RULE__OUTCOMES,
};

enum rule_severity {
	SEV_CRITICAL,
	SEV_WARNING,
	SEV_INFO,
};

/*
 * What a failure means for the jobs on the node (health rules): fatal, the
 * job will fail (drain); degraded, it will be slow (look soon).  Declared
 * by `class:`; fatal is severity critical, degraded warning.  A degraded
 * result that failed `escalate_after` times within `escalate_window_hours`
 * (profile parameters, 5 in 24 h by default) is escalated: fatal.
 */
enum rule_class {
	RCLASS_NONE,
	RCLASS_FATAL,
	RCLASS_DEGRADED,
};

/* What an operator should do about a failure: a fixed vocabulary (`action:`). */
enum rule_action {
	RACT_NONE,
	RACT_FIX_CONFIG,
	RACT_RESET_LINK,
	RACT_RESEAT_OR_REPLACE_CABLE,
	RACT_DRAIN_NODE,
	RACT_RELOAD_DRIVER,
	RACT_CONTACT_VENDOR,
	RACT__COUNT,
};

/* The node's health from its results: the worst class failing. */
enum node_verdict {
	VERDICT_HEALTHY,
	VERDICT_DEGRADED,
	VERDICT_FATAL,
	VERDICT_UNKNOWN,
};

/* Overall status, with the Nagios plugin exit code as its value. */
enum rules_status {
	RULES_OK = 0,
	RULES_WARNING = 1,
	RULES_CRITICAL = 2,
	RULES_UNKNOWN = 3,
};

/* How a fleet rule splits its units into groups compared separately. */
enum fleet_by {
	/*
	 * No `by:`: like with like, by position as FLEET_BY_RAIL, the group
	 * named only when there is more than one (each: node has one group)
	 */
	FLEET_BY_NONE,
	FLEET_BY_RAIL,	   /* the port's rail fact (fabric.h), else its position */
	FLEET_BY_POSITION, /* the object's position on its node among the units (0, 1, ...) */
	FLEET_BY_DEVICE,   /* the object's name (eth2, mlx5_0) */
	FLEET_BY_POOL,	   /* every unit of every node in one group */
};

/* A rule as loaded; lives as long as its engine. */
struct rule_info {
	const char *name;
	const char *profile;
	const char *file;    /* where it was defined */
	int line;	     /* of its `- name:` entry */
	enum obj_kind scope; /* a fleet rule: the kind of the units it compares (`each`) */
	bool fleet;	     /* scope: fleet, evaluated by rules_evaluate_fleet() only */
	enum fleet_by by;
	enum rule_severity severity;
	int64_t for_ns; /* `for:` (0 if none); used by the alert layer */
	enum rule_class cls;
	enum rule_action action;
	/* degraded rules: failures (episodes) within window_ns that make it fatal */
	int escalate_after;
	int64_t escalate_window_ns;
	/*
	 * How long the counter history of an object that left the model is kept
	 * for its return (a device that missed a config poll, a driver reload):
	 * the profile's history_grace_minutes, 5 by default.
	 */
	int64_t history_grace_ns;
	const char *when_src; /* NULL if no guard */
	const char *expr_src;
	const char *summary_src; /* NULL if none */
	const char *doc;	 /* "" if none */
	/* Hash of the definition and the parameter values it uses: a changed rule starts over. */
	uint64_t fingerprint;
};

/* One profile as loaded. */
struct rules_profile_info {
	const char *name;
	const char *description;
	const char *file;   /* the path read, or "built-in:NAME.yaml" */
	const char *origin; /* where it came from: enum rules_origin's name */
	size_t n_rules;
	bool requires[OBJ__COUNT]; /* `requires:` object kinds that must exist */
	bool requirements_met;	   /* as of the last evaluation */
	/*
	 * `applies_to:` per object kind, the guard of every rule of that scope
	 * (NULL: every object): link_layer == "Ethernet" keeps a RoCE profile off
	 * native InfiniBand ports.  `requires` counts only the objects it admits.
	 */
	const char *applies_src[OBJ__COUNT];
	/* judged_roles, as written ("compute,storage"); NULL: every object is judged */
	const char *judged_src;
	size_t n_params;
	/*
	 * FNV-1a 64 of the file's bytes as read (the built-in copy's for a
	 * built-in): a recording keeps it, so replay can tell whether the rules
	 * it runs are still the ones serve ran.
	 */
	uint64_t text_hash;
};

/*
 * One (rule, object) result.  Owned by the engine; valid until the next
 * evaluate/free.  What every poll reads or writes of it comes first, in its
 * first cache line: a counter result that stands frozen (rx_freeze) is this
 * line and nothing else, and the alert table looks only at the outcome of
 * every result.
 */
struct rule_result {
	const struct rule_info *rule;
	enum obj_kind kind;
	enum rule_outcome outcome;
	int64_t eval_ns; /* time of the last evaluation */
	/* degraded rules: failure episodes within the escalation window, and whether that made it
	 * fatal (the outcome is then fail, severity critical) */
	uint16_t episodes;
	bool escalated;
	char netdev[RW_NAME_MAX]; /* netdev: its name; rdma_port: the bound netdev or "" */
	char device[RW_NAME_MAX]; /* netdev name or RDMA device; "" for the node */
	uint32_t port;		  /* rdma_port: port number; else 0 */
	/* Stable identity of (profile, rule, kind, device, port): FNV-1a 64. */
	uint64_t key;
	/*
	 * The same with the object's hardware identity for its name (an RDMA
	 * port's node GUID, else the PCI address of its netdev; a netdev's PCI
	 * address), key when it has none: the history follows the device, not
	 * the name, and a new device under an old name starts afresh.
	 */
	uint64_t ikey;
	int64_t since_ns; /* evaluation time at which the outcome last changed */
	/*
	 * Rules with rate/increase/delta: the largest window they declare and
	 * how much of it their samples covered (the shortest, if several): less
	 * than the window while the history is younger than it.  Both 0 otherwise.
	 */
	int64_t window_ns, observed_ns;
	/* interpolated `summary` (empty when skipped), then the window observed */
	char summary[RULE_SUMMARY_MAX];
	char reason[RULE_REASON_MAX]; /* unknown: "pfc.enabled absent: unsupported"; skip: the guard
				       */
};

/* The severity a result counts with: the rule's, critical once escalated. */
static inline enum rule_severity rule_result_severity(const struct rule_result *x)
{
	return x->escalated ? SEV_CRITICAL : x->rule->severity;
}
/* The class a result counts with: the rule's, fatal once escalated. */
static inline enum rule_class rule_result_class(const struct rule_result *x)
{
	return x->escalated ? RCLASS_FATAL : x->rule->cls;
}
/*
 * The class the node verdict counts a failure of x as: its own, else by
 * severity (a configuration rule: critical breaks jobs, warning slows them;
 * info counts for nothing, RCLASS_NONE).
 */
static inline enum rule_class rule_result_verdict_class(const struct rule_result *x)
{
	enum rule_class c = rule_result_class(x);

	if (c != RCLASS_NONE)
		return c;
	return x->rule->severity == SEV_CRITICAL  ? RCLASS_FATAL
	       : x->rule->severity == SEV_WARNING ? RCLASS_DEGRADED
						  : RCLASS_NONE;
}

/* Load-time diagnostics, each with file:line:col (1-based; 0 = not applicable). */
struct rules_diag {
	char *file;
	int line, col;
	bool warning;
	char msg[320];
};

struct rules_diags {
	size_t n, cap, n_errors;
	struct rules_diag *d;
};

void rules_diags_free(struct rules_diags *dg);
/* "file:line:col: error: msg" (or without the parts that are unknown). */
void rules_diag_format(const struct rules_diag *d, char *buf, size_t len);

/* What to load: profile names or files, and parameter overrides (strings are copied). */
struct rules_param_override {
	char *key, *value;
	/*
	 * rules_spec_add_param_for(): the profile it is for (NULL: every one),
	 * and optional: no error where no profile declares it, a warning (and
	 * the declared value kept) where its value does not fit the declaration.
	 */
	char *profile;
	bool optional;
};

struct rules_spec {
	char **profiles;
	size_t n_profiles;
	struct rules_param_override *params;
	size_t n_params;
};

int rules_spec_add_profile(struct rules_spec *s, const char *name_or_file);
/* "KEY=VALUE"; -EINVAL without '=' or with an empty key. */
int rules_spec_add_param(struct rules_spec *s, const char *kv);
/*
 * An optional value for parameter key of profile (NULL: of every profile
 * that declares it), the way replay applies the parameters a recording says
 * serve ran with: where the profile loaded now declares no such parameter,
 * or one of another type, nothing happens (the caller says so).  Overrides
 * apply in the order added: a later one for the same key wins.
 */
int rules_spec_add_param_for(struct rules_spec *s, const char *profile, const char *key,
			     const char *value);
void rules_spec_free(struct rules_spec *s);

/*
 * Resolve a profile: a name with '/' or ending in .yaml/.yml is a file;
 * otherwise NAME.yaml in $ROCEWATCH_PROFILE_DIR (set for uninstalled runs by
 * the tests, `meson devenv` and `make run`), then DATADIR/rocewatch/profiles.
 * -ENOENT if not found (searched says where it looked).
 */
int rules_profile_path(const char *spec, char *out, size_t len, char *searched, size_t slen);

/*
 * The shipped profiles, built into the binary from the YAML files of rules/profiles by
 * rules/gen-builtin-profiles.py (the generated builtin_profiles.c), so a
 * binary copied alone to a node has them.  A profile file of the same name
 * found by rules_profile_path() wins: a site edits its installed copy.
 */
struct rules_builtin {
	const char *name; /* "lossless-roce" */
	const char *text; /* the YAML, NUL-terminated */
	size_t len;
};
extern const struct rules_builtin rules_builtin_profiles[];
extern const size_t rules_builtin_count;
/* The built-in profile NAME (without .yaml), or NULL. */
const struct rules_builtin *rules_builtin_find(const char *name);

enum rules_origin {
	RULES_ORIGIN_FILE,     /* --profile FILE */
	RULES_ORIGIN_ENV_DIR,  /* $ROCEWATCH_PROFILE_DIR */
	RULES_ORIGIN_DATA_DIR, /* DATADIR/rocewatch/profiles */
	RULES_ORIGIN_BUILTIN,  /* compiled in */
};
const char *rules_origin_name(enum rules_origin o);

struct rules_engine;

/*
 * Load the profiles of spec (the default profile when it names none) and
 * apply its parameter overrides.  On error returns -EINVAL (or -errno) and
 * fills diags; *out is NULL.  Warnings may be added on success too.
 */
int rules_load(const struct rules_spec *spec, struct rules_engine **out, struct rules_diags *diags);
/* Load one profile from memory; name is used in messages (tests, lint). */
int rules_load_buffer(const char *name, const char *text, size_t len, const struct rules_spec *spec,
		      struct rules_engine **out, struct rules_diags *diags);
void rules_free(struct rules_engine *e);

/*
 * Evaluate every rule against m at time t_ns (the sample's time: CLOCK_REALTIME
 * of a replayed snapshot, or a monotonic clock).  Counter functions (rate,
 * increase, delta) keep their own history of samples per (rule, object).
 * 0, or -ENOMEM (results then hold the previous evaluation's values).
 */
int rules_evaluate(struct rules_engine *e, const struct node_model *m, int64_t t_ns);
/*
 * The rails-and-roles configuration the loaded profiles declare: rail_source,
 * rail_subnet_prefix and peer_evidence from the first profile declaring each,
 * and every profile's roles: patterns in load order.  0, or -EINVAL with err.
 */
int rules_fabric_config(const struct rules_engine *e, struct fabric_config *fc, char *err,
			size_t errlen);
/*
 * The site's rail map (YAML: `rails:` PCI address, netdev or RDMA device ->
 * rail name) into fc.  0, or -errno with err naming the file and line.
 */
int rules_load_rail_map(const char *path, struct fabric_config *fc, char *err, size_t errlen);

/*
 * Evaluate only the rules that read a field marked in changed[] (in when,
 * expr, summary or their profile's applies_to), at t_ns, the others keeping
 * their results of the last evaluation (each result's eval_ns says when it
 * was made): a rule over facts nobody re-read cannot decide otherwise.
 *
 *   flags 0                between polls, after a kernel notification:
 *                          counter rules (rate/increase/delta) are left to the
 *                          poll, their windows sample on its clock;
 *   RULES_EVAL_COUNTERS    a fast poll, which re-read the counters: counter
 *                          rules and rules over counter sets run too (changed[]
 *                          names the counter fields), configuration rules
 *                          wait for the configuration to be read again.
 *
 * *n_rules (may be NULL): how many rules ran.  0; -EAGAIN when the model's
 * objects are not those of the last evaluation (a full rules_evaluate() is
 * due), nothing evaluated.
 */
#define RULES_EVAL_COUNTERS 1u
int rules_evaluate_changed(struct rules_engine *e, const struct node_model *m, int64_t t_ns,
			   const bool changed[F__COUNT], unsigned flags, size_t *n_rules);

/* Results of the last evaluation, grouped by profile and rule, objects in model order. */
size_t rules_results(const struct rules_engine *e, const struct rule_result **out);
/*
 * Which layout rules_results() has: changes (to a number never used before,
 * by any engine) whenever the results are laid out anew, i.e. when rules are
 * loaded or objects come or go; 0 before the first evaluation.  Whoever keeps
 * something per result index rebuilds it when this changes, not per poll.
 */
uint64_t rules_layout(const struct rules_engine *e);
size_t rules_count(const struct rules_engine *e);
const struct rule_info *rules_rule(const struct rules_engine *e, size_t i);
size_t rules_profile_count(const struct rules_engine *e);
const struct rules_profile_info *rules_profile(const struct rules_engine *e, size_t i);
/* Parameter i of profile p: name and value as text (sets as "{3,4}"). */
void rules_profile_param(const struct rules_engine *e, size_t p, size_t i, const char **name,
			 const char **value);
/*
 * The same value as --param reads it back to the same value: numbers with
 * every digit they need, sets as "3,4" (a recording keeps this).
 */
void rules_profile_param_arg(const struct rules_engine *e, size_t p, size_t i, char *buf,
			     size_t len);

/*
 * A result decided elsewhere over a longer history of the same rule on the
 * same object (check --serve takes serve's): outcome, summary, reason, the
 * window it had, and its health over time (episodes, escalated), so a rule
 * serve escalated to fatal is fatal here too.
 */
struct rule_override {
	enum rule_outcome outcome;
	const char *summary, *reason;
	int64_t window_ns, observed_ns;
	unsigned int episodes;
	bool escalated;
};

/* Replace result i with o; the status follows. */
void rules_result_override(struct rules_engine *e, size_t i, const struct rule_override *o);
/*
 * One sample per node (`fleet check`): rules that use rate/increase/delta
 * are skipped with a reason that says so instead of being unknown.
 */
void rules_set_single_sample(struct rules_engine *e, bool on);
/* Forget every result and counter history (before evaluating another node's model). */
void rules_reset(struct rules_engine *e);
/* Which fields the loaded rules read (used[F__COUNT]), e.g. to fetch only those. */
void rules_fields_used(const struct rules_engine *e, bool used[F__COUNT]);
/* How many rules of each kind are loaded. */
size_t rules_fleet_count(const struct rules_engine *e);
size_t rules_node_count(const struct rules_engine *e);

/* Does any rule use rate/increase/delta (so `check` takes a second sample)? */
bool rules_need_history(const struct rules_engine *e);
/* Evaluations so far. */
uint64_t rules_evaluations(const struct rules_engine *e);
/* Results that stood settled, not evaluated again, on fast polls so far (rx_settle). */
uint64_t rules_settled_total(const struct rules_engine *e);
/* Of those, the results that stood frozen: not touched at all (rx_freeze). */
uint64_t rules_frozen_total(const struct rules_engine *e);

/*
 * Status of the last evaluation: CRITICAL if a critical rule fails, else
 * WARNING if a warning rule fails, else UNKNOWN if a critical or warning
 * rule is unknown or a profile's requirements are not met, else OK.  Info
 * rules never change the status.
 */
enum rules_status rules_status(const struct rules_engine *e);
/*
 * The one precedence every status folded from many follows (check's exit,
 * /api/v1/checks, the page, NFD labels, fleet check, probe): CRITICAL over
 * UNKNOWN over WARNING over OK.
 */
enum rules_status rules_status_worse(enum rules_status a, enum rules_status b);
/* What one result counts for: a failing rule by its (escalated) severity, info never. */
enum rules_status rule_result_status(const struct rule_result *x);

/*
 * Carry results and counter history from an old engine into a freshly
 * loaded one (SIGHUP reload): every (rule, object) whose rule fingerprint
 * is unchanged keeps its samples and outcome.  Call before new_e's first
 * evaluation; old_e can be freed right after.
 */
void rules_adopt_history(struct rules_engine *new_e, struct rules_engine *old_e);

/* ---- fleet rules (scope: fleet) ---- */

/* One node of the set.  m NULL: it did not answer (it is reported, not compared). */
struct fleet_node {
	const char *name;
	const struct node_model *m;
	const char *outcome; /* its own profile outcome (profile_outcome), or NULL */
};

#define FLEET_OBJECT_MAX 80
#define FLEET_VALUE_MAX	 512

/* A unit: one object of the rule's `each` kind on one node. */
struct fleet_unit {
	/* "" (node), "eth2", "mlx5_0/1": the engine's, while its results live */
	const char *object;
	/* index into the nodes given to rules_evaluate_fleet (16 bytes a unit: millions of them) */
	uint32_t node;
	uint32_t seq; /* order among the node's objects of the rule's kind */
};

struct fleet_unknown {
	struct fleet_unit u;
	char reason[RULE_REASON_MAX]; /* "mtu absent: unsupported" */
	bool unsupported;	      /* absent as not applicable to the object (ENOENT...) */
};

struct fleet_value {
	char text[FLEET_VALUE_MAX]; /* as summaries print it; strings quoted */
	size_t n_units, n_nodes;
	struct fleet_unit *units;
};

/* One (fleet rule, group).  Owned by the engine; valid until the next fleet evaluation. */
struct fleet_result {
	const struct rule_info *rule;
	char group[RW_NAME_MAX + 8]; /* "rail 0", "mlx5_0", or "" */
	enum rule_outcome outcome;
	char summary[RULE_SUMMARY_MAX]; /* the rule's summary template, or "" if it has none */
	char reason[RULE_REASON_MAX];	/* unknown / skip: why */
	struct fleet_value *values;	/* most units first, then by text */
	size_t n_values;
	ssize_t majority;	       /* index into values; -1: none (a tie, or no value) */
	struct fleet_unknown *unknown; /* units whose value (or guard) is unknown */
	size_t n_unknown;
	size_t n_units, n_nodes; /* units and nodes in the group, unknown ones included */
	bool per_node;		 /* at most one unit per node: name units by node */
	bool dscp_map;		 /* the values are DSCP maps: outliers shown as differences */
};

/*
 * Evaluate the fleet rules over nodes[0..n).  Each rule's `when` and value
 * are evaluated on every object of its `each` kind on every node that
 * answered; units are grouped (`by`), and the expression is evaluated per
 * group over the aggregates (docs/rules.md, "Fleet rules").  0 or -ENOMEM.
 */
int rules_evaluate_fleet(struct rules_engine *e, const struct fleet_node *nodes, size_t n,
			 int64_t t_ns);
/*
 * The same, one node at a time, so that a fleet of thousands never holds
 * every node model at once: begin, then add each node that answered (in any
 * order; its index is the one the results name, and its model may be freed
 * as soon as add returns: the units keep what they compare, copied), then
 * finish with every node (m may be NULL by then: only names are read).
 * The results are those rules_evaluate_fleet() gives for the same nodes,
 * in the same order.  0 or -ENOMEM (then call finish or rules_free anyway).
 */
int rules_fleet_begin(struct rules_engine *e, int64_t t_ns);
int rules_fleet_add(struct rules_engine *e, size_t node, const struct fleet_node *fn);
/*
 * fn's model (its name aside) as the model of each of nodes[0..n): every
 * rule evaluated once, on nodes[0], its units given to the others as they
 * came (fleet check's nodes alike by their fleet digest).  0 or -ENOMEM.
 */
int rules_fleet_add_alike(struct rules_engine *e, const size_t *nodes, size_t n,
			  const struct fleet_node *fn);
int rules_fleet_finish(struct rules_engine *e, const struct fleet_node *nodes, size_t n);

/*
 * Fleet rules an engine can count (fleet check --prometheus --job compares on
 * the engine): what fleet rule k (in load order, 0 .. rules_fleet_count())
 * reads, when it is that simple.  Its value is one field with a metric
 * (field) of its units' kind; its guard is none, the netdev's `rdma`, and/or
 * `supported(F)` of a field with a metric (guard_field, -1 none); or it is
 * never true where no node model carries job or per-node facts (never: it
 * reads only job.* or profile_outcome).
 */
struct fleet_rule_shape {
	const struct rule_info *rule;
	bool countable;
	bool never;
	int field;
	bool rdma;
	int guard_field;
};
void rules_fleet_shape(const struct rules_engine *e, size_t k, struct fleet_rule_shape *s);
/*
 * Between rules_fleet_begin() and rules_fleet_finish(): fleet rule k's
 * units come from an engine, so rules_fleet_add() no longer gathers them.
 */
void rules_fleet_tell(struct rules_engine *e, size_t k);
/*
 * units units of fleet rule k (told) on nodes nodes, in group key ("rail
 * 0", "" for the node rules), all holding the value the rule reads of
 * object o of m (a model that holds that one value); first_node: where the
 * group's first unit is, for the order.  Counted, not named: only a group's
 * majority may be counted (0 or -ENOMEM; -EINVAL for a second value).
 */
int rules_fleet_add_counted(struct rules_engine *e, size_t k, const char *key, size_t first_node,
			    const struct node_model *m, const struct object *o, size_t units,
			    size_t nodes);
/*
 * Does fleet rule k see only netdevs an RDMA port is bound to (or no netdev
 * at all)?  Its guard is `rdma`, or `rdma && ...`.
 */
bool rules_fleet_rdma_netdevs(const struct rules_engine *e, size_t k);
/* Set used[id] for every field fleet rule k reads (its guard, value and expression). */
void rules_fleet_fields(const struct rules_engine *e, size_t k, bool used[F__COUNT]);
/* n nodes answered whose units all went to told rules (no model added for them). */
void rules_fleet_answered(struct rules_engine *e, size_t n);
size_t rules_fleet_results(const struct rules_engine *e, const struct fleet_result **out);
/*
 * The value distribution of a result as one line: "63 nodes 9000, gpu017 1500",
 * "no majority: gpu01 9000, gpu02 1500", with at most max_names units named
 * (and "and N more").
 */
void rules_fleet_describe(const struct fleet_result *x, const struct fleet_node *nodes,
			  size_t max_names, char *buf, size_t len);
/*
 * One of x's values as that line shows it: as it is, or for a DSCP map other
 * than the majority's the DSCPs where it differs ("differs at {26:0}"); a long
 * majority map is cut short.
 */
void rules_fleet_value_text(const struct fleet_result *x, const struct fleet_value *v, char *buf,
			    size_t len);

const char *rule_outcome_name(enum rule_outcome o);
const char *rule_severity_name(enum rule_severity s);
/* "fatal", "degraded", "" for none. */
const char *rule_class_name(enum rule_class c);
/* "fix-config", "reset-link", ...; "" for none. */
const char *rule_action_name(enum rule_action a);
const char *node_verdict_name(enum node_verdict v);
/*
 * The node verdict of the last evaluation: fatal when a fatal (or escalated)
 * result fails, degraded when a degraded one does, unknown when a health
 * rule is unknown or nothing was evaluated, healthy otherwise.  Rules without
 * a class count by severity (critical as fatal, warning as degraded).
 */
enum node_verdict rules_verdict(const struct rules_engine *e);

/*
 * Link-health coverage: per RDMA device, which health rules (those with a
 * class) watch it, on its ports and on their netdevs, and which are skipped
 * because the driver does not give what they read (guard false).  A rule
 * skipped for want of a counter history (one snapshot) counts for neither.
 * On bnxt_re and irdma (no PMA counters/) only the netdev's rules watch
 * the link, and the report says so; a node on one device of which every
 * fatal health rule is skipped is not "healthy" (rules_verdict: unknown).
 */
#define RULE_COVERAGE_NAMES 320
struct rule_coverage {
	char device[RW_NAME_MAX];
	char netdev[RW_NAME_MAX];      /* of its first port, "" for none */
	unsigned watched[3], total[3]; /* by enum rule_class: [RCLASS_FATAL], [RCLASS_DEGRADED] */
	char watching[RULE_COVERAGE_NAMES];	 /* "carrier_stable, link_not_downed" */
	char missing[RULE_COVERAGE_NAMES];	 /* skipped: the driver has not what they read */
	char missing_fatal[RULE_COVERAGE_NAMES]; /* those of them whose class is fatal */
};
/* The coverage of every RDMA device of the last evaluation, in *out (free it): 0, -ENOMEM. */
int rules_coverage(const struct rules_engine *e, struct rule_coverage **out, size_t *n);
/*
 * One device's coverage as the reports say it: "bnxt_re0 (eth2): 2 of 14
 * link-health rules watch it; fatal ones unavailable here (driver or
 * source): link_not_downed, ...".  true when a fatal one is missing (worth
 * a line in check and on the page).
 */
bool rules_coverage_text(const struct rule_coverage *c, char *buf, size_t len);

/*
 * Health memory across restarts, kill -9 and reboots: the failure episodes
 * of degraded rules (wall-clock times: they survive a reboot) and the
 * counter history of rate/increase/delta (kept only within one boot: after
 * a reboot every counter starts again, and a history that spans it would
 * read the new counts as a reset).  A small text file written whole to
 * PATH.tmp, then renamed over PATH.
 *
 * rules_health_load: 0 when loaded (or PATH does not exist), -EINVAL for a
 * corrupt or foreign file and -errno for an unreadable one, with msg saying
 * so in one line; the engine then starts afresh.  Entries of rules or
 * objects that no longer exist, or whose definition changed, are dropped.
 * boot_id: /proc/sys/kernel/random/boot_id ("" when unknown: no counter
 * history is restored).
 */
int rules_health_load(struct rules_engine *e, const char *path, const char *boot_id, char *msg,
		      size_t msglen);
/*
 * The state file is read guarded: never through a symlink, never a FIFO or
 * anything but a regular file, never a world-writable one or one owned by
 * another user than rocewatch or root, at most 16 MiB.  Each record is
 * checked on its own (a negative, infinite or absurd counter or time, hex
 * or "inf" for a number): a bad one is refused alone, and msg says how many
 * in one line while the return is 0; failure episodes dated in the future
 * (a clock that ran ahead) are dropped.  Linear-logarithmic in the records.
 */
struct rules_health_load_stats {
	size_t records, refused, future;
	size_t first_line; /* of the first refused record */
	const char *why;   /* what was wrong with it */
};
/* The parser alone, on buf (modified), at wall-clock now: -EINVAL foreign, -ENODATA empty. */
int rules_health_load_buffer(struct rules_engine *e, char *buf, size_t len, const char *boot_id,
			     int64_t now, struct rules_health_load_stats *st);
/*
 * The memory as the file's text into out (in memory: fast, under the model
 * lock), then written by rules_health_write() (disk: outside any lock).
 * Escalation records with nothing left in their window (at the time of the
 * last model evaluated) are not written.
 */
int rules_health_serialize(struct rules_engine *e, const char *boot_id, struct strbuf *out);
/*
 * PATH.tmp created O_EXCL|O_NOFOLLOW (never through a planted link or into a
 * FIFO), synced, renamed over PATH.  0 or -errno.
 */
int rules_health_write(const char *path, const char *data, size_t len);
/* Both, for a caller that holds no lock worth sparing. */
int rules_health_save(struct rules_engine *e, const char *path, const char *boot_id);
/*
 * An operator's acknowledgement after a repair: forget the failure episodes
 * of degraded rule RULE on OBJECT ("eth2", "mlx5_0/1", "node"), in every
 * profile that has it, so an escalated result is no longer fatal.  0 with
 * *forgotten episodes (possibly none), or -ENOENT/-EINVAL with err saying why.
 */
int rules_health_forget(struct rules_engine *e, const char *rule, const char *object,
			size_t *forgotten, char *err, size_t errlen);
/* Has escalation memory changed since the last save (a new failure episode)? */
bool rules_health_dirty(const struct rules_engine *e);
/*
 * Does the rule judge the job rather than the node: a node rule whose guard or
 * expression reads a job.* fact (check --nccl)?  Reports put its results in a
 * section of their own.
 */
bool rule_reads_job(const struct rule_info *ri);
const char *rules_status_name(enum rules_status s);

/*
 * What an unknown result could not read and how to let rocewatch read it
 * (never the fix for a failure it did not see), from its reason.  Returns
 * the length written (truncated to len - 1).
 */
size_t rules_unknown_hint(const struct rule_result *x, char *buf, size_t len);
/*
 * The rule's doc for this result, its placeholders filled in: IF the netdev,
 * DEV the RDMA device (for a netdev, the one bound to it in m, if m is
 * given), PORT the port number.  A placeholder without a value stays.
 * An unknown result gets rules_unknown_hint() instead: the doc is the fix
 * for a failure.
 * Returns the length written (truncated to len - 1).
 */
size_t rules_doc_for(const struct rule_result *x, const struct node_model *m, char *buf,
		     size_t len);

/* A duration the way rule files write it: "5m", "4m30s", "12s", "0.1s". */
void rules_format_duration(int64_t ns, char *buf, size_t len);
/*
 * The builtins' names as the "unknown function" error lists them (rules/functions.c's
 * table, aggregates last), truncated to len: what a test compares the error with.
 */
void rules_function_names(char *buf, size_t len);

/* The kernel's RoCE MTU for a netdev MTU, in bytes (iboe_get_mtu); 0 if below 256. */
int rules_ib_mtu_for(int64_t netdev_mtu);

#endif
