/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which file a call is on, asked of the kernel rather than rebuilt from
 * bookkeeping: the struct file behind a descriptor in the calling task's
 * own table, and the absolute path of a file or folder built from its
 * dentries and mounts up to the task's root, as the kernel's d_path builds
 * it. So dup in all its forms, fork, close-on-exec, descriptors passed over
 * sockets and those open before tracing began name their file by
 * construction; relative names, a dirfd, chdir and symbolic links never
 * leave a name ambiguous.
 */
#ifndef DC_FILES_BPF_H
#define DC_FILES_BPF_H

#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"

/* Components walked at most: a deeper path keeps the name the call gave. */
#define DC_PATH_DEPTH 64
#define DC_NAME_MAX 255
/* A path is built backwards from the end of a whole path's room; a name
 * is copied at most DC_NAME_MAX bytes past where it starts. */
#define DC_KPATH_ROOM (DC_PATH_MAX + DC_NAME_MAX + 1)
#define DC_AT_FDCWD -100
#define DC_PIPEFS_MAGIC 0x50495045
#define DC_SOCKFS_MAGIC 0x534F434B
/* An index masked where the verifier sees it: without the barrier the
 * compiler drops a mask a bounds check before it makes redundant. */
#define DC_MASKED(v, mask) ({ __u32 __v = (v); asm volatile("" : "+r"(__v)); __v & (mask); })

/* off, where the path built so far starts, lives here rather than in a
 * register: read back, it is any number to the verifier, so the states of
 * the walk's turns are alike and it checks each turn once, not each way
 * the turns before it could have gone. */
struct dc_kpath {
	__u32 off;
	char b[DC_KPATH_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_kpath);
} dc_kpath_scratch SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_msg_file);
} dc_file_scratch SEC(".maps") __weak;

/*
 * Files whose path the agent was sent: struct file -> its inode then. The
 * agent keeps each path by file; a file's address taken again by another
 * file (after a close the agent never saw: exit, exec, dup2 over it) is
 * told by its inode, and sent again. Least recently used ones go first:
 * a file that went is sent again when next seen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, __u64);
} dc_named_files SEC(".maps") __weak;

/* The struct file behind fd in the current task's file table; 0 for none. */
static __always_inline __u64 dc_fd_file(long fd)
{
	struct fdtable *fdt;
	struct file **fds;
	__u64 file = 0;
	unsigned int max;

	if (fd < 0 || fd > 0x7fffffff)
		return 0;
	if (dc_has_task_storage) {
		/* Loads from the typed task: no helper call. */
		fdt = bpf_get_current_task_btf()->files->fdt;
		max = fdt->max_fds;
		fds = fdt->fd;
	} else {
		struct task_struct *t = (void *)bpf_get_current_task();

		fdt = BPF_CORE_READ(t, files, fdt);
		max = BPF_CORE_READ(fdt, max_fds);
		fds = BPF_CORE_READ(fdt, fd);
	}
	if ((unsigned long)fd >= max || !fds)
		return 0;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/*
 * What tells a file from a later one at the same address: its inode's
 * address and number, mixed. The address alone does not: a pipe's or a
 * socket's inode is freed with it, and the next pipe's often takes both
 * the struct file's and the inode's place (seen under bash's pipelines);
 * its number is new. The number alone does not either, across file
 * systems.
 */
static __always_inline __u64 dc_file_inode(__u64 file)
{
	struct inode *inode = BPF_CORE_READ((struct file *)file, f_inode);

	return (__u64)inode ^ (BPF_CORE_READ(inode, i_ino) * 0x9E3779B97F4A7C15ull);
}

/* Whether the agent has the path of file, whose inode is inode. */
static __always_inline bool dc_file_known(__u64 file, __u64 inode)
{
	__u64 *v = bpf_map_lookup_elem(&dc_named_files, &file);

	return v && *v == inode;
}

static __always_inline void dc_file_note(__u64 file, __u64 inode)
{
	bpf_map_update_elem(&dc_named_files, &file, &inode, BPF_ANY);
}

/* Puts len bytes from the kernel's src before b->off; false when there is
 * no room (one byte is kept before the path for its leading '/'). */
static __always_inline bool dc_put(struct dc_kpath *b, const void *src, __u32 len)
{
	__u32 off = b->off;

	if (len > DC_NAME_MAX || len >= off || off >= DC_PATH_MAX)
		return false;
	off -= len;
	bpf_probe_read_kernel(&b->b[DC_MASKED(off, DC_PATH_MAX - 1)], DC_MASKED(len, DC_NAME_MAX), src);
	b->off = off;
	return true;
}

static __always_inline bool dc_put_char(struct dc_kpath *b, char c)
{
	__u32 off = b->off;

	if (off == 0 || off >= DC_PATH_MAX)
		return false;
	off -= 1;
	b->b[DC_MASKED(off, DC_PATH_MAX - 1)] = c;
	b->off = off;
	return true;
}

/* A file of a pseudo file system (a pipe, a socket, an anonymous inode)
 * named as the kernel names it in /proc: pipe:[INODE], socket:[INODE],
 * anon_inode:NAME. */
static __always_inline bool dc_pseudo_name(struct dc_kpath *b, struct dentry *dentry)
{
	struct inode *inode = BPF_CORE_READ(dentry, d_inode);
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);
	__u64 ino = BPF_CORE_READ(inode, i_ino);

	if (magic == DC_PIPEFS_MAGIC || magic == DC_SOCKFS_MAGIC) {
		if (!dc_put_char(b, ']'))
			return false;
		for (int i = 0; i < 20; i++) {
			if (!dc_put_char(b, '0' + ino % 10))
				return false;
			ino /= 10;
			if (!ino)
				break;
		}
		if (!dc_put_char(b, '['))
			return false;
		return magic == DC_PIPEFS_MAGIC ? dc_put(b, "pipe:", 5) : dc_put(b, "socket:", 7);
	}
	return dc_put(b, BPF_CORE_READ(dentry, d_name.name), BPF_CORE_READ(dentry, d_name.len)) &&
	       dc_put(b, "anon_inode:", 11);
}

