// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of the mechanism: a uprobe and a uretprobe that do nothing, and
 * the system-call tracepoints dc-agent uses, doing nothing.
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

SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
