// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * h5_summary FILE.h5: reads a dc-merge HDF5 file back with the HDF5 library
 * and prints one line per (level, function), "level function count req
 * bytes", sorted: the same lines trace_summary.py prints for a JSON trace.
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
	uint32_t function;
	uint64_t req, bytes, ts;
};

struct fn {
	char *name, *level;
};

struct total {
	char key[256];
	unsigned long long n, req, bytes;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct total *)a)->key, ((const struct total *)b)->key);
}

int main(int argc, char **argv)
{
	hid_t f, d, t, s, vs;
	hssize_t nev, nfn;
	struct row *rows;
	struct fn *fns;
	struct total *tot;
	size_t ntot = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: h5_summary FILE.h5\n");
		return 2;
	}
	f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0)
		return 1;
	/* Only the fields needed, read by name: the file's layout may grow. */
	d = H5Dopen2(f, "events", H5P_DEFAULT);
	s = H5Dget_space(d);
	nev = H5Sget_simple_extent_npoints(s);
	t = H5Tcreate(H5T_COMPOUND, sizeof(struct row));
	H5Tinsert(t, "function", HOFFSET(struct row, function), H5T_NATIVE_UINT32);
	H5Tinsert(t, "req", HOFFSET(struct row, req), H5T_NATIVE_UINT64);
	H5Tinsert(t, "bytes", HOFFSET(struct row, bytes), H5T_NATIVE_UINT64);
	H5Tinsert(t, "ts_ns", HOFFSET(struct row, ts), H5T_NATIVE_UINT64);
	rows = calloc(nev + 1, sizeof(*rows));
	if (nev && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)
		return 1;
	H5Dclose(d);
	H5Sclose(s);
	H5Tclose(t);

	d = H5Dopen2(f, "functions", H5P_DEFAULT);
	s = H5Dget_space(d);
	nfn = H5Sget_simple_extent_npoints(s);
	vs = H5Tcopy(H5T_C_S1);
	H5Tset_size(vs, H5T_VARIABLE);
	t = H5Tcreate(H5T_COMPOUND, sizeof(struct fn));
	H5Tinsert(t, "name", HOFFSET(struct fn, name), vs);
	H5Tinsert(t, "level", HOFFSET(struct fn, level), vs);
	fns = calloc(nfn + 1, sizeof(*fns));
	if (nfn && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, fns) < 0)
		return 1;

	tot = calloc(nfn + 1, sizeof(*tot));
	for (hssize_t i = 0; i < nev; i++) {
		struct total *x;

		if (i && rows[i].ts < rows[i - 1].ts) {
			fprintf(stderr, "h5_summary: events are not in time order\n");
			return 1;
		}
		if (rows[i].function >= nfn)
			continue;
		x = &tot[rows[i].function];
		snprintf(x->key, sizeof(x->key), "%s %s", fns[rows[i].function].level, fns[rows[i].function].name);
		x->n++;
		x->req += rows[i].req;
		x->bytes += rows[i].bytes;
	}
	for (hssize_t i = 0; i < nfn; i++)
		if (tot[i].n)
			tot[ntot++] = tot[i];
	qsort(tot, ntot, sizeof(*tot), by_key);
	for (size_t i = 0; i < ntot; i++)
		printf("%s %llu %llu %llu\n", tot[i].key, tot[i].n, tot[i].req, tot[i].bytes);
	H5Dvlen_reclaim(t, s, H5P_DEFAULT, fns);
	H5Dclose(d);
	H5Sclose(s);
	H5Tclose(t);
	H5Tclose(vs);
	H5Fclose(f);
	free(rows);
	free(fns);
	free(tot);
	return 0;
}
