// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty_probe [--multi] COMMAND...: runs COMMAND with an empty uprobe and
 * uretprobe on libc's write: the floor of the mechanism. --multi attaches
 * them with a uprobe_multi link, as dc-agent does; without it, with the
 * classic perf-event uprobes.
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

static int attach_multi(struct empty_probe_bpf *skel)
{
	char libc[PATH_MAX], err[256];
	struct dc_elf_syms *syms;
	unsigned long off;
	__u64 cookie = 0;

	if (dc_find_library("libc.so.6", libc, sizeof(libc)) || !(syms = dc_elf_open(libc, err, sizeof(err))))
		return -1;
	off = dc_elf_offset(syms, "write");
	dc_elf_close(syms);
	if (dc_uprobe_multi_attach(skel->progs.empty_entry, libc, &off, &cookie, 1, false) < 0 ||
	    dc_uprobe_multi_attach(skel->progs.empty_exit, libc, &off, &cookie, 1, true) < 0)
		return -1;
	return 0; /* the links go with the process */
}

static int attach_classic(struct empty_probe_bpf *skel)
{
	LIBBPF_OPTS(bpf_uprobe_opts, in, .func_name = "write");
	LIBBPF_OPTS(bpf_uprobe_opts, out, .func_name = "write", .retprobe = true);

	if (!bpf_program__attach_uprobe_opts(skel->progs.empty_entry, -1, "libc.so.6", 0, &in) ||
	    !bpf_program__attach_uprobe_opts(skel->progs.empty_exit, -1, "libc.so.6", 0, &out))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int multi = argc > 1 && strcmp(argv[1], "--multi") == 0;
	struct empty_probe_bpf *skel;
	int status = 1;
	pid_t pid;

	argv += 1 + multi;
	if (!argv[0]) {
		fprintf(stderr, "usage: empty_probe [--multi] COMMAND...\n");
		return 2;
	}
	skel = empty_probe_bpf__open();
	if (!skel || (multi && (dc_uprobe_multi_prepare(skel->progs.empty_entry) ||
				dc_uprobe_multi_prepare(skel->progs.empty_exit))) ||
	    empty_probe_bpf__load(skel) || (multi ? attach_multi(skel) : attach_classic(skel))) {
		fprintf(stderr, "empty_probe: cannot load or attach the empty probes on libc write\n");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
