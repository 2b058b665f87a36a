// SPDX-License-Identifier: MIT
/* The explicit table of collectors, in the order they run each poll. */
#include <string.h>

#include "collector.h"

extern const struct collector link_collector;

const struct collector *const collectors[] = {
	&link_collector,
};

const int n_collectors = sizeof(collectors) / sizeof(collectors[0]);

int collector_index(const char *name)
{
	for (int i = 0; i < n_collectors; i++)
		if (!strcmp(collectors[i]->name, name))
			return i;
	return -1;
}
