#!/usr/bin/env bash
# Time per call of 1-byte writes to /dev/null: bare, under an empty
# uprobe+uretprobe pair at libc write's entry (attached as a uprobe_multi
# link, and as classic perf-event uprobes), under the empty system-call
# tracepoints (the floor where dc-agent observes write), and the same
# reading the clock at each end (what timing a call costs), under bpftrace's
# uprobe+uretprobe on the same function, counting only (what a user would
# reach for), and under dc-agent in trace and profile modes, and under
# benchmark builds of it whose programs leave out their clock reads or
# their ring-buffer records (DC_BENCH_WITHOUT, built here from this source
# tree): what each part of a traced call costs; and, beside them, a clock
# read in the process (as Darshan times a call). Runs are
# interleaved, ROUNDS times, and the medians compared, so that the ratios
# come from one run on one (noisy) machine. Cost = ns per call above bare.
# With DC_BENCH_BASELINE=OTHER_BUILD_DIR (another commit's build), its
# dc-agent runs beside, interleaved: what a change costs a call.
# Usage: probe_cost.sh BUILD_DIR [CALLS] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/common.sh"
warn_bpf_stats
build=${1:?usage: probe_cost.sh BUILD_DIR [CALLS] [ROUNDS]}
calls=${2:-200000}
rounds=${3:-5}
loop=$build/bench/write_loop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

libc=$(ldd "$loop" | awk '$1 == "libc.so.6" { print $3 }')
bpftrace_run() { # N: the loop under bpftrace's uprobe+uretprobe on libc write
	bpftrace -e "uprobe:$libc:write { @calls = count(); } uretprobe:$libc:write { @rets = count(); }" \
		-c "$loop $1" 2>/dev/null | awk '/^[0-9.]+$/ { print; exit }'
}

agent() { # mode probes [BUILD]; the agent's own work (-v) goes to $tmp/own.MODE.PROBES
	local b=${3:-$build}
	"$b/agent/dc-agent" -v -o "$tmp" -j "bench-$1-$RANDOM$RANDOM" -m "$1" -p "$2" -- "$loop" "$calls" 2>"$tmp/run.err"
	[ -n "${3:-}" ] || grep "own work" "$tmp/run.err" >>"$tmp/own.$1.${2//,/_}" || true
	grep -v "^dc-agent: \(site\|probe set\|time\|own work\|warning: a benchmark build\)" "$tmp/run.err" >>"$tmp/agent.err" || true
}

# without PART: builds a dc-agent whose programs leave PART (clock, ring)
# out, into $tmp/without-PART.
src=$(cd "$(dirname "$0")/.." && pwd)
without() {
	cmake -S "$src" -B "$tmp/without-$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDC_BENCH_WITHOUT="$1" >/dev/null &&
		cmake --build "$tmp/without-$1" --target dc-agent -j "$(nproc)" >/dev/null ||
		{ echo "$(basename "$0"): cannot build dc-agent with DC_BENCH_WITHOUT=$1" >&2; exit 1; }
}
without clock
without ring

run() { # TOOL: one run's median ns per call (for interleave)
	case $1 in
	bare) "$loop" "$calls" ;;
	vdso) "$loop" --clock "$calls" ;;
	floor) "$build/bench/empty_probe" --multi "$loop" "$calls" ;;
	classic) "$build/bench/empty_probe" "$loop" "$calls" ;;
	sysfloor) "$build/bench/empty_probe" --no-func --syscalls "$loop" "$calls" ;;
	sysclock) "$build/bench/empty_probe" --no-func --syscalls --clock "$loop" "$calls" ;;
	bpftrace) bpftrace_run "$calls" ;;
	trace_posix) agent trace posix ;;
	profile_posix) agent profile posix ;;
	trace_all) agent trace posix,stdio,syscalls ;;
	profile_all) agent profile posix,stdio,syscalls ;;
	trace_noclock) agent trace posix "$tmp/without-clock" ;;
	profile_noclock) agent profile posix "$tmp/without-clock" ;;
	trace_noring) agent trace posix "$tmp/without-ring" ;;
	trace_base) agent trace posix "$DC_BENCH_BASELINE" ;;
	trace_all_base) agent trace posix,stdio,syscalls "$DC_BENCH_BASELINE" ;;
	esac
}

baseline=()
[ -z "${DC_BENCH_BASELINE:-}" ] || baseline=(trace_base trace_all_base)
interleave "$rounds" bare vdso floor classic sysfloor sysclock bpftrace trace_posix profile_posix trace_all profile_all \
	trace_noclock profile_noclock trace_noring "${baseline[@]}"

