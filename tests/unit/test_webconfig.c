// SPDX-License-Identifier: MIT
/*
 * The web config parser (exporter-toolkit format), basic auth against real
 * bcrypt hashes, and the request-line check the HTTP guard makes.
 */
#include <crypt.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http.h"
#include "webauth.h"
#include "webconfig.h"

/* htpasswd -nbBC 4 "" secret / 'p@ss:word' (cost 4 keeps the test fast) */
#define HASH_SECRET "$2y$04$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/z0/dZMYFTK8m"
#define HASH_COLON  "$2y$04$ShJQubMWofMAjnWUyNSo6uj0PYOWZarvxz0RRMzMxkkfGDi8/L1au"

static int parse(struct web_config *wc, const char *text, char *err, size_t errlen)
{
	return web_config_parse(wc, "web.yml", "/etc/rw", text, strlen(text), err, errlen);
}

/* Parses must fail, with the message containing want. */
static void refused(const char *text, const char *want)
{
	struct web_config wc;
	char err[512] = "";
	int r = parse(&wc, text, err, sizeof(err));

	if (r == 0 || !strstr(err, want))
		fail_msg("config:\n%s\nwant an error containing '%s', got %d '%s'", text, want, r,
			 err);
	web_config_free(&wc);
}

/*
 * Costs: exporter-toolkit takes 4..31; past 14 (a second of CPU a check) is
 * refused, since one request at 31 pinned a core for days.
 */
static void bcrypt_cost_bound(void **state)
{
	struct web_config wc;
	struct web_auth *a;
	struct web_auth_stats st;
	char err[512] = "";

	(void)state;
	refused("basic_auth_users:\n  alice: "
		"$2y$15$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/z0/dZMYFTK8m\n",
		"web.yml:2:10: basic_auth_users.alice: bcrypt cost 15 is past 14");
	refused("basic_auth_users:\n  alice: "
		"$2y$31$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/z0/dZMYFTK8m\n",
		"bcrypt cost 31 is past 14");
	assert_int_equal(parse(&wc,
			       "basic_auth_users:\n  alice: "
			       "$2y$14$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/z0/dZMYFTK8m\n",
			       err, sizeof(err)),
			 0);
	web_config_free(&wc);

	/* a stopping server sends checks away without a bcrypt, and caches no verdict */
	assert_int_equal(
	    parse(&wc, "basic_auth_users:\n  alice: " HASH_SECRET "\n", err, sizeof(err)), 0);
	assert_int_equal(web_auth_new(&a, &wc, NULL, 0), 0);
	web_auth_stop(a);
	assert_false(web_auth_check(a, "alice", "secret"));
	assert_false(web_auth_check(a, "mallory", "x"));
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 0);
	assert_int_equal(st.cache_hits, 0);
	web_auth_free(a);
	web_config_free(&wc);
}

