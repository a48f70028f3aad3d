// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gen_nodefiles DIR JOB NODES EVENTS [LOST]: writes NODES node files of EVENTS
 * events each into DIR/JOB/, with the node writer dc-agent uses: 4 processes
 * of 2 threads per node, MPI ranks 4 a node in node order, POSIX and
 * system-call levels nested, 1000 paths, node clocks started apart. For
 * merge benchmarks and tests. LOST: events each node says it lost (ring
 * buffer full), for tests of how outputs report them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nodefile.h"

static const char *const funcs[][2] = {
	{ "write", "posix" }, { "read", "posix" }, { "pwrite", "posix" }, { "open", "posix" },
	{ "write", "syscall" }, { "read", "syscall" }, { "pwrite64", "syscall" }, { "openat", "syscall" },
};

static int write_node(const char *dir, const char *job, int node, int nodes, long events, long lost)
{
	char path[4096], err[512], host[64], file[64];
	struct dc_node_header h = { 0 };
	struct dc_writer *w;
	__u32 paths[1000];
	unsigned long long seed = 88172645463325252ull + node;
	__u64 ts = 1000000000ull;

	snprintf(host, sizeof(host), "node%03d", node);
	snprintf(h.job_id, sizeof(h.job_id), "%s", job);
	snprintf(h.hostname, sizeof(h.hostname), "%s", host);
	snprintf(h.topology, sizeof(h.topology), "synthetic");
	h.monotonic_ref_ns = ts;
	h.realtime_ref_ns = 1700000000000000000ull + node * 1000ull;
	h.ncpus = 2;
	snprintf(path, sizeof(path), "%s/%s/%s%s", dir, job, host, DC_NODE_SUFFIX);
	if (!(w = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err)))) {
		fprintf(stderr, "gen_nodefiles: %s\n", err);
		return -1;
	}
	for (__u32 f = 0; f < 8; f++) {
		struct dc_func fn = { f, dc_writer_string(w, funcs[f][0]), dc_writer_string(w, funcs[f][1]),
				      f >= 4 ? DC_EV_SYSCALL : 0 };
		dc_writer_func(w, &fn);
	}
	for (int p = 0; p < 4; p++) {
		struct dc_proc pr = { ts, 1000 + p, 1, DC_PROC_START, 0, "ior" };
		struct dc_rank rk = { ts, 1000 + p, node * 4 + p, nodes * 4, DC_RANK_REGISTER, 0, 1000 };

		dc_writer_proc(w, &pr);
		dc_writer_rank(w, &rk);
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(file, sizeof(file), "/scratch/job/file.%04d", i);
		paths[i] = dc_writer_string(w, file);
	}
	/* Pairs: a POSIX call and the system call inside it. */
	for (long i = 0; i < events; i += 2) {
		unsigned r;
		__u32 pid, f;

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		r = (unsigned)seed;
		pid = 1000 + r % 4;
		f = (r >> 8) % 3;
		ts += 500 + (r >> 16) % 2000;
		struct dc_event outer = { .ts = ts, .dur = 4000, .pid = pid, .tid = pid + (r >> 4) % 2 * 100,
					  .func = f, .cpu = r % 2, .ret = 4096, .req = 4096, .bytes = 4096,
					  .offset = (__s64)i * 4096, .fd = 3 + r % 8, .path = paths[(r >> 12) % 1000],
					  .flags = DC_EV_FD | DC_EV_OFFSET };
		struct dc_event inner = outer;

		inner.ts += 1000;
		inner.dur = 2000;
		inner.func = f + 4;
		inner.flags |= DC_EV_SYSCALL;
		if (dc_writer_event(w, &outer) || dc_writer_event(w, &inner))
			return -1;
	}
	if (lost) {
		struct dc_cpu_stats st = { .cpu = 0 };

		st.stat[DC_STAT_LOST] = lost;
		if (dc_writer_stats(w, &st, 1))
			return -1;
	}
	return dc_writer_close(w, NULL) ? -1 : 0;
}

int main(int argc, char **argv)
{
	char dir[4096];

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: gen_nodefiles DIR JOB NODES EVENTS_PER_NODE [LOST_PER_NODE]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/%s", argv[1], argv[2]);
	mkdir(argv[1], 0755);
	mkdir(dir, 0755);
	for (int n = 0; n < atoi(argv[3]); n++)
		if (write_node(argv[1], argv[2], n, atoi(argv[3]), atol(argv[4]), argc == 6 ? atol(argv[5]) : 0))
			return 1;
	return 0;
}
