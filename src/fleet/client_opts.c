// SPDX-License-Identifier: MIT
/* The outbound HTTP client's flags and --client-config (client_opts.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "client_opts.h"
#include "util.h"

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

static int cc_err(const char *cmd, const char *file, const yaml_node_t *n, const char *msg,
		  const char *what)
{
	fprintf(stderr, "rocewatch %s: %s:%d:%d: %s%s%s\n", cmd, file,
		n ? (int)n->start_mark.line + 1 : 0, n ? (int)n->start_mark.column + 1 : 0, msg,
		what ? " " : "", what ? what : "");
	return -EINVAL;
}

static int cc_map(const char *cmd, yaml_document_t *doc, const char *file, yaml_node_t *map,
		  const char *const *keys, size_t nk, yaml_node_t **vals)
{
	if (map->type != YAML_MAPPING_NODE)
		return cc_err(cmd, file, map, "expected a mapping", NULL);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const char *ks =
		    k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		size_t i;

		for (i = 0; i < nk && strcmp(keys[i], ks); i++)
			;
		if (i == nk)
			return cc_err(cmd, file, k, "unknown key", ks);
		if (vals[i])
			return cc_err(cmd, file, k, "duplicate key", ks);
		vals[i] = yaml_document_get_node(doc, p->value);
	}
	return 0;
}

static int cc_scalar(const char *cmd, const char *file, const yaml_node_t *n, const char *key,
		     char **out)
{
	if (!n)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return cc_err(cmd, file, n, "expected a single value for", key);
	set_str(out, (const char *)n->data.scalar.value);
	return *out ? 0 : -ENOMEM;
}

static int load_client_config(const char *cmd, const char *file, struct client_cfg *c)
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
		fprintf(stderr, "rocewatch %s: --client-config %s: %s\n", cmd, file, strerror(-r));
		return r;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		fprintf(stderr, "rocewatch %s: %s:%d:%d: YAML: %s\n", cmd, file,
			(int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		free(text);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	r = !root ? cc_err(cmd, file, NULL, "empty file", NULL)
		  : cc_map(cmd, &doc, file, root, top, 3, tv);
	if (!r && tv[1])
		r = cc_map(cmd, &doc, file, tv[1], tls, 4, lv);
	if (!r && tv[2])
		r = cc_map(cmd, &doc, file, tv[2], ba, 3, bv);
	if (!r && bv[2])
		/* a password in a file the whole fleet copies around is one too many */
		r = cc_err(cmd, file, bv[2], "basic_auth.password: use password_file", NULL);
	if (!r)
		r = cc_scalar(cmd, file, tv[0], "scheme", &c->scheme);
	if (!r)
		r = cc_scalar(cmd, file, lv[0], "ca_file", &c->ca_file);
	if (!r)
		r = cc_scalar(cmd, file, lv[1], "cert_file", &c->cert_file);
	if (!r)
		r = cc_scalar(cmd, file, lv[2], "key_file", &c->key_file);
	if (!r)
		r = cc_scalar(cmd, file, lv[3], "insecure_skip_verify", &ins);
	if (!r && ins) {
		if (strcmp(ins, "true") && strcmp(ins, "false"))
			r = cc_err(cmd, file, lv[3], "insecure_skip_verify must be true or false",
				   NULL);
		c->insecure = !strcmp(ins, "true");
	}
	if (!r)
		r = cc_scalar(cmd, file, bv[0], "username", &c->username);
	if (!r)
		r = cc_scalar(cmd, file, bv[1], "password_file", &c->password_file);
	free(ins);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	return r;
}

static int read_password(const char *cmd, struct client_cfg *c)
{
	char *text = NULL, *nl;
	size_t len;
	int r;

	if (!c->password_file)
		return 0;
	r = read_file_all(c->password_file, &text, &len);
	if (r) {
		fprintf(stderr, "rocewatch %s: password file %s: %s\n", cmd, c->password_file,
			strerror(-r));
		return r;
	}
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	c->password = text;
	return 0;
}

