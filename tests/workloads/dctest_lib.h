/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DCTEST_LIB_H
#define DCTEST_LIB_H
int dct_alpha(int x);
long dct_beta(long a, long b);
#endif
