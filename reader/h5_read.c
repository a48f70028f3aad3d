// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "h5_read.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5_layout.h"

hid_t dc_h5_vlen_string(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	H5Tset_size(t, H5T_VARIABLE);
	return t;
}

int dc_h5_read_strings(hid_t f, const char *name, struct dc_h5_strings *out)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp, t;
	int rc = -1;

	*out = (struct dc_h5_strings){ 0 };
	if (d < 0)
		return -1;
	sp = H5Dget_space(d);
	out->n = H5Sget_simple_extent_npoints(sp);
	t = dc_h5_vlen_string();
	out->v = out->n >= 0 ? calloc(out->n + 1, sizeof(char *)) : NULL;
	if (out->v && (!out->n || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->v) >= 0))
		rc = 0;
	else
		out->n = 0;
	H5Tclose(t);
	H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

void dc_h5_strings_free(struct dc_h5_strings *s)
{
	for (hssize_t i = 0; s->v && i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct dc_h5_strings){ 0 };
}

void *dc_h5_read_rows(hid_t f, const char *name, hid_t t, size_t row_size, hssize_t *n)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp;
	void *rows;

	*n = 0;
	if (d < 0)
		return NULL;
	sp = H5Dget_space(d);
	*n = H5Sget_simple_extent_npoints(sp);
	rows = *n >= 0 ? calloc(*n + 1, row_size) : NULL;
	if (rows && *n && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
		free(rows);
		rows = NULL;
	}
	if (!rows)
		*n = 0;
	H5Sclose(sp);
	H5Dclose(d);
	return rows;
}

int dc_h5_read_blocks(hid_t f, const char *name, hid_t t, size_t row_size, hsize_t block,
		      int (*take)(void *ctx, const void *rows, hsize_t count), void *ctx)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), fsp;
	void *rows = malloc(block * row_size);
	hsize_t n, start, count;
	int rc = 0;

	if (d < 0 || !rows) {
		if (d >= 0)
			H5Dclose(d);
		free(rows);
		return -1;
	}
	fsp = H5Dget_space(d);
	/* Selected below as one dimension: a table of any other shape is not ours. */
	rc = H5Sget_simple_extent_ndims(fsp) == 1 ? 0 : -1;
	n = rc ? 0 : H5Sget_simple_extent_npoints(fsp);
	for (start = 0; !rc && start < n; start += count) {
		hid_t msp;

		count = n - start < block ? n - start : block;
		/* A column the file lacks (one added since it was written)
		 * is not touched by the read: it reads as 0. */
		memset(rows, 0, count * row_size);
		msp = H5Screate_simple(1, &count, NULL);
		rc = H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
				     H5Dread(d, t, msp, fsp, H5P_DEFAULT, rows) < 0
			     ? -1
			     : take(ctx, rows, count);
		H5Sclose(msp);
	}
	H5Sclose(fsp);
	H5Dclose(d);
	free(rows);
	return rc ? -1 : 0;
}

int64_t dc_h5_rows(hid_t f, const char *name)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp;
	hssize_t n;

	if (d < 0)
		return -1;
	sp = H5Dget_space(d);
	n = H5Sget_simple_extent_npoints(sp);
	H5Sclose(sp);
	H5Dclose(d);
	return n;
}

hid_t dc_h5_call_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct dc_h5_call));

	H5Tinsert(t, DC_H5_COL(struct h5_event, ts_ns), HOFFSET(struct dc_h5_call, ts), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, dur_ns), HOFFSET(struct dc_h5_call, dur), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, req), HOFFSET(struct dc_h5_call, req), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, bytes), HOFFSET(struct dc_h5_call, bytes), H5T_NATIVE_UINT64);
	H5Tinsert(t, DC_H5_COL(struct h5_event, rank), HOFFSET(struct dc_h5_call, rank), H5T_NATIVE_INT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, node), HOFFSET(struct dc_h5_call, node), H5T_NATIVE_UINT16);
	H5Tinsert(t, DC_H5_COL(struct h5_event, function), HOFFSET(struct dc_h5_call, function), H5T_NATIVE_UINT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, path), HOFFSET(struct dc_h5_call, path), H5T_NATIVE_UINT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, path2), HOFFSET(struct dc_h5_call, path2), H5T_NATIVE_UINT32);
	H5Tinsert(t, DC_H5_COL(struct h5_event, flags), HOFFSET(struct dc_h5_call, flags), H5T_NATIVE_UINT8);
	return t;
}

