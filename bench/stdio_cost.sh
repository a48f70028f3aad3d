#!/usr/bin/env bash
# Time per STDIO call on a buffered stream (16-byte fwrite, and a short
# fprintf; the C library reaches the kernel every 4 KiB), one rank, side
# by side in one run: bare; under Darshan with its STDIO module
# (LD_PRELOAD); under dc-agent in trace and profile modes with the STDIO
# level alone, from the stdio-wrapper set (libdcpmpi.so in the rank, or
# libdcpreload.so, as any process that is no rank would preload it) and
# from the stdio set (uprobes). The ring is sized to the loop, so every
# record lands on a page of it not used before: libdcpmpi.so touches its
# pages in MPI_Init, outside the loop, libdcpreload.so leaves each page's
# fault to the record that first reaches it (a short process pays only for
# the pages it uses), which the preload's trace rows therefore include.
# One more row: the preload in trace mode on the default ring (2.5 MiB,
# its pages reused), what a user gets, where a fast loop can outrun the
# agent: its check is that every call is in the trace or counted dropped.
# Rounds are interleaved and medians compared. Prints ns per call above bare and the ratios to Darshan's, and
# checks that each trace and Darshan's log hold every call once.
#
# Usage: stdio_cost.sh BUILD_DIR [CALLS] [ROUNDS]   (defaults 200000, 5)
# PEERS_DIR: where the peers are built (default: a folder under BUILD_DIR).
set -euo pipefail
. "$(dirname "$0")/common.sh"
warn_bpf_stats
build=$(cd "${1:?usage: stdio_cost.sh BUILD_DIR [CALLS] [ROUNDS]}" && pwd)
calls=${2:-200000}
rounds=${3:-5}
build_peers "$build"
loop=$build/bench/stdio_loop
agent=$build/agent/dc-agent
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dc-stdio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --allow-run-as-root -np 1)
ring=64
while [ "$ring" -lt $((calls + 64)) ]; do ring=$((ring * 2)); done

# run TOOL ROUND: prints the loop's ns per call (the call: $call).
run() {
	local tool=$1 dir="$tmp/$call-$1-$2" sets lib
	mkdir -p "$dir"
	case $tool in
	bare) "${mpi[@]}" "$loop" "$dir/f.txt" "$calls" "$call" ;;
	darshan)
		DARSHAN_LOGFILE="$dir/log.darshan" "${mpi[@]}" -x LD_PRELOAD="$peers/lib/libdarshan.so" \
			-x DARSHAN_LOGFILE "$loop" "$dir/f.txt" "$calls" "$call" ;;
	*)
		sets=stdio-wrapper lib=libdcpmpi.so
		[ "${tool#*_}" = uprobe ] && sets=stdio
		[ "${tool#*_}" = preload ] || [ "${tool#*_}" = defring ] && lib=libdcpreload.so
		agent_start "$agent" "$dir" st "${tool%_*}" "$sets" "$tool-$2"
		# A ring that holds every call: the agent drains it as the loop runs,
		# but a loop of buffered calls can outrun it. (defring: the default.)
		slots=$ring
		[ "${tool#*_}" = defring ] && slots=
		DC_BENCH_RUN="$tool-$2" DC_JOB_ID=st DC_RING_SLOTS=$slots "${mpi[@]}" \
			-x LD_PRELOAD="$build/mpi_hooks/$lib" -x DC_JOB_ID -x DC_RING_SLOTS \
			"$loop" "$dir/f.txt" "$calls" "$call"
		agent_stop "$dir" ;;
	esac
	rm -f "$dir/f.txt"
}

# traced TOOL ROUND: the loop's calls in the trace.
traced() {
	"$build/dump/dc-dump" "$tmp/$call-$1-$2"/out/st/*.dcnode |
		awk -v f="$call" '$1 == "event" && index($0, " level=stdio func=" f " ") { n++ } END { print n + 0 }'
}

# darshan_writes ROUND: the writes Darshan's STDIO module counted on the
# loop's file (the result's printf to stdout is one more).
darshan_writes() {
	"$peers/bin/darshan-parser" "$tmp/$call-darshan-$1/log.darshan" |
		awk '$4 == "STDIO_WRITES" && $6 ~ /\/f\.txt$/ { n += $5 } END { print n + 0 }'
}

# dropped TOOL ROUND: records the agent said the ring dropped.
# (A round with none dropped has no such line: grep's "no match" is no failure.)
dropped() {
	{ grep -o '[0-9]* records of its' "$tmp/$call-$1-$2/agent.err" || true; } | awk '{ s += $1 } END { print s + 0 }'
}

tools=(bare darshan trace_wrapper profile_wrapper trace_preload profile_preload trace_defring trace_uprobe profile_uprobe)
status=0
for call in fwrite fprintf; do
	interleave "$rounds" "${tools[@]}"
	cost_table "$call to a buffered stream, 1 rank, $calls calls x $rounds interleaved rounds, median ns per call" \
		bare bare \
		"Darshan with its STDIO module (LD_PRELOAD)" darshan \
		"dc-agent trace, stdio-wrapper (libdcpmpi.so)" trace_wrapper \
		"dc-agent profile, stdio-wrapper (libdcpmpi.so)" profile_wrapper \
		"dc-agent trace, stdio-wrapper (libdcpreload.so)" trace_preload \
		"dc-agent profile, stdio-wrapper (libdcpreload.so)" profile_preload \
		"dc-agent trace, libdcpreload.so, default ring" trace_defring \
		"dc-agent trace, stdio (uprobes)" trace_uprobe \
		"dc-agent profile, stdio (uprobes)" profile_uprobe
	echo "$call: cost above bare as a ratio to Darshan's: wrapper trace $(above_ratio trace_wrapper darshan)," \
		"profile $(above_ratio profile_wrapper darshan); preload trace $(above_ratio trace_preload darshan)," \
		"profile $(above_ratio profile_preload darshan), on the default ring $(above_ratio trace_defring darshan);" \
		"uprobes trace $(above_ratio trace_uprobe darshan)," \
		"profile $(above_ratio profile_uprobe darshan)"
	wn=$(traced trace_wrapper "$rounds")
	pn=$(traced trace_preload "$rounds")
	un=$(traced trace_uprobe "$rounds")
	dn=$(darshan_writes "$rounds")
	rn=$(traced trace_defring "$rounds") rd=$(dropped trace_defring "$rounds")
	echo "$call in the last traces: wrapper $wn, preload $pn, uprobes $un, Darshan's log $dn, of $calls;" \
		"on the default ring $rn, and $rd dropped in the ring"
	[ "$wn" -eq "$calls" ] && [ "$pn" -eq "$calls" ] && [ "$un" -eq "$calls" ] && [ $((rn + rd)) -eq "$calls" ] ||
		{ echo "stdio_cost.sh: a trace is missing $call calls" >&2; status=1; }
	[ "$dn" -eq "$calls" ] || { echo "stdio_cost.sh: Darshan's STDIO module did not see every $call" >&2; status=1; }
done
echo "lost events in all agent runs: $(lost_in "$tmp"/*/agent.err)"
exit $status