lost=$(lost_in "$tmp/agent.err")
echo "1-byte write() to /dev/null, $calls calls x $rounds rounds, median ns per call"
printf '  %-40s %8s ns\n' "bare" "${med[bare]}" \
	"empty uprobe+uretprobe, uprobe_multi" "${med[floor]}" \
	"empty uprobe+uretprobe, perf event" "${med[classic]}" \
	"empty system-call tracepoints" "${med[sysfloor]}" \
	"the same, each reading the clock" "${med[sysclock]}" \
	"bpftrace uprobe+uretprobe, counting" "${med[bpftrace]}" \
	"dc-agent trace, posix" "${med[trace_posix]}" \
	"dc-agent profile, posix" "${med[profile_posix]}" \
	"dc-agent trace, posix+stdio+syscalls" "${med[trace_all]}" \
	"dc-agent profile, posix+stdio+syscalls" "${med[profile_all]}" \
	"dc-agent trace, posix, no clock reads" "${med[trace_noclock]}" \
	"dc-agent profile, posix, no clock reads" "${med[profile_noclock]}" \
	"dc-agent trace, posix, no ring buffer" "${med[trace_noring]}"
cost() { awk -v a="$1" -v b="$2" -v z="${med[bare]}" 'BEGIN { printf "%.2f", (a - z) / (b - z) }'; }
echo "cost per call (ns above bare) as a ratio to bpftrace's (targets: trace <= 0.35, profile <= 0.30)"
echo "  trace posix                  $(cost "${med[trace_posix]}" "${med[bpftrace]}")"
echo "  profile posix                $(cost "${med[profile_posix]}" "${med[bpftrace]}")"
echo "  trace posix+stdio+syscalls   $(cost "${med[trace_all]}" "${med[bpftrace]}")"
echo "  profile posix+stdio+syscalls $(cost "${med[profile_all]}" "${med[bpftrace]}")"
echo "  empty pair at the entry      $(cost "${med[floor]}" "${med[bpftrace]}")"
echo "  empty system-call tracepoints $(cost "${med[sysfloor]}" "${med[bpftrace]}")"
# The floor of what dc-agent uses for write: its cost over the floor's.
over() { awk -v a="$1" -v b="${med[sysfloor]}" -v z="${med[bare]}" 'BEGIN { printf "%.1f", (a - z) / (b - z) }'; }
echo "cost per call as a ratio to the empty system-call tracepoints': trace posix $(over "${med[trace_posix]}")," \
	"profile posix $(over "${med[profile_posix]}") (targets: trace <= 2.0, profile <= 1.5)"
# The benchmark builds split that cost: without its two clock reads, and
# without its ring-buffer record (made, then dropped): what staging
# records per CPU could save at most.
echo "  the same, by benchmark builds: trace posix without its clock reads $(over "${med[trace_noclock]}")," \
	"without its ring buffer $(over "${med[trace_noring]}"); profile posix without its clock reads" \
	"$(over "${med[profile_noclock]}")"
# A call's time needs a clock read at each end; where the clock is not the
# TSC (a virtual machine's kvm-clock), the two cost more than the empty pair.
echo "the two clock reads a timed call needs: $(awk -v a="${med[sysclock]}" -v b="${med[sysfloor]}" 'BEGIN { printf "%.0f", a - b }')" \
	"ns, $(over "${med[sysclock]}") times the empty pair's cost with them"
# Darshan reads the same clock in the process, through the vDSO.
echo "one clock read: $(awk -v a="${med[sysclock]}" -v b="${med[sysfloor]}" 'BEGIN { printf "%.0f", (a - b) / 2 }') ns" \
	"in a BPF program (bpf_ktime_get_ns), ${med[vdso]} ns in the process (clock_gettime, the vDSO)"
overc() { awk -v a="$1" -v b="${med[sysclock]}" -v z="${med[bare]}" 'BEGIN { printf "%.1f", (a - z) / (b - z) }'; }
echo "cost per call as a ratio to the system-call tracepoints that only read the clock: trace posix" \
	"$(overc "${med[trace_posix]}"), profile posix $(overc "${med[profile_posix]}")"
# The agent's own CPU while it traced, per event written, and its wake-ups
# per second: what it costs a full node besides the probes (medians).
echo "the agent's own work while tracing (medians): trace posix $(own "$tmp/own.trace.posix" "ns an event") ns of CPU" \
	"an event, $(own "$tmp/own.trace.posix" "a second") wake-ups a second; trace posix+stdio+syscalls" \
	"$(own "$tmp/own.trace.posix_stdio_syscalls" "ns an event") ns, $(own "$tmp/own.trace.posix_stdio_syscalls" "a second") a second"
if [ -n "${DC_BENCH_BASELINE:-}" ]; then
	echo "beside the baseline build ($DC_BENCH_BASELINE), median ns per call:" \
		"trace posix ${med[trace_base]} (this build ${med[trace_posix]})," \
		"trace posix+stdio+syscalls ${med[trace_all_base]} (this build ${med[trace_all]})"
fi
echo "lost events in all agent runs: $lost"
