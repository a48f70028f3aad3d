// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "recorder.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_proto.h"
#include "hashtab.h"
#include "nodefile.h"

/* Key spaces of the files table: fds and stream handles of a pid. */
#define FD_KEY(pid) ((uint64_t)(pid))
#define HANDLE_KEY(pid) ((uint64_t)(pid) | (1ull << 32))
/* How far up the fork tree an inherited fd is looked for. */
#define MAX_ANCESTORS 8
#define MAX_PENDING_EXITS 4096
/* In a files entry: a call named it; a close has come since. */
#define KNOWN (1ull << 32)
#define CLOSED (1ull << 33)
#define PATH_OF(v) ((__u32)(v))

/*
 * What each fd and handle names. Events arrive as calls end, inner calls
 * first: the close system call before the libc close around it, which must
 * still name the file. So a close does not forget the name; it records when
 * it began, and the name stays good for calls that began before it. A call
 * that names the fd or handle again (open, fopen) starts a new name.
 * A files entry says whether a call named it (KNOWN) and whether a close
 * came since (CLOSED): most calls are on an fd no one has closed, and cost
 * that one lookup.
 */
struct dc_recorder {
	struct dc_writer *w;
	struct dc_hashtab *files;     /* (pid key, fd or handle) -> path string id (0 for none) | KNOWN | CLOSED */
	struct dc_hashtab *named_at;  /* ... -> start of the call that named it */
	struct dc_hashtab *closed_at; /* ... -> start of its first close since */
	/* A handle made inside another (an HDF5 dataset in a file or group):
	 * (pid key, handle) -> its file's path id << 32 | its path inside it. */
	struct dc_hashtab *inside;
	struct dc_hashtab *parents; /* (pid, 0) -> ppid */
	struct dc_hashtab *ranks;   /* (pid, 0) -> its DC_CTL_REGISTER message's rank, world, finalized */
	__u32 pending[MAX_PENDING_EXITS];
	size_t npending;
	/* Programs whose environment --match-env could not read whole: how
	 * many, and the first names, comma-separated (the job user's bytes). */
	unsigned long long env_unread;
	char env_unread_names[128];
};

struct dc_recorder *dc_recorder_new(struct dc_writer *w)
{
	struct dc_recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->w = w;
	r->files = dc_hashtab_new(4096);
	r->named_at = dc_hashtab_new(4096);
	r->closed_at = dc_hashtab_new(1024);
	r->inside = dc_hashtab_new(256);
	r->parents = dc_hashtab_new(256);
	r->ranks = dc_hashtab_new(64);
	if (!r->files || !r->named_at || !r->closed_at || !r->inside || !r->parents || !r->ranks) {
		dc_recorder_free(r);
		return NULL;
	}
	return r;
}

void dc_recorder_free(struct dc_recorder *r)
{
	if (!r)
		return;
	dc_hashtab_free(r->files);
	dc_hashtab_free(r->named_at);
	dc_hashtab_free(r->closed_at);
	dc_hashtab_free(r->inside);
	dc_hashtab_free(r->parents);
	dc_hashtab_free(r->ranks);
	free(r);
}

static void name_it(struct dc_recorder *r, uint64_t key, uint64_t what, __u32 path, __u64 ts)
{
	dc_hashtab_put(r->files, key, what, path | KNOWN);
	dc_hashtab_put(r->named_at, key, what, ts);
}

static void close_it(struct dc_recorder *r, uint64_t key, uint64_t what, __u64 ts)
{
	uint64_t named = 0, closed, v = 0;

	dc_hashtab_get(r->named_at, key, what, &named);
	if (!dc_hashtab_get(r->closed_at, key, what, &closed) || closed < named || ts < closed)
		dc_hashtab_put(r->closed_at, key, what, ts);
	dc_hashtab_get(r->files, key, what, &v);
	dc_hashtab_put(r->files, key, what, v | CLOSED);
}

/* 1 and the path (0 if closed before the call at ts began) when this pid
 * knows the fd or handle, 0 when it does not. */
