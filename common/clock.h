/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One clock reading for the agent and the wrapper: nanoseconds of clk
 * (CLOCK_MONOTONIC is bpf_ktime_get_ns's clock). */
#ifndef DC_CLOCK_H
#define DC_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __u64 dc_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#endif
