// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* custom_lib A B: calls dct_alpha A times and dct_beta B times. */
#include <stdio.h>
#include <stdlib.h>

#include "dctest_lib.h"

int main(int argc, char **argv)
{
	long sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: custom_lib A B\n");
		return 2;
	}
	for (int i = 0; i < atoi(argv[1]); i++)
		sum += dct_alpha(i);
	for (int i = 0; i < atoi(argv[2]); i++)
		sum += dct_beta(i, 2);
	return sum < 0;
}
