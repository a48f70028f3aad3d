// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "topology.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static struct {
	pthread_t thread;
	bool started;
	int rc;
	char text[256];
} prefetched;

static int read_summary(char *out, size_t len)
{
	hwloc_topology_t t;
	hwloc_obj_t root;

	if (hwloc_topology_init(&t))
		return -1;
	if (hwloc_topology_load(t)) {
		hwloc_topology_destroy(t);
		return -1;
	}
	root = hwloc_get_root_obj(t);
	snprintf(out, len, "packages=%d numa=%d cores=%d pus=%d memory_mb=%llu",
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU),
		 (unsigned long long)(root->total_memory >> 20));
	hwloc_topology_destroy(t);
	return 0;
}

/*
 * The node's packages, cores and memory are hwloc's core discovery; its
 * plugins (PCI, OpenCL, OpenGL, XML and, on GPU nodes, CUDA and NVML) are
 * loaded at the first topology of a process and cost 10 ms here, a GPU
 * runtime far more, for nothing the summary says. A plugin path that is no
 * directory loads none. Set before the thread that reads the topology
 * exists, and kept: the agent runs no program after it (the traced command
 * is forked before, with its own copy of the environment). A path the
 * admin set is left alone.
 */
static void without_plugins(void)
{
	setenv("HWLOC_PLUGINS_PATH", "/dev/null", 0);
}

static void *prefetch(void *arg)
{
	(void)arg;
	prefetched.rc = read_summary(prefetched.text, sizeof(prefetched.text));
	return NULL;
}

void dc_topology_prefetch(void)
{
	if (prefetched.started)
		return;
	without_plugins();
	prefetched.started = pthread_create(&prefetched.thread, NULL, prefetch, NULL) == 0;
}

void dc_topology_wait(void)
{
	if (prefetched.started)
		pthread_join(prefetched.thread, NULL);
	prefetched.started = false;
}

int dc_topology_summary(char *out, size_t len)
{
	if (!prefetched.started && !prefetched.text[0]) {
		without_plugins();
		return read_summary(out, len);
	}
	dc_topology_wait();
	if (prefetched.rc == 0)
		snprintf(out, len, "%s", prefetched.text);
	return prefetched.rc;
}
