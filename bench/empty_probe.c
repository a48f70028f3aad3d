// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty_probe [--multi] [--func LIBRARY FUNCTION | --no-func] [--syscalls]
 * [--clock] COMMAND...: runs COMMAND under probes that do nothing, the floor
 * of the mechanism: a uprobe and a uretprobe at the entry of FUNCTION
 * (default: libc's write; none with --no-func), and with --syscalls the
 * system-call tracepoints dc-agent uses (with --clock, each reads the clock). --multi attaches the uprobes with a
 * uprobe_multi link, as dc-agent does; without it, as classic perf-event
 * uprobes.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "empty_probe.skel.h"
#include "symbols.h"
#include "uprobe_multi.h"

struct target {
	char lib[PATH_MAX];
	const char *func;
};

static int attach_multi(struct empty_probe_bpf *skel, const struct target *t)
{
	struct dc_elf_syms *syms;
	char err[256];
	long off;
	unsigned long uoff;
	__u64 cookie = 0;

	if (!(syms = dc_elf_open(t->lib, err, sizeof(err))))
		return -1;
	off = dc_elf_offset(syms, t->func);
	dc_elf_close(syms);
	if (off < 0)
		return -1;
	uoff = off;
	if (dc_uprobe_multi_attach(skel->progs.empty_entry, t->lib, &uoff, &cookie, 1, false) < 0 ||
	    dc_uprobe_multi_attach(skel->progs.empty_exit, t->lib, &uoff, &cookie, 1, true) < 0)
		return -1;
	return 0; /* the links go with the process */
}

static int attach_classic(struct empty_probe_bpf *skel, const struct target *t)
{
	LIBBPF_OPTS(bpf_uprobe_opts, in, .func_name = t->func);
	LIBBPF_OPTS(bpf_uprobe_opts, out, .func_name = t->func, .retprobe = true);

	if (!bpf_program__attach_uprobe_opts(skel->progs.empty_entry, -1, t->lib, 0, &in) ||
	    !bpf_program__attach_uprobe_opts(skel->progs.empty_exit, -1, t->lib, 0, &out))
		return -1;
	return 0;
}

static int attach_syscalls(struct empty_probe_bpf *skel)
{
	return bpf_program__attach(skel->progs.empty_sys_enter) && bpf_program__attach(skel->progs.empty_sys_exit)
		       ? 0
		       : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: empty_probe [--multi] [--func LIBRARY FUNCTION | --no-func] [--syscalls] [--clock] "
			"COMMAND...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct target t = {.func = "write"};
	const char *lib = "libc.so.6";
	int multi = 0, syscalls = 0, uprobes = 1, clock = 0, i, status = 1;
	struct empty_probe_bpf *skel;
	pid_t pid;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--multi") == 0)
			multi = 1;
		else if (strcmp(argv[i], "--syscalls") == 0)
			syscalls = 1;
		else if (strcmp(argv[i], "--clock") == 0)
			clock = 1;
		else if (strcmp(argv[i], "--no-func") == 0)
			uprobes = 0;
		else if (strcmp(argv[i], "--func") == 0 && i + 2 < argc) {
			lib = argv[++i];
			t.func = argv[++i];
		} else
			return usage();
	}
	if (i == argc)
		return usage();
	if (uprobes && dc_find_library(lib, t.lib, sizeof(t.lib))) {
		fprintf(stderr, "empty_probe: no library %s\n", lib);
		return 1;
	}
	skel = empty_probe_bpf__open();
	if (skel) {
		skel->rodata->read_clock = clock;
		bpf_program__set_autoload(skel->progs.empty_sys_enter, syscalls);
		bpf_program__set_autoload(skel->progs.empty_sys_exit, syscalls);
		bpf_program__set_autoload(skel->progs.empty_entry, uprobes);
		bpf_program__set_autoload(skel->progs.empty_exit, uprobes);
	}
	if (!skel || (multi && uprobes && (dc_uprobe_multi_prepare(skel->progs.empty_entry) ||
					   dc_uprobe_multi_prepare(skel->progs.empty_exit))) ||
	    empty_probe_bpf__load(skel) ||
	    (uprobes && (multi ? attach_multi(skel, &t) : attach_classic(skel, &t))) ||
	    (syscalls && attach_syscalls(skel))) {
		fprintf(stderr, "empty_probe: cannot load or attach the empty probes%s%s%s\n",
			uprobes ? " on " : "", uprobes ? t.func : "", syscalls ? " and the system-call tracepoints" : "");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[i], argv + i);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
