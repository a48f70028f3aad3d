// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Nonblocking MPI-IO calls (MPI_File_i*), from their start to the MPI_Wait,
 * MPI_Test or any/some/all form that sees them complete: one record then,
 * timed from the call's start, with the bytes of the completion's status.
 * The wrappers of the completion calls cost one load while no MPI-IO
 * request is pending (the common case for message passing).
 */
#include "mpiio_int.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_PENDING 256

static struct pending {
	MPI_Request req;
	struct call c;
} pending[MAX_PENDING];
static int npending; /* entries in use: 0 keeps MPI_Wait and the rest at one load */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static int any_pending(void)
{
	return __atomic_load_n(&npending, __ATOMIC_RELAXED) != 0;
}

/* A call just started: kept until it completes (recorded now, with no
 * bytes, when the table is full). */
void dc_mpiio_keep(const struct call *c, int rc, MPI_Request req)
{
	int kept = 0;

	if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
		pthread_mutex_lock(&pending_lock);
		if (npending < MAX_PENDING) {
			pending[npending].req = req;
			pending[npending].c = *c;
			__atomic_store_n(&npending, npending + 1, __ATOMIC_RELAXED);
			kept = 1;
		}
		pthread_mutex_unlock(&pending_lock);
	}
	if (!kept) {
		struct call now_c = *c;

		now_c.bytes = 0;
		dc_record_put(&now_c, rc, dc_now_ns(CLOCK_MONOTONIC));
	}
}

/* Takes req's entry out of the table: 1 and *out, or 0. */
static int take(MPI_Request req, struct call *out)
{
	int found = 0;

	if (req == MPI_REQUEST_NULL)
		return 0;
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < npending; i++) {
		if (pending[i].req != req)
			continue;
		*out = pending[i].c;
		pending[i] = pending[npending - 1];
		__atomic_store_n(&npending, npending - 1, __ATOMIC_RELAXED);
		found = 1;
		break;
	}
	pthread_mutex_unlock(&pending_lock);
	return found;
}

static int is_pending(MPI_Request req)
{
	int found = 0;

	if (req == MPI_REQUEST_NULL)
		return 0;
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < npending && !found; i++)
		found = pending[i].req == req;
	pthread_mutex_unlock(&pending_lock);
	return found;
}

/* A completed call, with its completion's status (NULL: none). */
static void complete(MPI_Request req, int rc, MPI_Status *st)
{
	struct call c;

	if (!take(req, &c))
		return;
	c.bytes = dc_mpiio_status_bytes(rc, st);
	dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));
}

/* The requests of an array that are MPI-IO calls being kept: their
 * positions and handles, in marks (NULL when none; free it). */
struct mark {
	int idx;
	MPI_Request req;
};

static struct mark *marks_of(int count, const MPI_Request *reqs, int *nmarks)
{
	struct mark *m = NULL;

	*nmarks = 0;
	for (int i = 0; i < count; i++) {
		struct mark *grown;

		if (!is_pending(reqs[i]))
			continue;
		if (!(grown = realloc(m, (*nmarks + 1) * sizeof(*m))))
			break;
		m = grown;
		m[(*nmarks)++] = (struct mark){ i, reqs[i] };
	}
	return m;
}

/* ---- completions of nonblocking calls ---- */

DC_REAL_DEF(PMPI_Wait)
DC_REAL_DEF(PMPI_Test)
DC_REAL_DEF(PMPI_Request_free)
DC_REAL_DEF(PMPI_Waitall)
DC_REAL_DEF(PMPI_Testall)
DC_REAL_DEF(PMPI_Waitany)
DC_REAL_DEF(PMPI_Testany)
DC_REAL_DEF(PMPI_Waitsome)
DC_REAL_DEF(PMPI_Testsome)

int MPI_Wait(MPI_Request *rq, MPI_Status *st)
{
	MPI_Request was = *rq;
	MPI_Status own;
	int rc;

	if (dc_in_mpi || !any_pending() || !is_pending(was))
		return DC_REAL(PMPI_Wait)(rq, st);
	if (st == MPI_STATUS_IGNORE)
		st = &own;
	rc = DC_REAL(PMPI_Wait)(rq, st);
	complete(was, rc, st);
	return rc;
}

int MPI_Test(MPI_Request *rq, int *flag, MPI_Status *st)
{
	MPI_Request was = *rq;
	MPI_Status own;
	int rc;

	if (dc_in_mpi || !any_pending() || !is_pending(was))
		return DC_REAL(PMPI_Test)(rq, flag, st);
	if (st == MPI_STATUS_IGNORE)
		st = &own;
	rc = DC_REAL(PMPI_Test)(rq, flag, st);
	if (rc == MPI_SUCCESS && *flag)
		complete(was, rc, st);
	return rc;
}

int MPI_Request_free(MPI_Request *rq)
{
	MPI_Request was = *rq;
	int rc = DC_REAL(PMPI_Request_free)(rq);

	/* Its end is never seen: recorded now, with no bytes. */
	if (!dc_in_mpi && any_pending())
		complete(was, MPI_ERR_PENDING, NULL);
	return rc;
}

/* Statuses for an array call whose caller ignores them. */
static MPI_Status *statuses(int count, MPI_Status *given, MPI_Status **own)
{
	*own = NULL;
	if (given != MPI_STATUSES_IGNORE)
		return given;
	*own = calloc(count > 0 ? count : 1, sizeof(**own));
	return *own ? *own : MPI_STATUSES_IGNORE;
}

