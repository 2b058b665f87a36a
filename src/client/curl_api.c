// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "curl_api.h"
#include "dl_table.h"
#include "util.h"

static struct curl_api api;
static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* One row a function: its name in the library, where its address goes. */
#define SYM(name, member)                               \
	{                                               \
		name, offsetof(struct curl_api, member) \
	}
static const struct dl_sym syms[] = {
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
	dl_table_open(CURL_API_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api, "outbound HTTP",
		      "libcurl", load_err, sizeof(load_err));
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