static const char *const schemes[] = { "http", "https", NULL };

/*
 * "Name: value", as curl sends it: a token for the name (RFC 9110 tchar),
 * a value without CR, LF or other control bytes (a header must not end one
 * line and start another).
 */
static bool header_ok(const char *h)
{
	const char *colon = strchr(h, ':');

	if (!colon || colon == h)
		return false;
	for (const char *p = h; p < colon; p++)
		if (!(isalnum((unsigned char)*p) || strchr("!#$%&'*+-.^_`|~", *p)))
			return false;
	for (const char *p = colon + 1; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return false;
	return !strchr(colon + 1, 0x7f);
}

static int add_prom_header(struct client_opts *c, const char *h)
{
	if (array_grow(&c->prom_headers, &c->cap_prom_headers, c->n_prom_headers,
		       sizeof(*c->prom_headers), 4))
		return -ENOMEM;
	c->prom_headers[c->n_prom_headers] = strdup(h);
	if (!c->prom_headers[c->n_prom_headers])
		return -ENOMEM;
	c->n_prom_headers++;
	return 0;
}

static int opt_prom_header(const struct cli_opt *o, void *member, const char *arg)
{
	(void)o;
	if (!header_ok(arg))
		return CLI_BAD;
	return add_prom_header(member, arg);
}

/* --prometheus.replica-label: the first given replaces the defaults. */
static int opt_replica(const struct cli_opt *o, void *member, const char *arg)
{
	struct client_opts *c = member;
	size_t n = strlen(arg);

	if (!c->replica_given)
		c->po.n_replica = 0;
	c->replica_given = true;
	if (!n ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n ||
	    (arg[0] >= '0' && arg[0] <= '9'))
		return CLI_BAD;
	if (c->po.n_replica == FLEET_PROM_REPLICA_MAX) {
		fprintf(stderr, "rocewatch %s: --%s: at most %d\n", c->cmd, o->name,
			FLEET_PROM_REPLICA_MAX);
		return -EINVAL;
	}
	c->po.replica[c->po.n_replica++] = arg;
	return 0;
}

const struct cli_opt client_prom_cli_opts[] = {
	CLI_TEXT_ROW("\n"
		     "Prometheus-API engines (Prometheus, Thanos, Mimir, VictoriaMetrics):\n"),
	{ .name = "prometheus.header",
	  CLI_CALL_WHOLE(opt_prom_header), /* the header list and its counts */
	  .bad = "'Name: value' (a token, ':', a value without control bytes)",
	  .arg_max = 80,
	  .metavar = "'NAME:",
	  .help = "VALUE'\n"
		  "send this header to the engine (repeatable), e.g.\n"
		  "'X-Scope-OrgID: tenant' (Mimir, Cortex)" },
	{ .name = "prometheus.bearer-token-file",
	  CLI_STRING_AT(struct client_opts, bearer_file),
	  .metavar = "FILE",
	  .help = "\n"
		  "Authorization: Bearer, the first line of FILE" },
	{ .name = "prometheus.replica-label",
	  CLI_CALL_WHOLE(opt_replica), /* the labels and whether any was given */
	  .bad = "a label name",
	  .arg_max = 80,
	  .help = "NAME\n"
		  "series that differ only by this label are HA\n"
		  "replicas of one, counted once (repeatable; default\n"
		  "replica and prometheus_replica)" },
	{ .name = "prometheus.max-query",
	  CLI_SIZE_AT(struct client_opts, po.max_query),
	  .min = 1024,
	  .max = 1 << 24,
	  .bad = "a size from 1KiB to 16MiB",
	  .metavar = "SIZE",
	  .help = "\n"
		  "longest query text sent: the nodes are asked in\n"
		  "as many rounds as that takes (default 16KiB,\n"
		  "VictoriaMetrics' -search.maxQueryLen)" },
	{ 0 },
};

#define TIMEOUT(n, member, text)                                                  \
	{                                                                         \
		.name = n, CLI_DURATION_AT(struct client_opts, member), .min = 1, \
		.max = 3600000000000LL, .bad = "a duration up to 1h (2s, 500ms)", \
		.metavar = "DURATION", .help = text                               \
	}
const struct cli_opt client_cli_opts[] = {
	{ .name = "scheme",
	  CLI_STRDUP_AT(struct client_opts, flags.scheme),
	  .words = schemes,
	  .metavar = "http|https",
	  .help = "default http" },
	{ .name = "parallel",
	  CLI_COUNT_AT(struct client_opts, ho.parallel),
	  .min = 1,
	  .max = 4096,
	  .bad = "a number 1-4096",
	  .metavar = "N",
	  .help = "requests in flight (default 64)" },
	TIMEOUT("connect-timeout", connect_timeout_ns, "per node (default 2s)"),
	TIMEOUT("timeout", timeout_ns, "whole request per node (default 5s)"),
	{ .name = "max-body",
	  CLI_SIZE_AT(struct client_opts, ho.max_body),
	  .min = 1024,
	  .max = 1LL << 32,
	  .bad = "a size from 1KiB to 4GiB",
	  .metavar = "SIZE",
	  .help = "largest answer accepted (default 64MiB)" },
	{ .name = "client-config",
	  CLI_STRING_AT(struct client_opts, config),
	  .metavar = "FILE",
	  .help = "scheme, tls_config (ca_file, cert_file, key_file,\n"
		  "insecure_skip_verify) and basic_auth (username,\n"
		  "password_file) as in a Prometheus scrape config;\n"
		  "the flags below override it" },
	{ .name = "ca-file",
	  CLI_STRDUP_AT(struct client_opts, flags.ca_file),
	  .metavar = "FILE",
	  .help = "CA bundle to verify the nodes' certificates" },
	{ .name = "cert",
	  CLI_STRDUP_AT(struct client_opts, flags.cert_file),
	  .metavar = "FILE, --key FILE",
	  .help = "client certificate and key (mutual TLS)" },
	{ .name = "key", CLI_STRDUP_AT(struct client_opts, flags.key_file) },
	{ .name = "insecure-skip-verify",
	  CLI_FLAG_AT(struct client_opts, insecure),
	  .help = "do not verify certificates (testing only)" },
	{ .name = "user",
	  CLI_STRDUP_AT(struct client_opts, flags.username),
	  .metavar = "NAME",
	  .help = "basic auth user name" },
	{ .name = "password-file",
	  CLI_STRDUP_AT(struct client_opts, flags.password_file),
	  .metavar = "FILE",
	  .help = "basic auth password (first line of FILE)" },
	{ 0 },
};
#undef TIMEOUT

void client_opts_init(struct client_opts *c, const char *cmd)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	client_http_defaults(&c->ho);
	fleet_prom_opts_defaults(&c->po);
	c->connect_timeout_ns = c->ho.connect_timeout_ms * 1000000LL;
	c->timeout_ns = c->ho.timeout_ms * 1000000LL;
}