static int name_of(const struct dc_recorder *r, uint64_t key, uint64_t what, __u64 ts, uint64_t *path)
{
	uint64_t v, named = 0, closed;

	if (!dc_hashtab_get(r->files, key, what, &v))
		return 0;
	*path = PATH_OF(v);
	if (!(v & CLOSED))
		return 1; /* named, and no close since */
	dc_hashtab_get(r->named_at, key, what, &named);
	if (dc_hashtab_get(r->closed_at, key, what, &closed) && closed >= named && ts > closed) {
		*path = 0;
		return 1;
	}
	return (v & KNOWN) != 0;
}

/* fds survive fork and exec: a child finds what its ancestors opened, unless
 * it closed the fd itself. */
static __u32 lookup_fd(const struct dc_recorder *r, __u32 pid, __s32 fd, __u64 ts)
{
	uint64_t id, ppid;

	for (int i = 0; i < MAX_ANCESTORS; i++) {
		if (i == 0 ? name_of(r, FD_KEY(pid), (uint32_t)fd, ts, &id)
			   : dc_hashtab_get(r->files, FD_KEY(pid), (uint32_t)fd, &id) && (id & KNOWN))
			return PATH_OF(id);
		if (!dc_hashtab_get(r->parents, pid, 0, &ppid))
			break;
		pid = ppid;
	}
	return 0;
}

/*
 * A handle made or opened inside another (H5Dcreate(loc_id, name)) is
 * named FILE:OBJECT, the file's path and the object's inside it, as
 * Darshan names datasets: a name relative to a group goes on from the
 * group's path, an absolute one from the file's root. Returns its path id
 * (0: the parent is not known, and the name stays as it is).
 */
static __u32 name_inside(struct dc_recorder *r, __u32 pid, __u64 parent, __u64 handle, const char *name)
{
	uint64_t in = 0, file;
	const char *base = "", *fpath;
	/* Each at most a path as long as the kernel takes: a longer one is not
	 * made, and the object keeps its name as the call gave it. */
	char obj[DC_PATH_MAX], full[DC_PATH_MAX];
	__u32 objid;
	int n;

	if (dc_hashtab_get(r->inside, HANDLE_KEY(pid), parent, &in)) {
		file = in >> 32;
		base = dc_writer_string_of(r->w, (__u32)in);
	} else if (dc_hashtab_get(r->files, HANDLE_KEY(pid), parent, &file) && (file & KNOWN)) {
		file = PATH_OF(file);
	} else {
		return 0;
	}
	if (!(fpath = dc_writer_string_of(r->w, (__u32)file)) || !base)
		return 0;
	if (name[0] == '/')
		n = snprintf(obj, sizeof(obj), "%s", name);
	else
		n = snprintf(obj, sizeof(obj), "%s/%s", strcmp(base, "/") ? base : "", name);
	if (n < 0 || (size_t)n >= sizeof(obj))
		return 0;
	n = snprintf(full, sizeof(full), "%s:%s", fpath, obj);
	if (n < 0 || (size_t)n >= sizeof(full))
		return 0;
	objid = dc_writer_string(r->w, obj);
	if (objid)
		dc_hashtab_put(r->inside, HANDLE_KEY(pid), handle, file << 32 | objid);
	return dc_writer_string(r->w, full);
}

