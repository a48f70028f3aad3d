/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dc-summary's who-did-the-I/O tables: reads and writes per node and per
 * MPI rank (at the level ranks are compared at), and the slowest rank and
 * node for each.
 */
#ifndef DC_IO_TABLE_H
#define DC_IO_TABLE_H

#include <stdint.h>
#include <stdio.h>

struct dc_io_table;

/* A row per node, and per rank: rank_ids[row] (copied) names row's rank. */
struct dc_io_table *dc_io_table_new(size_t nnodes, const int *rank_ids, int nranks);
void dc_io_table_free(struct dc_io_table *t);
/* The host of node index i (copied). */
int dc_io_table_host(struct dc_io_table *t, size_t i, const char *host);
/* A read (op 1) or write (op 2) of a node (-1: unknown) and a rank's row (-1: none). */
void dc_io_table_add(struct dc_io_table *t, int node, int rank, int op, uint64_t bytes, uint64_t dur_ns);
void dc_io_table_text(const struct dc_io_table *t, FILE *f, const char *level, int top);
/* ,"nodes_io":[...],"ranks_io":[...],"slowest":{...} */
void dc_io_table_json(const struct dc_io_table *t, FILE *f);

#endif
