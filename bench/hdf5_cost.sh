#!/usr/bin/env bash
# Time per H5Dwrite of 4 KiB (512 doubles, a hyperslab of a 1 MiB dataset,
# one rank, parallel HDF5's default POSIX driver: most calls stay in HDF5's
# own buffer), side by side in one run: bare; under Darshan with its HDF5
# module (LD_PRELOAD); under dc-agent in trace and profile modes with the
# HDF5 level alone, from the hdf5_openmpi set (uprobes) and from the
# hdf5-wrapper set (libdcpmpi.so in the rank). Rounds are interleaved and
# medians compared. Prints ns per call above bare, and checks that each
# trace holds every call once, the wrapper's with the 4 KiB its dataspaces
# select, and that Darshan's log counts every call and its bytes.
#
# Usage: hdf5_cost.sh BUILD_DIR [CALLS] [ROUNDS]   (defaults 100000, 5)
# PEERS_DIR: where the peers are built (default: a folder under BUILD_DIR).
set -euo pipefail
. "$(dirname "$0")/common.sh"
warn_bpf_stats
build=$(cd "${1:?usage: hdf5_cost.sh BUILD_DIR [CALLS] [ROUNDS]}" && pwd)
calls=${2:-100000}
rounds=${3:-5}
build_peers "$build"
loop=$build/bench/hdf5_loop
agent=$build/agent/dc-agent
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dc-hdf5.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --allow-run-as-root -np 1)

# run TOOL ROUND: prints the loop's ns per call.
run() {
	local tool=$1 dir="$tmp/$1-$2" sets
	mkdir -p "$dir"
	case $tool in
	bare) "${mpi[@]}" "$loop" "$dir/f.h5" "$calls" ;;
	darshan)
		DARSHAN_LOGFILE="$dir/log.darshan" "${mpi[@]}" -x LD_PRELOAD="$peers/lib/libdarshan.so" \
			-x DARSHAN_LOGFILE "$loop" "$dir/f.h5" "$calls" ;;
	*)
		sets=hdf5-wrapper
		[ "${tool#*_}" = uprobe ] && sets=hdf5_openmpi
		agent_start "$agent" "$dir" h5 "${tool%_*}" "$sets" "$tool-$2"
		DC_BENCH_RUN="$tool-$2" DC_JOB_ID=h5 "${mpi[@]}" -x LD_PRELOAD="$build/mpi_hooks/libdcpmpi.so" \
			-x DC_JOB_ID "$loop" "$dir/f.h5" "$calls"
		agent_stop "$dir" ;;
	esac
	rm -f "$dir/f.h5"
}

# writes TOOL ROUND: "H5Dwrite calls, their bytes" in the trace.
writes() {
	"$build/dump/dc-dump" "$tmp/$1-$2"/out/h5/*.dcnode | awk '
		$1 == "event" && index($0, " level=hdf5 func=H5Dwrite ") { n++; for (i = 2; i <= NF; i++) if ($i ~ /^bytes=/) b += substr($i, 7) }
		END { print n + 0, b + 0 }'
}

# darshan_writes ROUND: "H5Dwrite calls, their bytes" in Darshan's log: the
# peer is measured only where its HDF5 module saw every call.
darshan_writes() {
	"$peers/bin/darshan-parser" "$tmp/darshan-$1/log.darshan" | awk '
		$4 == "H5D_WRITES" { n += $5 } $4 == "H5D_BYTES_WRITTEN" { b += $5 } END { print n + 0, b + 0 }'
}

tools=(bare darshan trace_wrapper profile_wrapper trace_uprobe profile_uprobe)
interleave "$rounds" "${tools[@]}"
lost=$(lost_in "$tmp"/*/agent.err)

cost_table "H5Dwrite of 4 KiB (a hyperslab), 1 rank, $calls calls x $rounds interleaved rounds, median ns per call" \
	bare bare \
	"Darshan with its HDF5 module (LD_PRELOAD)" darshan \
	"dc-agent trace, hdf5-wrapper (libdcpmpi.so)" trace_wrapper \
	"dc-agent profile, hdf5-wrapper (libdcpmpi.so)" profile_wrapper \
	"dc-agent trace, hdf5_openmpi (uprobes)" trace_uprobe \
	"dc-agent profile, hdf5_openmpi (uprobes)" profile_uprobe
echo "cost above bare as a ratio to Darshan's: wrapper trace $(above_ratio trace_wrapper darshan)," \
	"profile $(above_ratio profile_wrapper darshan); uprobes trace $(above_ratio trace_uprobe darshan)," \
	"profile $(above_ratio profile_uprobe darshan)"
read -r wn wb <<<"$(writes trace_wrapper "$rounds")"
read -r un _ <<<"$(writes trace_uprobe "$rounds")"
read -r dn db <<<"$(darshan_writes "$rounds")"
echo "H5Dwrite in the last traces: wrapper $wn ($wb bytes), uprobes $un, Darshan's log $dn ($db bytes), of $calls"
echo "lost events in all agent runs: $lost"
[ "$wn" -eq "$calls" ] && [ "$wb" -eq $((calls * 4096)) ] && [ "$un" -eq "$calls" ] ||
	{ echo "hdf5_cost.sh: a trace is missing calls or bytes" >&2; exit 1; }
[ "$dn" -eq "$calls" ] && [ "$db" -eq $((calls * 4096)) ] ||
	{ echo "hdf5_cost.sh: Darshan's HDF5 module did not see every call: its cost is not the peer's" >&2; exit 1; }