/*
 * The absolute path of (vfsmnt, dentry), built backwards in this CPU's
 * dc_kpath_scratch: each name from the dentry up, crossing from a mount's
 * root to where it is mounted, up to the task's root or its namespace's.
 * Returns where it starts there, or -1 where it cannot be made whole
 * (deeper than DC_PATH_DEPTH, longer than a path, a dentry cut off from
 * its tree). Only the namers walk (namers.bpf.h): the verifier checks each
 * of the walk's turns, so it is checked once per namer, not in every
 * program that takes a file.
 */
static __always_inline int dc_path_walk(struct vfsmount *vfsmnt, struct dentry *dentry)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct dentry *root_d = BPF_CORE_READ(t, fs, root.dentry);
	struct vfsmount *root_m = BPF_CORE_READ(t, fs, root.mnt);
	struct mount *mnt = container_of(vfsmnt, struct mount, mnt);
	struct dentry *mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
	struct dc_kpath *b;
	bool whole = false;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&dc_kpath_scratch, &zero);
	if (!b || !dentry)
		return -1;
	b->b[DC_PATH_MAX - 1] = 0;
	b->off = DC_PATH_MAX - 1;
	if (BPF_CORE_READ(dentry, d_op, d_dname)) {
		if (!dc_pseudo_name(b, dentry))
			return -1;
		whole = true;
	}
	for (int i = 0; i < DC_PATH_DEPTH && !whole; i++) {
		struct dentry *parent;

		if (dentry == root_d && vfsmnt == root_m) {
			whole = true;
			break;
		}
		if (dentry == mnt_root) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

			if (up == mnt) {
				whole = true; /* the namespace's root */
				break;
			}
			dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			vfsmnt = &up->mnt;
			mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
			continue;
		}
		parent = BPF_CORE_READ(dentry, d_parent);
		if (parent == dentry)
			return -1; /* cut off from its tree */
		if (!dc_put(b, BPF_CORE_READ(dentry, d_name.name), BPF_CORE_READ(dentry, d_name.len)) ||
		    !dc_put_char(b, '/'))
			return -1;
		dentry = parent;
	}
	if (!whole)
		return -1;
	if (b->off == DC_PATH_MAX - 1 && !dc_put_char(b, '/'))
		return -1; /* the root itself */
	return b->off < DC_PATH_MAX ? (int)b->off : -1;
}

/* Copies the path dc_path_walk left at off to dst (room for a whole path):
 * its bytes with the NUL, 0 for none. */
static __always_inline __u32 dc_path_copy(int off, char *dst)
{
	struct dc_kpath *b;
	__u32 zero = 0, len;

	b = bpf_map_lookup_elem(&dc_kpath_scratch, &zero);
	if (!b || off < 0 || off >= DC_PATH_MAX)
		return 0;
	/* 1 to DC_PATH_MAX bytes, in a form the verifier bounds. */
	len = DC_MASKED(DC_PATH_MAX - off - 1, DC_PATH_MAX - 1) + 1;
	bpf_probe_read_kernel(dst, len, &b->b[DC_MASKED(off, DC_PATH_MAX - 1)]);
	return len;
}

/* The path of file, or of the folder a relative name given with dirfd is
 * in (dirfd's file, or the working directory for AT_FDCWD): its place in
 * dc_kpath_scratch, as dc_path_walk returns it. */
static __always_inline int dc_file_walk(__u64 file, bool folder, long dirfd)
{
	struct vfsmount *mnt;
	struct dentry *dentry;

	if (folder && (int)dirfd == DC_AT_FDCWD) {
		struct task_struct *t = (void *)bpf_get_current_task();

		mnt = BPF_CORE_READ(t, fs, pwd.mnt);
		dentry = BPF_CORE_READ(t, fs, pwd.dentry);
	} else {
		struct file *f = (struct file *)(folder ? dc_fd_file((int)dirfd) : file);

		if (!f)
			return -1;
		mnt = BPF_CORE_READ(f, f_path.mnt);
		dentry = BPF_CORE_READ(f, f_path.dentry);
	}
	return dc_path_walk(mnt, dentry);
}

#endif /* DC_FILES_BPF_H */
