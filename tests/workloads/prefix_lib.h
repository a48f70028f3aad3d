/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* prefix_lib.S: functions whose prologues test uprobe site selection. */
#ifndef PREFIX_LIB_H
#define PREFIX_LIB_H

long pf_cmp(long a, long b);      /* a + b */
long pf_loop(long n);             /* n + (n-1) + ... + 1, n > 0 */
long pf_joined(long a, long b);   /* a + b */
long pf_side(long a, long b);     /* 100 + b */
long pf_clobber(long a, long b);  /* a + 7 */
long pf_frame(long a);            /* a + 1 */
long pf_store(long a);            /* a + 2 */
long pf_push(long a);             /* a + 3 */
long pf_getpid(void);
long pf_moved(long a, long b);    /* a + b + 9 */
long pf_swap(long a, long b);     /* b + 2a */
long pf_lost(long a, long b);     /* a + b + 1 */

#endif
