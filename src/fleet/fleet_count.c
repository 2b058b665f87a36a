// SPDX-License-Identifier: MIT
/*
 * Fleet rules counted on the engine (fleet check --prometheus --job): for a
 * rule whose units hold one exported fact, the engine is asked only how many
 * units of the job's nodes hold each value, by how many units a node has:
 *
 *   count_values by (rocewatch_value) ("rocewatch_units",
 *     count_values by (instance) ("rocewatch_value", X))
 *
 * (a text fact's value is its label: count by (instance, LABEL) instead),
 * where X is each unit once (max by its object's labels, so that HA
 * replicas and two scrape jobs of one target count once) of the nodes of the
 * job that are not down.  The answer is a few rows: a value, a number of
 * units a node has of it, and how many nodes have that many.  Sample values
 * are asked twice, by max and by min: replicas that disagree show as two
 * answers that differ.  And once for all rules, how many units there are of
 * the kinds they count (RDMA ports: the objects of every port metric the
 * client reads, as it makes them; netdevs an RDMA device is bound to: those
 * of every netdev metric that serve labels rdma_device): a unit without the
 * rule's fact is one the client would call unknown.  What the rows mean is the caller's
 * (fleet check): one value held by every unit is a pass it can build; the
 * rest it asks for as series, client-side.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fleet_prom.h"
#include "fleet_int.h"
#include "util.h"

/* The labels that name a unit of kind k. */
static const char *obj_labels(enum obj_kind k)
{
	return k == OBJ_NODE	 ? "instance"
	       : k == OBJ_NETDEV ? "instance, device"
				 : "instance, device, port";
}

/* The metric a field is read from (a priority set's or DSCP map's compact one). */
static const char *metric_of(int id)
{
	return fields[id].compact.metric ? fields[id].compact.metric : fields[id].metric;
}

/* The label holding a text fact's value, or NULL for a sample value. */
static const char *value_label(int id)
{
	if (fields[id].compact.metric)
		return fields[id].compact.label;
	return fields[id].type == VT_STR ? fields[id].label : NULL;
}

/* {__name__=~"a|b"} of the metrics of kind k the fields in used[] are read from ("" none). */
static void kind_selector(struct strbuf *sb, const bool used[F__COUNT], enum obj_kind k,
			  const char *extra)
{
	size_t n = 0;
	const char *seen[F__COUNT];

	for (int id = 0; id < F__COUNT; id++) {
		const char *m;
		bool dup = false;

		if (!used[id] || fields[id].obj != k || !fields[id].metric ||
		    fields[id].mtype == MT_NONE)
			continue;
		m = metric_of(id);
		for (size_t i = 0; i < n && !dup; i++)
			dup = !strcmp(seen[i], m);
		if (dup)
			continue;
		sb_printf(sb, "%s%s", n ? "|" : "{__name__=~\"", m);
		seen[n++] = m;
	}
	if (n)
		sb_printf(sb, "\"%s}", extra ? extra : "");
}

/*
 * A row's series: roce_x{direction="rx"}; with rdma, of the netdevs an RDMA
 * device is bound to, which serve labels rdma_device (the link the client
 * makes from the ports' netdev label: the totals check they agree).
 */
static void selector(struct strbuf *sb, int id, bool rdma)
{
	bool cl = !fields[id].compact.metric && fields[id].labels && fields[id].labels[0];

	sb_puts(sb, metric_of(id));
	if (cl || rdma)
		sb_printf(sb, "{%s%s%s}", cl ? fields[id].labels : "", cl && rdma ? "," : "",
			  rdma ? "rdma_device!=\"\"" : "");
}

