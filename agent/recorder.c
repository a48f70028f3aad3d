// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_proto.h"
#include "hashtab.h"
#include "nodefile.h"
#include "path_join.h"
#include "rank_ring.h"

/* The key space of the handles table: a pid's stream and library handles. */
#define HANDLE_KEY(pid) ((uint64_t)(pid) | (1ull << 32))
#define MAX_PENDING_EXITS 4096
/* In a files entry: a call named it; a close has come since. */
#define KNOWN (1ull << 32)
#define CLOSED (1ull << 33)
#define PATH_OF(v) ((__u32)(v))
/* In kfiles: a ring's memfd (rank_ring.h), whose calls are not the program's. */
#define OURS (1ull << 34)

/*
 * A call on a descriptor names its file as the kernel knows it: the BPF
 * side sends the struct file the descriptor named, with its absolute path
 * the first time (kfiles keeps it). Handles (a FILE *, an MPI_File, an
 * HDF5 id) are the library's, and named here from the call that made
 * them. Events arrive as calls end, inner calls first: the fclose system
 * call's close before the fclose around it, which must still name the
 * stream. So a close does not forget the name; it records when it began,
 * and the name stays good for calls that began before it. A call that
 * names the handle again (fopen) starts a new name. A files entry says
 * whether a call named it (KNOWN) and whether a close came since (CLOSED):
 * most calls are on a handle no one has closed, and cost that one lookup.
 */
struct dc_recorder {
	struct dc_writer *w;
	/* (struct file, the low half of its identity: its inode's, from the
	 * BPF side) -> the path string id it was sent as: every file seen at
	 * an address, each apart. A call on a file ends after the files that
	 * took its address since: its close, from another CPU, after the next
	 * file's name, or a pclose that waits for its child while the child's
	 * opens and closes take the freed address again and again. As many
	 * entries as files named, whose paths the node file holds anyway. */
	struct dc_hashtab *kfiles;
	struct dc_hashtab *files;     /* (pid key, handle) -> path string id (0 for none) | KNOWN | CLOSED */
	struct dc_hashtab *named_at;  /* ... -> start of the call that named it */
	struct dc_hashtab *closed_at; /* ... -> start of its first close since */
	/* A handle made inside another (an HDF5 dataset in a file or group):
	 * (pid key, handle) -> its file's path id << 32 | its path inside it. */
	struct dc_hashtab *inside;
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
	r->kfiles = dc_hashtab_new(4096);
	r->files = dc_hashtab_new(4096);
	r->named_at = dc_hashtab_new(4096);
	r->closed_at = dc_hashtab_new(1024);
	r->inside = dc_hashtab_new(256);
	r->ranks = dc_hashtab_new(64);
	if (!r->kfiles || !r->files || !r->named_at || !r->closed_at || !r->inside || !r->ranks) {
		dc_recorder_free(r);
		return NULL;
	}
	return r;
}

