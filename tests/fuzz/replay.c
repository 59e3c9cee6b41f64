/*
 * replay.c - main() for the harnesses without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once on every file named on the command line
 * (directories: every file in them), as the suite's regression check over
 * tests/fuzz/corpus/.  Exit 0 when every input ran; a crash is the failure.
 */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: cannot open '%s'\n", path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int runs = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;

		if (stat(argv[i], &st) == 0 && !S_ISDIR(st.st_mode)) {
			failed |= run_file(argv[i]);
			runs++;
			continue;
		}
		if (!(d = opendir(argv[i]))) {
			fprintf(stderr, "replay: cannot open '%s'\n", argv[i]);
			return 2;
		}
		while ((e = readdir(d))) {
			char path[4096], **nn;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (!(nn = realloc(names, (n + 1) * sizeof(*nn))))
				break;
			names = nn;
			names[n++] = strdup(path);
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp_str); /* same order every run */
		for (size_t k = 0; k < n; k++) {
			failed |= run_file(names[k]);
			runs++;
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %d inputs\n", runs);
	return failed || !runs ? 1 : 0;
}
