// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "options.h"
#include "site_cache.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
"Usage: dc-agent [OPTIONS] -- COMMAND [ARGS...]\n"
"       dc-agent [OPTIONS] --pid PID [--pid PID...]\n"
"       dc-agent [OPTIONS] --match-env NAME=VALUE | --daemon\n"
"\n"
"Traces the I/O of a job on this node with eBPF: user-level library calls\n"
"(uprobes) and kernel-level system calls (tracepoints), of the traced\n"
"processes and every process they fork, into one node file\n"
"OUTPUT/JOB_ID/HOSTNAME.dcnode.\n"
"\n"
"With a COMMAND, runs it traced and stops when it exits, with its exit status\n"
"(127 if it cannot be run). Without one, runs as the job's daemon until SIGTERM\n"
"or SIGINT, tracing the processes named with --pid, the programs --match-env\n"
"finds, and the MPI ranks that register (--daemon: those only).\n"
"\n"
"Options:\n"
"  -j, --job-id ID       job id (default: $SLURM_JOB_ID, else local-DATE-PID)\n"
"  -o, --output DIR      output folder (default: $DC_OUTPUT_DIR, else ./datacrumbs)\n"
"  -m, --mode MODE       trace: every call with its arguments (default);\n"
"                        profile: per-process, per-function counters every interval\n"
"  -i, --interval SEC    profile mode: seconds between counter snapshots (default 1)\n"
"  -p, --probes LIST     comma-separated probe sets (default posix,stdio-wrapper,\n"
"                        syscalls: STDIO recorded in the command's processes,\n"
"                        which the agent preloads; with --pid or --daemon,\n"
"                        posix,stdio,syscalls: STDIO by uprobes);\n"
"                        a name is configs/probes/NAME.yaml, or give a path;\n"
"                        mpiio: MPI-IO recorded in each rank by libdcpmpi.so\n"
"                        (preload it); mpiio-uprobe: by uprobes, Open MPI 4.x\n"
"                        jobs without it (with both, each call is recorded once);\n"
"                        hdf5-wrapper: HDF5 recorded by libdcpmpi.so likewise,\n"
"                        bytes from its dataspaces; hdf5, hdf5_openmpi: by uprobes;\n"
"                        stdio-wrapper: STDIO recorded by libdcpmpi.so likewise;\n"
"                        the wrapper sets also by libdcpreload.so, in any process\n"
"                        that preloads it; stdio, stdio-chars: by uprobes\n"
"                        (uprobes: in the job's processes only from Linux 6.13,\n"
"                        else in every process that maps the library; --check)\n"
"      --probe-dir DIRS  colon-separated folders searched for probe sets first\n"
"  -c, --config FILE     agent settings (YAML); command-line options win over it\n"
"      --pid PID         trace this running process and its children (repeatable)\n"
"      --no-preload      with stdio-wrapper or hdf5-wrapper, the command's processes\n"
"                        get libdcpreload.so in LD_PRELOAD, which records those\n"
"                        calls in each (not in MPI ranks, where libdcpmpi.so\n"
"                        does): leave LD_PRELOAD as it is\n"
"      --group-read      node files readable by the job user's group (0640, not 0600)\n"
"      --uid UID         the job's user: owns the node file and the control socket,\n"
"                        and only its processes may register as MPI ranks\n"
"                        (default: $SLURM_JOB_UID, else the caller)\n"
"      --ringbuf-mb N    ring buffers in MiB, a power of two, shared out among the\n"
"                        CPUs, each at least 256 KiB (default 16)\n"
"      --ready-file FILE create FILE once every probe is attached\n"
"      --site-cache DIR  where what decoding a library found is kept for the next\n"
"                        run, per build id (default " DC_SITE_CACHE_DIR ";\n"
"                        none: decode every time)\n"
"      --socket PATH     control socket for MPI ranks (default: $DC_AGENT_SOCKET,\n"
"                        else /run/datacrumbs/HOST/JOB_ID.sock)\n"
"      --daemon          run as the job's daemon with nothing named to trace but\n"
"                        the MPI ranks that register on the control socket\n"
"      --match-env NAME=VALUE\n"
"                        also trace every program started with NAME=VALUE in its\n"
"                        environment, and its children (Slurm: SLURM_JOB_ID=ID),\n"
"                        on this node (in the agent's network namespace)\n"
"      --skip-program NAME\n"
"                        with --match-env: not a program whose file is named\n"
"                        NAME (up to 4; dc-prolog skips itself and dc-epilog)\n"
"      --check           say, per level, which mechanism this kernel offers (or\n"
"                        what it lacks, and the Linux that has it), then exit:\n"
"                        non-zero only when no level can be traced\n"
"  -v, --verbose         say the kernel's features, each level's mechanism, what\n"
"                        each set attached and, for a program the kernel refuses,\n"
"                        the end of the verifier's log (-vv: each function's\n"
"                        probe site too, and every libbpf message)\n"
"  -h, --help            show this help\n"
"  -V, --version         show the version\n"
"\n"
"Needs root, or the capabilities CAP_BPF and CAP_PERFMON.\n";

