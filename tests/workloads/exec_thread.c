// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * exec_thread FILE N: a thread other than the main one execs this program
 * again, which then writes N 16-byte records to FILE through a FILE stream
 * (fopen, N fwrite, fclose). An exec by a thread gives the process's pid
 * to that thread: the kernel's task for the pid is another one after it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char **args;

static void *exec_again(void *arg)
{
	(void)arg;
	execv("/proc/self/exe", args);
	perror("execv");
	exit(1);
}

int main(int argc, char **argv)
{
	const char rec[16] = "0123456789abcde";
	char *again[] = { argv[0], "--written", argv[1], argv[2], NULL };
	pthread_t t;
	FILE *f;
	long n;
	int ok = 1;

	if (argc == 4 && strcmp(argv[1], "--written") == 0) {
		n = atol(argv[3]);
		if (!(f = fopen(argv[2], "w")))
			return 1;
		for (long i = 0; i < n; i++)
			ok &= fwrite(rec, sizeof(rec), 1, f) == 1;
		return fclose(f) == 0 && ok ? 0 : 1;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: exec_thread FILE N\n");
		return 2;
	}
	args = again;
	if (pthread_create(&t, NULL, exec_again, NULL))
		return 1;
	pthread_join(t, NULL); /* never returns: the exec ends this thread */
	return 1;
}
