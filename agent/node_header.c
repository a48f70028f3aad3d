// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a node file says of its node and agent, read when the file is made. */
#include "node_header.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "test_hooks.h"
#include "topology.h"

static void read_boot_id(char *out, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	out[0] = 0;
	if (!f)
		return;
	if (fgets(out, len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* Monotonic and wall clocks read as close together as this machine allows. */
static void clock_refs(__u64 *mono, __u64 *real)
{
	__u64 best = ~0ull;

	for (int i = 0; i < 5; i++) {
		__u64 m0 = dc_now_ns(CLOCK_MONOTONIC), r = dc_now_ns(CLOCK_REALTIME), m1 = dc_now_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			*mono = m0 + (m1 - m0) / 2;
			*real = r + dc_test_clock_skew_ns();
		}
	}
}

void dc_node_header_fill(struct dc_node_header *h, const char *job, int mode, __u32 interval_ms, uid_t uid, int ncpus)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->job_id, sizeof(h->job_id), "%s", job);
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	read_boot_id(h->boot_id, sizeof(h->boot_id));
	clock_refs(&h->monotonic_ref_ns, &h->realtime_ref_ns);
	h->agent_pid = getpid();
	h->mode = mode;
	h->interval_ms = interval_ms;
	h->uid = uid;
	h->ncpus = ncpus;
	if (dc_topology_summary(h->topology, sizeof(h->topology)))
		snprintf(h->topology, sizeof(h->topology), "unknown");
	snprintf(h->agent_version, sizeof(h->agent_version), "%s", DC_VERSION);
}
