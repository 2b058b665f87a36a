// SPDX-License-Identifier: MIT
/*
 * A corpus replay main() for fuzz_webconfig.c and fuzz_http.c until they
 * join the harness list of tests/fuzz/meson.build (whose replay driver then
 * replaces this file): every regular file of the directory arguments, in
 * name order, copied to a heap buffer of exactly its size, fed once.  No
 * input is a failure: an empty corpus would pass without testing anything.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	unsigned long inputs = 0;

	for (int i = 1; i < argc; i++) {
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, by_name);

		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			struct stat st;
			uint8_t *buf;
			FILE *f;

			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			free(names[k]);
			if (stat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			buf = malloc(st.st_size ? (size_t)st.st_size : 1);
			f = fopen(path, "rb");
			if (!buf || !f ||
			    fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
				fprintf(stderr, "%s: cannot read\n", path);
				return 1;
			}
			fclose(f);
			LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
			free(buf);
			inputs++;
		}
		free(names);
	}
	printf("replayed %lu inputs\n", inputs);
	return inputs ? 0 : 1;
}