static void full_config(void **state)
{
	struct web_config wc;
	char err[512] = "", prio[1024];

	(void)state;
	assert_int_equal(parse(&wc,
			       "tls_server_config:\n"
			       "  cert_file: server.crt\n"
			       "  key_file: /abs/server.key\n"
			       "  client_auth_type: RequireAndVerifyClientCert\n"
			       "  client_ca_file: ca.crt\n"
			       "  client_allowed_sans: [prometheus.example, 10.0.0.1]\n"
			       "  min_version: TLS13\n"
			       "  max_version: TLS13\n"
			       "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n"
			       "  curve_preferences: [X25519, CurveP256]\n"
			       "  prefer_server_cipher_suites: false\n"
			       "http_server_config:\n"
			       "  http2: false\n"
			       "  headers:\n"
			       "    X-Frame-Options: deny\n"
			       "    Strict-Transport-Security: max-age=31536000\n"
			       "basic_auth_users:\n"
			       "  alice: " HASH_SECRET "\n"
			       "  bob: '" HASH_COLON "'\n"
			       "rate_limit:\n"
			       "  interval: 100ms\n"
			       "  burst: 20\n",
			       err, sizeof(err)),
			 0);
	assert_true(wc.tls);
	/* relative to the config's directory, as the exporter-toolkit resolves them */
	assert_string_equal(wc.cert_file, "/etc/rw/server.crt");
	assert_string_equal(wc.key_file, "/abs/server.key");
	assert_string_equal(wc.client_ca_file, "/etc/rw/ca.crt");
	assert_int_equal(wc.client_auth, WEB_CLIENT_REQUIRE_AND_VERIFY);
	assert_int_equal(wc.n_sans, 2);
	assert_string_equal(wc.client_allowed_sans[1], "10.0.0.1");
	assert_int_equal(wc.min_version, WEB_TLS13);
	assert_int_equal(wc.n_ciphers, 1);
	assert_string_equal(web_config_cipher_name(wc.ciphers[0]),
			    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
	assert_int_equal(wc.n_curves, 2);
	assert_false(wc.prefer_server_cipher_suites);
	assert_false(wc.http2);
	assert_int_equal(wc.n_headers, 2);
	assert_string_equal(wc.headers[0].name, "X-Frame-Options");
	assert_string_equal(wc.headers[1].value, "max-age=31536000");
	assert_int_equal(wc.n_users, 2);
	assert_string_equal(web_config_user_hash(&wc, "bob"), HASH_COLON);
	assert_null(web_config_user_hash(&wc, "carol"));
	assert_int_equal(wc.rate_interval_ns, 100000000LL);
	assert_int_equal(wc.rate_burst, 20);
	assert_int_equal(web_config_priorities(&wc, prio, sizeof(prio)), 0);
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:-CIPHER-ALL:-MAC-ALL"
				  ":+ECDHE-RSA:+AES-128-GCM:+AEAD:+AES-256-GCM:+CHACHA20-POLY1305"
				  ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1");
	web_config_free(&wc);
}

static void defaults_and_empty(void **state)
{
	struct web_config wc;
	char err[256] = "", prio[256];

	(void)state;
	/* An empty file is valid: no TLS, no users (as in the exporter-toolkit). */
	assert_int_equal(parse(&wc, "", err, sizeof(err)), 0);
	assert_false(wc.tls);
	assert_false(web_config_auth(&wc));
	web_config_free(&wc);
	assert_int_equal(
	    parse(&wc, "# nothing\ntls_server_config:\nbasic_auth_users: ~\n", err, sizeof(err)),
	    0);
	assert_false(wc.tls);
	web_config_free(&wc);
	assert_int_equal(parse(&wc, "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n",
			       err, sizeof(err)),
			 0);
	assert_true(wc.tls);
	assert_int_equal(wc.min_version, WEB_TLS12);
	assert_int_equal(wc.max_version, WEB_TLS13);
	assert_int_equal(wc.client_auth, WEB_CLIENT_NONE);
	assert_true(wc.prefer_server_cipher_suites);
	assert_int_equal(web_config_priorities(&wc, prio, sizeof(prio)), 0);
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE");
	web_config_free(&wc);
	/* the old name of RequireAnyClientCert */
	assert_int_equal(parse(&wc,
			       "tls_server_config:\n  cert_file: a\n  key_file: b\n"
			       "  client_auth_type: RequireClientCert\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(wc.client_auth, WEB_CLIENT_REQUIRE_ANY);
	web_config_free(&wc);
}

static void errors_name_file_position_and_key(void **state)
{
	(void)state;
	/* a typo must not leave the exporter open: unknown keys are errors, with line:col */
	refused("basic_auth_user:\n  alice: " HASH_SECRET "\n",
		"web.yml:1:1: basic_auth_user: unknown key (known here: tls_server_config,");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_fil: c\n",
		"web.yml:4:3: tls_server_config.cert_fil: unknown key");
	refused("http_server_config:\n  headers:\n    X-Powered-By: me\n",
		"web.yml:3:5: http_server_config.headers.X-Powered-By: unknown key");
	refused("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
		"web.yml:3:22: http_server_config.headers.X-Frame-Options: 'allow' is not allowed");
	refused("http_server_config:\n  headers:\n    Content-Security-Policy: "
		"\"a\\r\\nSet-Cookie: x\"\n",
		"control character");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_file: c\n",
		"web.yml:4:3: tls_server_config.cert_file: given twice");
	refused("basic_auth_users:\n  alice: secret\n",
		"web.yml:2:10: basic_auth_users.alice: not a bcrypt hash");
	refused("basic_auth_users:\n  alice:\n", "basic_auth_users.alice: not a bcrypt hash");
	refused("basic_auth_users:\n  alice: $2y$03$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/"
		"z0/dZMYFTK8m\n",
		"not a bcrypt hash");
	refused("basic_auth_users:\n  'a:b': " HASH_SECRET "\n", "without ':'");
	refused("basic_auth_users:\n  alice: " HASH_SECRET "\n  alice: " HASH_COLON "\n",
		"basic_auth_users.alice: given twice");
	refused("basic_auth_users: [alice]\n", "basic_auth_users: must be a mapping, not a list");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
		"web.yml:4:16: tls_server_config.min_version: 'TLS14' is not one of TLS10, TLS11, "
		"TLS12, TLS13");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
		"  max_version: TLS12\n",
		"min_version TLS13 is above max_version TLS12");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
		"  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n",
		"unknown cipher suite 'TLS_RSA_WITH_RC4_128_SHA'");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences: [P256]\n",
		"unknown curve 'P256'");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Maybe\n",
		"'Maybe' is not one of NoClientCert, RequestClientCert");
	refused("tls_server_config:\n  cert_file: a\n", "tls_server_config: missing key_file");
	refused("tls_server_config:\n  key_file: a\n", "tls_server_config: missing cert_file");
	refused("tls_server_config:\n  cert_file: a\n  cert: x\n  key_file: b\n",
		"cert and cert_file are both set");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
		"  client_auth_type: RequireAndVerifyClientCert\n",
		"needs client_ca_file");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca\n",
		"a client CA is set without a client_auth_type");
	refused("tls_server_config:\n  min_version: TLS13\n",
		"min_version is set but TLS is not (no cert_file)");
	refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
		"  prefer_server_cipher_suites: maybe\n",
		"'maybe' is not true or false");
	refused("rate_limit:\n  interval: fast\n", "rate_limit.interval: 'fast' is not a duration");
	refused("rate_limit:\n  interval: 1s\n", "burst is 0");
	refused("rate_limit:\n  interval: 1s\n  burst: -3\n", "rate_limit.burst");
	refused("tls_server_config: [a, b]\n", "tls_server_config: must be a mapping, not a list");
	refused("- just\n- a list\n", "web.yml:1:1: must be a mapping, not a list");
	refused("tls_server_config:\n  cert_file: \"a\\0b\"\n  key_file: b\n", "NUL byte");
	/* libyaml's own position for broken YAML */
	refused("tls_server_config:\n  cert_file: [a\n", "web.yml:3:1: not valid YAML");
	refused("a: 'unterminated\n", "not valid YAML");
}

