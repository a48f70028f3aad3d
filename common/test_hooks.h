/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hooks for the test cluster, compiled in only by test builds (cmake
 * -DDC_TEST_HOOKS=ON, which scripts/test.sh sets): a production build
 * ignores the variables below, so they cannot be switched on by accident.
 *
 * DC_TEST_CLOCK_SKEW_NS: this node's wall clock, as DataCrumbs reads it
 * (the agent's clock reference, libdcpmpi's offset measurement), runs this
 * many nanoseconds ahead (negative: behind), as a real node's clock may.
 */
#ifndef DC_TEST_HOOKS_H
#define DC_TEST_HOOKS_H

#include <stdint.h>
#include <stdlib.h>

static inline int64_t dc_test_clock_skew_ns(void)
{
#ifdef DC_TEST_HOOKS
	const char *s = getenv("DC_TEST_CLOCK_SKEW_NS");

	return s ? strtoll(s, NULL, 10) : 0;
#else
	return 0;
#endif
}

#endif