static MPI_Status *status_at(MPI_Status *sts, int i)
{
	return sts == MPI_STATUSES_IGNORE ? NULL : &sts[i];
}

/* Every one of count done (Waitall, Testall with *flag set). */
static void complete_all(const struct mark *m, int n, int rc, MPI_Status *sts)
{
	for (int k = 0; k < n; k++)
		complete(m[k].req, rc == MPI_ERR_IN_STATUS ? sts[m[k].idx].MPI_ERROR : rc, status_at(sts, m[k].idx));
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
	struct mark *m;
	MPI_Status *own;
	int n, rc;

	if (dc_in_mpi || !any_pending() || !(m = marks_of(count, reqs, &n)))
		return DC_REAL(PMPI_Waitall)(count, reqs, sts);
	sts = statuses(count, sts, &own);
	rc = DC_REAL(PMPI_Waitall)(count, reqs, sts);
	complete_all(m, n, rc, sts);
	free(own);
	free(m);
	return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	struct mark *m;
	MPI_Status *own;
	int n, rc;

	if (dc_in_mpi || !any_pending() || !(m = marks_of(count, reqs, &n)))
		return DC_REAL(PMPI_Testall)(count, reqs, flag, sts);
	sts = statuses(count, sts, &own);
	rc = DC_REAL(PMPI_Testall)(count, reqs, flag, sts);
	if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *flag)
		complete_all(m, n, rc, sts);
	free(own);
	free(m);
	return rc;
}

/* One done, at *index (Waitany, Testany). */
static void complete_index(const struct mark *m, int n, int index, int rc, MPI_Status *st)
{
	for (int k = 0; k < n; k++)
		if (m[k].idx == index)
			complete(m[k].req, rc, st);
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *st)
{
	struct mark *m;
	MPI_Status own;
	int n, rc;

	if (dc_in_mpi || !any_pending() || !(m = marks_of(count, reqs, &n)))
		return DC_REAL(PMPI_Waitany)(count, reqs, index, st);
	if (st == MPI_STATUS_IGNORE)
		st = &own;
	rc = DC_REAL(PMPI_Waitany)(count, reqs, index, st);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
		complete_index(m, n, *index, rc, st);
	free(m);
	return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
	struct mark *m;
	MPI_Status own;
	int n, rc;

	if (dc_in_mpi || !any_pending() || !(m = marks_of(count, reqs, &n)))
		return DC_REAL(PMPI_Testany)(count, reqs, index, flag, st);
	if (st == MPI_STATUS_IGNORE)
		st = &own;
	rc = DC_REAL(PMPI_Testany)(count, reqs, index, flag, st);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
		complete_index(m, n, *index, rc, st);
	free(m);
	return rc;
}

/* Some done: indices[0..outcount) (Waitsome, Testsome). */
static void complete_some(const struct mark *m, int n, int outcount, const int *indices, int rc, MPI_Status *sts)
{
	for (int j = 0; outcount != MPI_UNDEFINED && j < outcount; j++) {
		int e = rc == MPI_ERR_IN_STATUS && sts != MPI_STATUSES_IGNORE ? sts[j].MPI_ERROR : rc;

		complete_index(m, n, indices[j], e, status_at(sts, j));
	}
}

/* MPI_Waitsome and MPI_Testsome: the same arguments, the same results. */
typedef int (*some_fn)(int, MPI_Request[], int *, int[], MPI_Status[]);

static int some(some_fn call, int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	struct mark *m;
	MPI_Status *own;
	int n, rc;

	if (dc_in_mpi || !any_pending() || !(m = marks_of(incount, reqs, &n)))
		return call(incount, reqs, outcount, indices, sts);
	sts = statuses(incount, sts, &own);
	rc = call(incount, reqs, outcount, indices, sts);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
		complete_some(m, n, *outcount, indices, rc, sts);
	free(own);
	free(m);
	return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	return some(DC_REAL(PMPI_Waitsome), incount, reqs, outcount, indices, sts);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	return some(DC_REAL(PMPI_Testsome), incount, reqs, outcount, indices, sts);
}

void dc_mpiio_flush_pending(void)
{
	struct call c;
	__u64 end = dc_now_ns(CLOCK_MONOTONIC);

	pthread_mutex_lock(&pending_lock);
	while (npending > 0) {
		c = pending[--npending].c;
		c.bytes = 0;
		pthread_mutex_unlock(&pending_lock);
		dc_record_put(&c, MPI_ERR_PENDING, end);
		pthread_mutex_lock(&pending_lock);
	}
	pthread_mutex_unlock(&pending_lock);
}

/* Under their PMPI names too: Open MPI's Fortran MPI_WAIT calls PMPI_Wait. */
DC_ALSO_PMPI(MPI_Wait)
DC_ALSO_PMPI(MPI_Test)
DC_ALSO_PMPI(MPI_Request_free)
DC_ALSO_PMPI(MPI_Waitall)
DC_ALSO_PMPI(MPI_Testall)
DC_ALSO_PMPI(MPI_Waitany)
DC_ALSO_PMPI(MPI_Testany)
DC_ALSO_PMPI(MPI_Waitsome)
DC_ALSO_PMPI(MPI_Testsome)
