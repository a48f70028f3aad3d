// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of the mechanism: a uprobe and a uretprobe that do nothing, and
 * the system-call tracepoints dc-agent uses, doing nothing, or (read_clock)
 * nothing but read the clock once each, as any program that times a call
 * must: on a virtual machine whose clock is not the TSC, a clock read costs
 * more than the empty pair.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int empty_exit(void *ctx)
{
	return 0;
}

const volatile bool read_clock = false;
__u64 clock_sink; /* written (almost) never: the read is kept, not a store */

static __always_inline void clock_read(void)
{
	if (read_clock && bpf_ktime_get_ns() == 1)
		clock_sink++;
}

SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	clock_read();
	return 0;
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	clock_read();
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
