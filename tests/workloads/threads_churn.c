// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* threads_churn DIR N: N threads over its life, 64 at a time, each writing
 * 8 bytes once to DIR/churn.dat: N distinct pid/tid pairs. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd;

static void *one(void *arg)
{
	return (void *)(long)(write(fd, "threads\n", 8) == 8);
}

int main(int argc, char **argv)
{
	char path[4096];
	int n = argc > 2 ? atoi(argv[2]) : 50000;
	long ok = 0;

	snprintf(path, sizeof(path), "%s/churn.dat", argc > 1 ? argv[1] : ".");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; i < n; i += 64) {
		pthread_t t[64];
		int k = n - i < 64 ? n - i : 64;

		for (int j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, one, NULL))
				return 1;
		for (int j = 0; j < k; j++) {
			void *r;

			pthread_join(t[j], &r);
			ok += (long)r;
		}
	}
	close(fd);
	return ok == n ? 0 : 1;
}
