// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "rank_rings.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dc_event.h"
#include "index_heap.h"
#include "wrapper_funcs.h"
#include "nodefile.h"
#include "rank_ring.h"
#include "recorder.h"

/* What a ring carries (the wrapper sets of libdcpmpi.so and libdcpreload.so), in messages. */
#define WRAPPED "MPI-IO, HDF5 and STDIO calls"

/* Rings held at once: ranks per node, with room for ranks that crashed. */
#define MAX_RINGS 1024
/* Records taken from one ring per drain: a rank that writes as fast as the
 * agent reads does not keep it from the others. */
#define DRAIN_MAX 65536
/* How often the rings of processes that ended without saying so (killed,
 * or a rank that crashed) are looked for, and let go. */
#define SWEEP_NS 1000000000ull
/* A pass that took this many records says the rings are busy, and so
 * does a ring just taken, for BUSY_NS: a loop of buffered STDIO calls
 * fills a ring of DC_RING_SLOTS_DEFAULT slots in a few ms, well within
 * one RING_POLL_MS, and may start at once. */
#define BUSY_RECORDS (DC_RING_SLOTS_DEFAULT / 32)
#define BUSY_NS 100000000ull

struct ring {
	struct dc_ring_reader *r;
	__u32 pid;
	int pidfd; /* readable once the process has ended; -1: none */
	dev_t dev; /* the memfd: a ring is read once, for its first registrant */
	ino_t ino;
	__u64 since;           /* when the agent took it */
	unsigned long long bad; /* records with times the ring cannot hold */
	__u64 next_end;        /* in a pass: when its next record ended (~0: none yet) */
};

struct dc_rank_rings {
	struct dc_recorder *rec;
	struct dc_writer *w;
	int mode;
	struct dc_funcs asked;
	__u32 ids[DC_RING_MAX_FUNCS];
	struct ring rings[MAX_RINGS];
	size_t n;
	unsigned long long unasked; /* records of calls not asked for, dropped */
	struct dc_msg_call msg; /* one call being turned into an event */
	unsigned long long taken; /* records taken in this pass */
	__u64 busy_until;         /* CLOCK_MONOTONIC ns */
	__u64 next_sweep;
	/* A clock read after every record checked so far was committed. */
	__u64 now;
	/* In a pass (dc_rank_rings_begin): rings by their next record's end. */
	bool pass;
	__u32 nheap;
	__u32 heap[MAX_RINGS];
};

struct dc_rank_rings *dc_rank_rings_new(struct dc_recorder *rec, struct dc_writer *w, int mode,
					const struct dc_funcs *asked, const __u32 *ids)
{
	struct dc_rank_rings *rr = calloc(1, sizeof(*rr));

	if (!rr)
		return NULL;
	rr->rec = rec;
	rr->w = w;
	rr->mode = mode;
	rr->asked = *asked;
	memcpy(rr->ids, ids, sizeof(rr->ids));
	return rr;
}

static void let_go(struct dc_rank_rings *rr, size_t i, __u64 ts);

static int turn_down(int fd, int pidfd)
{
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
	return -1;
}

