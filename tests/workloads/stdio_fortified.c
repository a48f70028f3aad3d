// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_fortified DIR: the calls a program built with _FORTIFY_SOURCE
 * makes where its source says fprintf, printf, vfprintf, vprintf, fgets
 * and fread (this file is built so; Ubuntu's compilers and most
 * distributions' packages do it by default). On DIR/fort_P.txt (P: the
 * rank, or 0): __fprintf_chk "n=7\n" (4 bytes), __vfprintf_chk "v=8\n"
 * (4); read back: __fgets_chk (4 bytes: the first line) and __fread_chk
 * (4 asked and moved: the second). To stdout: __printf_chk "p=9\n" (4),
 * and vprintf "q=10\n" (5), which an optimized fortified build makes an
 * __vfprintf_chk on stdout. Built with DC_WITH_MPI, between MPI_Init and
 * MPI_Finalize in each rank.
 * The lengths are read from memory, so that the compiler cannot prove
 * them safe and call the plain forms.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef DC_WITH_MPI
#include <mpi.h>
#endif

static int say(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = f ? vfprintf(f, fmt, ap) : vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int main(int argc, char **argv)
{
	char path[4096], line[16], rest[16];
	int rank = 0;
	volatile int small = 4; /* which the compiler cannot know */
	FILE *f;

#ifdef DC_WITH_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
	snprintf(path, sizeof(path), "%s/fort_%d.txt", argc > 1 ? argv[1] : ".", rank);
	if (!(f = fopen(path, "w")) || fprintf(f, "n=%d\n", 7) != 4 || say(f, "v=%d\n", 8) != 4 || fclose(f)) {
		perror(path);
		return 1;
	}
	if (!(f = fopen(path, "r")) || !fgets(line, small + 1, f) || fread(rest, 1, (size_t)small, f) != 4 ||
	    fclose(f)) {
		perror(path);
		return 1;
	}
	if (printf("p=%d\n", 9) != 4 || say(NULL, "q=%d\n", 10) != 5 || fflush(stdout)) {
		perror("stdout");
		return 1;
	}
#ifdef DC_WITH_MPI
	MPI_Finalize();
#endif
	return 0;
}
