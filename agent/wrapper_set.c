// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wrapper sets (wrapper: libdcpmpi): MPI-IO and HDF5 calls that
 * libdcpmpi.so records in each rank and hands over in a shared ring
 * (rank_ring.h). Nothing is attached in the kernel: the functions go into
 * the table, and the ranks are told which to record when they register
 * (rank_rings.c).
 */
#include "mechanisms.h"

#include <stdio.h>
#include <string.h>

#include "wrapper_funcs.h"

/* The wrapper counts HDF5's dataset bytes from the call's dataspaces. */
static __u32 function_flags(int f)
{
	return DC_FUNC_WRAPPER | (dc_wrapper_shapes[f] == DC_HDF5_SHAPE_IO ? DC_FUNC_BYTES_DATASPACE : 0);
}

static int add(struct dc_probes *p, const struct dc_probe_set *set, int f)
{
	long id;

	if (dc_funcs_has(&p->wrapper_funcs, f))
		return 0; /* named twice, or by two sets: recorded once */
	id = dc_probes_add_function(p, dc_wrapper_names[f], set->category, function_flags(f), 0);
	if (id < 0)
		return -1;
	p->wrapper_ids[f] = id;
	dc_funcs_add(&p->wrapper_funcs, f);
	return 1;
}

int dc_wrapper_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	int n = 0, rc;

	/* all: every call of the set's level (its category: mpiio or hdf5). */
	for (int f = 0; set->all_functions && f < DC_WRAPPER_NFUNCS; f++) {
		if (strcmp(dc_wrapper_level(f), set->category))
			continue;
		if ((rc = add(p, set, f)) < 0)
			return -1;
		n += rc;
	}
	for (size_t i = 0; i < set->nfns; i++) {
		if ((rc = add(p, set, dc_wrapper_func_id(set->fns[i].name))) < 0)
			return -1;
		n += rc;
	}
	if (p->verbose)
		fprintf(stderr, "dc-agent: probe set '%s': %d calls recorded by " DC_WRAPPER_NAME
				" in each rank that preloads it\n",
			set->name, n);
	return n;
}

bool dc_wrapper_serves(const struct dc_probes *p, const char *name)
{
	int f;

	if ((f = dc_wrapper_func_id(name)) < 0)
		return false;
	return dc_funcs_has(&p->wrapper_funcs, f);
}

struct dc_funcs dc_probes_wrapper(const struct dc_probes *p, __u32 *ids, size_t nids)
{
	for (size_t f = 0; f < nids && f < DC_RING_MAX_FUNCS; f++)
		ids[f] = p->wrapper_ids[f];
	return p->wrapper_funcs;
}
