// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_files DIR COUNT: COUNT times fopen DIR/stdio_I.txt for writing,
 * fwrite 4 items of 25 bytes, fclose; then reopens each, fread 100 bytes,
 * fclose. 2*COUNT fopen/fclose, COUNT fwrite and fread of 100 bytes.
 * Then one fprintf of "done COUNT\n" to stdout and one fwrite of 5 bytes
 * to stderr: streams no fopen named, named by their descriptors' files.
 * Last, DIR/lines.txt (fopen, fprintf "12 34\nline two\n", fclose) is
 * read back: freopen over stdin, fscanf of two numbers, getline of the
 * rest of the line and the next (1 and 9 bytes), rewind, fgetpos,
 * fsetpos, fclose.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_lines(const char *dir)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	int a, b;
	fpos_t pos;
	FILE *f;

	snprintf(path, sizeof(path), "%s/lines.txt", dir);
	if (!(f = fopen(path, "w")) || fprintf(f, "12 34\nline two\n") != 15 || fclose(f)) {
		perror(path);
		return 1;
	}
	if (!(f = freopen(path, "r", stdin)) || fscanf(f, "%d %d", &a, &b) != 2 || getline(&line, &cap, f) != 1 ||
	    getline(&line, &cap, f) != 9) {
		perror(path);
		return 1;
	}
	rewind(f);
	if (fgetpos(f, &pos) || fsetpos(f, &pos) || fclose(f)) {
		perror(path);
		return 1;
	}
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096], data[100], back[100];
	long count;

	if (argc != 3) {
		fprintf(stderr, "usage: stdio_files DIR COUNT\n");
		return 2;
	}
	count = atol(argv[2]);
	memset(data, 'y', sizeof(data));
	for (long i = 0; i < count; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/stdio_%ld.txt", argv[1], i);
		if (!(f = fopen(path, "w")) || fwrite(data, 25, 4, f) != 4 || fclose(f)) {
			perror(path);
			return 1;
		}
		if (!(f = fopen(path, "r")) || fread(back, 1, sizeof(back), f) != sizeof(back) || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	fprintf(stdout, "done %ld\n", count);
	fwrite("done\n", 1, 5, stderr);
	return read_lines(argv[1]);
}
