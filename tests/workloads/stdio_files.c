// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_files DIR COUNT [fork|kill]: COUNT times fopen DIR/stdio_I.txt for
 * writing, fwrite 4 items of 25 bytes, fclose; then reopens each, fread 100
 * bytes, fclose. 2*COUNT fopen/fclose, COUNT fwrite and fread of 100 bytes.
 * With fork: first a child, forked and never exec'd, makes the same calls
 * on DIR/child_I.txt while the parent makes its own; the parent waits for
 * it. With kill: the process ends by SIGKILL after its calls, no exit
 * handler run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int calls(const char *dir, const char *prefix, long count)
{
	char path[4096], data[100], back[100];

	memset(data, 'y', sizeof(data));
	for (long i = 0; i < count; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s_%ld.txt", dir, prefix, i);
		if (!(f = fopen(path, "w")) || fwrite(data, 25, 4, f) != 4 || fclose(f)) {
			perror(path);
			return 1;
		}
		if (!(f = fopen(path, "r")) || fread(back, 1, sizeof(back), f) != sizeof(back) || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int status = 0;
	pid_t child = 0;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "fork") != 0 && strcmp(argv[3], "kill") != 0)) {
		fprintf(stderr, "usage: stdio_files DIR COUNT [fork|kill]\n");
		return 2;
	}
	if (argc == 4 && argv[3][0] == 'k')
		return calls(argv[1], "stdio", atol(argv[2])) || raise(SIGKILL);
	if (argc == 4 && (child = fork()) == 0)
		return calls(argv[1], "child", atol(argv[2]));
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (calls(argv[1], "stdio", atol(argv[2])))
		return 1;
	if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)))
		return 1;
	return 0;
}