static void resolve_path(struct dc_recorder *r, struct dc_msg_call *m)
{
	struct dc_event *e = &m->ev;
	bool has_fd = e->flags & DC_EV_FD && e->fd >= 0, has_handle = e->flags & DC_EV_HANDLE && m->handle;
	uint64_t id;

	if (m->path_len) {
		m->path[m->path_len - 1] = 0;
		if (m->parent && has_handle && (e->flags & DC_EV_NEW_HANDLE))
			e->path = name_inside(r, e->pid, m->parent, m->handle, m->path);
		if (!e->path)
			e->path = dc_writer_string(r->w, m->path);
	} else if (has_handle && name_of(r, HANDLE_KEY(e->pid), m->handle, e->ts, &id)) {
		e->path = id;
	}
	if (!e->path && has_fd)
		e->path = lookup_fd(r, e->pid, e->fd, e->ts);
	/* An open-like call that succeeded names what its fd/handle now is;
	 * a new handle of no known path (fdopen of a pipe) names nothing. */
	if (has_fd && (e->flags & DC_EV_PATHARG) && e->ret == e->fd && e->path)
		name_it(r, FD_KEY(e->pid), (uint32_t)e->fd, e->path, e->ts);
	if (has_handle && (e->flags & DC_EV_NEW_HANDLE))
		name_it(r, HANDLE_KEY(e->pid), m->handle, e->path, e->ts);
	if (e->flags & DC_EV_CLOSES) {
		if (has_fd)
			close_it(r, FD_KEY(e->pid), (uint32_t)e->fd, e->ts);
		if (has_handle)
			close_it(r, HANDLE_KEY(e->pid), m->handle, e->ts);
	}
}

static int handle_call(struct dc_recorder *r, const struct dc_msg_call *msg, size_t len)
{
	struct dc_msg_call m;

	if (len < DC_MSG_CALL_BASE || msg->path_len > DC_PATH_MAX || len < DC_MSG_CALL_SIZE(msg->path_len))
		return 0;
	/* The ring buffer is mapped read-only: work on a copy. */
	memcpy(&m, msg, DC_MSG_CALL_SIZE(msg->path_len));
	resolve_path(r, &m);
	return dc_writer_event(r->w, &m.ev);
}

int dc_recorder_call(struct dc_recorder *r, struct dc_msg_call *m)
{
	if (m->path_len > DC_PATH_MAX)
		return 0;
	resolve_path(r, m);
	return dc_writer_event(r->w, &m->ev);
}

/* Rank, world size and finalized flag packed in one table value. */
#define RANK_VALUE(rank, world, fin) ((uint64_t)(uint32_t)(rank) | (uint64_t)(world) << 32 | (uint64_t)(fin) << 63)

static int write_rank(struct dc_recorder *r, __u32 pid, int rank, int world, __u32 kind, __s64 offset,
		      __u64 error, __u64 ts)
{
	struct dc_rank rec = { ts, pid, rank, world, kind, offset, error };

	return dc_writer_rank(r->w, &rec);
}

/* A rank that ends without MPI_Finalize is marked so in the node file. */
static void note_rank_exit(struct dc_recorder *r, const struct dc_proc *p)
{
	uint64_t v;

	if (!dc_hashtab_get(r->ranks, p->pid, 0, &v))
		return;
	if (!(v >> 63))
		write_rank(r, p->pid, (int32_t)(uint32_t)v, (v >> 32) & 0x7fffffff, DC_RANK_NO_FINALIZE, 0, 0, p->ts);
	dc_hashtab_del(r->ranks, p->pid, 0);
}

static void note_exit(struct dc_recorder *r, const struct dc_proc *p)
{
	note_rank_exit(r, p);
	for (int i = 0; i < 2; i++) {
		uint64_t key = i ? HANDLE_KEY(p->pid) : FD_KEY(p->pid);

		dc_hashtab_del_k1(r->files, key);
		dc_hashtab_del_k1(r->named_at, key);
		dc_hashtab_del_k1(r->closed_at, key);
		dc_hashtab_del_k1(r->inside, key);
	}
	if (r->npending < MAX_PENDING_EXITS)
		r->pending[r->npending++] = p->pid;
}

static void note_env_unread(struct dc_recorder *r, const struct dc_proc *p)
{
	char *names = r->env_unread_names;
	size_t used = strlen(names);

	if (r->env_unread++ < 8)
		snprintf(names + used, sizeof(r->env_unread_names) - used, "%s%.*s", used ? ", " : "", DC_COMM_LEN,
			 p->comm);
}

unsigned long long dc_recorder_env_unread(const struct dc_recorder *r, const char **names)
{
	*names = r->env_unread_names;
	return r->env_unread;
}

