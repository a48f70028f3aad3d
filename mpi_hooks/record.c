// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The records of the wrapped calls (record.h), in the ring the agent
 * drains: no kernel entry per call. The clock is the vDSO's
 * CLOCK_MONOTONIC (bpf_ktime_get_ns's clock) and the thread id is cached,
 * so the system calls inside nest under their call in every output.
 */
#include "record.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "path_join.h"
#include "rank_ring.h"
#include "wrapper_funcs.h"

static struct dc_ring_head *ring;
static struct dc_funcs funcs_on;
static __thread __u32 my_tid;

static void (*volatile starter)(void);

void dc_record_start_later(void (*start)(void))
{
	__atomic_store_n(&starter, start, __ATOMIC_RELEASE);
}

static inline int want(int f)
{
	struct dc_ring_head *h = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);

	return h && dc_funcs_has(&funcs_on, f) && __atomic_load_n(&h->mode, __ATOMIC_RELAXED) != DC_RING_OFF;
}

int dc_wrap_want(int f)
{
	void (*start)(void);

	if (__builtin_expect(!__atomic_load_n(&ring, __ATOMIC_RELAXED) && starter, 0)) {
		/* Once, by the first thread to get here; the start's own calls
		 * (a warning's fprintf) find no starter. */
		start = __atomic_exchange_n(&starter, NULL, __ATOMIC_ACQ_REL);
		if (start)
			start();
	}
	return want(f);
}

/* The objects loaded, by name, in load order (dl_iterate_phdr), to be
 * looked into after the walk: dlopen is not for inside it. */
#define MAX_OBJECTS 1024

struct loaded {
	char *names[MAX_OBJECTS];
	size_t n;
};

static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded *l = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && l->n < MAX_OBJECTS)
		l->names[l->n++] = strdup(info->dlpi_name);
	return 0;
}

/*
 * name's definition in a library that is not in the global scope, where
 * dlsym(RTLD_NEXT) does not look: one that a module opened with dlopen
 * brought along (h5py's HDF5, Python's or any plugin's). The first object
 * whose own scope has it, this library's definition aside. NULL if none.
 */
static void *next_loaded(const char *name)
{
	struct loaded *l = calloc(1, sizeof(*l));
	Dl_info self, def;
	void *fn = NULL;

	if (!l || !dladdr((void *)next_loaded, &self)) {
		free(l);
		return NULL;
	}
	dl_iterate_phdr(note_object, l);
	for (size_t i = 0; i < l->n; i++) {
		void *h = l->names[i] && !fn ? dlopen(l->names[i], RTLD_LAZY | RTLD_NOLOAD) : NULL;
		void *f = h ? dlsym(h, name) : NULL;

		if (f && dladdr(f, &def) && def.dli_fbase != self.dli_fbase)
			fn = f;
		if (h)
			dlclose(h);
		free(l->names[i]);
	}
	free(l);
	return fn;
}

void *dc_next(const char *name, void **cache)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!fn) {
		/* Two threads may both look: the same answer. */
		fn = dlsym(RTLD_NEXT, name);
		if (!fn)
			fn = next_loaded(name);
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* The kernel's thread id, asked once per thread (a fork's child asks anew). */
static __u32 tid(void)
{
	if (!my_tid)
		my_tid = syscall(SYS_gettid);
	return my_tid;
}

static void forget_tid(void)
{
	my_tid = 0;
}

/*
 * A file's name as the call gave it, made absolute against the working
 * directory when it is relative (as the kernel names the files of every
 * other level; a ROMIO prefix kept): a file is opened or made in no
 * parent, where an HDF5 object's name is relative to its parent's. The
 * name itself where nothing is to be done or the result would not fit.
 */
static const char *absolute(const struct call *c, char *out, size_t n)
{
	char cwd[DC_PATH_MAX];
	int rc;

	if (c->parent || c->path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return c->path;
	/* HDF5 and the C library name a file as it is: a colon in it is no
	 * ROMIO prefix. */
	rc = c->f < DC_MPIIO_NFUNCS ? dc_path_absolute(cwd, c->path, out, n) : dc_path_join(cwd, c->path, out, n);
	return rc == 0 ? out : c->path;
}

void dc_record_put(const struct call *c, long long rc, __u64 end)
{
	char abs[DC_PATH_MAX];
	const char *path;
	struct dc_ring_head *h = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
	struct dc_ring_rec r;
	size_t len = 0;
	int cpu;

	if (!h)
		return;
	if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) == DC_RING_PROFILE) {
		dc_ring_count(h, c->f, end - c->ts, c->bytes);
		return;
	}
	cpu = sched_getcpu();
	memset(&r, 0, sizeof(r));
	r.tid = tid();
	r.func = c->f;
	r.cpu = cpu < 0 ? 0 : cpu;
	r.flags = (c->has_offset ? DC_RING_REC_OFFSET : 0) | (c->names ? DC_RING_REC_NAMES : 0);
	r.ret = rc;
	r.ts = c->ts;
	r.dur = end - c->ts;
	r.req = c->req;
	r.bytes = c->bytes;
	r.offset = c->offset;
	r.handle = c->handle;
	r.parent = c->parent;
	path = c->path && !c->names ? absolute(c, abs, sizeof(abs)) : c->path;
	if (path)
		len = strnlen(path, DC_PATH_MAX - 1) + 1;
	dc_ring_put(h, &r, path, len);
}

void dc_record_start(struct dc_ring_head *h)
{
	static int atfork_set;

	if (!atfork_set++)
		pthread_atfork(NULL, NULL, forget_tid);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	funcs_on = h->funcs_on;
	__atomic_store_n(&ring, h, __ATOMIC_RELEASE);
}

void dc_record_stop(void)
{
	__atomic_store_n(&ring, NULL, __ATOMIC_RELEASE);
}
