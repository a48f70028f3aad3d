#!/usr/bin/env bash
# Time per MPI_File_write_at of 4 KiB (IOR's MPIIO transfer, one rank, page
# cache), side by side in one run: bare; under Darshan and Darshan DXT
# (LD_PRELOAD); under the mechanism's floor, an empty uprobe+uretprobe at the
# function's entry plus the empty system-call tracepoints (what any eBPF tool
# that sees both the MPI-IO call and its pwrite pays); and under dc-agent in
# trace and profile modes: the mpiio set recorded by libdcpmpi.so in the rank
# (the wrapper), and the mpiio-uprobe set for jobs without it. Rounds are
# interleaved and medians compared.
# Prints ns per call above bare, and checks that the trace holds every call.
#
# Usage: mpiio_cost.sh BUILD_DIR [CALLS] [ROUNDS]   (defaults 100000, 5)
# PEERS_DIR: where the peers are built (default: a folder under BUILD_DIR).
set -euo pipefail
. "$(dirname "$0")/common.sh"
warn_bpf_stats
build=$(cd "${1:?usage: mpiio_cost.sh BUILD_DIR [CALLS] [ROUNDS]}" && pwd)
calls=${2:-100000}
rounds=${3:-5}
build_peers "$build"
loop=$build/bench/mpiio_loop
agent=$build/agent/dc-agent
libmpi=$(ldd "$loop" | awk '$1 ~ /^libmpi\.so/ { print $3 }')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dc-mpiio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --allow-run-as-root -np 1)

# run TOOL ROUND: prints the loop's ns per call.
run() {
	local tool=$1 dir="$tmp/$1-$2" sets
	mkdir -p "$dir"
	case $tool in
	bare) "${mpi[@]}" "$loop" "$dir/f" "$calls" ;;
	darshan | dxt)
		DARSHAN_LOGFILE="$dir/log.darshan" DXT_ENABLE_IO_TRACE=$([ "$tool" = dxt ] && echo 1 || echo 0) \
			"${mpi[@]}" -x LD_PRELOAD="$peers/lib/libdarshan.so" -x DARSHAN_LOGFILE -x DXT_ENABLE_IO_TRACE \
			"$loop" "$dir/f" "$calls" ;;
	floor) "$build/bench/empty_probe" --multi --func "$libmpi" MPI_File_write_at --syscalls \
		"${mpi[@]}" "$loop" "$dir/f" "$calls" ;;
	trace* | profile*)
		sets=mpiio,syscalls
		case $tool in
		*_all) sets=posix,stdio,syscalls,mpiio ;;
		*_uprobe) sets=mpiio-uprobe,syscalls ;;
		*_mpiio) sets=mpiio ;;
		esac
		agent_start "$agent" "$dir" mpiio "${tool%_*}" "$sets" "$tool-$2"
		DC_BENCH_RUN="$tool-$2" DC_JOB_ID=mpiio "${mpi[@]}" -x LD_PRELOAD="$build/mpi_hooks/libdcpmpi.so" \
			-x DC_JOB_ID "$loop" "$dir/f" "$calls"
		agent_stop "$dir" ;;
	esac
	rm -f "$dir/f"
}

# calls_traced ROUND: "MPI_File_write_at pwrite" events on the file in the trace.
calls_traced() {
	"$build/dump/dc-dump" "$tmp/trace-$1"/out/mpiio/*.dcnode | awk -v f=" path=$tmp/trace-$1/f" '
		$1 == "event" && index($0, " func=MPI_File_write_at ") && index($0, f) { m++ }
		$1 == "event" && $0 ~ / func=pwrite(64)? / && index($0, f) { p++ }
		END { print m + 0, p + 0 }'
}

tools=(bare darshan dxt floor trace_mpiio profile_mpiio trace profile trace_uprobe profile_uprobe trace_all profile_all)
interleave "$rounds" "${tools[@]}"
lost=$(lost_in "$tmp"/*/agent.err)

cost_table "MPI_File_write_at of 4 KiB, 1 rank, $calls calls x $rounds interleaved rounds, median ns per call" \
	bare bare \
	"Darshan (LD_PRELOAD)" darshan \
	"Darshan DXT" dxt \
	"floor: empty uprobe pair + syscall tracepoints" floor \
	"dc-agent trace, mpiio (wrapper) alone" trace_mpiio \
	"dc-agent profile, mpiio (wrapper) alone" profile_mpiio \
	"dc-agent trace, mpiio (wrapper)+syscalls" trace \
	"dc-agent profile, mpiio (wrapper)+syscalls" profile \
	"dc-agent trace, mpiio-uprobe+syscalls" trace_uprobe \
	"dc-agent profile, mpiio-uprobe+syscalls" profile_uprobe \
	"dc-agent trace, posix+stdio+syscalls+mpiio" trace_all \
	"dc-agent profile, posix+stdio+syscalls+mpiio" profile_all
echo "cost above bare as a ratio: the MPI-IO level alone, trace to DXT $(above_ratio trace_mpiio dxt)," \
	"profile to Darshan $(above_ratio profile_mpiio darshan); with the system calls, trace to DXT $(above_ratio trace dxt)," \
	"profile to Darshan $(above_ratio profile darshan); mpiio-uprobe trace to the floor $(above_ratio trace_uprobe floor);" \
	"the floor to DXT $(above_ratio floor dxt)"
read -r m p <<<"$(calls_traced "$rounds")"
echo "calls in the last trace: MPI_File_write_at $m, pwrite $p, of $calls each"
echo "lost events in all agent runs: $lost"
[ "$m" -eq "$calls" ] && [ "$p" -eq "$calls" ] || { echo "mpiio_cost.sh: the trace is missing calls" >&2; exit 1; }
