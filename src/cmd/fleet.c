// SPDX-License-Identifier: MIT
/*
 * rocewatch fleet check: the node models of a set of nodes (from their
 * serve, from snapshot files, or from a Prometheus), the fleet rules over
 * them, optionally each node's own rules, one verdict.  A node that cannot
 * be reached, times out or answers garbage is UNKNOWN by name and the
 * others are still compared; the verdict is then at least UNKNOWN, because
 * a pre-flight must not let a job start on a node nobody could look at.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "fleet.h"
#include "term.h"
#include "fleet_client.h"
#include "hostlist.h"
#include "snapshot.h"
#include "util.h"

#define FLEET_DEFAULT_PORT    9479
#define FLEET_DEFAULT_PROFILE "fleet"

enum {
	OPT_PROFILE = 2000,
	OPT_FLEET_PROFILE,
	OPT_PARAM,
	OPT_FORMAT,
	OPT_SLURM,
	OPT_PROMETHEUS,
	OPT_PORT,
	OPT_SCHEME,
	OPT_PARALLEL,
	OPT_CONNECT_TIMEOUT,
	OPT_TIMEOUT,
	OPT_CLIENT_CONFIG,
	OPT_CA_FILE,
	OPT_CERT,
	OPT_KEY,
	OPT_INSECURE,
	OPT_USER,
	OPT_PASSWORD_FILE,
	OPT_MAX_NAMES,
	OPT_COLOR,
	OPT_MAX_BODY,
};

static const char fleet_usage[] =
    "Usage: rocewatch fleet check [OPTIONS] [NODE|FILE|DIR]...\n"
    "\n"
    "Compare the RoCE configuration of a set of nodes before a job starts on them.\n"
    "The node model of every node is gathered (from its `rocewatch serve`, from\n"
    "snapshot files, or from a Prometheus), the fleet rules (profile `fleet`: same\n"
    "netdev MTU and active_mtu, PFC priorities, trust mode and DSCP map, CNP\n"
    "priority and DSCP, RoCE v2 GID index, link speed and firmware per rail, RDMA\n"
    "device count, per-node outcome) are evaluated across them, and each failing\n"
    "rule names the majority value and the nodes that differ:\n"
    "    fail  critical  netdev_mtu  63 nodes 9000, gpu017 1500\n"
    "With --profile, every node's own rules are evaluated too (configuration rules\n"
    "only: a node is seen once, so rules over counters are skipped), making one\n"
    "command the whole pre-flight of an allocation.\n"
    "\n"
    "Sources, any mix:\n"
    "  NODE                       host, host:port, [v6addr]:port, or a Slurm hostlist\n"
    "                             (gpu[001-064,070], rack[0-3]_n[01-16]:9479);\n"
    "                             fetched from SCHEME://NODE/api/v1/state (port 9479\n"
    "                             unless given)\n"
    "  FILE                       a snapshot (`rocewatch snapshot -o FILE`); an\n"
    "                             argument with a '/' or ending in .json is a file,\n"
    "                             not a host\n"
    "  DIR                        every *.json snapshot in it, e.g. gathered with\n"
    "                             `srun --ntasks-per-node=1 --output=DIR/%N.json\n"
    "                             rocewatch snapshot`; snapshots are named by their\n"
    "                             host\n"
    "  --slurm                    the nodes of $SLURM_JOB_NODELIST (PrologSlurmctld,\n"
    "                             salloc, sbatch); an error when it is not set\n"
    "  --prometheus URL           read the NODEs' facts from this Prometheus instead\n"
    "                             of asking each node (instant queries on rocewatch's\n"
    "                             metrics; a NODE matches the instance label, a bare\n"
    "                             host also host:PORT)\n"
    "\n"
    "Rules:\n"
    "  --fleet-profile NAME|FILE  fleet rules (repeatable; default " FLEET_DEFAULT_PROFILE ")\n"
    "  --profile NAME|FILE        also evaluate this per-node profile on every node\n"
    "                             (repeatable; e.g. lossless-roce)\n"
    "  --param KEY=VALUE          override a profile parameter (repeatable)\n"
    "\n"
    "Client (nodes and Prometheus):\n"
    "  --port PORT                port of a NODE given without one (default 9479)\n"
    "  --scheme http|https        default http\n"
    "  --parallel N               requests in flight (default 64)\n"
    "  --connect-timeout DURATION per node (default 2s)\n"
    "  --timeout DURATION         whole request per node (default 5s)\n"
    "  --max-body SIZE            largest answer accepted (default 64MiB)\n"
    "  --client-config FILE       scheme, tls_config (ca_file, cert_file, key_file,\n"
    "                             insecure_skip_verify) and basic_auth (username,\n"
    "                             password_file) as in a Prometheus scrape config;\n"
    "                             the flags below override it\n"
    "  --ca-file FILE             CA bundle to verify the nodes' certificates\n"
    "  --cert FILE, --key FILE    client certificate and key (mutual TLS)\n"
    "  --insecure-skip-verify     do not verify certificates (testing only)\n"
    "  --user NAME                basic auth user name\n"
    "  --password-file FILE       basic auth password (first line of FILE)\n"
    "\n"
    "Output:\n"
    "  --format text|json, -j     report format (default text; -j is json)\n"
    "  --max-names N              nodes named per rule in the text report (default\n"
    "                             10; JSON names all)\n"
    "  --color auto|always|never  colour the text report (default auto)\n"
    "  -v, --verbose              also list passing nodes' results and skipped rules\n"
    "  -h, --help                 this help\n"
    "\n"
    "Exit codes (Nagios plugin convention, fail closed):\n"
    "  0 OK        every node answered and every rule passed\n"
    "  1 WARNING   a warning rule failed, and nothing below applies\n"
    "  2 CRITICAL  a critical rule failed (fleet or per-node)\n"
    "  3 UNKNOWN   a node did not answer or answered garbage, a critical or warning\n"
    "              rule is unknown, or bad flags, rule files or node lists\n"
    "The most severe wins, in this order: CRITICAL > UNKNOWN > WARNING > OK (an\n"
    "unknown node outranks a warning: nobody looked at it).\n"
    "\n"
    "Majority: the value held by the most units (nodes, netdevs or ports); a tie\n"
    "has no majority and every unit is named.  See docs/rules.md, \"Fleet rules\".\n";

struct client_cfg {
	char *scheme;
	char *ca_file, *cert_file, *key_file;
	bool insecure;
	char *username, *password_file;
	char *password;
};

static void client_cfg_free(struct client_cfg *c)
{
	free(c->scheme);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->username);
	free(c->password_file);
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	memset(c, 0, sizeof(*c));
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? strdup(v) : NULL;
}

/* ---- --client-config: the client keys of a Prometheus scrape config ---- */