static void load_from_file(void **state)
{
	char dir[] = "/tmp/rw-webconfig-XXXXXX", path[256], err[512];
	struct web_config wc;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("tls_server_config:\n  cert_file: tls/s.crt\n  key_file: s.key\n", f);
	fclose(f);
	assert_int_equal(web_config_load(&wc, path, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/tls/s.crt", dir);
	assert_string_equal(wc.cert_file, path);
	web_config_free(&wc);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	unlink(path);
	rmdir(dir);
	/* a missing file: its name and the reason */
	assert_int_not_equal(web_config_load(&wc, path, err, sizeof(err)), 0);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file"));
	web_config_free(&wc);
}

static void basic_auth(void **state)
{
	struct web_config wc;
	struct web_auth *a;
	struct web_auth_stats st;
	char err[256], longpw[100];

	(void)state;
	assert_int_equal(
	    parse(&wc, "basic_auth_users:\n  alice: " HASH_SECRET "\n  bob: " HASH_COLON "\n", err,
		  sizeof(err)),
	    0);
	assert_int_equal(web_auth_new(&a, &wc, NULL, 0), 0);
	assert_true(web_auth_check(a, "alice", "secret"));
	assert_true(web_auth_check(a, "bob", "p@ss:word"));
	assert_false(web_auth_check(a, "alice", "Secret"));
	assert_false(web_auth_check(a, "alice", ""));
	assert_false(web_auth_check(a, "bob", "secret"));
	assert_false(web_auth_check(a, NULL, "secret"));
	assert_false(web_auth_check(a, "alice", NULL));
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 5);
	/* an unknown user costs a bcrypt too (the dummy hash): no faster "no such user" */
	assert_false(web_auth_check(a, "mallory", "secret"));
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 6);
	/* the same credentials again: answered from the cache, both ways */
	for (int i = 0; i < 10; i++) {
		assert_true(web_auth_check(a, "alice", "secret"));
		assert_false(web_auth_check(a, "alice", "Secret"));
	}
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 6);
	assert_int_equal(st.cache_hits, 20);
	/* a flood of wrong passwords does not evict a valid entry */
	for (int i = 0; i < 300; i++) {
		char pw[16];

		snprintf(pw, sizeof(pw), "guess%d", i);
		assert_false(web_auth_check(a, "alice", pw));
	}
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 306);
	assert_true(web_auth_check(a, "alice", "secret"));
	web_auth_stats(a, &st);
	assert_int_equal(st.bcrypts, 306);
	/* bcrypt reads 72 bytes; a longer password that starts like a right one is no match */
	memset(longpw, 'x', sizeof(longpw) - 1);
	longpw[sizeof(longpw) - 1] = '\0';
	memcpy(longpw, "secret", 6);
	assert_false(web_auth_check(a, "alice", longpw));
	web_auth_free(a);
	web_config_free(&wc);
}

