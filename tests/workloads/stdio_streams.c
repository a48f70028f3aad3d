// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_streams DIR: streams no fopen of the program's names. One fprintf
 * of "done\n" to stdout and one fwrite of 5 bytes to stderr; then
 * DIR/lines.txt (fopen, fprintf "12 34\nline two\n", fclose) read back:
 * freopen over stdin, fscanf of two numbers, getline of the rest of the
 * line and the next (1 and 9 bytes), rewind, fgetpos, fsetpos, fclose.
 */
#include <stdio.h>
#include <stdlib.h>

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
	if (argc != 2) {
		fprintf(stderr, "usage: stdio_streams DIR\n");
		return 2;
	}
	fprintf(stdout, "done\n");
	fwrite("done\n", 1, 5, stderr);
	return read_lines(argv[1]);
}