/* The unit set X of rule c: each unit once, of the job's nodes (jn), by agg ("max", "min"). */
static void units_of(struct strbuf *sb, const struct fleet_prom_count *c, const char *jn,
		     const char *agg)
{
	enum obj_kind k = fields[c->field].obj;
	const char *l = value_label(c->field);

	if (l)
		sb_printf(sb, "group by (%s, %s) (", obj_labels(k), l);
	else
		sb_printf(sb, "%s by (%s) (", agg, obj_labels(k));
	selector(sb, c->field, c->rdma);
	sb_printf(sb, ") and on (instance) %s", jn);
	if (c->guard_field >= 0 && c->guard_field != c->field) {
		sb_printf(sb, " and on (%s) group by (%s) (", obj_labels(k), obj_labels(k));
		selector(sb, c->guard_field, false);
		sb_puts(sb, ")");
	}
}

static void dist_query(struct strbuf *sb, const struct fleet_prom_count *c, const char *jn,
		       const char *agg)
{
	const char *l = value_label(c->field);

	if (l) {
		sb_printf(sb,
			  "count_values by (%s) (\"rocewatch_units\", count by (instance, %s) (", l,
			  l);
		units_of(sb, c, jn, agg);
		sb_puts(sb, "))");
	} else {
		sb_puts(sb,
			"count_values by (rocewatch_value) (\"rocewatch_units\", count_values by "
			"(instance) (\"rocewatch_value\", ");
		units_of(sb, c, jn, agg);
		sb_puts(sb, "))");
	}
}

/* One answer: its result array, or NULL with err saying why (a partial answer is one). */
static json_t *result_of(json_t *root, const char *what, char *err, size_t errlen)
{
	json_t *st = json_object_get(root, "status"), *res, *w;
	char pw[160];

	res = json_object_get(json_object_get(root, "data"), "result");
	if (!json_is_string(st) || strcmp(json_string_value(st), "success") ||
	    !json_is_array(res)) {
		json_t *e = json_object_get(root, "error");

		snprintf(err, errlen, "%s: %s", what,
			 json_is_string(e) ? fleet_printable(json_string_value(e), pw, sizeof(pw))
					   : "not a success vector");
		return NULL;
	}
	w = json_object_get(root, "warnings");
	if ((json_is_array(w) && json_array_size(w)) ||
	    json_is_true(json_object_get(root, "isPartial"))) {
		snprintf(
		    err, errlen, "%s: a partial answer (%s)", what,
		    json_is_array(w) && json_is_string(json_array_get(w, 0))
			? fleet_printable(json_string_value(json_array_get(w, 0)), pw, sizeof(pw))
			: "isPartial");
		return NULL;
	}
	return res;
}

/* A sample value that is a count: 0 with *n, or -EINVAL. */
static int count_value(json_t *series, size_t *n)
{
	const char *t = json_string_value(json_array_get(json_object_get(series, "value"), 1));
	uint64_t u;

	if (!t || parse_u64(t, &u))
		return -EINVAL;
	*n = (size_t)u;
	return 0;
}

/* count(...): the number, 0 when the result is empty. */
static int read_count(json_t *res, size_t *n)
{
	*n = 0;
	if (!json_array_size(res))
		return 0;
	return json_array_size(res) == 1 ? count_value(json_array_get(res, 0), n) : -EINVAL;
}

static int read_dist(json_t *res, const struct fleet_prom_count *c, struct fleet_prom_rows *d)
{
	const char *l = value_label(c->field);

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < json_array_size(res); i++) {
		json_t *s = json_array_get(res, i), *m = json_object_get(s, "metric");
		const char *v = json_string_value(json_object_get(m, l ? l : "rocewatch_value")),
			   *u = json_string_value(json_object_get(m, "rocewatch_units"));
		uint64_t per;
		size_t nodes;

		if (!u || parse_u64(u, &per) || !per || count_value(s, &nodes))
			return -EINVAL;
		if (!v && !l)
			return -EINVAL;
		if (d->n == FLEET_PROM_ROWS_MAX || strlen(v ? v : "") >= sizeof(d->row[0].value)) {
			d->more = true;
			return 0;
		}
		snprintf(d->row[d->n].value, sizeof(d->row[d->n].value), "%s", v ? v : "");
		d->row[d->n].per_node = (size_t)per;
		d->row[d->n].nodes = nodes;
		d->n++;
	}
	return 0;
}