static int cc_err(const char *file, const yaml_node_t *n, const char *msg, const char *what)
{
	fprintf(stderr, "rocewatch fleet: %s:%d:%d: %s%s%s\n", file,
		n ? (int)n->start_mark.line + 1 : 0, n ? (int)n->start_mark.column + 1 : 0, msg,
		what ? " " : "", what ? what : "");
	return -EINVAL;
}

static int cc_map(yaml_document_t *doc, const char *file, yaml_node_t *map, const char *const *keys,
		  size_t nk, yaml_node_t **vals)
{
	if (map->type != YAML_MAPPING_NODE)
		return cc_err(file, map, "expected a mapping", NULL);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const char *ks =
		    k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		size_t i;

		for (i = 0; i < nk && strcmp(keys[i], ks); i++)
			;
		if (i == nk)
			return cc_err(file, k, "unknown key", ks);
		if (vals[i])
			return cc_err(file, k, "duplicate key", ks);
		vals[i] = yaml_document_get_node(doc, p->value);
	}
	return 0;
}

static int cc_scalar(const char *file, const yaml_node_t *n, const char *key, char **out)
{
	if (!n)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return cc_err(file, n, "expected a single value for", key);
	set_str(out, (const char *)n->data.scalar.value);
	return *out ? 0 : -ENOMEM;
}

