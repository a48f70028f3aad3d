// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_streams DIR [popen]: streams no fopen of the program's names. One
 * fprintf of "done\n" to stdout and one fwrite of 5 bytes to stderr; then
 * DIR/lines.txt (fopen, fprintf "12 34\nline two\n", fclose) read back:
 * freopen over stdin, fscanf of two numbers, getline of the rest of the
 * line and the next (1 and 9 bytes), rewind, getchar (a byte), fgetpos,
 * fsetpos, fclose. Then to stdout: printf (9 bytes), puts (6 with its
 * newline), vprintf (2), putchar (1); DIR/text.txt written with fputs (6
 * bytes), fputc and putc, read back with fgets (6 bytes), fgetc, getc,
 * fgets at the end (none) and fgetc at the end (none). With popen, last,
 * five times: popen of a pipe to cat, an fputs of 6 bytes to it, pclose.
 * The C library's calls go through pointers, so that the compiler keeps
 * each as it is (it makes printf("...\n") a puts, getchar an inline getc).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int (*volatile getchar_)(void) = getchar;
static int (*volatile putchar_)(int) = putchar;
static int (*volatile fgetc_)(FILE *) = fgetc;
static int (*volatile getc_)(FILE *) = getc;
static int (*volatile fputc_)(int, FILE *) = fputc;
static int (*volatile putc_)(int, FILE *) = putc;
static int (*volatile printf_)(const char *, ...) = printf;
static int (*volatile puts_)(const char *) = puts;
static int (*volatile vprintf_)(const char *, va_list) = vprintf;
static int (*volatile fputs_)(const char *, FILE *) = fputs;
static char *(*volatile fgets_)(char *, int, FILE *) = fgets;

static int say(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf_(fmt, ap);
	va_end(ap);
	return n;
}

/* fputs, fputc, putc; fgets, fgetc, getc, and both at the end. */
static int text_calls(const char *dir)
{
	char path[4096], line[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/text.txt", dir);
	if (!(f = fopen(path, "w")) || fputs_("alpha\n", f) < 0 || fputc_('x', f) != 'x' || putc_('\n', f) != '\n' ||
	    fclose(f)) {
		perror(path);
		return 1;
	}
	if (!(f = fopen(path, "r")) || !fgets_(line, sizeof(line), f) || fgetc_(f) != 'x' || getc_(f) != '\n' ||
	    fgets_(line, sizeof(line), f) || fgetc_(f) != EOF || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

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
	if (getchar_() != '1' || fgetpos(f, &pos) || fsetpos(f, &pos) || fclose(f)) {
		perror(path);
		return 1;
	}
	free(line);
	return 0;
}

/* Five streams popen made, each of a pipe to cat: fputs of 6 bytes,
 * pclose. Each command goes on to run cat eight times more, so that
 * pclose, which waits for it, ends after many files opened and closed in
 * the meantime (the pipe's struct file taken again and again). */
static int piped(void)
{
	for (int i = 0; i < 5; i++) {
		FILE *p = popen("cat >/dev/null; for i in 1 2 3 4 5 6 7 8; do cat </dev/null; done", "w");

		if (!p || fputs_("piped\n", p) < 0 || pclose(p) != 0) {
			perror("popen");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 && (argc != 3 || strcmp(argv[2], "popen") != 0)) {
		fprintf(stderr, "usage: stdio_streams DIR [popen]\n");
		return 2;
	}
	fprintf(stdout, "done\n");
	fwrite("done\n", 1, 5, stderr);
	if (read_lines(argv[1]))
		return 1;
	if (printf_("%s %d\n", "count", 42) != 9 || puts_("hello") < 0 || say("%d\n", 7) != 2 || putchar_('\n') != '\n')
		return 1;
	fflush(stdout);
	return text_calls(argv[1]) || (argc > 2 && piped());
}
