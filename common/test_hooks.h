/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hooks for the test cluster, compiled in only by test builds (cmake
 * -DDC_TEST_HOOKS=ON, which scripts/test.sh sets): a production build
 * ignores the variables below, so they cannot be switched on by accident.
 *
 * DC_TEST_CLOCK_SKEW_NS: this node's wall clock, as DataCrumbs reads it
 * (the agent's clock reference, libdcpmpi's offset measurement), runs this
 * many nanoseconds ahead (negative: behind), as a real node's clock may.
 *
 * DC_TEST_FEATURES_OFF: a comma-separated list of kernel features
 * (agent/kernel_features.h: uprobe_multi, cookie, task_storage, bpf_loop, tp_btf,
 * fentry...) the agent takes as missing, so that this kernel runs the
 * fallback an older kernel needs.
 *
 * DC_TEST_RING_SCATTER=1: the BPF programs put each record into one of the
 * agent's ring buffers at random, not their CPU's, so that one thread's
 * records reach the agent in any order, as they do when threads move
 * between CPUs, and only the agent's time-ordered merge puts them right.
 *
 * DC_TEST_SLOW_PONGS=N: libdcpmpi's rank 0 holds each of its first N
 * answers to a rank's clock pings for 3 ms, as a busy node delays them.
 *
 * DC_TEST_PF_SHARED_SEQ=1: dc-merge -f perfetto writes every thread's calls
 * on the file's own packet sequence, each packet naming its track, as it
 * does for the threads past the sequence ids a file has
 * (merge/perfetto_int.h).
 *
 * DC_TEST_SCOPE_PROCS=N: where uprobes go on the job's processes only, the
 * agent gives links of their own to at most N processes at once (below
 * DC_SCOPE_PROCS_MAX, agent/uprobe_scope.h), so that a test reaches the
 * bound past which the uprobes go on every process.
 *
 * DC_TEST_PF_HELPER=1: dc-merge -f perfetto deflates on a second thread
 * on a machine of two cores too, where it otherwise uses one
 * (merge/pf_deflate.c).
 */
#ifndef DC_TEST_HOOKS_H
#define DC_TEST_HOOKS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int64_t dc_test_clock_skew_ns(void)
{
#ifdef DC_TEST_HOOKS
	const char *s = getenv("DC_TEST_CLOCK_SKEW_NS");

	return s ? strtoll(s, NULL, 10) : 0;
#else
	return 0;
#endif
}

static inline int dc_test_feature_off(const char *name)
{
#ifdef DC_TEST_HOOKS
	const char *s = getenv("DC_TEST_FEATURES_OFF");
	size_t n = strlen(name);

	while (s && *s) {
		size_t len = strcspn(s, ",");

		if (len == n && strncmp(s, name, n) == 0)
			return 1;
		s += len + (s[len] == ',');
	}
#endif
	(void)name;
	return 0;
}

/* A test switch: the variable name is set to 1. */
static inline int dc_test_switch(const char *name)
{
#ifdef DC_TEST_HOOKS
	const char *s = getenv(name);

	return s && strcmp(s, "1") == 0;
#else
	(void)name;
	return 0;
#endif
}

/* A test count: the variable name's number, else 0. */
static inline long dc_test_count(const char *name)
{
#ifdef DC_TEST_HOOKS
	const char *s = getenv(name);

	return s ? strtol(s, NULL, 10) : 0;
#else
	(void)name;
	return 0;
#endif
}

static inline int dc_test_ring_scatter(void)
{
	return dc_test_switch("DC_TEST_RING_SCATTER");
}

static inline int dc_test_pf_shared_seq(void)
{
	return dc_test_switch("DC_TEST_PF_SHARED_SEQ");
}

static inline int dc_test_pf_helper(void)
{
	return dc_test_switch("DC_TEST_PF_HELPER");
}

#endif