static int parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || !*s || *end || *out < lo || *out > hi) {
		fprintf(stderr, "dc-agent: %s: '%s' is not a whole number from %ld to %ld\n", opt, s, lo, hi);
		return -1;
	}
	return 0;
}

static int set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

/* Only --config and -v first: the file's settings are then overridden. */
static int pre_scan(int argc, char **argv, struct dc_options *o)
{
	char err[1024];

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *v = NULL;

		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc)
			v = argv[i + 1];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			v = argv[i] + 9;
		if (!v)
			continue;
		if (set_str(&o->config_file, v) || dc_settings_load(v, &o->s, err, sizeof(err))) {
			fprintf(stderr, "dc-agent: %s\n", err);
			return -1;
		}
	}
	return 0;
}

static int parse_interval(const char *s, int *ms)
{
	char *end;
	double sec;

	errno = 0;
	sec = strtod(s, &end);
	if (errno || !*s || *end || sec < 0.01 || sec > 86400) {
		fprintf(stderr, "dc-agent: --interval: '%s' is not a number of seconds from 0.01 to 86400\n", s);
		return -1;
	}
	*ms = (int)(sec * 1000 + 0.5);
	return 0;
}

static int take_option(int c, const char *arg, struct dc_options *o)
{
	long n;

	switch (c) {
	case 'j':
		return set_str(&o->s.job_id, arg);
	case 'o':
		return set_str(&o->s.output, arg);
	case 'p':
		return set_str(&o->s.probes, arg);
	case 'P':
		return set_str(&o->s.probe_dir, arg);
	case 'c':
		return 0; /* taken by pre_scan */
	case 'm':
		if ((o->s.mode = dc_parse_mode(arg)) >= 0)
			return 0;
		fprintf(stderr, "dc-agent: --mode: expected trace or profile, not '%s'\n", arg);
		return -1;
	case 'i':
		return parse_interval(arg, &o->s.interval_ms);
	case 'u':
		if (parse_int("--uid", arg, 0, 0x7fffffff, &n))
			return -1;
		o->s.uid = n;
		return 0;
	case 'r':
		if (parse_int("--ringbuf-mb", arg, 1, 1024, &n))
			return -1;
		o->s.ringbuf_mb = n;
		return 0;
	case 'x':
		if (o->npids == DC_MAX_PIDS) {
			fprintf(stderr, "dc-agent: at most %d --pid options\n", DC_MAX_PIDS);
			return -1;
		}
		if (parse_int("--pid", arg, 1, 0x3fffffff, &n))
			return -1;
		o->pids[o->npids++] = n;
		return 0;
	case 'R':
		return set_str(&o->ready_file, arg);
	case 'S':
		return set_str(&o->socket_path, arg);
	case 'E':
		if (!strchr(arg, '=') || arg[0] == '=' || strlen(arg) >= DC_ENV_MATCH_MAX) {
			fprintf(stderr, "dc-agent: --match-env: expected NAME=VALUE, under %d characters\n",
				DC_ENV_MATCH_MAX);
			return -1;
		}
		return set_str(&o->match_env, arg);
	case 'K':
		if (o->nskip_comm == DC_SKIP_COMMS || !*arg || strlen(arg) >= DC_COMM_LEN) {
			fprintf(stderr, "dc-agent: --skip-program: at most %d names of 1-%d characters\n", DC_SKIP_COMMS,
				DC_COMM_LEN - 1);
			return -1;
		}
		snprintf(o->skip_comm[o->nskip_comm++], DC_COMM_LEN, "%s", arg);
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	case 'G':
		o->group_read = 1;
		return 0;
	case 'N':
		o->no_preload = 1;
		return 0;
	case 'C':
		o->check = 1;
		return 0;
	case 'D':
		o->daemon = 1;
		return 0;
	case 'Y':
		return set_str(&o->s.site_cache, arg);
	}
	return -1;
}