/* Rows in one order, so that two answers compare as sets. */
static int row_cmp(const void *a, const void *b)
{
	const struct fleet_prom_row *x = a, *y = b;
	int c = strcmp(x->value, y->value);

	return c ? c : x->per_node < y->per_node ? -1 : x->per_node > y->per_node;
}

/*
 * The counting queries into q[4 + 2 * n]: 4 totals (nodes, RDMA-bound netdevs, RDMA ports,
 * netdevs), then per rule its distribution by max and (sample values) by min; a query not
 * needed stays empty.  jn: the job's nodes.  -ENOMEM when a text could not be built.
 */
static int count_queries(struct strbuf *q, const struct fleet_prom_count *c, size_t n,
			 const bool used[F__COUNT], const char *job, struct strbuf *jn)
{
	struct strbuf sel = { 0 };
	bool need[3] = { false };
	size_t k = 0;
	int ret;

	/* the job's nodes but those whose target is down (as the client leaves them out) */
	sb_puts(jn, "group by (instance) (roce_job_info{job_id=\"");
	for (const char *p = job; *p; p++)
		fleet_promql_char(jn, (unsigned char)*p);
	sb_puts(jn, "\"} unless on (instance) (up == 0))");
	sb_printf(&q[k++], "count(%s)", jn->buf ? jn->buf : "");
	/*
	 * The totals a rule is checked against, only those asked for: a kind's
	 * units are the objects of all its metrics (as the client makes them), the
	 * RDMA-bound netdevs those serve labels rdma_device
	 */
	for (size_t i = 0; i < n; i++)
		if (c[i].guard_field != c[i].field) {
			need[c[i].rdma				       ? 1
			     : fields[c[i].field].obj == OBJ_RDMA_PORT ? 2
								       : 0] = true;
		}
	for (int kind = OBJ_NETDEV; kind <= OBJ_RDMA_PORT; kind++) {
		sb_reset(&sel);
		kind_selector(&sel, used, (enum obj_kind)kind,
			      kind == OBJ_NETDEV ? ", rdma_device!=\"\"" : NULL);
		if (sel.len && need[kind == OBJ_NETDEV ? 1 : 2])
			sb_printf(&q[k], "count(group by (%s) (%s) and on (instance) %s)",
				  obj_labels((enum obj_kind)kind), sel.buf, jn->buf);
		k++;
	}
	k++; /* (the netdevs without rdma: no rule of the fleet profile counts them) */
	for (size_t i = 0; i < n; i++) {
		dist_query(&q[k++], &c[i], jn->buf, "max");
		if (!value_label(c[i].field))
			dist_query(&q[k], &c[i], jn->buf, "min");
		k++;
	}
	ret = jn->oom || sel.oom ? -ENOMEM : 0;
	sb_free(&sel);
	return ret;
}

/* Each query as a POST to url, bounded by --prometheus.max-query. */
static int count_posts(struct client_req *reqs, char **posts, const struct strbuf *q, size_t nq,
		       const struct strbuf *url, const struct fleet_prom_opts *po,
		       const char *base_url, char *err, size_t errlen)
{
	for (size_t i = 0; i < nq; i++) {
		struct strbuf body = { 0 };

		if (q[i].oom || url->oom)
			return -ENOMEM;
		if (!q[i].len)
			continue;
		if (q[i].len > po->max_query) {
			snprintf(err, errlen,
				 "Prometheus %s: a counting query is %zu bytes, over "
				 "--prometheus.max-query",
				 base_url, q[i].len);
			return -E2BIG;
		}
		sb_puts(&body, "query=");
		fleet_url_encode(&body, q[i].buf);
		if (body.oom) {
			sb_free(&body);
			return -ENOMEM;
		}
		posts[i] = body.buf;
		reqs[i].url = url->buf;
		reqs[i].post = posts[i];
	}
	return 0;
}