static int load_client_config(const char *file, struct client_cfg *c)
{
	static const char *const top[] = { "scheme", "tls_config", "basic_auth" };
	static const char *const tls[] = { "ca_file", "cert_file", "key_file",
					   "insecure_skip_verify" };
	static const char *const ba[] = { "username", "password_file", "password" };
	yaml_node_t *tv[3] = { 0 }, *lv[4] = { 0 }, *bv[3] = { 0 }, *root;
	yaml_parser_t parser;
	yaml_document_t doc;
	char *text = NULL, *ins = NULL;
	size_t len;
	int r = read_file_all(file, &text, &len);

	if (r) {
		fprintf(stderr, "rocewatch fleet: --client-config %s: %s\n", file, strerror(-r));
		return r;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		fprintf(stderr, "rocewatch fleet: %s:%d:%d: YAML: %s\n", file,
			(int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		free(text);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	r = !root ? cc_err(file, NULL, "empty file", NULL) : cc_map(&doc, file, root, top, 3, tv);
	if (!r && tv[1])
		r = cc_map(&doc, file, tv[1], tls, 4, lv);
	if (!r && tv[2])
		r = cc_map(&doc, file, tv[2], ba, 3, bv);
	if (!r && bv[2])
		/* a password in a file the whole fleet copies around is one too many */
		r = cc_err(file, bv[2], "basic_auth.password: use password_file", NULL);
	if (!r)
		r = cc_scalar(file, tv[0], "scheme", &c->scheme);
	if (!r)
		r = cc_scalar(file, lv[0], "ca_file", &c->ca_file);
	if (!r)
		r = cc_scalar(file, lv[1], "cert_file", &c->cert_file);
	if (!r)
		r = cc_scalar(file, lv[2], "key_file", &c->key_file);
	if (!r)
		r = cc_scalar(file, lv[3], "insecure_skip_verify", &ins);
	if (!r && ins) {
		if (strcmp(ins, "true") && strcmp(ins, "false"))
			r = cc_err(file, lv[3], "insecure_skip_verify must be true or false", NULL);
		c->insecure = !strcmp(ins, "true");
	}
	if (!r)
		r = cc_scalar(file, bv[0], "username", &c->username);
	if (!r)
		r = cc_scalar(file, bv[1], "password_file", &c->password_file);
	free(ins);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	return r;
}

static int read_password(struct client_cfg *c)
{
	char *text = NULL, *nl;
	size_t len;
	int r;

	if (!c->password_file)
		return 0;
	r = read_file_all(c->password_file, &text, &len);
	if (r) {
		fprintf(stderr, "rocewatch fleet: password file %s: %s\n", c->password_file,
			strerror(-r));
		return r;
	}
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	c->password = text;
	return 0;
}

/* ---- the node list ---- */

static struct fleet_member *add_member(struct fleet_run *fr, const char *name,
				       enum fleet_source src, const char *where)
{
	struct fleet_member *n;

	/* one node once, however often it is named */
	for (size_t i = 0; i < fr->n; i++)
		if (!strcmp(fr->nodes[i].name, name))
			return &fr->nodes[i];
	if (array_grow(&fr->nodes, &fr->cap, fr->n, sizeof(*fr->nodes), 16))
		return NULL;
	n = &fr->nodes[fr->n];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->where = strdup(where);
	n->src = src;
	if (!n->name || !n->where) {
		free(n->name);
		free(n->where);
		return NULL;
	}
	fr->n++;
	return n;
}

static bool is_path(const char *a)
{
	size_t l = strlen(a);

	return strchr(a, '/') || (l > 5 && !strcmp(a + l - 5, ".json"));
}

static int add_hosts(struct fleet_run *fr, const char *expr, const char *scheme, int port)
{
	struct hostlist hl = { 0 };
	char err[512];
	int r = hostlist_expand(&hl, expr, err, sizeof(err));

	if (r) {
		fprintf(stderr, "rocewatch fleet: %s\n", r == -ENOMEM ? "out of memory" : err);
		hostlist_free(&hl);
		return r;
	}
	for (size_t i = 0; i < hl.n; i++) {
		char hp[512], url[640];

		hostlist_with_port(hl.names[i], port, hp, sizeof(hp));
		if (fr->prometheus)
			snprintf(url, sizeof(url), "%s", fr->prometheus);
		else
			snprintf(url, sizeof(url), "%s://%s/api/v1/state", scheme, hp);
		if (!add_member(fr, hl.names[i], fr->prometheus ? FSRC_PROMETHEUS : FSRC_HTTP,
				url)) {
			hostlist_free(&hl);
			fprintf(stderr, "rocewatch fleet: out of memory\n");
			return -ENOMEM;
		}
	}
	hostlist_free(&hl);
	return 0;
}

static int json_name(const struct dirent *d)
{
	size_t l = strlen(d->d_name);

	return d->d_name[0] != '.' && l > 5 && !strcmp(d->d_name + l - 5, ".json");
}

static int add_path(struct fleet_run *fr, const char *path)
{
	size_t pl = strlen(path);
	struct dirent **ents;
	struct stat st;
	int n;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		/* a file, or not there: reading it says which (the node is then unknown) */
		return add_member(fr, path, FSRC_FILE, path) ? 0 : -ENOMEM;
	n = scandir(path, &ents, json_name, alphasort);
	if (n < 0) {
		int e = errno;

		fprintf(stderr, "rocewatch fleet: %s: %s\n", path, strerror(e));
		return -e;
	}
	if (!n) {
		fprintf(stderr, "rocewatch fleet: %s: no *.json snapshot in this directory\n",
			path);
		free(ents);
		return -ENOENT;
	}
	while (pl > 1 && path[pl - 1] == '/')
		pl--;
	for (int i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%.*s/%s", (int)pl, path, ents[i]->d_name);
		if (!add_member(fr, file, FSRC_FILE, file)) {
			for (int k = i; k < n; k++)
				free(ents[k]);
			free(ents);
			return -ENOMEM;
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* ---- gathering ---- */

static int consume(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m);

/* A document (an HTTP body, a file) into a model (its last snapshot), and that through the rules.
 */
static void take_snapshot(struct fleet_run *fr, struct fleet_member *nm, const char *buf,
			  size_t len)
{
	char err[512] = "";
	struct node_model *m = malloc(sizeof(*m));
	int r;

	if (!m) {
		snprintf(nm->reason, sizeof(nm->reason), "out of memory");
		fr->oom = true;
		return;
	}
	model_init(m);
	r = snapshot_read_last(nm->name, buf, len, SNAPSHOT_NO_COUNTERS, m, err, sizeof(err));
	/* a file's error starts with its name already; a node's says it answered garbage */
	if (r) {
		snprintf(nm->reason, sizeof(nm->reason), "%s%s",
			 nm->src == FSRC_HTTP ? "invalid answer: " : "",
			 err[0] ? err : strerror(-r));
		model_free(m);
		free(m);
		return;
	}
	consume(fr, nm, m);
}

/*
 * Parsing a node's answer (a 150 KiB model for an 8-NIC node) costs more
 * than fetching it on a LAN, so answers are parsed by a few threads while
 * the transfers go on.  Each job touches only its own member.
 */
struct job {
	struct fleet_member *nm;
	char *body; /* owned; NULL: read the member's file */
	size_t len;
	struct job *next;
};

/* Bodies waiting to be parsed, at most: the transfers wait when parsing falls behind. */
#define POOL_QUEUE_MAX 32

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond, room;
	struct job *head, *tail;
	size_t queued;
	bool closing;
	pthread_t threads[8];
	int n_threads;
	struct fleet_run *fr;
};

static void run_job(struct pool *p, struct job *j)
{
	struct fleet_member *nm = j->nm;

	if (!j->body) {
		int r = read_file_all(nm->where, &j->body, &j->len);

		if (r) {
			snprintf(nm->reason, sizeof(nm->reason), "%s: %s", nm->where, strerror(-r));
			return;
		}
	}
	take_snapshot(p->fr, nm, j->body, j->len);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		struct job *j;

		pthread_mutex_lock(&p->lock);
		while (!p->head && !p->closing)
			pthread_cond_wait(&p->cond, &p->lock);
		j = p->head;
		if (j) {
			p->head = j->next;
			if (!p->head)
				p->tail = NULL;
			p->queued--;
			pthread_cond_signal(&p->room);
		}
		pthread_mutex_unlock(&p->lock);
		if (!j)
			return NULL;
		run_job(p, j);
		free(j->body);
		free(j);
	}
}

static void pool_start(struct pool *p, struct fleet_run *fr)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus > 8 ? 8 : cpus > 1 ? (int)cpus : 0;

	memset(p, 0, sizeof(*p));
	p->fr = fr;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->room, NULL);
	/* jansson seeds its hash function on first use: do that before the threads */
	json_object_seed(0);
	for (int i = 0; i < want; i++)
		if (!pthread_create(&p->threads[p->n_threads], NULL, worker, p))
			p->n_threads++;
}

/* Hand a job over (the body with it); without threads it runs here and now. */
static int pool_submit(struct pool *p, struct fleet_member *nm, char *body, size_t len)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		free(body);
		snprintf(nm->reason, sizeof(nm->reason), "out of memory");
		return -ENOMEM;
	}
	j->nm = nm;
	j->body = body;
	j->len = len;
	if (!p->n_threads) {
		run_job(p, j);
		free(j->body);
		free(j);
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	while (p->queued >= POOL_QUEUE_MAX)
		pthread_cond_wait(&p->room, &p->lock);
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->queued++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* Wait for every job, then stop the threads. */
static void pool_finish(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->room);
}

struct http_ctx {
	struct fleet_run *fr;
	struct fleet_req *reqs;
	size_t *member; /* request -> member index */
	struct pool *pool;
	bool oom;
};

static void http_done(struct fleet_req *r, void *arg)
{
	struct http_ctx *hc = arg;
	struct fleet_member *nm = &hc->fr->nodes[hc->member[r - hc->reqs]];

	nm->seconds = r->seconds;
	if (r->err) {
		snprintf(nm->reason, sizeof(nm->reason), "%s", r->errmsg);
		return;
	}
	/* the pool owns the body now */
	if (pool_submit(hc->pool, nm, r->body, r->len))
		hc->oom = true;
	r->body = NULL;
	r->len = 0;
}

static int gather_http(struct fleet_run *fr, const struct fleet_http_opts *ho, struct pool *pool)
{
	struct http_ctx hc = { .fr = fr, .pool = pool };
	size_t n = 0;
	int r;

	for (size_t i = 0; i < fr->n; i++)
		n += fr->nodes[i].src == FSRC_HTTP;
	if (!n)
		return 0;
	hc.reqs = calloc(n, sizeof(*hc.reqs));
	hc.member = calloc(n, sizeof(*hc.member));
	if (!hc.reqs || !hc.member) {
		free(hc.reqs);
		free(hc.member);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < fr->n; i++) {
		if (fr->nodes[i].src != FSRC_HTTP)
			continue;
		hc.reqs[n].url = fr->nodes[i].where;
		hc.member[n++] = i;
	}
	r = fleet_http_run(hc.reqs, n, ho, http_done, &hc);
	for (size_t i = 0; i < n; i++)
		fleet_req_free(&hc.reqs[i]);
	free(hc.reqs);
	free(hc.member);
	return hc.oom ? -ENOMEM : r;
}

static int gather_files(struct fleet_run *fr, struct pool *pool)
{
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].src == FSRC_FILE && pool_submit(pool, &fr->nodes[i], NULL, 0))
			return -ENOMEM;
	return 0;
}