int dc_rank_rings_add(struct dc_rank_rings *rr, __u32 pid, int fd, int pidfd, char *note, size_t len)
{
	char why[160];
	struct dc_ring_reader *r;
	struct stat st;
	size_t before = MAX_RINGS;

	if (fd < 0) {
		snprintf(note, len, "ok; its " WRAPPED " not recorded: %s", DC_RING_NOT_MEMFD);
		return turn_down(fd, pidfd);
	}
	if (!rr || !dc_funcs_any(&rr->asked)) {
		turn_down(fd, pidfd);
		snprintf(note, len, "ok; its " WRAPPED " not recorded here (no wrapper set among the agent's probe sets)");
		return 0;
	}
	if (rr->n == MAX_RINGS) {
		snprintf(note, len, "ok; its " WRAPPED " not recorded: the agent holds %d rings already", MAX_RINGS);
		return turn_down(fd, pidfd);
	}
	if (fstat(fd, &st)) {
		snprintf(note, len, "ok; its " WRAPPED " not recorded: the ring cannot be looked at");
		return turn_down(fd, pidfd);
	}
	for (size_t i = 0; i < rr->n; i++) {
		if (rr->rings[i].dev == st.st_dev && rr->rings[i].ino == st.st_ino) {
			snprintf(note, len, "ok; its " WRAPPED " not recorded: this ring is pid %u's already", rr->rings[i].pid);
			return turn_down(fd, pidfd);
		}
		if (rr->rings[i].pid == pid)
			before = i;
	}
	/* The process's ring before an exec (libdcpreload in the image
	 * before): that image's calls are all done. */
	if (before < rr->n)
		let_go(rr, before, dc_now_ns(CLOCK_MONOTONIC));
	if (!(r = dc_ring_reader_open(fd, why, sizeof(why)))) {
		snprintf(note, len, "ok; its " WRAPPED " not recorded: %s", why);
		return turn_down(-1, pidfd);
	}
	dc_ring_reader_start(r, rr->mode == DC_MODE_PROFILE ? DC_RING_PROFILE : DC_RING_TRACE, &rr->asked);
	rr->rings[rr->n++] = (struct ring){ r, pid, pidfd, st.st_dev, st.st_ino, dc_now_ns(CLOCK_MONOTONIC) };
	rr->busy_until = rr->rings[rr->n - 1].since + BUSY_NS;
	snprintf(note, len, "ok; its " WRAPPED " recorded");
	return 0;
}

/* A record of a call that began after the agent took the ring and ended
 * by now: any other time is made up. */
static bool possible_by(const struct ring *g, const struct dc_ring_rec *rec, __u64 now)
{
	return rec->ts >= g->since && rec->ts <= now && rec->dur <= now - rec->ts;
}

/*
 * The end is checked against a clock read after the record was committed.
 * The last read serves while the records end before it (a record that
 * passes with an earlier read passes with any later one); a record ending
 * after it is checked again with a fresh one. A clock read per record was
 * a tenth of the agent's time under MPI-IO.
 */
static bool possible(struct dc_rank_rings *rr, const struct ring *g, const struct dc_ring_rec *rec)
{
	if (possible_by(g, rec, rr->now))
		return true;
	rr->now = dc_now_ns(CLOCK_MONOTONIC);
	return possible_by(g, rec, rr->now);
}

/* The event flags a call's shape gives it; for the shapes that depend on
 * it, by its outcome. */
static __u8 shape_flags(const struct dc_ring_rec *rec)
{
	switch (dc_wrapper_shapes[rec->func]) {
	case DC_MPIIO_SHAPE_OPEN:
	case DC_HDF5_SHAPE_FILE_NEW:
	case DC_HDF5_SHAPE_OBJ_NEW:
	case DC_HDF5_SHAPE_ATTR_NEW:
	case DC_STDIO_SHAPE_OPEN:
	case DC_STDIO_SHAPE_FDOPEN:
	case DC_STDIO_SHAPE_REOPEN:
		return DC_EV_HANDLE | DC_EV_NEW_HANDLE | DC_EV_PATHARG;
	case DC_MPIIO_SHAPE_CLOSE:
	case DC_HDF5_SHAPE_CLOSE:
	case DC_STDIO_SHAPE_CLOSE:
		return DC_EV_HANDLE | DC_EV_CLOSES;
	case DC_MPIIO_SHAPE_DELETE:
		return DC_EV_PATHARG;
	case DC_HDF5_SHAPE_DECREF:
		/* An id of references is closed at the last. */
		return DC_EV_HANDLE | (rec->ret == 0 ? DC_EV_CLOSES : 0);
	default:
		return DC_EV_HANDLE;
	}
}

