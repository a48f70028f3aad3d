// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prefix_calls N: calls each prefix_lib function a known number of times
 * (pf_cmp N, pf_loop 2N, pf_joined 3N, pf_side 4N, pf_clobber 5N, pf_frame
 * 6N, pf_store 7N, pf_push 8N, pf_getpid 9N, pf_moved 10N, pf_swap 11N,
 * pf_lost 12N) and prints a checksum of every
 * result: a traced run must print what an untraced one prints.
 * prefix_calls 0 hold: keeps the library mapped until a signal ends it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prefix_lib.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	unsigned long sum = 0;

	if (argc > 2 && strcmp(argv[2], "hold") == 0) {
		printf("%ld\n", pf_push(0));
		fflush(stdout);
		pause();
		return 0;
	}
	for (long i = 1; i <= n; i++) {
		sum = sum * 31 + pf_cmp(i, 2 * i);
		for (int k = 0; k < 2; k++)
			sum = sum * 31 + pf_loop(i + k);
		for (int k = 0; k < 3; k++)
			sum = sum * 31 + pf_joined(i, k);
		for (int k = 0; k < 4; k++)
			sum = sum * 31 + pf_side(i, k);
		for (int k = 0; k < 5; k++)
			sum = sum * 31 + pf_clobber(i, 1000 + k);
		for (int k = 0; k < 6; k++)
			sum = sum * 31 + pf_frame(i + k);
		for (int k = 0; k < 7; k++)
			sum = sum * 31 + pf_store(i + k);
		for (int k = 0; k < 8; k++)
			sum = sum * 31 + pf_push(i + k);
		for (int k = 0; k < 9; k++)
			sum = sum * 31 + (pf_getpid() == getpid());
		for (int k = 0; k < 10; k++)
			sum = sum * 31 + pf_moved(i, 2000 + k);
		for (int k = 0; k < 11; k++)
			sum = sum * 31 + pf_swap(i, 3000 + k);
		for (int k = 0; k < 12; k++)
			sum = sum * 31 + pf_lost(i, 4000 + k);
	}
	printf("%lu\n", sum);
	return 0;
}