/* The non-empty queries sent; the empty ones are not: no metric of that kind is read. */
static int count_send(struct client_req *reqs, const struct strbuf *q, size_t nq,
		      const struct client_http_opts *o)
{
	size_t m = 0;
	size_t *of = calloc(nq, sizeof(*of));
	struct client_req *send = calloc(nq, sizeof(*send));
	struct client_http_opts few = *o;
	int ret;

	if (!of || !send) {
		free(of);
		free(send);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nq; i++)
		if (q[i].len) {
			send[m] = reqs[i];
			of[m++] = i;
		}
	/*
	 * a few at a time: each one selects a metric's every series, and an
	 * engine queues what is past its concurrency (VictoriaMetrics: 2 per
	 * CPU, then 503 after -search.maxQueueDuration)
	 */
	if (few.parallel > 4)
		few.parallel = 4;
	ret = client_http_run(send, m, &few, NULL, NULL);
	for (size_t j = 0; j < m; j++)
		reqs[of[j]] = send[j];
	free(of);
	free(send);
	return ret;
}

/* The answers into t's totals and the rules' distributions. */
static int count_read(struct client_req *reqs, const struct strbuf *q, size_t nq,
		      struct fleet_prom_count *c, struct fleet_prom_totals *t, const char *base_url,
		      char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; i < nq && !ret; i++) {
		json_error_t je;
		json_t *root, *res;
		char what[96];
		size_t *tot = i == 0   ? &t->nodes
			      : i == 1 ? &t->rdma
			      : i == 2 ? &t->objects[OBJ_RDMA_PORT]
			      : i == 3 ? &t->objects[OBJ_NETDEV]
				       : NULL;

		if (!q[i].len)
			continue;
		snprintf(what, sizeof(what), "Prometheus %s: counting query %zu", base_url, i);
		if (reqs[i].err) {
			snprintf(err, errlen, "%s: %s", what, reqs[i].errmsg);
			return -EIO;
		}
		root = json_loadb(reqs[i].body, reqs[i].len, 0, &je);
		res = root ? result_of(root, what, err, errlen) : NULL;
		if (!root)
			snprintf(err, errlen, "%s: invalid JSON: %s", what, je.text);
		if (!res)
			ret = -EIO;
		else if (tot)
			ret = read_count(res, tot);
		else
			ret = read_dist(res, &c[(i - 4) / 2],
					(i - 4) % 2 ? &c[(i - 4) / 2].by_min
						    : &c[(i - 4) / 2].by_max);
		if (ret == -EINVAL && res)
			snprintf(err, errlen, "%s: not the counts it asks for", what);
		json_decref(root);
	}
	return ret;
}

/* A rule's max and min distributions agree: no replica disagrees with another. */
static void count_agree(struct fleet_prom_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fleet_prom_rows *a = &c[i].by_max, *b = &c[i].by_min;

		qsort(a->row, a->n, sizeof(a->row[0]), row_cmp);
		qsort(b->row, b->n, sizeof(b->row[0]), row_cmp);
		/* a text fact has one answer; a sample's max and min agree unless replicas do not
		 */
		c[i].agree =
		    value_label(c[i].field) || (a->n == b->n && !a->more && !b->more &&
						!memcmp(a->row, b->row, a->n * sizeof(a->row[0])));
		c[i].asked = true;
	}
}