struct dc_h5_fn *dc_h5_read_functions(hid_t f, hssize_t *n)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct dc_h5_fn)), vs = dc_h5_vlen_string();
	struct dc_h5_fn *fns;

	H5Tinsert(t, DC_H5_COL(struct h5_function_row, name), HOFFSET(struct dc_h5_fn, name), vs);
	H5Tinsert(t, DC_H5_COL(struct h5_function_row, level), HOFFSET(struct dc_h5_fn, level), vs);
	fns = dc_h5_read_rows(f, DC_H5_FUNCTIONS, t, sizeof(*fns), n);
	H5Tclose(t);
	H5Tclose(vs);
	return fns;
}

void dc_h5_functions_free(struct dc_h5_fn *fns, hssize_t n)
{
	for (hssize_t i = 0; fns && i < n; i++) {
		free(fns[i].name);
		free(fns[i].level);
	}
	free(fns);
}

int dc_h5_check_layout(hid_t f, char *err, size_t errlen)
{
	uint64_t v = 1; /* files from before the attribute */

	if (H5Aexists(f, DC_H5_ATTR_LAYOUT_VERSION) > 0 && dc_h5_get_u64(f, DC_H5_ATTR_LAYOUT_VERSION, &v)) {
		snprintf(err, errlen, "its %s attribute cannot be read", DC_H5_ATTR_LAYOUT_VERSION);
		return -1;
	}
	if (v > DC_H5_LAYOUT_VERSION) {
		snprintf(err, errlen,
			 "it was written by a newer DataCrumbs (HDF5 layout %llu; this one reads up to %d): read it with "
			 "that release's tools",
			 (unsigned long long)v, DC_H5_LAYOUT_VERSION);
		return -1;
	}
	return 0;
}

/* An attribute of one value of the class asked for, else -1 (closed). H5Aread
 * writes every element an attribute holds: a file may give it many. */
static hid_t open_single(hid_t obj, const char *name, H5T_class_t cls)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT), sp, t;
	bool single;

	if (a < 0)
		return -1;
	sp = H5Aget_space(a);
	t = H5Aget_type(a);
	single = sp >= 0 && t >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Tget_class(t) == cls;
	if (sp >= 0)
		H5Sclose(sp);
	if (t >= 0)
		H5Tclose(t);
	if (!single) {
		H5Aclose(a);
		return -1;
	}
	return a;
}

int dc_h5_get_u64(hid_t obj, const char *name, uint64_t *v)
{
	hid_t a = open_single(obj, name, H5T_INTEGER);
	int rc;

	if (a < 0)
		return -1;
	rc = H5Aread(a, H5T_NATIVE_UINT64, v) < 0 ? -1 : 0;
	H5Aclose(a);
	return rc;
}

char *dc_h5_get_str(hid_t obj, const char *name)
{
	hid_t a = open_single(obj, name, H5T_STRING), t, ft = -1;
	char *v = NULL, *copy;

	if (a < 0)
		return NULL;
	t = dc_h5_vlen_string();
	/* Only a variable-length string reads into one pointer. */
	if ((ft = H5Aget_type(a)) < 0 || H5Tis_variable_str(ft) <= 0 || H5Aread(a, t, &v) < 0)
		v = NULL;
	if (ft >= 0)
		H5Tclose(ft);
	H5Tclose(t);
	H5Aclose(a);
	copy = v ? strdup(v) : NULL;
	H5free_memory(v);
	return copy;
}
