// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "lib_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "proc_check.h"
#include "dc_event.h"
#include "symbols.h"

/* Node files of sets remembered as probed (sets of one library share one). */
#define MAX_SETS_SHOWN 64
/* A library file bigger than this is no library a set probes (libc,
 * libmpi and libhdf5 are a few MiB). */
#define DC_LIB_FILE_BYTES (256ull << 20)
/* The job's files read in all, at most: past it, no process stops. */
#define DC_LIB_READ_BUDGET (4ull << 30)
/* The stops map is read when the bell rang, and once in this long anyway
 * (a bell record the ring had no room for). */
#define DC_LIB_LOOK_NS 1000000000ull
/* After the programs that hold processes are detached, a last look this
 * much later. */
#define DC_LIB_LAST_HOLD_US 20000

struct wanted {
	const struct dc_probe_set *set;
	char soname[256];
};

/* A file as stat shows it: the same file, reached through another mount
 * of it or an overlay over it, shows the same; the uprobes of one would be
 * the other's too (the kernel puts them on the real inode). */
struct shown {
	dev_t dev;
	ino_t ino;
};

struct dc_lib_files {
	struct datacrumbs_bpf *skel;
	struct dc_probes *p;
	struct wanted *wants;
	int nwants;
	struct ring_buffer *bell;
	struct bpf_link *link, *fork_link;
	int seen_fd, stops_fd, stems_fd, tracked_fd;
	int kept[DC_LIB_FILES_MAX]; /* O_PATH descriptors of the files probed */
	/* The files probed, the node's first (at most one a set). */
	struct shown probed[DC_LIB_FILES_MAX + MAX_SETS_SHOWN];
	int nprobed;
	int nkept;
	bool warned_full;
	unsigned looked; /* files looked at */
	unsigned long long read; /* bytes of them read */
	const char *preload; /* libdcpreload.so's path, given to the command */
	bool warned_preload;
	int verbose;
	__u64 last_look;
};

/* The kernel's numbering of a device (major << 20 | minor), as s_dev holds it. */
static __u64 kernel_dev(unsigned maj, unsigned min)
{
	return (__u64)maj << 20 | min;
}

/* The inode number and mount id in the fdinfo of the agent's fd: 0, or
 * -1 where the kernel gives no inode there (before Linux 5.14). */
static int fdinfo_of(int fd, long long *ino, int *mnt)
{
	char path[64], line[256];
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(path, "re")))
		return -1;
	while (got != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "ino: %lld", ino) == 1)
			got |= 1;
		else if (sscanf(line, "mnt_id: %d", mnt) == 1)
			got |= 2;
	}
	fclose(f);
	return got == 3 ? 0 : -1;
}

/*
 * The file open at fd as the BPF side knows it (its inode's superblock
 * device and number): what statx says of a file on an overlay, or any
 * file system that shows another device or inode, is not that. The inode
 * from the descriptor's fdinfo (Linux 5.14), the device from the mount it
 * was opened on, in the mount namespace of pid's (0: the agent's own);
 * else what fstat says.
 */
static int kernel_key(int fd, pid_t pid, struct dc_lib_file *out)
{
	char path[64], line[1024];
	long long ino;
	struct stat st;
	unsigned maj, min;
	int id, mnt, n = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	if (fdinfo_of(fd, &ino, &mnt) == 0 && (f = fopen(path, "re"))) {
		while (!n && fgets(line, sizeof(line), f))
			n = sscanf(line, "%d %*d %u:%u", &id, &maj, &min) == 3 && id == mnt;
		fclose(f);
		if (n) {
			*out = (struct dc_lib_file){ .dev = kernel_dev(maj, min), .ino = (__u64)ino };
			return 0;
		}
	}
	if (fstat(fd, &st))
		return -1;
	*out = (struct dc_lib_file){ .dev = kernel_dev(major(st.st_dev), minor(st.st_dev)), .ino = st.st_ino };
	return 0;
}

static int ring_ignore(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return 0;
}

static bool shown_same(const struct stat *st, const struct shown *s)
{
	return st->st_dev == s->dev && st->st_ino == s->ino;
}

/* Whether a file shown as st is one probed already (the node's, or one
 * of the job's seen through another overlay or mount). */
static bool probed_already(const struct dc_lib_files *w, const struct stat *st)
{
	for (int i = 0; i < w->nprobed; i++)
		if (shown_same(st, &w->probed[i]))
			return true;
	return false;
}

