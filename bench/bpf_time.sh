#!/usr/bin/env bash
# Time inside the agent's BPF programs per traced 1-byte write() to
# /dev/null, as the kernel's own accounting of each program counts it
# (kernel.bpf_stats_enabled, on for this run only): trace and profile
# modes of the posix set, this build beside another build's agent
# (DC_BENCH_BASELINE=OTHER_BUILD_DIR), interleaved, ROUNDS times, medians.
# A steadier view than wall-clock time on a noisy machine of what a change
# to the programs costs a call; the accounting itself adds its two clock
# reads to every run, alike for both builds.
# Usage: bpf_time.sh BUILD_DIR [CALLS] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/common.sh"
build=${1:?usage: bpf_time.sh BUILD_DIR [CALLS] [ROUNDS]}
calls=${2:-300000}
rounds=${3:-5}
loop=$build/bench/write_loop
command -v bpftool >/dev/null || { echo "$(basename "$0"): bpftool is missing (scripts/install-deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
was=$(cat /proc/sys/kernel/bpf_stats_enabled)
agent_pid=
trap '[ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null; echo "$was" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# prog_times: "name ns-per-run" of the dc_ programs loaded after the id
# in $tmp/before that ran at least once per call.
prog_times() {
	bpftool -j prog show | python3 -c '
import json, sys
first, calls = int(sys.argv[1]), int(sys.argv[2])
for p in json.load(sys.stdin):
    if p["id"] > first and p.get("name", "").startswith("dc_") and p.get("run_cnt", 0) >= calls:
        print(p["name"], round(p["run_time_ns"] / p["run_cnt"], 1))' "$(cat "$tmp/before")" "$calls"
}

one() { # NAME AGENT MODE: adds "NAME.PROG ns" lines to $tmp/times
	bpftool -j prog show | python3 -c 'import json, sys; print(max([p["id"] for p in json.load(sys.stdin)] + [0]))' \
		>"$tmp/before"
	rm -rf "$tmp/run"
	mkdir -p "$tmp/run"
	agent_start "$2" "$tmp/run" "bpftime" "$3" posix bpftime
	DC_BENCH_RUN=bpftime "$loop" "$calls" >/dev/null
	prog_times | awk -v w="$1" '{ print w, $0 }' >>"$tmp/times"
	agent_stop "$tmp/run"
	agent_pid=
}

runs=("this:$build")
[ -z "${DC_BENCH_BASELINE:-}" ] || runs+=("baseline:$DC_BENCH_BASELINE")
: >"$tmp/times"
for _ in $(seq "$rounds"); do
	for r in "${runs[@]}"; do
		for mode in trace profile; do
			one "${r%%:*}/$mode" "${r#*:}/agent/dc-agent" "$mode"
		done
	done
done
echo "BPF program time per traced 1-byte write() (posix set), $calls calls x $rounds rounds, median ns per run"
awk '{ print $1, $2 }' "$tmp/times" | sort -u | while read -r who prog; do
	printf '  %-18s %-20s %8s ns\n' "$who" "$prog" "$(awk -v w="$who" -v p="$prog" '$1 == w && $2 == p { print $3 }' "$tmp/times" | median)"
done
