/* SPDX-License-Identifier: MIT */
/*
 * The outbound HTTP client's flags, one set for every command that asks
 * another machine: fleet check (nodes, Prometheus), probe (the nodes' probe
 * info) and check --serve.  Timeouts, a body bound, TLS (CA file, client
 * certificate, insecure) and basic auth, from flags or a --client-config file
 * in the Prometheus scrape-config spelling (flags over the file).  The
 * requests themselves go through client_http_run() (client.h).
 */
#ifndef ROCEWATCH_CLIENT_OPTS_H
#define ROCEWATCH_CLIENT_OPTS_H

#include <stdbool.h>

#include "cli.h"
#include "fleet_prom.h"

/* --port: the port of a NODE given without one (fleet check, probe, fleet probe). */
#define CLI_OPT_NODE_PORT(type, member)                                             \
	{                                                                           \
		.name = "port", CLI_COUNT_AT(type, member), .min = 1, .max = 65535, \
		.bad = "a port 1-65535", .metavar = "PORT",                         \
		.help = "port of a NODE given without one (default 9479)"           \
	}

struct client_cfg {
	char *scheme;
	char *ca_file, *cert_file, *key_file;
	bool insecure;
	char *username, *password_file;
	char *password;
};

struct client_opts {
	const char *cmd; /* in messages: "fleet" */
	int64_t connect_timeout_ns, timeout_ns;
	const char *config;	 /* --client-config */
	struct client_cfg flags; /* from the flags */
	bool insecure;
	struct client_cfg cc;	    /* the file, then the flags over it */
	struct client_http_opts ho; /* what client_opts_finish() hands the requests */
	/*
	 * --prometheus.*: the engine's headers (--prometheus.header, the bearer
	 * token) go only to it, in prom_ho; replica labels and the query bound in po
	 */
	char **prom_headers; /* "Name: value", owned */
	size_t n_prom_headers, cap_prom_headers;
	const char *bearer_file;
	bool replica_given; /* --prometheus.replica-label replaces the defaults */
	struct fleet_prom_opts po;
	struct client_http_opts prom_ho;
};

/* --scheme ... --password-file; base: struct client_opts. */
extern const struct cli_opt client_cli_opts[];
/*
 * --prometheus.header, --prometheus.bearer-token-file,
 * --prometheus.replica-label, --prometheus.max-query (fleet check); base:
 * struct client_opts.
 */
extern const struct cli_opt client_prom_cli_opts[];

void client_opts_init(struct client_opts *c, const char *cmd);
/*
 * After parsing: read --client-config, lay the flags over it, read the
 * password file (and the bearer token file) and fill c->ho (and c->prom_ho,
 * c->po).  0, or -errno after one line on stderr.
 */
int client_opts_finish(struct client_opts *c);
/* "http" unless the flags or the file say https. */
const char *client_opts_scheme(const struct client_opts *c);
void client_opts_free(struct client_opts *c);

#endif