static long ms_of(int64_t ns)
{
	return ns / 1000000 ? (long)(ns / 1000000) : 1;
}

/* The bearer token into an Authorization header of the engine's: 0 or -errno (said). */
static int read_bearer(struct client_opts *c)
{
	char *text = NULL, *h;
	size_t len, n;
	bool bad;
	int r;

	if (!c->bearer_file)
		return 0;
	r = read_file_all(c->bearer_file, &text, &len);
	if (r) {
		fprintf(stderr, "rocewatch %s: --prometheus.bearer-token-file %s: %s\n", c->cmd,
			c->bearer_file, strerror(-r));
		return r;
	}
	n = strcspn(text, "\r\n");
	text[n] = '\0';
	bad = !n || strlen(text) != n;
	/* a token is base64 or a JWT: any other byte would end the header early, or forge one */
	for (size_t i = 0; i < n && !bad; i++)
		bad = (unsigned char)text[i] <= 0x20 || (unsigned char)text[i] >= 0x7f;
	if (bad) {
		fprintf(stderr, "rocewatch %s: --prometheus.bearer-token-file %s: %s\n", c->cmd,
			c->bearer_file,
			n ? "the first line is not one token (spaces or control bytes in it)"
			  : "the first line is empty");
		explicit_bzero(text, len);
		free(text);
		return -EINVAL;
	}
	h = malloc(n + sizeof("Authorization: Bearer "));
	if (h)
		sprintf(h, "Authorization: Bearer %s", text);
	explicit_bzero(text, len);
	free(text);
	if (!h)
		return -ENOMEM;
	r = add_prom_header(c, h);
	explicit_bzero(h, strlen(h));
	free(h);
	return r;
}

