// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer: dc-summary's reading of a merged HDF5 file that its user has
 * rewritten. The input decides what a well-formed HDF5 file holds: root
 * attributes of any value, shape or type, tables of any length and shape,
 * indices, nodes and ranks of any value, strings missing. The file is made
 * in memory, then read and reported in every form (text, JSON, HTML).
 * What varies is what the reader trusts; parsing damaged bytes is
 * libhdf5's own work, and not fuzzed here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>

#include "hdf5_layout.h"
#include "hdf5_tables.h"
#include "summary.h"

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct input *in, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && in->n; i++, in->n--)
		v = v << 8 | *in->p++;
	return v;
}

/* Small values mostly, any value sometimes: indices that fit and that do not. */
static uint64_t number(struct input *in)
{
	uint8_t kind = take(in, 1);

	return kind < 192 ? kind % 8 : kind < 224 ? take(in, 2) : take(in, 8);
}

static const char *text(struct input *in)
{
	static const char *const v[] = { NULL, "", "posix", "syscall", "write", "read", "MPI_File_write_at",
					 "pagecache", "/a/b", "node1", "damaged \x1b[2J\n" };

	return v[take(in, 1) % (sizeof(v) / sizeof(v[0]))];
}

/* A root attribute: absent, one integer, many, a string, or a fixed string. */
static void attribute(hid_t f, const char *name, struct input *in)
{
	uint8_t form = take(in, 1) % 5;
	hsize_t n = 1 + take(in, 1) % 8;
	uint64_t v[8];
	hid_t sp, t, a;

	if (form == 0)
		return;
	if (form == 3) {
		const char *v = text(in);

		dc_h5_attr_str(f, name, v ? v : "x");
		return;
	}
	for (hsize_t i = 0; i < 8; i++)
		v[i] = number(in);
	if (form == 1) {
		dc_h5_attr_u64(f, name, v[0]);
		return;
	}
	sp = H5Screate_simple(1, &n, NULL);
	t = form == 2 ? H5Tcopy(H5T_NATIVE_UINT64) : H5Tcopy(H5T_C_S1);
	if (form == 4)
		H5Tset_size(t, 8);
	a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		H5Awrite(a, t, v);
		H5Aclose(a);
	}
	H5Tclose(t);
	H5Sclose(sp);
}

/* A table written as the layout says, as two dimensions, or as integers. */
static void table(hid_t f, const char *name, hid_t type, const void *rows, hsize_t n, struct input *in)
{
	uint8_t form = take(in, 1) % 8;
	hsize_t dims[2] = { n / 2, 2 };
	uint64_t ints[4] = { 0 };
	hid_t sp, d;

	if (form == 0 || (form == 1 && n % 2)) {
		H5Tclose(type);
		return;
	}
	if (form == 1 || form == 2) {
		int rank = form == 1 ? 2 : 1;

		if (form == 2) {
			H5Tclose(type);
			type = H5Tcopy(H5T_NATIVE_UINT64);
			dims[0] = 4;
			rows = ints;
		}
		sp = H5Screate_simple(rank, dims, NULL);
		d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		if (d >= 0) {
			if (dims[0])
				H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows);
			H5Dclose(d);
		}
		H5Sclose(sp);
		H5Tclose(type);
		return;
	}
	dc_h5_write_rows(f, name, type, rows, n);
}

static hid_t make_file(struct input *in)
{
	struct h5_function_row fns[8];
	struct h5_process_row procs[8];
	struct h5_node_row nodes[6];
	struct h5_event events[48];
	const char *paths[6];
	hsize_t nf = take(in, 1) % 8, np = take(in, 1) % 6, npr = take(in, 1) % 8, nn = take(in, 1) % 6,
		ne = take(in, 1) % 48;
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;

	H5Pset_fapl_core(fapl, 1 << 16, 0);
	f = H5Fcreate("fuzz.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0)
		return f;
	attribute(f, DC_H5_ATTR_NODES, in);
	attribute(f, DC_H5_ATTR_EVENTS, in);
	attribute(f, DC_H5_ATTR_LOST, in);
	attribute(f, DC_H5_ATTR_SKIPPED, in);
	attribute(f, DC_H5_ATTR_JOB_ID, in);
	if (take(in, 1) % 4 == 0)
		attribute(f, DC_H5_ATTR_LAYOUT_VERSION, in);
	for (hsize_t i = 0; i < nf; i++)
		fns[i] = (struct h5_function_row){ text(in), text(in), text(in) };
	for (hsize_t i = 0; i < np; i++)
		paths[i] = text(in);
	for (hsize_t i = 0; i < npr; i++)
		procs[i] = (struct h5_process_row){ number(in), 1000 + i, 1, (int32_t)number(in), (int32_t)number(in),
						    text(in), text(in), take(in, 1), 0 };
	for (hsize_t i = 0; i < nn; i++)
		nodes[i] = (struct h5_node_row){ text(in), text(in), text(in), text(in), text(in) };
	for (hsize_t i = 0; i < ne; i++)
		events[i] = (struct h5_event){ .ts_ns = number(in) * 1000003, .dur_ns = number(in), .node = number(in),
					       .rank = (int32_t)number(in), .function = number(in), .req = number(in),
					       .bytes = number(in), .path = number(in), .flags = take(in, 1) };
	table(f, DC_H5_FUNCTIONS, dc_h5_function_type(), fns, nf, in);
	table(f, DC_H5_PATHS, dc_h5_vlen_string(), paths, np, in);
	table(f, DC_H5_PROCESSES, dc_h5_process_type(), procs, npr, in);
	table(f, DC_H5_NODES, dc_h5_node_type(), nodes, nn, in);
	table(f, DC_H5_EVENTS, dc_h5_event_type(), events, ne, in);
	return f;
}

/* The reports and the reader's messages go to stdout and stderr, which
 * tests/fuzz/run.sh has libFuzzer close (-close_fd_mask=3). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct summary s = { 0 };
	hid_t f = make_file(&in);

	if (f < 0)
		return 0;
	if (dc_summary_read_h5(&s, f, "fuzz.h5") == 0) {
		qsort(s.fns, s.nfns, sizeof(*s.fns), dc_summary_by_fn);
		dc_summary_print_text(&s, 10);
		dc_summary_print_json(&s, 10);
		dc_summary_write_html(&s, 10, "/dev/null");
	}
	dc_summary_free(&s);
	H5Fclose(f);
	return 0;
}
