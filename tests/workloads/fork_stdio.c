// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fork_stdio DIR N: the process forks a child, which forks a grandchild,
 * none of them exec'ing; each writes N 16-byte records through a FILE
 * stream to DIR/parent.txt, DIR/child.txt and DIR/grandchild.txt (fopen,
 * N fwrite, fclose), the children right after their fork. Exits 0 when
 * every write succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *dir, const char *who, long n)
{
	char path[4096];
	const char rec[16] = "0123456789abcde";
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s.txt", dir, who);
	if (!(f = fopen(path, "w")))
		return 1;
	ok = 1;
	for (long i = 0; i < n; i++)
		ok &= fwrite(rec, sizeof(rec), 1, f) == 1;
	return fclose(f) == 0 && ok ? 0 : 1;
}

/* Forks: the child writes as who (and, if more, forks on), and exits. */
static int child(const char *dir, long n, const char *const *who)
{
	int status = 1;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		int rc = write_file(dir, who[0], n);

		if (who[1])
			rc |= child(dir, n, who + 1);
		_exit(rc);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	static const char *const kids[] = { "child", "grandchild", NULL };
	long n;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: fork_stdio DIR N\n");
		return 2;
	}
	return child(argv[1], n, kids) | write_file(argv[1], "parent", n);
}