void dc_recorder_free(struct dc_recorder *r)
{
	if (!r)
		return;
	dc_hashtab_free(r->kfiles);
	dc_hashtab_free(r->files);
	dc_hashtab_free(r->named_at);
	dc_hashtab_free(r->closed_at);
	dc_hashtab_free(r->inside);
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

/* The passed name made absolute against the folder the kernel named;
 * the name as given where there is none or it does not fit. */
static __u32 absolute_name(struct dc_recorder *r, const char *name, const char *dir)
{
	char full[DC_PATH_MAX];

	/* An absolute name is cleaned by the same rule ("/a//b/" is /a/b,
	 * the file the kernel takes it for). */
	if (name[0] == '/')
		dir = "/";
	if (dir && dc_path_join(dir, name, full, sizeof(full)) == 0)
		return dc_writer_string(r->w, full);
	return dc_writer_string(r->w, name);
}

/* The path of the kernel's file a descriptor named (its struct file and
 * identity): the one an open or a DC_MSG_FILE gave last; 0 where the
 * kernel had none to give. */
static __u32 kernel_file(struct dc_recorder *r, __u64 file, __u64 inode)
{
	uint64_t v;

	return dc_hashtab_get(r->kfiles, file, (uint32_t)inode, &v) ? PATH_OF(v) : 0;
}

/* Whether the kernel's name is that of a ring's memfd ("memfd:NAME", after
 * a prefix that tells the file system, a " (deleted)" suffix or not). */
static bool ring_memfd(const char *kpath)
{
	static const char name[] = "memfd:" DC_RING_MEMFD_NAME;
	const char *at = strstr(kpath, name);

	return at && (at == kpath || at[-1] == ':' || at[-1] == '/') &&
	       (!at[sizeof(name) - 1] || strcmp(at + sizeof(name) - 1, " (deleted)") == 0);
}

/* What the kernel names a file now (0: nothing), for the calls on it. */
static void name_kernel_file(struct dc_recorder *r, __u64 file, __u64 inode, const char *kpath)
{
	__u32 id = kpath ? dc_writer_string(r->w, kpath) : 0;

	if (id)
		dc_hashtab_put(r->kfiles, file, (uint32_t)inode, id | (ring_memfd(kpath) ? OURS : 0));
	else
		dc_hashtab_del(r->kfiles, file, (uint32_t)inode);
}

/* Whether a call was made on a ring's memfd (by libdcpmpi.so or
 * libdcpreload.so, setting the ring up): not the program's I/O. */
static bool on_ring(const struct dc_recorder *r, const struct dc_msg_call *m)
{
	uint64_t v;

	return m->file && dc_hashtab_get(r->kfiles, m->file, (uint32_t)m->inode, &v) && (v & OURS);
}

/* The next len bytes at *p as a string (NULL for none), made whole. */
static const char *take_name(char **p, __u16 len)
{
	char *name = *p;

	if (!len)
		return NULL;
	name[len - 1] = 0;
	*p += len;
	return name;
}

static void resolve_path(struct dc_recorder *r, struct dc_msg_call *m)
{
	struct dc_event *e = &m->ev;
	bool has_handle = e->flags & DC_EV_HANDLE && m->handle;
	const char *name = NULL, *name2 = NULL, *kpath = NULL, *kpath2 = NULL;
	char *p = m->path;
	uint64_t id;

	e->path = 0;
	e->path2 = m->file2 ? kernel_file(r, m->file2, m->inode2) : 0;
	/* The names in path[], in order, each cut at its last byte. */
	name = take_name(&p, m->path_len);
	name2 = take_name(&p, m->path2_len);
	kpath = take_name(&p, m->kpath_len);
	kpath2 = take_name(&p, m->kpath2_len);
	/* A second name (rename's new one): in the first relative name's
	 * folder when it has no other. */
	if (name2)
		e->path2 = absolute_name(r, name2, name && name[0] != '/' && kpath2 ? kpath2 : kpath);
	/* A new descriptor (an open) or stream (fopen) comes with its file's
	 * path, or none. */
	if (m->file && (e->flags & DC_EV_PATHARG) &&
	    (((e->flags & DC_EV_FD) && e->ret == e->fd) || (e->flags & DC_EV_NEW_HANDLE))) {
		name_kernel_file(r, m->file, m->inode, kpath);
		/* ...and keeps the name the program gave, where the kernel's
		 * is another (a relative name, a symbolic link). */
		if (name && kpath && strcmp(name, kpath) != 0)
			e->path2 = dc_writer_string(r->w, name);
	}
	if (m->file)
		e->path = kernel_file(r, m->file, m->inode);
	if (!e->path && name) {
		if (m->parent && has_handle && (e->flags & DC_EV_NEW_HANDLE))
			e->path = name_inside(r, e->pid, m->parent, m->handle, name);
		if (!e->path)
			e->path = absolute_name(r, name, m->file ? NULL : kpath);
	} else if (!e->path && has_handle && name_of(r, HANDLE_KEY(e->pid), m->handle, e->ts, &id)) {
		e->path = id;
	}
	/* A new handle of no known path (fdopen of a pipe) names nothing. */
	if (has_handle && (e->flags & DC_EV_NEW_HANDLE))
		name_it(r, HANDLE_KEY(e->pid), m->handle, e->path, e->ts);
	if (has_handle && (e->flags & DC_EV_CLOSES))
		close_it(r, HANDLE_KEY(e->pid), m->handle, e->ts);
}

static int handle_file(struct dc_recorder *r, const struct dc_msg_file *msg, size_t len)
{
	char path[DC_PATH_MAX];

	if (len < DC_MSG_FILE_BASE || msg->path_len > DC_PATH_MAX || len < DC_MSG_FILE_BASE + msg->path_len)
		return 0;
	if (msg->path_len) {
		memcpy(path, msg->path, msg->path_len);
		path[msg->path_len - 1] = 0;
	}
	name_kernel_file(r, msg->file, msg->inode, msg->path_len ? path : NULL);
	return 0;
}

/* Each name a whole path at most: path[] holds them all. */
static bool names_fit(const struct dc_msg_call *m)
{
	return m->path_len <= DC_PATH_MAX && m->path2_len <= DC_PATH_MAX && m->kpath_len <= DC_PATH_MAX &&
	       m->kpath2_len <= DC_PATH_MAX;
}

static int handle_call(struct dc_recorder *r, const struct dc_msg_call *msg, size_t len)
{
	struct dc_msg_call m;

	if (len < DC_MSG_CALL_BASE || !names_fit(msg) || len < DC_MSG_CALL_SIZE(msg))
		return 0;
	/* The ring buffer is mapped read-only: work on a copy. */
	memcpy(&m, msg, DC_MSG_CALL_SIZE(msg));
	resolve_path(r, &m);
	if (on_ring(r, &m))
		return 0;
	return dc_writer_event(r->w, &m.ev);
}

int dc_recorder_call(struct dc_recorder *r, struct dc_msg_call *m)
{
	if (!names_fit(m))
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
	dc_hashtab_del_k1(r->files, HANDLE_KEY(p->pid));
	dc_hashtab_del_k1(r->named_at, HANDLE_KEY(p->pid));
	dc_hashtab_del_k1(r->closed_at, HANDLE_KEY(p->pid));
	dc_hashtab_del_k1(r->inside, HANDLE_KEY(p->pid));
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
	if (type == DC_MSG_FILE && len >= DC_MSG_FILE_BASE)
		return ((const struct dc_msg_file *)data)->ts;
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
	else if (type == DC_MSG_FILE)
		handle_file(r, data, len);
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

int dc_recorder_start_process(struct dc_recorder *r, __u32 pid, __u64 ts)
{
	struct dc_proc p = { .ts = ts, .pid = pid, .ppid = read_ppid(pid), .kind = DC_PROC_START };

	read_comm(pid, p.comm);
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
