// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "rank_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wrapper_funcs.h"

_Static_assert(DC_WRAPPER_NFUNCS <= DC_RING_MAX_FUNCS, "every call the wrapper records has a bit and a counter");


static size_t ring_size(unsigned nslots)
{
	return DC_RING_HEAD_SIZE + (size_t)nslots * DC_RING_SLOT_SIZE;
}

static struct dc_ring_rec *slot(struct dc_ring_head *h, __u64 i, unsigned nslots)
{
	return (struct dc_ring_rec *)((char *)h + DC_RING_HEAD_SIZE) + (i & (nslots - 1));
}

/* ---- the rank's side ---- */

struct dc_ring_head *dc_ring_create(unsigned nslots, int *fd)
{
	struct dc_ring_head *h;
	size_t size = ring_size(nslots);

	if (!nslots || nslots > DC_RING_SLOTS_MAX || (nslots & (nslots - 1))) {
		errno = EINVAL;
		return NULL;
	}
	*fd = memfd_create(DC_RING_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return NULL;
	/* Sealed before it is mapped or passed on: its size never changes. */
	if (ftruncate(*fd, size) || fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (h == MAP_FAILED)
		goto fail;
	h->magic = DC_RING_MAGIC;
	h->version = DC_RING_VERSION;
	h->slot_size = DC_RING_SLOT_SIZE;
	h->nslots = nslots;
	return h;
fail:
	close(*fd);
	*fd = -1;
	return NULL;
}

void dc_ring_prefault(struct dc_ring_head *h)
{
	size_t page = sysconf(_SC_PAGESIZE), size = ring_size(h->nslots);

	/* A zero written where there is a zero: nothing is committed yet, and
	 * the agent, which may already read the slots, sees what it saw. */
	for (size_t at = DC_RING_HEAD_SIZE; at < size; at += page)
		__atomic_store_n((char *)h + at, 0, __ATOMIC_RELAXED);
}

void dc_ring_destroy(struct dc_ring_head *h)
{
	if (h)
		munmap(h, ring_size(h->nslots));
}

int dc_ring_put(struct dc_ring_head *h, const struct dc_ring_rec *r, const char *path, size_t path_len)
{
	unsigned nslots = h->nslots, need;
	struct dc_ring_rec *s;
	__u64 at;

	if (path_len > DC_PATH_MAX)
		path_len = 0;
	need = 1 + DC_RING_PATH_SLOTS(path_len);
	at = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	do {
		/* The agent's tail is read only when the last reading of it says
		 * there is no room: its line then moves between the rank's cores
		 * and the agent's once a drain, not once a record. Acquire and
		 * release pass the agent's release of tail on to every producer. */
		if (at + need - __atomic_load_n(&h->tail_seen, __ATOMIC_ACQUIRE) > nslots) {
			__u64 tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);

			__atomic_store_n(&h->tail_seen, tail, __ATOMIC_RELEASE);
			if (at + need - tail > nslots) {
				__atomic_fetch_add(&h->lost, 1, __ATOMIC_RELAXED);
				return -1;
			}
		}
	} while (!__atomic_compare_exchange_n(&h->head, &at, at + need, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	s = slot(h, at, nslots);
	memcpy((char *)s + sizeof(s->commit), (const char *)r + sizeof(r->commit), sizeof(*r) - sizeof(r->commit));
	s->path_len = path_len;
	for (unsigned i = 1, done = 0; i < need; i++, done += DC_RING_SLOT_SIZE) {
		size_t n = path_len - done < DC_RING_SLOT_SIZE ? path_len - done : DC_RING_SLOT_SIZE;

		memcpy(slot(h, at + i, nslots), path + done, n);
	}
	__atomic_store_n(&s->commit, DC_RING_COMMITTED | need, __ATOMIC_RELEASE);
	return 0;
}

void dc_ring_count(struct dc_ring_head *h, unsigned f, __u64 time_ns, __u64 bytes)
{
	struct dc_ring_counter *c;

	if (f >= DC_RING_MAX_FUNCS)
		return;
	c = &h->counters[f];
	__atomic_fetch_add(&c->count, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->time_ns, time_ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
}

/* ---- the agent's side ---- */

struct dc_ring_reader {
	int fd;
	struct dc_ring_head *h;
	size_t size;
	unsigned nslots; /* the agent's copies: never read back from the region */
	__u64 tail;
	__u64 head;      /* the rank's head when last read: records up to it are taken first */
	__u64 published; /* the tail the rank was last shown */
	__u64 taken;
	const char *problem;
};

static struct dc_ring_reader *refuse(struct dc_ring_reader *r, char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	dc_ring_reader_free(r);
	return NULL;
}

struct dc_ring_reader *dc_ring_reader_open(int fd, char *why, size_t whylen)
{
	struct dc_ring_reader *r = calloc(1, sizeof(*r));
	struct dc_ring_head copy;
	struct stat st;
	int seals;

	if (!r) {
		close(fd);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	r->fd = fd;
	/* Only a memfd has seals; without F_SEAL_SHRINK the rank could cut the
	 * file under the agent's mapping and fault it. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return refuse(r, why, whylen, DC_RING_NOT_MEMFD);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < DC_RING_HEAD_SIZE ||
	    (size_t)st.st_size > ring_size(DC_RING_SLOTS_MAX))
		return refuse(r, why, whylen, "the rank's ring has an impossible size");
	r->size = st.st_size;
	r->h = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->h == MAP_FAILED) {
		r->h = NULL;
		return refuse(r, why, whylen, "the rank's ring cannot be mapped");
	}
	memcpy(&copy, r->h, sizeof(copy));
	if (copy.magic != DC_RING_MAGIC || copy.version != DC_RING_VERSION || copy.slot_size != DC_RING_SLOT_SIZE)
		return refuse(r, why, whylen, "the rank's ring is of another version (libdcpmpi.so and dc-agent differ)");
	if (!copy.nslots || copy.nslots > DC_RING_SLOTS_MAX || (copy.nslots & (copy.nslots - 1)) ||
	    ring_size(copy.nslots) != r->size)
		return refuse(r, why, whylen, "the MPI-IO ring's slot count does not match its size");
	r->nslots = copy.nslots;
	/* Whatever the rank wrote before it registered counts from here. */
	r->tail = r->head = r->published = __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE);
	r->h->mode = DC_RING_OFF;
	memset(&r->h->funcs_on, 0, sizeof(r->h->funcs_on));
	__atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);
	return r;
}

void dc_ring_reader_start(struct dc_ring_reader *r, enum dc_ring_mode mode, const struct dc_funcs *funcs_on)
{
	r->h->funcs_on = *funcs_on;
	__atomic_store_n(&r->h->mode, mode, __ATOMIC_RELEASE);
}

static enum dc_ring_next damaged(struct dc_ring_reader *r, const char *what)
{
	r->problem = what;
	return DC_RING_DAMAGED;
}

/*
 * Shows the rank the slots taken so far (their commit words zeroed before
 * it): once the agent has caught up, and on the way past each
 * 1/DC_RING_PUBLISH_SHARE of the ring, not once a record, so that the
 * line holding tail moves to the rank's cores once a drain.
 */
#define DC_RING_PUBLISH_SHARE 8

static void publish(struct dc_ring_reader *r)
{
	r->published = r->tail;
	__atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);
}

static enum dc_ring_next empty(struct dc_ring_reader *r)
{
	if (r->published != r->tail)
		publish(r);
	return DC_RING_EMPTY;
}

/* Copies n slots from the agent's tail on, across the ring's end. */
static void copy_slots(struct dc_ring_reader *r, __u64 from, unsigned n, void *out)
{
	for (unsigned i = 0; i < n; i++)
		memcpy((char *)out + i * DC_RING_SLOT_SIZE, slot(r->h, from + i, r->nslots), DC_RING_SLOT_SIZE);
}

/*
 * The commit word of the record at tail, or DC_RING_EMPTY's 0 when there is
 * none yet (tail shown to the rank) and DC_RING_DAMAGED when head is past
 * what the ring holds. Head is read again only once the records up to its
 * last reading are taken: its line stays with the rank's producers
 * meanwhile.
 */
static __u32 next_commit(struct dc_ring_reader *r, enum dc_ring_next *state)
{
	__u32 commit;

	if (r->tail == r->head) {
		__u64 head = __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE);

		if (head - r->tail > r->nslots) {
			*state = damaged(r, "its head is past what the ring holds");
			return 0;
		}
		r->head = head;
	}
	commit = r->head == r->tail ? 0 : __atomic_load_n(&slot(r->h, r->tail, r->nslots)->commit, __ATOMIC_ACQUIRE);
	/* Not committed: a producer is still writing it. */
	if (!(commit & DC_RING_COMMITTED)) {
		*state = empty(r);
		return 0;
	}
	*state = DC_RING_RECORD;
	return commit;
}

bool dc_ring_reader_peek_end(struct dc_ring_reader *r, __u64 *end)
{
	const struct dc_ring_rec *s;
	enum dc_ring_next state;
	__u64 ts, dur;

	if (r->problem)
		return false;
	next_commit(r, &state);
	if (state == DC_RING_EMPTY)
		return false;
	*end = 0; /* damaged: taken at once, and found so */
	if (state != DC_RING_RECORD)
		return true;
	/* The rank may change these before the record is copied: they say
	 * only when it is taken, and the copy is checked then. */
	s = slot(r->h, r->tail, r->nslots);
	ts = __atomic_load_n(&s->ts, __ATOMIC_RELAXED);
	dur = __atomic_load_n(&s->dur, __ATOMIC_RELAXED);
	*end = ts + dur < ts ? ~0ull : ts + dur;
	return true;
}

bool dc_ring_reader_filling(struct dc_ring_reader *r)
{
	__u64 head = __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE);

