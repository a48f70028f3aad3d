// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "topology.h"

#include <hwloc.h>
#include <stdio.h>

int dc_topology_summary(char *out, size_t len)
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