/* A snapshot is named by its host, as the nodes of a job are (a path if two share one). */
static void name_files(struct fleet_run *fr)
{
	for (size_t i = 0; i < fr->n; i++) {
		struct fleet_member *nm = &fr->nodes[i];
		bool dup = false;
		char *h;

		if (nm->src != FSRC_FILE || !nm->answered || !nm->host[0])
			continue;
		for (size_t k = 0; k < fr->n && !dup; k++)
			dup = k != i && (!strcmp(fr->nodes[k].name, nm->host) ||
					 (fr->nodes[k].src == FSRC_FILE && fr->nodes[k].answered &&
					  !strcmp(fr->nodes[k].host, nm->host)));
		if (dup || !(h = strdup(nm->host)))
			continue;
		free(nm->name);
		nm->name = h;
	}
}

/*
 * Nodes asked of Prometheus per round: each round's models and answers are
 * dropped before the next, so the memory does not grow with the fleet.  A
 * round is one query per metric; the largest answer (every port's 64-entry
 * DSCP map) is about 25 MB for 250 nodes, where 8 000 at once were 800 MB.
 */
#define PROM_CHUNK 250

static int gather_prometheus(struct fleet_run *fr, const struct fleet_http_opts *ho)
{
	struct fleet_prom_node *pn;
	size_t *idx, total = 0, done = 0;
	bool used[F__COUNT];
	char err[512];
	int r = 0;

	for (size_t i = 0; i < fr->n; i++)
		total += fr->nodes[i].src == FSRC_PROMETHEUS;
	if (!total)
		return 0;
	pn = calloc(total < PROM_CHUNK ? total : PROM_CHUNK, sizeof(*pn));
	idx = calloc(total, sizeof(*idx));
	if (!pn || !idx) {
		free(pn);
		free(idx);
		return -ENOMEM;
	}
	total = 0;
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].src == FSRC_PROMETHEUS)
			idx[total++] = i;
	rules_fields_used(fr->e, used);
	while (done < total && !fr->oom) {
		size_t n = total - done < PROM_CHUNK ? total - done : PROM_CHUNK;

		memset(pn, 0, n * sizeof(*pn));
		for (size_t k = 0; k < n; k++) {
			pn[k].name = fr->nodes[idx[done + k]].name;
			pn[k].m = malloc(sizeof(*pn[k].m));
			if (!pn[k].m) {
				fr->oom = true;
				break;
			}
			model_init(pn[k].m);
		}
		r = fr->oom ? -ENOMEM
			    : fleet_prom_gather(fr->prometheus, ho, used, pn, n, err, sizeof(err));
		for (size_t k = 0; k < n; k++) {
			struct fleet_member *nm = &fr->nodes[idx[done + k]];

			if (r) {
				snprintf(nm->reason, sizeof(nm->reason), "%s", err);
			} else if (pn[k].found) {
				free(nm->where);
				nm->where = strdup(pn[k].instance);
				consume(fr, nm, pn[k].m);
				pn[k].m = NULL;
			} else {
				snprintf(nm->reason, sizeof(nm->reason), "%s", pn[k].err);
			}
			if (pn[k].m) {
				model_free(pn[k].m);
				free(pn[k].m);
			}
		}
		done += n;
		if (r && r != -ENOMEM) {
			/* Prometheus failed as a whole: the same for the rest, without waiting
			 * again */
			for (; done < total; done++)
				snprintf(fr->nodes[idx[done]].reason,
					 sizeof(fr->nodes[idx[done]].reason), "%s", err);
		}
		if (r == -ENOMEM)
			fr->oom = true;
	}
	free(pn);
	free(idx);
	return fr->oom ? -ENOMEM : 0;
}

