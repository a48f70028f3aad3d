// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "perf_probes.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "parallel.h"

struct pmu {
	int type;    /* perf_event_attr.type of the PMU, -errno if none */
	int retbit;  /* the bit of attr.config that makes a return probe */
};

static const char *const pmu_names[] = { [DC_PERF_UPROBE] = "uprobe", [DC_PERF_KPROBE] = "kprobe" };
static struct pmu pmus[2];
static pthread_once_t pmus_once = PTHREAD_ONCE_INIT;

static int read_sysfs(const char *path, const char *fmt, int *out)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return -errno;
	rc = fscanf(f, fmt, out) == 1 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}

/* /sys/bus/event_source/devices/NAME/{type,format/retprobe}, read once. */
static void read_pmus(void)
{
	for (int k = 0; k < 2; k++) {
		char path[128];
		int rc;

		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu_names[k]);
		rc = read_sysfs(path, "%d", &pmus[k].type);
		if (rc)
			pmus[k].type = rc;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/retprobe", pmu_names[k]);
		if (read_sysfs(path, "config:%d", &pmus[k].retbit))
			pmus[k].retbit = 0; /* the kernel's own choice since the PMU came */
	}
}

int dc_perf_kind_supported(enum dc_perf_kind kind)
{
	pthread_once(&pmus_once, read_pmus);
	return pmus[kind].type < 0 ? pmus[kind].type : 0;
}

static int open_event(enum dc_perf_kind kind, const char *target, unsigned long offset, bool retprobe)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int fd;

	pthread_once(&pmus_once, read_pmus);
	if (pmus[kind].type < 0)
		return pmus[kind].type;
	attr.type = pmus[kind].type;
	attr.config = retprobe ? 1ull << pmus[kind].retbit : 0;
	attr.config1 = (__u64)(unsigned long)target; /* uprobe_path or kprobe_func */
	attr.config2 = offset;                        /* probe_offset */
	/*
	 * Opened disabled, and never enabled: a kprobe's or uprobe's BPF
	 * programs run from the probe itself, whatever the event's state (the
	 * probe is registered when the event is opened). An enabled event joins
	 * its CPU's perf context, and each one added there reschedules all the
	 * others: 2,000 enabled events take 0.46 s to open against 0.14 s
	 * disabled, and 4,000 four times that.
	 */
	attr.disabled = 1;
	/* Every process (pid -1): the program runs on any CPU whatever the event's. */
	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int dc_perf_attach_one(enum dc_perf_kind kind, const char *target, unsigned long offset, bool retprobe,
		       int prog_fd, __u64 cookie, bool with_cookie)
{
	int pfd = open_event(kind, target, offset, retprobe), err;

	if (pfd < 0)
		return pfd;
	if (with_cookie) {
		LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
		int link = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &opts);

		err = link < 0 ? -errno : 0;
		close(pfd); /* the link holds the event */
		return err ? err : link;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		err = -errno;
		close(pfd);
		return err;
	}
	return pfd;
}

struct work {
	enum dc_perf_kind kind;
	struct dc_perf_req *reqs;
	bool with_cookie;
};

static void attach_req(void *arg, size_t i)
{
	struct work *w = arg;
	struct dc_perf_req *r = &w->reqs[i];

	r->fd = dc_perf_attach_one(w->kind, r->target, r->offset, r->retprobe, r->prog_fd, r->cookie, w->with_cookie);
}

size_t dc_perf_attach_all(enum dc_perf_kind kind, struct dc_perf_req *reqs, size_t n, bool with_cookie,
			  int nthreads)
{
	struct work w = { kind, reqs, with_cookie };
	size_t attached = 0;

	pthread_once(&pmus_once, read_pmus);
	dc_parallel_for(n, nthreads, attach_req, &w);
	for (size_t i = 0; i < n; i++)
		attached += reqs[i].fd >= 0;
	return attached;
}
