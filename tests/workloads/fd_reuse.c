// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fd_reuse DIR: numbers that come back after a close. A file is opened,
 * written and closed; a pipe then gets the file's fd number and carries 4
 * bytes. A stream on the file is written and closed; fdopen then makes a
 * stream of the pipe, at the address the file's stream had, and writes 4
 * bytes more. Exits 3 when a number was not reused, which would leave the
 * test nothing to check.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], buf[4];
	volatile uintptr_t old; /* stored before fclose, whatever the optimizer does */
	int fd, p[2];
	FILE *f, *g;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/fd_reuse.dat", argv[1]);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "file", 4) != 4 || close(fd) || pipe(p))
		return 1;
	if (p[0] != fd)
		return 3;
	if (write(p[1], "pipe", 4) != 4 || read(p[0], buf, 4) != 4)
		return 1;

	/* The address is kept as a number: it is compared, never followed. */
	if (!(f = fopen(path, "a")))
		return 1;
	old = (uintptr_t)f;
	if (fputs("more", f) == EOF || fclose(f) || !(g = fdopen(p[1], "w")))
		return 1;
	if ((uintptr_t)g != old)
		return 3;
	if (fputs("pipe", g) == EOF || fclose(g) || read(p[0], buf, 4) != 4 || close(p[0]))
		return 1;
	return 0;
}
