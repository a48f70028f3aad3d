// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * h5_summary [--ranks] [--any-order] FILE.h5: reads a dc-merge HDF5 file back
 * with the HDF5 library and prints one line per (level, function), "level
 * function count req bytes", sorted: the same lines trace_summary.py prints
 * for a JSON trace. With --ranks, then "rank R count bytes" per rank, and
 * the first and last calls: "first|last ts_ns dur_ns node rank level
 * function path". Events must be in time order unless --any-order (a
 * stitched file holds one node's after another's).
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
	uint32_t function, path;
	uint64_t req, bytes, ts, dur;
	int32_t rank;
	uint16_t node;
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

/* Earlier first; ties by the row's other fields, so two files agree. */
static int before(const struct row *a, const struct row *b, int by_end)
{
	uint64_t x = a->ts + (by_end ? a->dur : 0), y = b->ts + (by_end ? b->dur : 0);

	if (x != y)
		return x < y;
	if (a->node != b->node)
		return a->node < b->node;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return a->bytes < b->bytes;
}

static void print_call(const char *what, const struct row *r, const struct fn *fns, hssize_t nfn, char **paths,
		       hssize_t npaths)
{
	printf("%s %llu %llu %u %d %s %s %s\n", what, (unsigned long long)r->ts, (unsigned long long)r->dur, r->node,
	       r->rank, r->function < nfn ? fns[r->function].level : "?", r->function < nfn ? fns[r->function].name : "?",
	       r->path < npaths ? paths[r->path] : "?");
}

static int by_rank(const void *a, const void *b)
{
	const long long *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int main(int argc, char **argv)
{
	hid_t f, d, t, s, vs;
	hssize_t nev, nfn;
	struct row *rows;
	struct fn *fns;
	struct total *tot;
	size_t ntot = 0;

	int any_order = 0, with_ranks = 0, a = 1;
	char **paths;
	hssize_t npaths;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "--any-order") == 0)
			any_order = 1;
		else if (strcmp(argv[a], "--ranks") == 0)
			with_ranks = 1;
		else
			break;
	}
	if (a != argc - 1) {
		fprintf(stderr, "usage: h5_summary [--ranks] [--any-order] FILE.h5\n");
		return 2;
	}
	f = H5Fopen(argv[a], H5F_ACC_RDONLY, H5P_DEFAULT);
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
	H5Tinsert(t, "dur_ns", HOFFSET(struct row, dur), H5T_NATIVE_UINT64);
	H5Tinsert(t, "rank", HOFFSET(struct row, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, "node", HOFFSET(struct row, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, "path", HOFFSET(struct row, path), H5T_NATIVE_UINT32);
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

		if (!any_order && i && rows[i].ts < rows[i - 1].ts) {
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

	/* Per rank: [rank, count, bytes], sorted by rank. */
	long long (*ranks)[3] = calloc(nev + 1, sizeof(*ranks));
	size_t nranks = 0, first = 0, last = 0;

	for (hssize_t i = 0; i < nev; i++) {
		size_t k = 0;

		while (k < nranks && ranks[k][0] != rows[i].rank)
			k++;
		if (k == nranks)
			ranks[nranks++][0] = rows[i].rank;
		ranks[k][1]++;
		ranks[k][2] += rows[i].bytes;
		if (before(&rows[i], &rows[first], 0))
			first = i;
		if (before(&rows[last], &rows[i], 1))
			last = i;
	}
	qsort(ranks, nranks, sizeof(*ranks), by_rank);
	for (size_t k = 0; with_ranks && k < nranks; k++)
		printf("rank %lld %lld %lld\n", ranks[k][0], ranks[k][1], ranks[k][2]);
	H5Dclose(d); /* functions */
	H5Sclose(s);
	d = H5Dopen2(f, "paths", H5P_DEFAULT);
	s = H5Dget_space(d);
	npaths = H5Sget_simple_extent_npoints(s);
	paths = calloc(npaths + 1, sizeof(*paths));
	if (npaths && H5Dread(d, vs, H5S_ALL, H5S_ALL, H5P_DEFAULT, paths) < 0)
		return 1;
	H5Dclose(d);
	H5Sclose(s);
	if (nev && with_ranks) {
		print_call("first", &rows[first], fns, nfn, paths, npaths);
		print_call("last", &rows[last], fns, nfn, paths, npaths);
	}
	free(ranks);
	/* The strings read are left to the process's end: a test tool. */
	H5Tclose(t);
	H5Tclose(vs);
	H5Fclose(f);
	free(rows);
	free(fns);
	free(tot);
	return 0;
}
