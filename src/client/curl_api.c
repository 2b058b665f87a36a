// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "curl_api.h"
#include "util.h"

static struct curl_api api;
static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* One row a function: its name in the library, where its address goes. */
#define SYM(name, member)                               \
	{                                               \
		name, offsetof(struct curl_api, member) \
	}
static const struct {
	const char *name;
	size_t off;
} syms[] = {
	SYM("curl_global_init", global_init),
	SYM("curl_global_cleanup", global_cleanup),
	SYM("curl_easy_init", easy_init),
	SYM("curl_easy_setopt", easy_setopt),
	SYM("curl_easy_getinfo", easy_getinfo),
	SYM("curl_easy_cleanup", easy_cleanup),
	SYM("curl_easy_strerror", easy_strerror),
	SYM("curl_slist_append", slist_append),
	SYM("curl_slist_free_all", slist_free_all),
	SYM("curl_multi_init", multi_init),
	SYM("curl_multi_setopt", multi_setopt),
	SYM("curl_multi_add_handle", multi_add_handle),
	SYM("curl_multi_remove_handle", multi_remove_handle),
	SYM("curl_multi_perform", multi_perform),
	SYM("curl_multi_info_read", multi_info_read),
	SYM("curl_multi_poll", multi_poll),
	SYM("curl_multi_cleanup", multi_cleanup),
};

static void load(void)
{
	void *h = dlopen(CURL_API_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(load_err, sizeof(load_err), "outbound HTTP needs %s: %s", CURL_API_SONAME,
			 e ? e : "cannot be opened");
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(load_err, sizeof(load_err), "%s has no %s: too old a libcurl",
				 CURL_API_SONAME, syms[i].name);
			return;
		}
		memcpy((char *)&api + syms[i].off, &f, sizeof(f));
	}
}

const struct curl_api *curl_api(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (!load_err[0])
		return &api;
	if (errlen)
		strlcpy0(err, load_err, errlen);
	return NULL;
}