static int check(struct dc_options *o)
{
	int mb = o->s.ringbuf_mb;

	if (mb & (mb - 1)) {
		fprintf(stderr, "dc-agent: --ringbuf-mb: %d is not a power of two\n", mb);
		return -1;
	}
	if (o->command && o->npids) {
		fprintf(stderr, "dc-agent: give either a COMMAND or --pid, not both\n");
		return -1;
	}
	if (o->command && o->daemon) {
		fprintf(stderr, "dc-agent: give either a COMMAND or --daemon, not both\n");
		return -1;
	}
	/* Nothing named to trace: how to use it, rather than a daemon that
	 * waits for what may never come. */
	if (!o->command && !o->npids && !o->match_env && !o->daemon && !o->check) {
		fputs(usage, stderr);
		return -1;
	}
	return 0;
}

/* What --version says of a build that is not the product's. */
#ifdef DC_TEST_HOOKS
static const char build_kind_test[] = ", a test build (DC_TEST_HOOKS)";
#else
static const char build_kind_test[] = "";
#endif
#ifdef DC_BENCH_WITHOUT
static const char build_kind_bench[] = ", a benchmark build without its BPF programs' " DC_BENCH_WITHOUT " (DC_BENCH_WITHOUT)";
#else
static const char build_kind_bench[] = "";
#endif

int dc_options_parse(int argc, char **argv, struct dc_options *o)
{
	static const struct option longopts[] = {
		{ "job-id", required_argument, 0, 'j' },   { "output", required_argument, 0, 'o' },
		{ "mode", required_argument, 0, 'm' },     { "interval", required_argument, 0, 'i' },
		{ "probes", required_argument, 0, 'p' },   { "probe-dir", required_argument, 0, 'P' },
		{ "config", required_argument, 0, 'c' },   { "pid", required_argument, 0, 'x' },
		{ "uid", required_argument, 0, 'u' },      { "ringbuf-mb", required_argument, 0, 'r' },
		{ "ready-file", required_argument, 0, 'R' }, { "socket", required_argument, 0, 'S' },
		{ "match-env", required_argument, 0, 'E' }, { "group-read", no_argument, 0, 'G' },
		{ "skip-program", required_argument, 0, 'K' }, { "check", no_argument, 0, 'C' },
		{ "site-cache", required_argument, 0, 'Y' }, { "daemon", no_argument, 0, 'D' },
		{ "verbose", no_argument, 0, 'v' },        { "no-preload", no_argument, 0, 'N' },
		{ "help", no_argument, 0, 'h' },           { "version", no_argument, 0, 'V' },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->s.mode = DC_MODE_TRACE;
	o->s.interval_ms = 1000;
	o->s.ringbuf_mb = 16;
	o->s.uid = -1;
	if (pre_scan(argc, argv, o))
		return -1;
	/* '+': options end at the first non-option, so COMMAND keeps its own. */
	while ((c = getopt_long(argc, argv, "+j:o:m:i:p:c:vhV", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 1;
		}
		if (c == 'V') {
			printf("dc-agent (DataCrumbs) %s%s%s\n", DC_VERSION, build_kind_test, build_kind_bench);
			return 1;
		}
		if (c == '?' || take_option(c, optarg, o)) {
			fprintf(stderr, "Try 'dc-agent --help'.\n");
			return -1;
		}
	}
	if (optind < argc)
		o->command = &argv[optind];
	return check(o);
}

void dc_options_free(struct dc_options *o)
{
	dc_settings_free(&o->s);
	free(o->config_file);
	free(o->ready_file);
	free(o->socket_path);
	free(o->match_env);
}
