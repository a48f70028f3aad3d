// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpi_stdio DIR N: STDIO in each rank, between MPI_Init and MPI_Finalize,
 * with known numbers. Rank R, on DIR/rank_R.txt: fopen "w"; N fwrites of
 * 16 bytes; an fprintf (12 bytes), an fputs (6), an fputc and a putc;
 * fclose. Then fopen "r": an fgets (the 16 bytes of the first line), an
 * fread of 32 bytes, a getc, fseek, ftell, rewind, fclose. To stdout: a
 * printf (8 bytes), a puts (6 with its newline), a putchar. Before
 * MPI_Init, one fopen and fclose of DIR/early_R.txt, not recorded. The
 * C library's calls go through pointers, so that the compiler keeps each
 * as written.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *(*volatile fopen_)(const char *, const char *) = fopen;
static size_t (*volatile fwrite_)(const void *, size_t, size_t, FILE *) = fwrite;
static size_t (*volatile fread_)(void *, size_t, size_t, FILE *) = fread;
static int (*volatile fprintf_)(FILE *, const char *, ...) = fprintf;
static int (*volatile printf_)(const char *, ...) = printf;
static int (*volatile fputs_)(const char *, FILE *) = fputs;
static int (*volatile puts_)(const char *) = puts;
static int (*volatile fputc_)(int, FILE *) = fputc;
static int (*volatile putc_)(int, FILE *) = putc;
static int (*volatile putchar_)(int) = putchar;
static int (*volatile getc_)(FILE *) = getc;
static char *(*volatile fgets_)(char *, int, FILE *) = fgets;

static int fail(const char *what)
{
	perror(what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

int main(int argc, char **argv)
{
	char path[4096], buf[64];
	int rank, n = argc > 2 ? atoi(argv[2]) : 4;
	FILE *f;

	snprintf(path, sizeof(path), "%s/early_%d.txt", argc > 1 ? argv[1] : ".", getpid() % 100000);
	if (!(f = fopen_(path, "w")) || fclose(f))
		return 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(path, sizeof(path), "%s/rank_%d.txt", argc > 1 ? argv[1] : ".", rank);
	if (!(f = fopen_(path, "w")))
		return fail(path);
	for (int i = 0; i < n; i++)
		if (fwrite_("0123456789abcde\n", 1, 16, f) != 16)
			return fail("fwrite");
	if (fprintf_(f, "rank %6d\n", rank) != 12 || fputs_("fputs\n", f) < 0 || fputc_('x', f) != 'x' ||
	    putc_('\n', f) != '\n' || fclose(f))
		return fail(path);
	if (!(f = fopen_(path, "r")) || !fgets_(buf, sizeof(buf), f) || strlen(buf) != 16 ||
	    fread_(buf, 1, 32, f) != 32 || getc_(f) == EOF || fseek(f, 0, SEEK_END) || ftell(f) != 16L * n + 20)
		return fail(path);
	rewind(f);
	if (fclose(f) || printf_("rank %2d\n", rank) != 8 || puts_("puts.") < 0 || putchar_('\n') != '\n')
		return fail("stdout");
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