static void request_lines(void **state)
{
	(void)state;
	assert_int_equal(http_request_line_ok("GET /metrics HTTP/1.1\r\n", 23), 1);
	assert_int_equal(http_request_line_ok("\r\nGET / HTTP/1.0\r\n", 18), 1);
	assert_int_equal(http_request_line_ok("OPTIONS * HTTP/1.1\n", 19), 1);
	/* MHD answers these itself (405, 400, 505): they are request lines */
	assert_int_equal(http_request_line_ok("BREW /pot HTTP/1.1\r\n", 20), 1);
	assert_int_equal(http_request_line_ok("GET / FOO/1.1\r\n", 15), 1);
	assert_int_equal(http_request_line_ok("GET /metr", 9), -1);
	assert_int_equal(http_request_line_ok("", 0), -1);
	assert_int_equal(http_request_line_ok("GARBAGE\r\n", 9), 0);
	assert_int_equal(http_request_line_ok("GET\r\n", 5), 0);
	assert_int_equal(http_request_line_ok(" / HTTP/1.1\r\n", 13), 0);
	assert_int_equal(http_request_line_ok("\x16\x03\x01\x02\x00 \n", 7), 0);
	assert_int_equal(http_request_line_ok("GET /\x01 HTTP/1.1\r\n", 17), 0);
	assert_int_equal(http_request_line_ok("G(T / HTTP/1.1\r\n", 16), 0);
}

/*
 * Issue 42 item 10: a flood of wrong credentials from one address holds a
 * login from another for one bcrypt at most, not for the whole queue.
 * Counted, not timed: the order in which checks finish.
 */
struct flood_arg {
	struct web_auth *a;
	uint64_t client;
	const char *pass;
	bool ok;
	unsigned rank; /* 1 + the checks that had finished before it */
};

static unsigned flood_done;

static void *flood_one(void *p)
{
	struct flood_arg *f = p;

	f->ok = web_auth_check_from(f->a, f->client, "alice", f->pass);
	f->rank = __atomic_add_fetch(&flood_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void fair_between_addresses(void **state)
{
	enum {
		FLOOD = 24
	};
	struct flood_arg fl[FLOOD], real;
	pthread_t th[FLOOD], rt;
	struct crypt_data cd = { 0 };
	char salt[64], yaml[512], err[256], pw[FLOOD][16];
	struct web_auth_stats st;
	struct web_config wc;
	struct web_auth *a;
	unsigned before;

	(void)state;
	/* cost 10: each bcrypt takes long enough for a queue to form */
	assert_non_null(crypt_gensalt_rn("$2y$", 10, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("secret", salt, &cd, (int)sizeof(cd)));
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n", cd.output);
	assert_int_equal(parse(&wc, yaml, err, sizeof(err)), 0);
	assert_int_equal(web_auth_new(&a, &wc, NULL, 0), 0);
	flood_done = 0;
	for (int i = 0; i < FLOOD; i++) {
		snprintf(pw[i], sizeof(pw[i]), "wrong%d", i); /* each new: no cache hit */
		fl[i] = (struct flood_arg){ .a = a, .client = 1, .pass = pw[i] };
		assert_int_equal(pthread_create(&th[i], NULL, flood_one, &fl[i]), 0);
	}
	/* the whole flood is in: queued or running */
	do {
		sched_yield();
		web_auth_stats(a, &st);
	} while (st.waiting + st.running + __atomic_load_n(&flood_done, __ATOMIC_SEQ_CST) < FLOOD);
	before = __atomic_load_n(&flood_done, __ATOMIC_SEQ_CST);
	real = (struct flood_arg){ .a = a, .client = 2, .pass = "secret" };
	assert_int_equal(pthread_create(&rt, NULL, flood_one, &real), 0);
	pthread_join(rt, NULL);
	for (int i = 0; i < FLOOD; i++)
		pthread_join(th[i], NULL);
	assert_true(real.ok);
	/* it waited for the bcrypts running when it came, and then one of the flood's at most */
	if (real.rank > before + WEB_AUTH_PARALLEL + 2)
		fprintf(stderr, "the login finished %u-th, %u of the flood before it came\n",
			real.rank, before);
	assert_true(real.rank <= before + WEB_AUTH_PARALLEL + 2);
	assert_true(before + WEB_AUTH_PARALLEL + 2 < FLOOD); /* the flood was still queued */
	web_auth_free(a);
	web_config_free(&wc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_config),
		cmocka_unit_test(defaults_and_empty),
		cmocka_unit_test(errors_name_file_position_and_key),
		cmocka_unit_test(load_from_file),
		cmocka_unit_test(basic_auth),
		cmocka_unit_test(bcrypt_cost_bound),
		cmocka_unit_test(fair_between_addresses),
		cmocka_unit_test(request_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