/* ---- per-node rules ---- */

static int keep_result(struct fleet_member *nm, const struct rule_result *x)
{
	struct fleet_node_result *k;

	if (array_grow(&nm->res, &nm->cap_res, nm->n_res, sizeof(*nm->res), 8))
		return -ENOMEM;
	k = &nm->res[nm->n_res++];
	k->rule = x->rule;
	k->outcome = x->outcome;
	if (x->kind == OBJ_RDMA_PORT)
		snprintf(k->object, sizeof(k->object), "%s/%u", x->device, x->port);
	else
		snprintf(k->object, sizeof(k->object), "%s", x->device);
	snprintf(k->text, sizeof(k->text), "%s", x->outcome == RULE_FAIL ? x->summary : x->reason);
	return 0;
}

/* "OK", or the status and the rules that did not pass: the value profile_outcome compares. */
static int outcome_text(struct fleet_member *nm, const struct rules_engine *e, bool multi)
{
	struct strbuf sb = { 0 };
	const char *sep = ": ", *last = NULL;

	sb_puts(&sb, rules_status_name(nm->status));
	for (size_t i = 0; i < rules_profile_count(e); i++) {
		const struct rules_profile_info *pi = rules_profile(e, i);

		for (int k = 0; k < OBJ__COUNT && !pi->requirements_met; k++)
			if (pi->requires[k]) {
				sb_printf(&sb, "%s%s requires %s", sep, pi->name,
					  obj_kind_name((enum obj_kind)k));
				sep = ", ";
			}
	}
	for (size_t i = 0; i < nm->n_res; i++) {
		const struct rule_info *ri = nm->res[i].rule;

		if (ri->severity == SEV_INFO || ri->name == last)
			continue;
		/* the rule, not the object: netdev names differ between nodes */
		if (multi)
			sb_printf(&sb, "%s%s/%s", sep, ri->profile, ri->name);
		else
			sb_printf(&sb, "%s%s", sep, ri->name);
		sep = ", ";
		last = ri->name;
	}
	if (sb.oom) {
		sb_free(&sb);
		return -ENOMEM;
	}
	nm->outcome = sb.buf;
	return 0;
}

