// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stress DIR PROCS THREADS SECONDS CHILDREN: PROCS processes of THREADS
 * threads each write 16 bytes at a time, as fast as they can, for SECONDS,
 * each thread to its own file; then CHILDREN short-lived forked children
 * each open, write and close a file. Prints the writes it made, counted by
 * itself: "writes=N children=M".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static double seconds;

struct worker {
	int proc, thread;
	long writes;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *hammer(void *arg)
{
	struct worker *w = arg;
	char path[4096];
	double end = now() + seconds;
	int fd;

	snprintf(path, sizeof(path), "%s/s_%d_%d.dat", dir, w->proc, w->thread);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return NULL;
	/* Check the clock every 64 writes, to keep the loop tight. */
	while (now() < end)
		for (int i = 0; i < 64; i++)
			w->writes += write(fd, "0123456789abcdef", 16) == 16;
	close(fd);
	return NULL;
}

static long run_process(int proc, int threads)
{
	pthread_t tid[threads];
	struct worker w[threads];
	long total = 0;

	for (int t = 0; t < threads; t++) {
		w[t] = (struct worker){ proc, t, 0 };
		pthread_create(&tid[t], NULL, hammer, &w[t]);
	}
	for (int t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		total += w[t].writes;
	}
	return total;
}

int main(int argc, char **argv)
{
	int procs, threads, children, pipefd[2];
	long total = 0, n;

	if (argc != 6) {
		fprintf(stderr, "usage: stress DIR PROCS THREADS SECONDS CHILDREN\n");
		return 2;
	}
	dir = argv[1];
	procs = atoi(argv[2]);
	threads = atoi(argv[3]);
	seconds = atof(argv[4]);
	children = atoi(argv[5]);
	if (pipe(pipefd))
		return 1;
	for (int p = 0; p < procs; p++) {
		if (fork() == 0) {
			n = run_process(p, threads);
			if (write(pipefd[1], &n, sizeof(n)) != sizeof(n))
				_exit(1);
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		if (read(pipefd[0], &n, sizeof(n)) != sizeof(n))
			return 1;
		total += n;
	}
	while (wait(NULL) > 0)
		;
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();

		if (pid == 0) {
			char path[4096];
			int fd;

			snprintf(path, sizeof(path), "%s/c_%d.dat", dir, c);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			_exit(fd < 0 || write(fd, "child\n", 6) != 6 || close(fd));
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		total++;
	}
	printf("writes=%ld children=%d\n", total, children);
	return 0;
}
