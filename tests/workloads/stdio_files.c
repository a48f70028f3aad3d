// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_files DIR COUNT: COUNT times fopen DIR/stdio_I.txt for writing,
 * fwrite 4 items of 25 bytes, fclose; then reopens each, fread 100 bytes,
 * fclose. 2*COUNT fopen/fclose, COUNT fwrite and fread of 100 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char path[4096], data[100], back[100];
	long count;

	if (argc != 3) {
		fprintf(stderr, "usage: stdio_files DIR COUNT\n");
		return 2;
	}
	count = atol(argv[2]);
	memset(data, 'y', sizeof(data));
	for (long i = 0; i < count; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/stdio_%ld.txt", argv[1], i);
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
