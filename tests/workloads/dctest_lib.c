// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libdctest.so: a library no probe set knows, for `functions: all`. */
#include "dctest_lib.h"

static int hidden_helper(int x)
{
	return x * 3;
}

int dct_alpha(int x)
{
	return hidden_helper(x) + 1;
}

long dct_beta(long a, long b)
{
	return a * b;
}
