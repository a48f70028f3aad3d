# Sourced by the benchmarks that time BPF programs.

# The kernel's per-program accounting (kernel.bpf_stats_enabled=1, left on
# by a `bpftool prog show` session) adds two clock reads to every program
# run: figures taken with it on are not the product's.
warn_bpf_stats() {
	if [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null)" = 1 ]; then
		echo "$(basename "$0"): warning: kernel.bpf_stats_enabled is 1, which slows every BPF program;" \
			"for the product's figures: sysctl -w kernel.bpf_stats_enabled=0" >&2
	fi
}