	return head - r->tail >= r->nslots / 4;
}

enum dc_ring_next dc_ring_reader_next(struct dc_ring_reader *r, struct dc_ring_rec *out, char *path)
{
	char scratch[DC_RING_PATH_SLOTS(DC_PATH_MAX) * DC_RING_SLOT_SIZE];
	enum dc_ring_next state;
	__u64 avail;
	__u32 commit;
	unsigned n;

	if (r->problem)
		return DC_RING_DAMAGED;
	commit = next_commit(r, &state);
	if (state != DC_RING_RECORD)
		return state;
	avail = r->head - r->tail;
	n = commit & ~DC_RING_COMMITTED;
	if (!n || n > DC_RING_REC_MAX_SLOTS || n > avail)
		return damaged(r, "a record claims more slots than it may have");
	copy_slots(r, r->tail, 1, out);
	if (out->path_len > DC_PATH_MAX || n != 1 + DC_RING_PATH_SLOTS(out->path_len))
		return damaged(r, "a record's path length does not match its slots");
	if (out->func >= DC_WRAPPER_NFUNCS)
		return damaged(r, "a record names no function the wrapper records");
	if (out->path_len) {
		copy_slots(r, r->tail + 1, n - 1, scratch);
		memcpy(path, scratch, out->path_len);
		path[out->path_len - 1] = 0;
	}
	/* Freed slots start zeroed, so no stale commit word is ever read as a
	 * new record's. */
	for (unsigned i = 0; i < n; i++)
		__atomic_store_n(&slot(r->h, r->tail + i, r->nslots)->commit, 0, __ATOMIC_RELAXED);
	r->tail += n;
	r->taken++;
	if (r->tail - r->published >= r->nslots / DC_RING_PUBLISH_SHARE)
		publish(r);
	return DC_RING_RECORD;
}

