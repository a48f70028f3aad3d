/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Probe sets (configs/probes/NAME.yaml) and agent settings (--config). */
#ifndef DC_CONFIG_H
#define DC_CONFIG_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "dc_event.h"

enum dc_set_kind {
	DC_SET_UPROBES,  /* functions of a user library */
	DC_SET_SYSCALLS, /* system calls, through the raw sys_enter/sys_exit tracepoints */
	DC_SET_KERNEL,   /* a built-in group of kernel tracepoints: block, pagecache, io_uring, mmap, aio */
	DC_SET_KFUNCS,   /* kernel functions by name, glob or regex (kernel: [...]) */
	DC_SET_WRAPPER,  /* MPI-IO, recorded by libdcpmpi.so in each rank (wrapper: libdcpmpi) */
};
/* The one wrapper a set may name. */
#define DC_WRAPPER_NAME "libdcpmpi"

/* How a probe set names its functions. */
enum dc_fn_select {
	DC_FN_NAME,  /* name: one function */
	DC_FN_GLOB,  /* match: every exported function whose name fits a glob */
	DC_FN_REGEX, /* regex: ... or an extended regular expression */
};

struct dc_fn_spec {
	char *name; /* the name, glob or regular expression */
	enum dc_fn_select select;
	/*
	 * A libc call that only makes this one system call, with the same fd,
	 * bytes, offset and result: observed at the system call's tracepoint
	 * (one probe per call), not with a uprobe.
	 */
	char *syscall;
	/* Argument slots and return kind, laid out as in the attach cookie. */
	__u64 argbits;
};

struct dc_probe_set {
	char *name;
	char *file;
	char *category;
	char *library; /* DC_SET_UPROBES: soname or path */
	char *kernel;  /* DC_SET_KERNEL: the group's name */
	char *wrapper; /* DC_SET_WRAPPER: DC_WRAPPER_NAME */
	enum dc_set_kind kind;
	bool all_functions;
	unsigned dtype_size_offset; /* where an MPI datatype keeps its size */
	bool stdio_handles; /* handles: stdio, its handles are FILE streams */
	struct dc_fn_spec *fns;
	size_t nfns;
};

/* Settings an agent config file may hold; each is also a command-line option. */
struct dc_settings {
	char *job_id;
	char *output;
	char *probes; /* comma-separated probe set names */
	char *probe_dir;
	int mode;     /* -1: not set */
	int interval_ms;
	int ringbuf_mb;
	int uid;      /* -1: not set */
	char *site_cache; /* folder of decoded libraries, or "none" */
};

int dc_probe_set_load(const char *path, struct dc_probe_set *set, char *err, size_t errlen);
void dc_probe_set_free(struct dc_probe_set *set);
/*
 * Finds NAME.yaml in dirs (colon-separated) unless name is a path to a file.
 * Returns 0 and fills out, or -1.
 */
int dc_probe_set_find(const char *name, const char *dirs, char *out, size_t outlen);

int dc_settings_load(const char *path, struct dc_settings *s, char *err, size_t errlen);
void dc_settings_free(struct dc_settings *s);

/* "trace"/"profile" to a mode, -1 if neither. */
int dc_parse_mode(const char *s);

#endif
