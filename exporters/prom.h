/* SPDX-License-Identifier: MIT */
/* Prometheus text exposition 0.0.4, rendered once per poll from the field table. */
#ifndef ROCEWATCH_PROM_H
#define ROCEWATCH_PROM_H

#include <regex.h>
#include <stdint.h>

#include "model.h"
#include "poll_stats.h"
#include "strbuf.h"

struct prom_extra; /* sections appended by other parts (rules, alerts) */
struct process_stats;

struct prom_input {
	const struct node_model *m;
	const struct poll_stats *stats;
	const regex_t *ethtool_include; /* NULL: only the curated ethtool stats */
	/* Optional: appends more families (rule results, alerts). */
	void (*extra)(struct strbuf *sb, void *arg);
	void *extra_arg;
	/* process_* families; NULL leaves them out (the golden test renders a fixed model) */
	const struct process_stats *proc;
	/* rocewatch_build_info labels; NULL: this build's (tests pin them) */
	const char *revision, *compiler;
};

struct prom_renderer {
	/* scratch for the union of counter names across objects, reused per poll */
	const char **names;
	size_t n_names, cap_names;
	struct strbuf name;
	/* slot[name * objects + object]: the counter's index in that object's set, or -1 */
	int *slot;
	size_t cap_slot;
	/* each object's rendered labels, back to back; label_off[o]: where o's start */
	struct strbuf labels;
	size_t *label_off;
	size_t cap_label_off;
};

int prom_render(struct prom_renderer *pr, struct strbuf *out, const struct prom_input *in);
void prom_renderer_free(struct prom_renderer *pr);

/* Helpers shared by other exposition sections. */
void prom_family(struct strbuf *sb, const char *name, const char *type, const char *help);
/* Append NAME{labels} value\n; labels is already "k=\"v\",..." or "". */
void prom_sample_begin(struct strbuf *sb, const char *name);
void prom_label(struct strbuf *sb, int *first, const char *k, const char *v);
void prom_sample_end_u64(struct strbuf *sb, int first, uint64_t v);
void prom_sample_end_double(struct strbuf *sb, int first, double v);
/* A whole sample with one label, or none when label is NULL: NAME{label="value"} v. */
void prom_sample1_u64(struct strbuf *sb, const char *name, const char *label, const char *value,
		      uint64_t v);
void prom_sample1_double(struct strbuf *sb, const char *name, const char *label, const char *value,
			 double v);
/* rocewatch_collector_partial{collector,reason} (prom_partial.c). */
void prom_render_partial(struct strbuf *sb, const struct node_model *m);
/* The labels that say which object a sample is about (device, port, netdev). */
void prom_object_labels(struct strbuf *sb, int *first, const struct object *o);

#endif
