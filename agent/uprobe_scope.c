// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "uprobe_scope.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dc_event.h"
#include "links.h"
#include "proc_check.h"
#include "test_hooks.h"

struct plan {
	char *path;
	unsigned long *offsets;
	__u64 *cookies;
	size_t n;
};

/* Link fds, grown as made. */
struct fds {
	int *v;
	size_t n, cap;
};

struct proc {
	pid_t pid;
	int pidfd; /* readable once the process has ended */
	struct fds links;
};

struct dc_scope {
	int entry_prog, exit_prog, verbose;
	volatile __u32 *every; /* the programs' switch (dc_uprobes_every) */
	size_t max; /* DC_SCOPE_PROCS_MAX, or a test build's DC_TEST_SCOPE_PROCS */
	struct plan *plans;
	size_t nplans;
	struct proc procs[DC_SCOPE_PROCS_MAX];
	size_t nprocs;
	bool everyone;       /* past DC_SCOPE_PROCS_MAX: the plans on every process */
	struct fds global;   /* their links then */
	size_t linked;       /* processes given links, in all */
	size_t refused;      /* offsets a process's link could not take */
	/* Letting go of a link waits for the kernel's grace periods (some
	 * 40 ms each here): the links of processes that ended are closed on a
	 * thread of their own, a batch side by side, not in the agent's loop. */
	pthread_t closer;
	bool closer_runs, quit;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fds to_close;
};

static int grow(struct fds *f, int fd)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		int *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = fd;
	return 0;
}