int fleet_prom_count(const char *base_url, const struct client_http_opts *o,
		     const struct fleet_prom_opts *po, const bool used[F__COUNT],
		     struct fleet_prom_count *c, size_t n, struct fleet_prom_totals *t, char *err,
		     size_t errlen)
{
	size_t nq = 4 + 2 * n;
	struct client_req *reqs = calloc(nq, sizeof(*reqs));
	struct strbuf *q = calloc(nq, sizeof(*q)), url = { 0 }, jn = { 0 };
	char **posts = calloc(nq, sizeof(*posts));
	int ret = 0;

	err[0] = '\0';
	memset(t, 0, sizeof(*t));
	if (!reqs || !q || !posts || !po->job) {
		ret = po->job ? -ENOMEM : -EINVAL;
		goto out;
	}
	sb_puts(&url, base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		url.buf[--url.len] = '\0';
	sb_puts(&url, "/api/v1/query");
	ret = count_queries(q, c, n, used, po->job, &jn);
	if (!ret)
		ret = count_posts(reqs, posts, q, nq, &url, po, base_url, err, errlen);
	if (ret)
		goto out;
	ret = count_send(reqs, q, nq, o);
	if (ret) {
		snprintf(err, errlen, "Prometheus %s: %s", base_url, strerror(-ret));
		goto out;
	}
	ret = count_read(reqs, q, nq, c, t, base_url, err, errlen);
	if (!ret)
		count_agree(c, n);
	t->ok = !ret;
out:
	for (size_t i = 0; q && i < nq; i++)
		sb_free(&q[i]);
	for (size_t i = 0; reqs && i < nq; i++) {
		client_req_free(&reqs[i]);
		if (posts)
			free(posts[i]);
	}
	free(reqs);
	free(q);
	free(posts);
	sb_free(&url);
	sb_free(&jn);
	return ret;
}

bool fleet_prom_countable(int field)
{
	const struct field_desc *d = &fields[field];

	if (!d->metric || d->mtype == MT_NONE)
		return false;
	if (d->compact.metric)
		return true;
	return d->type == VT_INT || d->type == VT_BOOL || d->type == VT_FLOAT ||
	       (d->type == VT_STR && d->label);
}

int fleet_prom_value_model(int field, const char *value, struct node_model *m, struct object **o,
			   char *err, size_t errlen)
{
	const char *l = value_label(field);
	struct fleet_prom_node pn = { .name = "engine", .m = m };
	struct strbuf b = { 0 };
	int r;

	*o = NULL;
	/* the one series that holds it, as the engine would send it for one unit */
	sb_puts(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{"
		    "\"metric\":{\"instance\":\"engine\",\"device\":\"d0\",\"port\":\"1\"");
	if (fields[field].labels && fields[field].labels[0] && !fields[field].compact.metric) {
		/* direction="rx" as JSON: the constant labels are plain words */
		char buf[160], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", fields[field].labels);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '=');

			if (eq) {
				*eq = '\0';
				sb_printf(&b, ",\"%s\":%s", tok, eq + 1);
			}
		}
	}
	if (l) {
		sb_printf(&b, ",\"%s\":\"", l);
		for (const char *p = value; *p; p++) {
			if (*p == '"' || *p == '\\')
				sb_putc(&b, '\\');
			if ((unsigned char)*p >= 0x20)
				sb_putc(&b, *p);
		}
		sb_puts(&b, "\"},\"value\":[0,\"1\"]}]}}");
	} else {
		sb_printf(&b, "},\"value\":[0,\"%s\"]}]}}", value);
	}
	if (b.oom) {
		sb_free(&b);
		return -ENOMEM;
	}
	r = fleet_prom_read(metric_of(field), b.buf, b.len, 0, &pn, 1, err, errlen);
	sb_free(&b);
	if (r)
		return r;
	*o = fields[field].obj == OBJ_NODE     ? &m->node
	     : fields[field].obj == OBJ_NETDEV ? model_netdev(m, "d0")
	     : m->n_ports		       ? m->ports[0]
					       : NULL;
	if (!*o || !field_present(*o, field)) {
		snprintf(err, errlen, "the engine's value '%.60s' of %s does not read back", value,
			 metric_of(field));
		return -EINVAL;
	}
	return 0;
}