static void record(struct dc_rank_rings *rr, __u32 pid, const struct dc_ring_rec *rec)
{
	struct dc_msg_call *m = &rr->msg;
	struct dc_event *e = &m->ev;

	m->type = DC_MSG_CALL;
	m->handle = rec->handle;
	/* A dataset or group is named inside the file or group it is in. */
	m->parent = dc_wrapper_shapes[rec->func] == DC_HDF5_SHAPE_OBJ_NEW ? rec->parent : 0;
	m->path_len = rec->path_len;
	m->path2_len = 0;
	m->kpath_len = 0;
	m->kpath2_len = 0;
	m->file = 0;
	m->inode = 0;
	m->file2 = 0;
	m->inode2 = 0;
	memset(e, 0, sizeof(*e));
	e->ts = rec->ts;
	e->dur = rec->dur;
	e->pid = pid; /* the registered pid, never the record's word */
	e->tid = rec->tid;
	e->func = rr->ids[rec->func];
	e->cpu = rec->cpu;
	e->flags = shape_flags(rec);
	/* A stream the wrapper saw no open of (stdout), named from here on
	 * by the kernel's name of its descriptor, as an open names one. */
	if ((rec->flags & DC_RING_REC_NAMES) && rec->path_len)
		e->flags |= DC_EV_HANDLE | DC_EV_NEW_HANDLE | DC_EV_PATHARG;
	if (rec->flags & DC_RING_REC_OFFSET) {
		e->flags |= DC_EV_OFFSET;
		e->offset = rec->offset;
	}
	e->ret = rec->ret;
	e->req = rec->req;
	e->bytes = rec->bytes;
	e->fd = -1;
	e->fd2 = -1;
	dc_recorder_call(rr->rec, m);
	rr->taken++;
}

static void report_damaged(const struct ring *g)
{
	fprintf(stderr,
		"dc-agent: warning: the ring of pid %u (its " WRAPPED ") is damaged (%s): nothing more is read from it\n",
		g->pid, dc_ring_reader_problem(g->r));
}

#define ALL (~0ull)

/*
 * Takes g's records that ended by upto (ALL: every one). Returns 0 once
 * the ring is empty or its next record ended later, 1 when records are
 * left (DRAIN_MAX), -1 when the ring is found damaged now. g->next_end
 * says when the record left next ended (ALL: none yet).
 */
static int drain_one(struct dc_rank_rings *rr, struct ring *g, __u64 upto)
{
	enum dc_ring_next got = DC_RING_EMPTY;
	struct dc_ring_rec rec;
	int n;

	g->next_end = ALL;
	if (dc_ring_reader_problem(g->r))
		return 0;
	for (n = 0; n < DRAIN_MAX; n++) {
		if (upto != ALL && (!dc_ring_reader_peek_end(g->r, &g->next_end) || g->next_end > upto))
			break;
		g->next_end = ALL;
		if ((got = dc_ring_reader_next(g->r, &rec, rr->msg.path)) != DC_RING_RECORD)
			break;
		/* Only the calls asked for: anything else is dropped. */
		if (!dc_funcs_has(&rr->asked, rec.func)) {
			rr->unasked++;
			continue;
		}
		if (!possible(rr, g, &rec)) {
			g->bad++;
			continue;
		}
		record(rr, g->pid, &rec);
	}
	if (got == DC_RING_DAMAGED) {
		report_damaged(g);
		return -1;
	}
	return n == DRAIN_MAX;
}

static bool ends_first(const void *ctx, __u32 a, __u32 b)
{
	const struct dc_rank_rings *rr = ctx;

	return rr->rings[a].next_end < rr->rings[b].next_end;
}

void dc_rank_rings_begin(struct dc_rank_rings *rr)
{
	if (!rr || rr->mode != DC_MODE_TRACE)
		return;
	rr->nheap = 0;
	for (__u32 i = 0; i < rr->n; i++) {
		struct ring *g = &rr->rings[i];

		if (dc_ring_reader_problem(g->r) || !dc_ring_reader_peek_end(g->r, &g->next_end))
			g->next_end = ALL;
		rr->heap[rr->nheap++] = i;
	}
	dc_heap_make(rr->heap, rr->nheap, ends_first, rr);
	rr->pass = true;
}

void dc_rank_rings_upto(struct dc_rank_rings *rr, __u64 upto)
{
	if (!rr || !rr->pass)
		return;
	if (upto == ALL)
		upto = ALL - 1; /* ALL is a ring with nothing to take */
	/* The heap's first ring is the one whose next record ended first. */
	while (rr->nheap && rr->rings[rr->heap[0]].next_end <= upto) {
		struct ring *g = &rr->rings[rr->heap[0]];

		/* Left for the pass's end (DRAIN_MAX): out of the heap. */
		if (drain_one(rr, g, upto) == 1)
			g->next_end = ALL;
		dc_heap_sift_down(rr->heap, rr->nheap, 0, ends_first, rr);
	}
}

