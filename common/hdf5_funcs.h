/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HDF5 calls libdcpmpi.so records in the ranks that preload it (a
 * wrapper set of category hdf5): it interposes the library's own symbols
 * and calls the next definition, as Darshan's HDF5 module does. One list
 * for the wrapper and the agent (wrapper_funcs.h numbers them after the
 * MPI-IO calls: a change here changes DC_RING_VERSION).
 *
 * X(name, shape): shapes (arguments in HDF5's order):
 *   FILE_NEW  path, ...              -> hid_t   H5Fcreate, H5Fopen
 *   OBJ_NEW   loc_id, name, ...      -> hid_t   H5Dcreate2, H5Gopen1, H5Oopen (named FILE:OBJECT)
 *   ATTR_NEW  loc_id, name, ...      -> hid_t   H5Acreate2 (named by its name)
 *   CLOSE     id                     -> herr_t  H5Fclose, H5Dclose, H5Oclose
 *   FLUSH     id[, scope]            -> herr_t  H5Fflush, H5Dflush
 *   DECREF    id                     -> int     H5Idec_ref (the references left: closed at 0)
 *   IO        dset, mem_type, mem_space, file_space, dxpl, buf -> herr_t
 *             (bytes: the selection's elements x the memory type's size)
 */
#ifndef DC_HDF5_FUNCS_H
#define DC_HDF5_FUNCS_H

#define DC_HDF5_FUNCS(X)                                                                           \
	X(H5Fcreate, FILE_NEW)                                                                     \
	X(H5Fopen, FILE_NEW)                                                                       \
	X(H5Fclose, CLOSE)                                                                         \
	X(H5Fflush, FLUSH)                                                                         \
	X(H5Dcreate2, OBJ_NEW)                                                                     \
	X(H5Dcreate1, OBJ_NEW)                                                                     \
	X(H5Dopen2, OBJ_NEW)                                                                       \
	X(H5Dopen1, OBJ_NEW)                                                                       \
	X(H5Dwrite, IO)                                                                            \
	X(H5Dread, IO)                                                                             \
	X(H5Dclose, CLOSE)                                                                         \
	X(H5Gcreate2, OBJ_NEW)                                                                     \
	X(H5Gcreate1, OBJ_NEW)                                                                     \
	X(H5Gopen2, OBJ_NEW)                                                                       \
	X(H5Gopen1, OBJ_NEW)                                                                       \
	X(H5Gclose, CLOSE)                                                                         \
	X(H5Acreate2, ATTR_NEW)                                                                    \
	X(H5Acreate1, ATTR_NEW)                                                                    \
	X(H5Oopen, OBJ_NEW)                                                                        \
	X(H5Oclose, CLOSE)                                                                         \
	X(H5Dflush, FLUSH)                                                                         \
	X(H5Idec_ref, DECREF)

#define DC_HDF5_SHAPE_FILE_NEW 32
#define DC_HDF5_SHAPE_OBJ_NEW 33
#define DC_HDF5_SHAPE_ATTR_NEW 34
#define DC_HDF5_SHAPE_CLOSE 35
#define DC_HDF5_SHAPE_FLUSH 36
#define DC_HDF5_SHAPE_IO 37
#define DC_HDF5_SHAPE_DECREF 38

#define DC_HDF5_SHAPE_OF(shape) DC_HDF5_SHAPE_##shape

#endif
