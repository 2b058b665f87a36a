// SPDX-License-Identifier: MIT
/*
 * web_config_parse() on one --web.config.file.  Contract: a refused file
 * says why in one message that names the file; an accepted one is
 * consistent (TLS with a certificate and a key, min_version <= max_version,
 * bcrypt-shaped hashes, every header one of the five) and gives a GnuTLS
 * priority string.
 *
 * Wiring: the harness list in tests/fuzz/meson.build ('webconfig'), corpus
 * tests/fuzz/corpus/webconfig/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: broken promise: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_config wc;
	char err[512] = "", prio[1024];
	/* exactly the input's size: ASan sees a read past it */
	char *text = malloc(size ? size : 1);
	int r;

	if (!text)
		abort();
	memcpy(text, data, size);
	r = web_config_parse(&wc, "fuzz.yml", "/etc/rocewatch", text, size, err, sizeof(err));
	if (r) {
		CHECK(!strncmp(err, "fuzz.yml", 8), "refused (%d) without naming the file: '%s'", r,
		      err);
	} else {
		CHECK(!wc.tls || ((wc.cert || wc.cert_file) && (wc.key || wc.key_file)),
		      "TLS without a certificate or key");
		CHECK(wc.min_version <= wc.max_version, "min_version above max_version");
		for (size_t i = 0; i < wc.n_users; i++)
			CHECK(strlen(wc.users[i].hash) == 60 && !strchr(wc.users[i].name, ':'),
			      "user %zu not checked", i);
		CHECK(wc.n_headers <= WEB_MAX_HEADERS, "%zu headers", wc.n_headers);
		for (size_t i = 0; i < wc.n_headers; i++)
			for (const char *c = wc.headers[i].value; *c; c++)
				CHECK((unsigned char)*c >= 0x20, "a control character in a header");
		CHECK(!wc.rate_interval_ns || wc.rate_burst > 0, "a rate limit refusing all");
		CHECK(web_config_priorities(&wc, prio, sizeof(prio)) == 0, "no priority string");
	}
	web_config_free(&wc);
	free(text);
	return 0;
}
