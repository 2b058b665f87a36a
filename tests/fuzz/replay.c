// SPDX-License-Identifier: MIT
/*
 * The replay driver: a main() for a harness built without libFuzzer.  Each
 * argument is a corpus directory (every regular file in it, in name order)
 * or one input file; each input is copied into a heap buffer of exactly its
 * size, as libFuzzer does, and fed to LLVMFuzzerTestOneInput() once.  Under
 * the normal ASan+UBSan build this makes `make test` replay every checked-in
 * input with the sanitizers on.  No input at all is a failure: a replay of
 * an empty corpus would pass without testing anything.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	unsigned long inputs = 0;
	int failed = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct dirent **names;
		struct stat st;
		int n;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= replay_file(argv[i]);
			inputs++;
			continue;
		}
		n = scandir(argv[i], &names, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
				failed |= replay_file(path);
				inputs++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %lu inputs\n", inputs);
	if (!inputs) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	return failed ? 1 : 0;
}
