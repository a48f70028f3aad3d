// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * h5_summary [--ranks] [--any-order] FILE.h5: reads a dc-merge HDF5 file
 * back through the project's HDF5 reader (reader/h5_read.h) and prints
 * one line per (level, function), "level function count req bytes",
 * sorted: the same lines trace_summary.py prints for a JSON trace. With
 * --ranks, then "rank R count bytes" per rank, and the first and last
 * calls: "first|last ts_ns dur_ns node rank level function path". Events
 * must be in time order unless --any-order (a stitched file holds one
 * node's after another's).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_read.h"
#include "hdf5_tables.h"

struct total {
	char key[256];
	unsigned long long n, req, bytes;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct total *)a)->key, ((const struct total *)b)->key);
}

/* Earlier first; ties by the row's other fields, so two files agree. */
static int before(const struct dc_h5_call *a, const struct dc_h5_call *b, int by_end)
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

static void print_call(const char *what, const struct dc_h5_call *r, const struct dc_h5_fn *fns, hssize_t nfn, char **paths,
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
	char why[256];
	hid_t f, t;
	hssize_t nev, nfn;
	struct dc_h5_call *rows;
	struct dc_h5_fn *fns;
	struct total *tot;
	size_t ntot = 0;

	int any_order = 0, with_ranks = 0, a = 1;
	struct dc_h5_strings paths;

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
	if (dc_h5_check_layout(f, why, sizeof(why))) {
		fprintf(stderr, "h5_summary: %s: %s\n", argv[a], why);
		return 1;
	}
	t = dc_h5_call_type();
	rows = dc_h5_read_rows(f, DC_H5_EVENTS, t, sizeof(*rows), &nev);
	H5Tclose(t);
	fns = dc_h5_read_functions(f, &nfn);
	if (!rows || !fns || dc_h5_read_strings(f, DC_H5_PATHS, &paths))
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
	if (nev && with_ranks) {
		print_call("first", &rows[first], fns, nfn, paths.v, paths.n);
		print_call("last", &rows[last], fns, nfn, paths.v, paths.n);
	}
	free(ranks);
	dc_h5_functions_free(fns, nfn);
	dc_h5_strings_free(&paths);
	H5Fclose(f);
	free(rows);
	free(tot);
	return 0;
}