/* Do node rules come from more than one profile (then name them profile/rule)? */
static bool node_rules_multi_profile(const struct rules_engine *e)
{
	const char *first = NULL;

	for (size_t i = 0; i < rules_count(e); i++) {
		const struct rule_info *ri = rules_rule(e, i);

		if (ri->fleet)
			continue;
		if (first && strcmp(first, ri->profile))
			return true;
		first = ri->profile;
	}
	return false;
}

/* The node's own rules (--profile) on its model. */
static int eval_node(struct fleet_run *fr, struct fleet_member *nm, const struct node_model *m)
{
	const struct rule_result *res;
	size_t n;
	int64_t t = (int64_t)m->time.tv_sec * 1000000000LL + m->time.tv_nsec;
	int r;

	rules_reset(fr->e);
	r = rules_evaluate(fr->e, m, t);
	if (r)
		return r;
	nm->evaluated = true;
	nm->status = rules_status(fr->e);
	n = rules_results(fr->e, &res);
	for (size_t k = 0; k < n; k++) {
		nm->counts[res[k].outcome < RULE__OUTCOMES ? res[k].outcome : RULE_UNKNOWN]++;
		if ((res[k].outcome == RULE_FAIL || res[k].outcome == RULE_UNKNOWN) &&
		    keep_result(nm, &res[k]))
			return -ENOMEM;
	}
	r = outcome_text(nm, fr->e, fr->multi);
	rules_reset(fr->e);
	return r;
}

/* One engine for all: the pool's threads take turns. */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A node that answered: its own rules, then its units into the fleet rules;
 * what the report needs is kept in the member, and the model (taken over)
 * is freed.
 */
static int consume(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m)
{
	struct fleet_node fn;
	int r = 0;

	pthread_mutex_lock(&engine_lock);
	strlcpy0(nm->host, m->host, sizeof(nm->host));
	nm->answered = true;
	if (fr->per_node)
		r = eval_node(fr, nm, m);
	if (!r) {
		fn.name = nm->name;
		fn.m = m;
		fn.outcome = nm->outcome;
		r = rules_fleet_add(fr->e, (size_t)(nm - fr->nodes), &fn);
	}
	if (r)
		fr->oom = true;
	pthread_mutex_unlock(&engine_lock);
	model_free(m);
	free(m);
	return r;
}

enum rules_status fleet_verdict(struct fleet_run *fr)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(fr->e, &res);
	bool crit = false, warn = false, unk = !fr->n;

	for (size_t i = 0; i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (!nm->answered) {
			unk = true;
			fr->node_unknown = true;
			continue;
		}
		if (!nm->evaluated)
			continue;
		crit |= nm->status == RULES_CRITICAL;
		warn |= nm->status == RULES_WARNING;
		unk |= nm->status == RULES_UNKNOWN;
	}
	for (size_t i = 0; i < n; i++) {
		if (res[i].rule->severity == SEV_INFO)
			continue;
		if (res[i].outcome == RULE_FAIL) {
			crit |= res[i].rule->severity == SEV_CRITICAL;
			warn |= res[i].rule->severity == SEV_WARNING;
		} else if (res[i].outcome == RULE_UNKNOWN) {
			unk = true;
		}
	}
	if (crit)
		return RULES_CRITICAL;
	if (unk)
		return RULES_UNKNOWN;
	return warn ? RULES_WARNING : RULES_OK;
}

/* ---- the command ---- */

static void run_free(struct fleet_run *fr)
{
	for (size_t i = 0; i < fr->n; i++) {
		free(fr->nodes[i].name);
		free(fr->nodes[i].where);
		free(fr->nodes[i].outcome);
		free(fr->nodes[i].res);
	}
	free(fr->nodes);
	free(fr->fnodes);
	rules_free(fr->e);
}

static int parse_ms(const char *opt, const char *arg, long *out)
{
	int64_t ns;

	if (parse_duration(arg, &ns) || ns <= 0 || ns > 3600000000000LL) {
		fprintf(stderr,
			"rocewatch fleet: %s: '%s' is not a duration up to 1h (2s, 500ms)\n", opt,
			arg);
		return -EINVAL;
	}
	*out = (long)(ns / 1000000);
	if (!*out)
		*out = 1;
	return 0;
}

static int load_rules(struct fleet_run *fr, struct rules_spec *spec, size_t n_fleet)
{
	struct rules_diags dg = { 0 };
	int r;

	if (!n_fleet && rules_spec_add_profile(spec, FLEET_DEFAULT_PROFILE))
		return -ENOMEM;
	r = rules_load(spec, &fr->e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch fleet: %s\n", line);
	}
	rules_diags_free(&dg);
	if (r)
		return r;
	fr->per_node = rules_node_count(fr->e) > 0;
	fr->multi = node_rules_multi_profile(fr->e);
	rules_set_single_sample(fr->e, true);
	return 0;
}