static void *closer_main(void *arg)
{
	struct dc_scope *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct fds batch = s->to_close;

		if (!batch.n && s->quit)
			break;
		if (!batch.n) {
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		s->to_close = (struct fds){ 0 };
		pthread_mutex_unlock(&s->mu);
		dc_fds_close(batch.v, batch.n);
		free(batch.v);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* f's links handed to the closer (closed here if it cannot take them). */
static void close_fds(struct dc_scope *s, struct fds *f)
{
	if (s->closer_runs)
		pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < f->n; i++)
		if (!s->closer_runs || grow(&s->to_close, f->v[i]))
			close(f->v[i]);
	if (s->closer_runs) {
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	free(f->v);
	*f = (struct fds){ 0 };
}

struct dc_scope *dc_scope_new(int entry_prog, int exit_prog, volatile __u32 *every, int verbose)
{
	struct dc_scope *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	*s = (struct dc_scope){ .entry_prog = entry_prog, .exit_prog = exit_prog, .every = every,
				.verbose = verbose, .max = DC_SCOPE_PROCS_MAX };
	if (dc_test_count("DC_TEST_SCOPE_PROCS") > 0 && dc_test_count("DC_TEST_SCOPE_PROCS") < DC_SCOPE_PROCS_MAX)
		s->max = (size_t)dc_test_count("DC_TEST_SCOPE_PROCS");
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->closer_runs = pthread_create(&s->closer, NULL, closer_main, s) == 0;
	return s;
}

/* Where a process's (or every process's) links go. */
struct into {
	struct dc_scope *s;
	struct fds *f;
};

static int keep_into(void *ctx, int fd)
{
	return grow(((struct into *)ctx)->f, fd);
}

static void count_refused(void *ctx, size_t i)
{
	(void)i;
	((struct into *)ctx)->s->refused++;
}

/* Links of a plan's offsets [from, from + n) for pid, into f; for pid 0,
 * on every process, their cookies marked so (DC_COOKIE_EVERY). */
static int link_plan(struct dc_scope *s, const struct plan *pl, size_t from, size_t n, pid_t pid, struct fds *f)
{
	struct into in = { s, f };
	const struct dc_uprobe_sink sink = { keep_into, count_refused, &in };
	__u64 *every = NULL;
	size_t attached = 0;
	int rc;

	if (!pid && !(every = malloc((n ? n : 1) * sizeof(*every))))
		return -ENOMEM;
	for (size_t i = 0; every && i < n; i++)
		every[i] = pl->cookies[from + i] | DC_COOKIE_EVERY;
	rc = dc_uprobe_multi_pairs(s->entry_prog, s->exit_prog, pl->path, pl->offsets + from,
				   every ? every : pl->cookies + from, n, pid, &sink, &attached);
	free(every);
	return rc;
}

static void drop_proc(struct dc_scope *s, size_t i)
{
	close_fds(s, &s->procs[i].links);
	close(s->procs[i].pidfd);
	s->procs[i] = s->procs[--s->nprocs];
}

/*
 * Past the bound: every plan on every process, then the switch (the BPF
 * programs count the new links' probes and no longer the processes'), then
 * each process's links let go: a call is seen once, by one or the other.
 */
static void go_everyone(struct dc_scope *s)
{
	for (size_t i = 0; i < s->nplans; i++)
		if (link_plan(s, &s->plans[i], 0, s->plans[i].n, 0, &s->global))
			fprintf(stderr, "dc-agent: warning: cannot put the probes of %s on every process\n",
				s->plans[i].path);
	*s->every = 1;
	while (s->nprocs)
		drop_proc(s, 0);
	s->everyone = true;
	fprintf(stderr, "dc-agent: warning: more than %zu processes of the job at once: the uprobes are now "
			"on every process that maps their libraries, as on kernels before 6.13\n", s->max);
}

/* The plan of the file at path, made if new (NULL without memory). */
static struct plan *plan_of(struct dc_scope *s, const char *path)
{
	struct plan *v;

	for (size_t i = 0; i < s->nplans; i++)
		if (strcmp(s->plans[i].path, path) == 0)
			return &s->plans[i];
	if (!(v = realloc(s->plans, (s->nplans + 1) * sizeof(*v))))
		return NULL;
	s->plans = v;
	v = &s->plans[s->nplans];
	*v = (struct plan){ .path = strdup(path) };
	if (!v->path)
		return NULL;
	s->nplans++;
	return v;
}

/* A validation's links go to the closer; its refusals are marked. */
struct check {
	struct fds links;
	const struct dc_uprobe_sink *caller;
	bool *refused;
};

static int check_keep(void *ctx, int fd)
{
	return grow(&((struct check *)ctx)->links, fd);
}

static void check_refused(void *ctx, size_t i)
{
	struct check *c = ctx;

	c->refused[i] = true;
	c->caller->refused(c->caller->ctx, i);
}

/*
 * The kernel checks an instruction when it first puts a breakpoint on it,
 * in a process that maps the file: the agent maps the file itself (never
 * running it) and links to itself, so that the offsets the kernel will not
 * probe are known now, said per set as on every process, and kept out of
 * the plan. 0, or -errno.
 */
static int check_offsets(struct dc_scope *s, const char *path, const unsigned long *offsets, const __u64 *cookies,
			 size_t n, const struct dc_uprobe_sink *refused, bool *out)
{
	struct check c = { { 0 }, refused, out };
	const struct dc_uprobe_sink sink = { check_keep, check_refused, &c };
	struct stat st;
	size_t attached = 0;
	void *map = MAP_FAILED;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	rc = dc_uprobe_multi_pairs(s->entry_prog, s->exit_prog, path, offsets, cookies, n, getpid(), &sink, &attached);
	close_fds(s, &c.links);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	return rc;
}

/*
 * One plan a file, whatever the sets on it: a process's links for a file
 * are one pair, and a link costs its making (each offset's breakpoint goes
 * through every process that maps the file) and its letting go.
 */
int dc_scope_library(struct dc_scope *s, const char *path, const unsigned long *offsets, const __u64 *cookies,
		     size_t n, const struct dc_uprobe_sink *refused, size_t *planned)
{
	bool *out = calloc(n ? n : 1, sizeof(*out));
	struct plan *pl = out ? plan_of(s, path) : NULL;
	unsigned long *o = pl ? realloc(pl->offsets, (pl->n + n + 1) * sizeof(*o)) : NULL;
	__u64 *c;
	size_t from;
	int rc;

	if (o)
		pl->offsets = o;
	c = o ? realloc(pl->cookies, (pl->n + n + 1) * sizeof(*c)) : NULL;
	if (c)
		pl->cookies = c;
	if (!c || (rc = check_offsets(s, path, offsets, cookies, n, refused, out))) {
		free(out);
		return c ? rc : -ENOMEM;
	}
	from = pl->n;
	for (size_t i = 0; i < n; i++) {
		if (out[i])
			continue;
		pl->offsets[pl->n] = offsets[i];
		pl->cookies[pl->n++] = cookies[i];
	}
	free(out);
	*planned += pl->n - from;
	rc = 0;
	if (s->everyone)
		return link_plan(s, pl, from, pl->n - from, 0, &s->global);
	for (size_t i = 0; rc != -ENOMEM && i < s->nprocs; i++)
		rc = link_plan(s, pl, from, pl->n - from, s->procs[i].pid, &s->procs[i].links);
	return rc == -ENOMEM ? rc : 0;
}

int dc_scope_process(struct dc_scope *s, pid_t pid)
{
	struct proc *p;
	int rc = 0;

	dc_scope_sweep(s);
	if (s->everyone)
		return 0;
	/* A thread that exec'd took the pid: the links made for the task
	 * before it still run for the process (the kernel asks only that the
	 * caller be of the same thread group), but put no breakpoint in its
	 * new image. They go before the new ones come, or each call would be
	 * seen twice: now, while the process is held. */
	for (size_t i = 0; i < s->nprocs; i++) {
		if (s->procs[i].pid != pid)
			continue;
		dc_fds_close(s->procs[i].links.v, s->procs[i].links.n);
		s->procs[i].links.n = 0;
		drop_proc(s, i--);
	}
	if (s->nprocs == s->max) {
		go_everyone(s);
		return 0;
	}
	p = &s->procs[s->nprocs];
	*p = (struct proc){ .pid = pid, .pidfd = dc_pid_open(pid) };
	if (p->pidfd < 0)
		return -errno;
	s->nprocs++;
	for (size_t i = 0; !rc && i < s->nplans; i++)
		rc = link_plan(s, &s->plans[i], 0, s->plans[i].n, pid, &p->links);
	/* Gone meanwhile: its pid may be another's now, which the links would
	 * cost a trap a call (never a record: the programs keep to the job). */
	if (!rc && !dc_pidfd_running(p->pidfd))
		rc = -ESRCH;
	if (rc) {
		drop_proc(s, s->nprocs - 1);
		return rc;
	}
	s->linked++;
	if (s->verbose > 1)
		fprintf(stderr, "dc-agent: pid %d: %zu uprobe links of its own\n", (int)pid, p->links.n);
	return 0;
}

void dc_scope_sweep(struct dc_scope *s)
{
	for (size_t i = 0; s && i < s->nprocs; i++)
		if (!dc_pidfd_running(s->procs[i].pidfd))
			drop_proc(s, i--);
}

static void hand_over(struct fds *f, int (*keep)(void *ctx, int fd), void *ctx)
{
	for (size_t i = 0; i < f->n; i++)
		if (keep(ctx, f->v[i]))
			close(f->v[i]);
	free(f->v);
}

void dc_scope_release(struct dc_scope *s, int (*keep)(void *ctx, int fd), void *ctx)
{
	if (!s)
		return;
	if (s->closer_runs) {
		pthread_mutex_lock(&s->mu);
		s->quit = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->closer, NULL);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	if (s->verbose)
		fprintf(stderr, "dc-agent: uprobes placed in the job's processes only: %zu processes given links%s\n",
			s->linked, s->everyone ? ", then on every process (too many at once)" : "");
	if (s->refused)
		fprintf(stderr, "dc-agent: warning: %zu uprobes refused by the kernel in a process of the job\n",
			s->refused);
	for (size_t i = 0; i < s->nprocs; i++) {
		hand_over(&s->procs[i].links, keep, ctx);
		close(s->procs[i].pidfd);
	}
	hand_over(&s->global, keep, ctx);
	for (size_t i = 0; i < s->nplans; i++) {
		free(s->plans[i].path);
		free(s->plans[i].offsets);
		free(s->plans[i].cookies);
	}
	free(s->plans);
	free(s);
}