struct dc_ring_counter dc_ring_reader_counter(const struct dc_ring_reader *r, unsigned f)
{
	struct dc_ring_counter c = { 0 };

	if (f < DC_RING_MAX_FUNCS) {
		c.count = __atomic_load_n(&r->h->counters[f].count, __ATOMIC_RELAXED);
		c.time_ns = __atomic_load_n(&r->h->counters[f].time_ns, __ATOMIC_RELAXED);
		c.bytes = __atomic_load_n(&r->h->counters[f].bytes, __ATOMIC_RELAXED);
	}
	return c;
}

__u64 dc_ring_reader_lost(const struct dc_ring_reader *r)
{
	return __atomic_load_n(&r->h->lost, __ATOMIC_RELAXED);
}

__u64 dc_ring_reader_taken(const struct dc_ring_reader *r)
{
	return r->taken;
}

const char *dc_ring_reader_problem(const struct dc_ring_reader *r)
{
	return r->problem;
}

void dc_ring_reader_free(struct dc_ring_reader *r)
{
	if (!r)
		return;
	if (r->h) {
		/* The rank takes nothing more to be lost: off before letting go. */
		__atomic_store_n(&r->h->mode, DC_RING_OFF, __ATOMIC_RELEASE);
		munmap(r->h, r->size);
	}
	close(r->fd);
	free(r);
}