static int fleet_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "fleet-profile", required_argument, NULL, OPT_FLEET_PROFILE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "slurm", no_argument, NULL, OPT_SLURM },
		{ "prometheus", required_argument, NULL, OPT_PROMETHEUS },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "scheme", required_argument, NULL, OPT_SCHEME },
		{ "parallel", required_argument, NULL, OPT_PARALLEL },
		{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "client-config", required_argument, NULL, OPT_CLIENT_CONFIG },
		{ "ca-file", required_argument, NULL, OPT_CA_FILE },
		{ "cert", required_argument, NULL, OPT_CERT },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "insecure-skip-verify", no_argument, NULL, OPT_INSECURE },
		{ "user", required_argument, NULL, OPT_USER },
		{ "password-file", required_argument, NULL, OPT_PASSWORD_FILE },
		{ "max-names", required_argument, NULL, OPT_MAX_NAMES },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct fleet_run fr = { .max_names = 10 };
	struct rules_spec spec = { 0 };
	struct client_cfg cc = { 0 }, flags = { 0 };
	struct fleet_http_opts ho;
	struct pool pool;
	const char *client_config = NULL;
	enum term_color color = TERM_COLOR_AUTO;
	bool slurm = false, flag_insecure = false;
	size_t n_fleet = 0;
	int opt, port = FLEET_DEFAULT_PORT, rc = RULES_UNKNOWN, r;
	uint64_t u;

	fleet_http_defaults(&ho);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hvj", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(fleet_usage, stdout);
			rc = 0;
			goto out;
		case 'v':
			fr.verbose = true;
			break;
		case 'j':
			fr.json = true;
			break;
		case OPT_PROFILE:
		case OPT_FLEET_PROFILE:
			n_fleet += opt == OPT_FLEET_PROFILE;
			if (cli_rules_option("fleet", &spec, false, optarg))
				goto out;
			break;
		case OPT_PARAM:
			if (cli_rules_option("fleet", &spec, true, optarg))
				goto out;
			break;
		case OPT_FORMAT:
			if (cli_format_json("fleet", optarg, &fr.json))
				goto out;
			break;
		case OPT_SLURM:
			slurm = true;
			break;
		case OPT_PROMETHEUS:
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8)) {
				fprintf(stderr,
					"rocewatch fleet: --prometheus: '%s' is not an http:// or "
					"https:// URL\n",
					optarg);
				goto out;
			}
			fr.prometheus = optarg;
			break;
		case OPT_PORT:
			if (parse_u64(optarg, &u) || !u || u > 65535) {
				fprintf(stderr,
					"rocewatch fleet: --port: '%s' is not a port 1-65535\n",
					optarg);
				goto out;
			}
			port = (int)u;
			break;
		case OPT_SCHEME:
			if (strcmp(optarg, "http") && strcmp(optarg, "https")) {
				fprintf(stderr,
					"rocewatch fleet: --scheme: '%s' is not http or https\n",
					optarg);
				goto out;
			}
			set_str(&flags.scheme, optarg);
			break;
		case OPT_PARALLEL:
			if (parse_u64(optarg, &u) || !u || u > 4096) {
				fprintf(
				    stderr,
				    "rocewatch fleet: --parallel: '%s' is not a number 1-4096\n",
				    optarg);
				goto out;
			}
			ho.parallel = (int)u;
			break;
		case OPT_CONNECT_TIMEOUT:
			if (parse_ms("--connect-timeout", optarg, &ho.connect_timeout_ms))
				goto out;
			break;
		case OPT_TIMEOUT:
			if (parse_ms("--timeout", optarg, &ho.timeout_ms))
				goto out;
			break;
		case OPT_MAX_BODY:
			if (parse_size(optarg, &u) || u < 1024 || u > (1ULL << 32)) {
				fprintf(
				    stderr,
				    "rocewatch fleet: --max-body: '%s' is not a size from 1KiB to "
				    "4GiB\n",
				    optarg);
				goto out;
			}
			ho.max_body = (size_t)u;
			break;
		case OPT_CLIENT_CONFIG:
			client_config = optarg;
			break;
		case OPT_CA_FILE:
			set_str(&flags.ca_file, optarg);
			break;
		case OPT_CERT:
			set_str(&flags.cert_file, optarg);
			break;
		case OPT_KEY:
			set_str(&flags.key_file, optarg);
			break;
		case OPT_INSECURE:
			flag_insecure = true;
			break;
		case OPT_USER:
			set_str(&flags.username, optarg);
			break;
		case OPT_PASSWORD_FILE:
			set_str(&flags.password_file, optarg);
			break;
		case OPT_MAX_NAMES:
			if (parse_u64(optarg, &u) || u > 100000) {
				fprintf(stderr,
					"rocewatch fleet: --max-names: '%s' is not a number\n",
					optarg);
				goto out;
			}
			fr.max_names = (size_t)u;
			break;
		case OPT_COLOR:
			if (term_color_parse(optarg, &color)) {
				fprintf(
				    stderr,
				    "rocewatch fleet: --color: '%s' is not auto, always or never\n",
				    optarg);
				goto out;
			}
			break;
		default:
			cli_bad_option("fleet check", argv, optind);
			goto out;
		}
	}
	if (!fr.json) {
		struct term t;

		term_init(&t, stdout, color);
		fr.color = t.color;
	}

	/* the client: config file, then flags over it */
	if (client_config && load_client_config(client_config, &cc))
		goto out;
