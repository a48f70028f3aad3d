// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A probe set, attached by the mechanism of its kind (mechanisms.h). */
#include "mechanisms.h"

#include <stdio.h>

int dc_probes_attach(struct dc_probes *p, const struct dc_probe_set *set)
{
	int n;

	switch (set->kind) {
	case DC_SET_SYSCALLS:
		n = dc_syscalls_attach(p, set);
		break;
	case DC_SET_KERNEL:
		n = dc_tracepoints_attach(p, set);
		break;
	case DC_SET_KFUNCS:
		n = dc_kfuncs_attach(p, set);
		break;
	case DC_SET_WRAPPER:
		n = dc_wrapper_attach(p, set);
		break;
	default:
		n = dc_uprobes_attach(p, set);
		break;
	}
	if (p->verbose && n >= 0)
		fprintf(stderr, "dc-agent: probe set '%s' (%s): %d probes attached\n", set->name, set->file, n);
	return n;
}

int dc_probes_attach_file(struct dc_probes *p, const struct dc_probe_set *set, const char *path, const char *copy)
{
	return set->kind == DC_SET_UPROBES ? dc_uprobes_attach_file(p, set, path, copy) : 0;
}
