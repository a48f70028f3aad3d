// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "preload_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "wrapper_funcs.h"

bool dc_preload_wanted(const struct dc_probe_set *sets, int nsets)
{
	for (int i = 0; i < nsets; i++)
		if (sets[i].kind == DC_SET_WRAPPER && sets[i].category &&
		    (strcmp(sets[i].category, DC_WRAPPER_STDIO) == 0 || strcmp(sets[i].category, DC_WRAPPER_HDF5) == 0))
			return true;
	return false;
}

int dc_preload_find(const char *candidates, unsigned uid, char *out, size_t len, char *why, size_t whylen)
{
	const char *p = candidates;

	snprintf(why, whylen, "libdcpreload.so not found in %s", candidates);
	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		struct stat st;

		if (n && n < len) {
			memcpy(out, p, n);
			out[n] = 0;
			if (stat(out, &st) == 0) {
				if (S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == uid) && !(st.st_mode & 022))
					return 0;
				snprintf(why, whylen, "%s is not a regular file owned by root or uid %u and writable by "
						      "no one else", out, uid);
			}
		}
		p = end ? end + 1 : NULL;
	}
	return -1;
}

int dc_preload_export(const char *path)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int rc;

	if (!old || !*old)
		return setenv("LD_PRELOAD", path, 1);
	if (asprintf(&v, "%s:%s", path, old) < 0)
		return -1;
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}
