// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "caps.h"

#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int dc_check_capabilities(char *msg, size_t len)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };
	bool bpf, perfmon;

	if (syscall(SYS_capget, &h, d)) {
		snprintf(msg, len, "cannot read this process's capabilities");
		return -1;
	}
	/* CAP_SYS_ADMIN implies both on kernels before and after their split. */
	if (has(d, CAP_SYS_ADMIN))
		return 0;
	bpf = has(d, CAP_BPF);
	perfmon = has(d, CAP_PERFMON);
	if (bpf && perfmon)
		return 0;
	snprintf(msg, len,
		 "missing capabilit%s %s%s%s: run as root, or grant them with "
		 "'setcap cap_bpf,cap_perfmon+ep dc-agent'",
		 bpf || perfmon ? "y" : "ies", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return -1;
}