void dc_rank_rings_end(struct dc_rank_rings *rr, __u64 upto)
{
	/* A ring filling goes whole now, lest the rank lose records. */
	for (size_t i = 0; rr && i < rr->n; i++)
		drain_one(rr, &rr->rings[i], dc_ring_reader_filling(rr->rings[i].r) ? ALL : upto);
	if (rr) {
		rr->pass = false;
		if (rr->taken >= BUSY_RECORDS)
			rr->busy_until = dc_now_ns(CLOCK_MONOTONIC) + BUSY_NS;
		rr->taken = 0;
	}
}

bool dc_rank_rings_active(const struct dc_rank_rings *rr)
{
	return rr && rr->n;
}

bool dc_rank_rings_busy(const struct dc_rank_rings *rr)
{
	return rr && rr->n && dc_now_ns(CLOCK_MONOTONIC) < rr->busy_until;
}

static void snapshot_one(struct dc_rank_rings *rr, const struct ring *g, __u64 ts)
{
	for (unsigned f = 0; f < DC_WRAPPER_NFUNCS; f++) {
		struct dc_ring_counter c;
		struct dc_counter out;

		if (!dc_funcs_has(&rr->asked, f))
			continue;
		c = dc_ring_reader_counter(g->r, f);
		if (!c.count)
			continue;
		out = (struct dc_counter){ ts, g->pid, rr->ids[f], c.count, c.time_ns, c.bytes };
		dc_writer_counter(rr->w, &out);
	}
}

void dc_rank_rings_snapshot(struct dc_rank_rings *rr, __u64 ts)
{
	for (size_t i = 0; rr && rr->mode == DC_MODE_PROFILE && i < rr->n; i++)
		snapshot_one(rr, &rr->rings[i], ts);
}

/* The last of a ring, then it goes. */
static void let_go(struct dc_rank_rings *rr, size_t i, __u64 ts)
{
	struct ring *g = &rr->rings[i];
	unsigned long long lost;

	while (drain_one(rr, g, ALL) == 1)
		;
	if (rr->mode == DC_MODE_PROFILE)
		snapshot_one(rr, g, ts);
	lost = dc_ring_reader_lost(g->r);
	if (lost)
		fprintf(stderr, "dc-agent: warning: pid %u: %llu records of its " WRAPPED " lost (its ring was full); raise "
				"DC_RING_SLOTS in the job's environment\n",
			g->pid, lost);
	if (g->bad)
		fprintf(stderr, "dc-agent: warning: pid %u: %llu records of its " WRAPPED " with impossible times dropped\n", g->pid,
			g->bad);
	dc_ring_reader_free(g->r);
	if (g->pidfd >= 0)
		close(g->pidfd);
	rr->rings[i] = rr->rings[--rr->n];
	/* The heap's indices name rings by place: none is let go in a pass,
	 * and were one, the rest of the pass goes at its end. */
	rr->pass = false;
}

void dc_rank_rings_finish(struct dc_rank_rings *rr, __u32 pid, __u64 ts)
{
	for (size_t i = 0; rr && i < rr->n; i++) {
		if (rr->rings[i].pid == pid) {
			let_go(rr, i, ts);
			return;
		}
	}
}

void dc_rank_rings_sweep(struct dc_rank_rings *rr, __u64 ts)
{
	struct pollfd p[MAX_RINGS];

	if (!rr || !rr->n || ts < rr->next_sweep)
		return;
	rr->next_sweep = ts + SWEEP_NS;
	for (size_t i = 0; i < rr->n; i++)
		p[i] = (struct pollfd){ .fd = rr->rings[i].pidfd, .events = POLLIN };
	if (poll(p, rr->n, 0) <= 0)
		return;
	/* From the last: a ring let go takes the last one's place. */
	for (size_t i = rr->n; i-- > 0;)
		if (p[i].revents & (POLLIN | POLLHUP))
			let_go(rr, i, ts);
}

void dc_rank_rings_free(struct dc_rank_rings *rr, __u64 ts)
{
	if (!rr)
		return;
	while (rr->n)
		let_go(rr, rr->n - 1, ts);
	if (rr->unasked)
		fprintf(stderr, "dc-agent: warning: %llu records of " WRAPPED " not asked for were dropped\n",
			rr->unasked);
	free(rr);
}