/* The engine's options: its headers (one Authorization at most), replicas, bound. */
static int prom_finish(struct client_opts *c)
{
	size_t auth = 0;

	if (read_bearer(c))
		return -EINVAL;
	for (size_t i = 0; i < c->n_prom_headers; i++)
		auth += !strncasecmp(c->prom_headers[i], "authorization:", 14);
	if (auth > 1 || (auth && c->ho.username)) {
		fprintf(stderr,
			"rocewatch %s: the Prometheus would get %s: give one of "
			"--prometheus.bearer-token-file, --prometheus.header 'Authorization: ...' "
			"and --user\n",
			c->cmd, auth > 1 ? "two Authorization headers" : "basic auth and a token");
		return -EINVAL;
	}
	c->prom_ho = c->ho;
	c->prom_ho.headers = (const char *const *)c->prom_headers;
	c->prom_ho.n_headers = c->n_prom_headers;
	return 0;
}

int client_opts_finish(struct client_opts *c)
{
	struct client_cfg *cc = &c->cc;

	if (c->config && load_client_config(c->cmd, c->config, cc))
		return -EINVAL;
#define OVERRIDE(f)                                  \
	do {                                         \
		if (c->flags.f)                      \
			set_str(&cc->f, c->flags.f); \
	} while (0)
	OVERRIDE(scheme);
	OVERRIDE(ca_file);
	OVERRIDE(cert_file);
	OVERRIDE(key_file);
	OVERRIDE(username);
	OVERRIDE(password_file);
#undef OVERRIDE
	cc->insecure |= c->insecure;
	if (cc->scheme && strcmp(cc->scheme, "http") && strcmp(cc->scheme, "https")) {
		fprintf(stderr, "rocewatch %s: scheme '%s' is not http or https\n", c->cmd,
			cc->scheme);
		return -EINVAL;
	}
	if (!cc->username != !cc->password_file) {
		fprintf(stderr,
			"rocewatch %s: basic auth needs both a user name and a password file\n",
			c->cmd);
		return -EINVAL;
	}
	if (read_password(c->cmd, cc))
		return -EINVAL;
	c->ho.connect_timeout_ms = ms_of(c->connect_timeout_ns);
	c->ho.timeout_ms = ms_of(c->timeout_ns);
	c->ho.ca_file = cc->ca_file;
	c->ho.cert_file = cc->cert_file;
	c->ho.key_file = cc->key_file;
	c->ho.insecure_skip_verify = cc->insecure;
	c->ho.username = cc->username;
	c->ho.password = cc->password;
	return prom_finish(c);
}

const char *client_opts_scheme(const struct client_opts *c)
{
	return c->cc.scheme ? c->cc.scheme : "http";
}

void client_opts_free(struct client_opts *c)
{
	client_cfg_free(&c->cc);
	client_cfg_free(&c->flags);
	for (size_t i = 0; i < c->n_prom_headers; i++) {
		/* a token is a secret: not left in freed memory */
		explicit_bzero(c->prom_headers[i], strlen(c->prom_headers[i]));
		free(c->prom_headers[i]);
	}
	free(c->prom_headers);
	c->prom_headers = NULL;
	c->n_prom_headers = 0;
}