#define OVERRIDE(f)                              \
	do {                                     \
		if (flags.f)                     \
			set_str(&cc.f, flags.f); \
	} while (0)
	OVERRIDE(scheme);
	OVERRIDE(ca_file);
	OVERRIDE(cert_file);
	OVERRIDE(key_file);
	OVERRIDE(username);
	OVERRIDE(password_file);
#undef OVERRIDE
	cc.insecure |= flag_insecure;
	if (cc.scheme && strcmp(cc.scheme, "http") && strcmp(cc.scheme, "https")) {
		fprintf(stderr, "rocewatch fleet: scheme '%s' is not http or https\n", cc.scheme);
		goto out;
	}
	if (!cc.username != !cc.password_file) {
		fprintf(stderr,
			"rocewatch fleet: basic auth needs both a user name and a password file\n");
		goto out;
	}
	if (read_password(&cc))
		goto out;
	ho.ca_file = cc.ca_file;
	ho.cert_file = cc.cert_file;
	ho.key_file = cc.key_file;
	ho.insecure_skip_verify = cc.insecure;
	ho.username = cc.username;
	ho.password = cc.password;

	if (load_rules(&fr, &spec, n_fleet))
		goto out;

	for (int i = optind; i < argc; i++) {
		r = is_path(argv[i])
			? add_path(&fr, argv[i])
			: add_hosts(&fr, argv[i], cc.scheme ? cc.scheme : "http", port);
		if (r)
			goto out;
	}
	if (slurm) {
		const char *nl = getenv("SLURM_JOB_NODELIST");

		if (!nl || !*nl)
			nl = getenv("SLURM_NODELIST");
		if (!nl || !*nl) {
			fprintf(stderr, "rocewatch fleet: --slurm: SLURM_JOB_NODELIST is not set "
					"(run it from PrologSlurmctld, salloc or sbatch)\n");
			goto out;
		}
		if (add_hosts(&fr, nl, cc.scheme ? cc.scheme : "http", port))
			goto out;
	}
	if (!fr.n) {
		fprintf(stderr, "rocewatch fleet: no nodes given (NODE, FILE, DIR or --slurm; see "
				"--help)\n");
		goto out;
	}

	fr.started_ns = real_ns();
	/* each node's model goes through the rules as it comes, then is dropped */
	if (rules_fleet_begin(fr.e, fr.started_ns))
		goto nomem;
	pool_start(&pool, &fr);
	/* a transfer failure is each node's own outcome: only running out of memory stops us */
	r = gather_files(&fr, &pool);
	if (!r && gather_http(&fr, &ho, &pool) == -ENOMEM)
		r = -ENOMEM;
	pool_finish(&pool);
	if (r || fr.oom || gather_prometheus(&fr, &ho) == -ENOMEM)
		goto nomem;
	name_files(&fr);
	fr.gathered_ns = real_ns();

	fr.fnodes = calloc(fr.n, sizeof(*fr.fnodes));
	if (!fr.fnodes)
		goto nomem;
	for (size_t i = 0; i < fr.n; i++) {
		fr.fnodes[i].name = fr.nodes[i].name;
		fr.fnodes[i].m = NULL; /* freed as it was evaluated */
		fr.fnodes[i].outcome = fr.nodes[i].outcome;
	}
	if (rules_fleet_finish(fr.e, fr.fnodes, fr.n))
		goto nomem;
	fr.status = fleet_verdict(&fr);
	rc = (int)fr.status;
	if ((fr.json ? fleet_report_json(&fr) : fleet_report_text(&fr)) || fflush(stdout)) {
		fprintf(stderr, "rocewatch fleet: writing the report: %s\n", strerror(errno));
		rc = RULES_UNKNOWN;
	}
	goto out;
nomem:
	fprintf(stderr, "rocewatch fleet: out of memory\n");
	rc = RULES_UNKNOWN;
out:
	run_free(&fr);
	rules_spec_free(&spec);
	client_cfg_free(&cc);
	client_cfg_free(&flags);
	return rc;
}

int cmd_fleet(int argc, char **argv)
{
	if (argc < 2 || (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(fleet_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? RULES_UNKNOWN : 0;
	}
	if (strcmp(argv[1], "check")) {
		fprintf(stderr, "rocewatch fleet: unknown subcommand '%s' (check)\n", argv[1]);
		return RULES_UNKNOWN;
	}
	return fleet_check(argc - 1, argv + 1);
}