static int handle_proc(struct dc_recorder *r, const struct dc_msg_proc *m, size_t len)
{
	const struct dc_proc *p = &m->proc;

	if (len < sizeof(*m))
		return 0;
	if (p->kind == DC_PROC_ENV_UNREAD) {
		note_env_unread(r, p);
		return 0;
	}
	if (p->kind == DC_PROC_FORK)
		dc_hashtab_put(r->parents, p->pid, 0, p->ppid);
	/* One that left the job is, to the trace, one that ended. */
	if (p->kind == DC_PROC_EXIT || p->kind == DC_PROC_LEFT)
		note_exit(r, p);
	/* A Slurm task joined: the kernel side read its SLURM_PROCID. */
	if (p->kind == DC_PROC_START && m->slurm_task)
		write_rank(r, p->pid, (int)(m->slurm_task - 1), 0, DC_RANK_SLURM_TASK, 0, 0, p->ts);
	return dc_writer_proc(r->w, p);
}

__u64 dc_recorder_msg_time(const void *data, size_t len)
{
	const struct dc_msg_call *c = data;
	const struct dc_msg_proc *p = data;
	__u32 type;

	if (len < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	if (type == DC_MSG_CALL && len >= DC_MSG_CALL_BASE)
		return c->ev.ts + c->ev.dur;
	if (type == DC_MSG_PROC && len >= sizeof(*p))
		return p->proc.ts;
	return 0;
}

void dc_recorder_handle(struct dc_recorder *r, void *data, size_t len)
{
	__u32 type;

	if (len < sizeof(type))
		return;
	memcpy(&type, data, sizeof(type));
	/* A failed write is kept in the writer and reported by the caller;
	 * returning 0 keeps the ring buffer drained so the job never blocks. */
	if (type == DC_MSG_CALL)
		handle_call(r, data, len);
	else if (type == DC_MSG_PROC)
		handle_proc(r, data, len);
}

/* Files already open when tracing starts (stdin/out/err, inherited fds). */
static void take_open_fds(struct dc_recorder *r, __u32 pid, const int *skip, int nskip)
{
	char dir[64], link[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		bool agents = false;
		ssize_t n;

		if (*end || de->d_name[0] == '.')
			continue;
		for (int i = 0; i < nskip; i++)
			agents |= skip[i] == fd;
		if (agents)
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		dc_hashtab_put(r->files, FD_KEY(pid), (uint32_t)fd, dc_writer_string(r->w, target) | KNOWN);
	}
	closedir(d);
}

static void read_comm(__u32 pid, char *comm)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	memset(comm, 0, DC_COMM_LEN);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, DC_COMM_LEN, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

static __u32 read_ppid(__u32 pid)
{
	char path[64], buf[512], *p;
	unsigned ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	/* comm may hold spaces and parentheses: parse after the last ')'. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %u", &ppid);
	fclose(f);
	return ppid;
}

int dc_recorder_start_process(struct dc_recorder *r, __u32 pid, __u64 ts, const int *skip, int nskip)
{
	struct dc_proc p = { .ts = ts, .pid = pid, .ppid = read_ppid(pid), .kind = DC_PROC_START };

	read_comm(pid, p.comm);
	take_open_fds(r, pid, skip, nskip);
	return dc_writer_proc(r->w, &p);
}

int dc_recorder_rank(struct dc_recorder *r, const struct dc_ctl_msg *m, __u64 ts)
{
	bool fin = m->type == DC_CTL_FINALIZE;

	dc_hashtab_put(r->ranks, m->pid, 0, RANK_VALUE(m->rank, m->world_size, fin));
	return write_rank(r, m->pid, m->rank, m->world_size, fin ? DC_RANK_FINALIZE : DC_RANK_REGISTER,
			  m->clock_offset_ns, m->clock_error_ns, ts);
}

size_t dc_recorder_take_exited(struct dc_recorder *r, __u32 *pids, size_t max)
{
	size_t n = r->npending < max ? r->npending : max;

	memcpy(pids, r->pending, n * sizeof(*pids));
	memmove(r->pending, r->pending + n, (r->npending - n) * sizeof(*pids));
	r->npending -= n;
	return n;
}
