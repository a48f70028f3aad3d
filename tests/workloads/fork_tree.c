// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fork_tree DIR CHILDREN: forks CHILDREN children; child I writes 1000*(I+1)
 * bytes to DIR/child_I.dat in one write() and exits with status I. Child 0
 * also forks a grandchild that writes 777 bytes to DIR/grandchild.dat.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *dir, const char *name, size_t n)
{
	char path[4096], *buf = malloc(n);
	int fd, ok;

	if (!buf)
		return 1;
	memset(buf, 'z', n);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ok = fd >= 0 && write(fd, buf, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok ? 0 : 1;
}

static void child(const char *dir, int i)
{
	char name[64];

	if (i == 0) {
		pid_t g = fork();

		if (g == 0)
			_exit(write_file(dir, "grandchild.dat", 777));
		waitpid(g, NULL, 0);
	}
	snprintf(name, sizeof(name), "child_%d.dat", i);
	if (write_file(dir, name, 1000 * (i + 1)))
		_exit(100);
	_exit(i);
}

int main(int argc, char **argv)
{
	int n, bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: fork_tree DIR CHILDREN\n");
		return 2;
	}
	n = atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0)
			child(argv[1], i);
	}
	for (int i = 0; i < n; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) >= 100)
			bad++;
	}
	return bad ? 1 : 0;
}