static void note_probed(struct dc_lib_files *w, int fd)
{
	struct stat st;

	if (w->nprobed < DC_LIB_FILES_MAX + MAX_SETS_SHOWN && fstat(fd, &st) == 0 && !probed_already(w, &st))
		w->probed[w->nprobed++] = (struct shown){ st.st_dev, st.st_ino };
}

/* A set's library on the node: its file looked at, its soname wanted. */
static int want_set(struct dc_lib_files *w, const struct dc_probe_set *set)
{
	char path[PATH_MAX], stem[DC_LIB_STEM_LEN] = { 0 };
	struct wanted *v;
	struct dc_lib_file key;
	__u8 one = 1;
	size_t len;
	int fd, err;

	if (dc_find_library(set->library, path, sizeof(path)) || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0; /* the set itself said it was not found */
	err = kernel_key(fd, 0, &key) ? -EIO : bpf_map_update_elem(w->seen_fd, &key, &one, BPF_ANY) ? -errno : 0;
	if (!err && (v = realloc(w->wants, (w->nwants + 1) * sizeof(*v)))) {
		note_probed(w, fd);
		w->wants = v;
		v = &w->wants[w->nwants++];
		v->set = set;
		snprintf(v->soname, sizeof(v->soname), "%s", set->library);
		/* A path: the library's own name, else the file's. */
		if (strchr(set->library, '/') && dc_elf_soname(fd, v->soname, sizeof(v->soname)))
			snprintf(v->soname, sizeof(v->soname), "%s", strrchr(path, '/') + 1);
	} else if (!err) {
		err = -ENOMEM;
	}
	close(fd);
	if (err)
		return err;
	/* Files named with its stem stop a process (bpf/libs.bpf.c). */
	len = strcspn(v->soname, ".-");
	memcpy(stem, v->soname, len < sizeof(stem) - 1 ? len : sizeof(stem) - 1);
	if (bpf_map_update_elem(w->stems_fd, stem, &one, BPF_ANY))
		return -errno;
	return 0;
}

struct dc_lib_files *dc_lib_files_new(struct datacrumbs_bpf *skel, struct dc_probes *p,
				      const struct dc_probe_set *sets, int nsets, const char *preload, int verbose)
{
	struct dc_lib_files *w;
	int err = 0;

	if (bpf_program__fd(skel->progs.dc_lib_mmap) < 0)
		return NULL; /* no uprobe level loaded */
	if (!(w = calloc(1, sizeof(*w))))
		return NULL;
	*w = (struct dc_lib_files){ .skel = skel, .p = p, .verbose = verbose, .preload = preload,
				    .seen_fd = bpf_map__fd(skel->maps.dc_lib_seen),
				    .stops_fd = bpf_map__fd(skel->maps.dc_lib_stops),
				    .stems_fd = bpf_map__fd(skel->maps.dc_lib_stems),
				    .tracked_fd = bpf_map__fd(skel->maps.dc_tracked),
				    .last_look = dc_now_ns(CLOCK_MONOTONIC) };
	for (int i = 0; !err && i < nsets; i++)
		if (sets[i].kind == DC_SET_UPROBES)
			err = want_set(w, &sets[i]);
	if (!err && !w->nwants && !dc_probes_scoped(p)) {
		dc_lib_files_free(w);
		return NULL;
	}
	w->bell = err ? NULL : ring_buffer__new(bpf_map__fd(skel->maps.dc_lib_bell), ring_ignore, NULL, NULL);
	if (!err && !w->bell)
		err = -errno;
	w->link = err ? NULL : bpf_program__attach(skel->progs.dc_lib_mmap);
	if (!err && !w->link)
		err = -errno;
	/* Each new process of the job held at its fork for its own links. */
	if (!err && dc_probes_scoped(p)) {
		w->fork_link = bpf_program__attach(skel->progs.dc_scope_fork);
		if (!w->fork_link)
			err = -errno;
		else
			skel->bss->dc_scope_on = 1;
	}
	if (err) {
		fprintf(stderr, "dc-agent: warning: cannot watch the job's library files (%s): a process "
				"whose libc, MPI or HDF5 is another file than the node's is seen at its system "
				"calls only\n", strerror(-err));
		dc_lib_files_free(w);
		return NULL;
	}
	return w;
}

int dc_lib_files_fd(const struct dc_lib_files *w)
{
	return w ? ring_buffer__epoll_fd(w->bell) : -1;
}

/*
 * A private, sealed copy of the file behind fd, for reading its ELF: the
 * job's user may truncate or rewrite its own file while the agent reads
 * it, which a mapping of the file itself would take as SIGBUS or torn data.
 */
static int sealed_copy(int fd, off_t size)
{
	int mfd = memfd_create("dc-lib", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	off_t at = 0;

	if (mfd < 0)
		return -1;
	while (at < size) {
		ssize_t n = sendfile(mfd, fd, &at, (size_t)(size - at));

		if (n <= 0)
			break; /* shorter now: what there was */
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		close(mfd);
		return -1;
	}
	return mfd;
}

static bool wanted(const struct dc_lib_files *w, const char *soname)
{
	for (int i = 0; i < w->nwants; i++)
		if (strcmp(w->wants[i].soname, soname) == 0)
			return true;
	return false;
}

/* Puts the sets that want soname on the file at opath (an O_PATH descriptor);
 * its ELF read from copy. How many sets took it. */
static int attach_file(struct dc_lib_files *w, const struct dc_lib_stop *s, const char *soname, int opath, int copy)
{
	char path[64], elf[64], seen_as[PATH_MAX] = "?";
	int taken = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", opath);
	snprintf(elf, sizeof(elf), "/proc/self/fd/%d", copy);
	if ((n = readlink(path, seen_as, sizeof(seen_as) - 1)) > 0)
		seen_as[n] = 0;
	for (int i = 0; i < w->nwants; i++) {
		if (strcmp(w->wants[i].soname, soname) != 0)
			continue;
		if (w->nkept == DC_LIB_FILES_MAX) {
			fprintf(stderr, "dc-agent: warning: pid %u maps %s, a %d-th other file of the sets' "
					"libraries: not probed\n", s->pid, seen_as, DC_LIB_FILES_MAX + 1);
			return 0;
		}
		n = dc_probes_attach_file(w->p, w->wants[i].set, path, elf);
		if (w->verbose)
			fprintf(stderr, "dc-agent: pid %u maps %s (%s), another file than the node's: probe set "
					"'%s': %zd probes attached to it\n", s->pid, seen_as, soname,
				w->wants[i].set->name, n);
		taken += n > 0;
	}
	return taken;
}

/* Whether the process maps a file whose path ends in name. */
static bool maps_file(__u32 pid, const char *name)
{
	char path[64], line[PATH_MAX + 128];
	size_t len = strlen(name);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (!(f = fopen(path, "re")))
		return true; /* gone: nothing to say of it */
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		found = n >= len && memcmp(line + n - len, name, len) == 0;
	}
	fclose(f);
	return found;
}

/* A process on a libc of its own (a container's), given libdcpreload.so by
 * its path on the node, loads it before its libc: if it did not, its STDIO
 * goes unrecorded, and the user is told how to record it. */
static void check_preload(struct dc_lib_files *w, const struct dc_lib_stop *s, const char *soname)
{
	if (!w->preload || w->warned_preload || strcmp(soname, "libc.so.6") != 0 ||
	    maps_file(s->pid, strrchr(w->preload, '/') ? strrchr(w->preload, '/') : w->preload))
		return;
	fprintf(stderr, "dc-agent: warning: pid %u runs on a libc of its own (a container's?) and could not "
			"preload %s (not at that path inside): its STDIO calls are not recorded; -p "
			"posix,stdio,syscalls records them with uprobes on its libc\n", s->pid, w->preload);
	w->warned_preload = true;
}

/* The file a stopped process mapped: looked at once, probed if a set wants it. */
static void look_at(struct dc_lib_files *w, const struct dc_lib_stop *s)
{
	char path[64], soname[256];
	struct stat st;
	struct dc_lib_file key;
	__u8 one = 1;
	int opath, rfd = -1, copy = -1;

	if (bpf_map_lookup_elem(w->seen_fd, &s->file, &one) == 0)
		return; /* another process's stop took it */
	w->looked++;
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", s->pid, s->fd);
	/* O_PATH: whatever the descriptor is now (a FIFO, a device), opening
	 * it this way neither blocks nor acts on it. */
	opath = open(path, O_PATH | O_CLOEXEC);
	if (opath < 0 || fstat(opath, &st) || !S_ISREG(st.st_mode) || (__u64)st.st_size > DC_LIB_FILE_BYTES ||
	    kernel_key(opath, (pid_t)s->pid, &key) || key.dev != s->file.dev || key.ino != s->file.ino ||
	    probed_already(w, &st))
		goto done;
	/* Reading is the agent's time: a job that makes it read without end
	 * is looked at no more. */
	if ((w->read += st.st_size) > DC_LIB_READ_BUDGET) {
		if (!w->skel->bss->dc_lib_watch_off)
			fprintf(stderr, "dc-agent: warning: the job's library files passed %llu GiB: later ones "
					"are not looked at\n", DC_LIB_READ_BUDGET >> 30);
		w->skel->bss->dc_lib_watch_off = 1;
		goto done;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", opath);
	/* Every library the job maps comes here once: only those of a set are copied. */
	if ((rfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 || dc_elf_soname(rfd, soname, sizeof(soname)))
		goto done;
	check_preload(w, s, soname);
	if (!wanted(w, soname) || (copy = sealed_copy(rfd, st.st_size)) < 0)
		goto done;
	if (attach_file(w, s, soname, opath, copy) > 0) {
		note_probed(w, opath);
		w->kept[w->nkept++] = opath;
		opath = -1;
	}
done:
	if (bpf_map_update_elem(w->seen_fd, &s->file, &one, BPF_ANY) && !w->warned_full) {
		fprintf(stderr, "dc-agent: warning: more than %d library files in the job: later ones are "
				"not looked at\n", DC_LIB_SEEN_MAX);
		w->skel->bss->dc_lib_watch_off = 1;
		w->warned_full = true;
	}
	if (opath >= 0)
		close(opath);
	if (rfd >= 0)
		close(rfd);
	if (copy >= 0)
		close(copy);
}

/* Each process held now, served (serve) or not, continues. */
static void take_stops(struct dc_lib_files *w, bool serve)
{
	struct dc_lib_stop stops[DC_LIB_STOPS_MAX], key;
	int n = 0;

	while (n < DC_LIB_STOPS_MAX && bpf_map_get_next_key(w->stops_fd, n ? &key : NULL, &stops[n]) == 0)
		key = stops[n++];
	for (int i = 0; i < n; i++) {
		const struct dc_lib_stop *s = &stops[i];
		/* That very process: one that ended left the map's entry, and a
		 * later process under its pid is none of the agent's to wake. */
		int pidfd = dc_pid_open_started((pid_t)s->pid, s->start);
		__u32 v;

		/* A file it mapped; else it is new to the job (its fork, its exec):
		 * its own links, if it is the job's. */
		if (serve && pidfd >= 0 && s->fd >= 0)
			look_at(w, s);
		else if (serve && pidfd >= 0 && bpf_map_lookup_elem(w->tracked_fd, &s->pid, &v) == 0)
			dc_probes_track(w->p, (pid_t)s->pid);
		bpf_map_delete_elem(w->stops_fd, s);
		if (pidfd >= 0) {
			syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
			close(pidfd);
		}
	}
}

void dc_lib_files_serve(struct dc_lib_files *w)
{
	__u64 now;

	if (!w)
		return;
	now = dc_now_ns(CLOCK_MONOTONIC);
	if (ring_buffer__consume(w->bell) <= 0 && now - w->last_look < DC_LIB_LOOK_NS)
		return;
	w->last_look = now;
	take_stops(w, true);
	dc_probes_sweep(w->p);
}

void dc_lib_files_free(struct dc_lib_files *w)
{
	if (!w)
		return;
	if (w->verbose && w->link)
		fprintf(stderr, "dc-agent: %u library files of the job's looked at, %d probed\n", w->looked, w->nkept);
	if (w->fork_link)
		w->skel->bss->dc_scope_on = 0;
	bpf_link__destroy(w->fork_link);
	bpf_link__destroy(w->link);
	take_stops(w, false);
	/* A program that was running as its link went may hold a process
	 * still: it has ended well within this. */
	usleep(DC_LIB_LAST_HOLD_US);
	take_stops(w, false);
	ring_buffer__free(w->bell);
	for (int i = 0; i < w->nkept; i++)
		close(w->kept[i]);
	free(w->wants);
	free(w);
}
