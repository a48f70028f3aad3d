#!/usr/bin/env bash
# IOR under DataCrumbs and under Darshan, side by side in one run.
#
# Builds IOR 4.0.0 and Darshan 3.5.0 from ../shared/peers (their build.sh),
# then runs interleaved rounds of IOR (2 ranks, a file per process, write
# then read) with the POSIX and MPIIO back ends at 4 KiB transfers and the
# HDF5 back end at 1 MiB (the original's paper's workload): bare, under
# Darshan (LD_PRELOAD, with its HDF5 module), Darshan with DXT tracing, and
# under dc-agent in trace and profile modes with the default probe sets,
# plus mpiio (recorded by libdcpmpi.so, preloaded into the ranks as
# dc-prolog does) for MPIIO, and mpiio and hdf5-wrapper (HDF5 recorded by
# libdcpmpi.so too) for HDF5; and under the floor of the system-call
# level (an empty program on the sys_enter/sys_exit tracepoints, which the
# kernel then runs for every system call: what observing the system calls
# from the kernel costs before any work is done), and under the same
# program reading the clock at each end (the least that timing every
# system call from the kernel costs).
# Prints, per back end and tool: the median of IOR's own write+read time as a
# ratio to bare, the calls each tool recorded against IOR's count, and the
# bytes on disk per traced call; and the agent's own CPU a job.
#
# Usage: ior_peers.sh BUILD_DIR [ROUNDS] [BLOCK]   (defaults 5 rounds, 16m)
# PEERS_DIR: where the peers are built (default: a folder under BUILD_DIR).
# IOR_APIS: the back ends to run (default "POSIX MPIIO HDF5").
set -euo pipefail
. "$(dirname "$0")/common.sh"
warn_bpf_stats
build=$(cd "${1:?usage: ior_peers.sh BUILD_DIR [ROUNDS] [BLOCK]}" && pwd)
rounds=${2:-5}
block=${3:-16m}
build_peers "$build"
ior=$peers/bin/ior
darshan=$peers/lib/libdarshan.so
agent=$build/agent/dc-agent
dump=$build/dump/dc-dump
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dc-ior.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $block in
*k) bbytes=$((${block%k} * 1024)) ;;
*m) bbytes=$((${block%m} * 1048576)) ;;
*) bbytes=$block ;;
esac
xfer_of() { [ "$1" = HDF5 ] && echo 1048576 || echo 4096; }
expected() { echo $((2 * bbytes / $(xfer_of "$1"))); } # writes (and reads) of both ranks
pmpi=$build/mpi_hooks/libdcpmpi.so

mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

# IOR's own write and read times (the Results table's total(s) column).
ior_time() { awk '$1 == "write" || $1 == "read" { if ($10 ~ /^[0-9.]+$/ && !seen[$1]++) s += $10 } END { printf "%.6f\n", s }'; }

now_ns() { date +%s%N; }


# run API TOOL ROUND: one IOR job; prints "JOB_WALL IOR_IO_TIME" (seconds).
run() {
	local api=$1 tool=$2 r=$3 dir="$tmp/$1-$2-$3" out t0 t1 sets=posix,stdio,syscalls
	mkdir -p "$dir/data"
	local args=(-a "$api" -t "$(xfer_of "$api")" -b "$block" -F -w -r -o "$dir/data/f")
	[ "$api" = MPIIO ] && sets=$sets,mpiio
	[ "$api" = HDF5 ] && sets=$sets,mpiio,hdf5-wrapper
	case $tool in
	trace | profile) agent_start "$agent" "$dir" ior "$tool" "$sets" "$api-$r" ;;
	esac
	t0=$(now_ns)
	case $tool in
	bare) out=$("${mpi[@]}" "$ior" "${args[@]}") ;;
	floor) out=$("$build/bench/empty_probe" --no-func --syscalls "${mpi[@]}" "$ior" "${args[@]}") ;;
	clock) out=$("$build/bench/empty_probe" --no-func --syscalls --clock "${mpi[@]}" "$ior" "${args[@]}") ;;
	darshan | dxt)
		out=$(DARSHAN_LOGFILE="$dir/log.darshan" DXT_ENABLE_IO_TRACE=$([ "$tool" = dxt ] && echo 1 || echo 0) \
			"${mpi[@]}" -x LD_PRELOAD="$darshan" -x DARSHAN_LOGFILE -x DXT_ENABLE_IO_TRACE "$ior" "${args[@]}") ;;
	trace | profile)
		out=$(DC_BENCH_RUN="$api-$r" DC_JOB_ID=ior "${mpi[@]}" -x LD_PRELOAD="$pmpi" -x DC_JOB_ID \
			"$ior" "${args[@]}") ;;
	esac
	t1=$(now_ns)
	case $tool in
	trace | profile) agent_stop "$dir" ;;
	esac
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }') $(echo "$out" | ior_time)"
	rm -rf "$dir/data"
}

# The level and the write and read calls each tool counts, per back end.
level_of() { case $1 in MPIIO) echo mpiio ;; HDF5) echo hdf5 ;; *) echo posix ;; esac; }
calls_of() { case $1 in MPIIO) echo "MPI_File_write_at MPI_File_read_at" ;; HDF5) echo "H5Dwrite H5Dread" ;; *) echo "write read" ;; esac; }
darshan_of() { case $1 in MPIIO) echo MPIIO ;; HDF5) echo H5D ;; *) echo POSIX ;; esac; }

# counts API TOOL DIR: "writes reads bytes-on-disk records" the tool recorded.
counts() {
	local api=$1 tool=$2 dir=$3 f wf rf
	read -r wf rf <<<"$(calls_of "$api")"
	case $tool in
	darshan)
		"$peers/bin/darshan-parser" "$dir/log.darshan" | awk -v m="$(darshan_of "$api")" '
			$4 == m "_WRITES" || $4 == m "_INDEP_WRITES" { w += $5 } $4 == m "_READS" || $4 == m "_INDEP_READS" { r += $5 }
			END { print w + 0, r + 0 }' | tr '\n' ' '
		echo "$(stat -c %s "$dir/log.darshan") 0" ;;
	dxt)
		# DXT traces POSIX and MPI-IO calls only: HDF5's are its MPI-IO writes.
		"$peers/bin/darshan-dxt-parser" "$dir/log.darshan" | awk -v m="$([ "$api" = POSIX ] && echo X_POSIX || echo X_MPIIO)" '
			$1 == m && $3 == "write" { w++ } $1 == m && $3 == "read" { r++ } $1 ~ /^X_/ { n++ }
			END { print w + 0, r + 0 }' | tr '\n' ' '
		echo "$(stat -c %s "$dir/log.darshan") $("$peers/bin/darshan-dxt-parser" "$dir/log.darshan" | grep -c '^ *X_')" ;;
	trace)
		f=$(ls "$dir/out/ior"/*.dcnode)
		"$dump" "$f" >"$dir/dump.txt"
		if [ "$api" = MPIIO ]; then
			awk -v d="$dir/data/" '$1 == "event" && index($0, "level=mpiio func=MPI_File_write") && index($0, " path=" d) { w++ }
				$1 == "event" && index($0, "level=mpiio func=MPI_File_read") && index($0, " path=" d) { r++ }
				END { print w + 0, r + 0 }' "$dir/dump.txt" | tr '\n' ' '
		elif [ "$api" = HDF5 ]; then
			# IOR names its datasets through the HDF5 1.6 API: the calls, not their paths.
			awk '$1 == "event" && index($0, "level=hdf5 func=H5Dwrite ") { w++ }
				$1 == "event" && index($0, "level=hdf5 func=H5Dread ") { r++ }
				END { print w + 0, r + 0 }' "$dir/dump.txt" | tr '\n' ' '
		else
			awk -v d="$dir/data/" '$1 == "event" && index($0, "level=posix func=write ") && index($0, " path=" d) { w++ }
				$1 == "event" && index($0, "level=posix func=read ") && index($0, " path=" d) { r++ }
				END { print w + 0, r + 0 }' "$dir/dump.txt" | tr '\n' ' '
		fi
		echo "$(stat -c %s "$f") $(grep -c '^event ' "$dir/dump.txt")" ;;
	profile)
		f=$(ls "$dir/out/ior"/*.dcnode)
		# Cumulative per-process totals: the last snapshot of each pid's function
		# (all of its calls, including IOR's own writes to stdout).
		"$dump" "$f" | awk -v l="$(level_of "$api")" -v wf="$wf" -v rf="$rf" '
			$1 == "counter" && $4 == "level=" l && $5 == "func=" wf { w[$3] = substr($6, 7) }
			$1 == "counter" && $4 == "level=" l && $5 == "func=" rf { r[$3] = substr($6, 7) }
			END { for (p in w) sw += w[p]; for (p in r) sr += r[p]; print sw + 0, sr + 0 }' | tr '\n' ' '
		echo "$(stat -c %s "$f") 0" ;;
	esac
}

tools=(bare floor clock darshan dxt trace profile)
declare -A walls ios
read -r -a apis <<<"${IOR_APIS:-POSIX MPIIO HDF5}"
for api in "${apis[@]}"; do
	for r in $(seq "$rounds"); do
		for t in $(rotated "$r" "${tools[@]}"); do
			read -r wall io <<<"$(run "$api" "$t" "$r")"
			walls[$api.$t]+="$wall "
			ios[$api.$t]+="$io "
		done
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
lost=$(lost_in "$tmp"/*/agent.err)

echo "IOR 4.0.0, 2 ranks, 4 KiB transfers (HDF5: 1 MiB), $block per rank, file per process, write+read; $rounds interleaved rounds"
echo "medians: the job's wall (mpirun start to end; the agent runs as a daemon, as under Slurm)"
echo "and IOR's own write+read time; calls each tool recorded of IOR's writes and reads"
for api in "${apis[@]}"; do
	bw=$(echo "${walls[$api.bare]}" | median)
	bi=$(echo "${ios[$api.bare]}" | median)
	echo "$api ($(expected "$api") writes and as many reads)"
	printf '  %-8s %9s %7s %9s %7s %10s %9s %9s %11s\n' tool "wall(s)" "x bare" "io(s)" "x bare" "io half" \
		writes reads "bytes/call"
	for t in "${tools[@]}"; do
		mw=$(echo "${walls[$api.$t]}" | median)
		mi=$(echo "${ios[$api.$t]}" | median)
		row=("$t" "$mw" "$(ratio "$mw" "$bw")" "$mi" "$(ratio "$mi" "$bi")" "$(echo "${ios[$api.$t]}" | spread)")
		if [ "$t" = bare ] || [ "$t" = floor ] || [ "$t" = clock ]; then
			printf '  %-8s %9s %7s %9s %7s %10s\n' "${row[@]}"
			continue
		fi
		read -r w rd size recs <<<"$(counts "$api" "$t" "$tmp/$api-$t-$rounds")"
		per=-
		[ "$recs" -gt 0 ] && per=$(ratio "$size" "$recs")
		printf '  %-8s %9s %7s %9s %7s %10s %9s %9s %11s\n' "${row[@]}" "$w" "$rd" "$per"
	done
	# On a node whose cores all run ranks, the agent's CPU is the job's.
	echo "  the agent's own CPU a job (medians): trace $(own "$tmp/$api"-trace-*/agent.err "ms of CPU") ms," \
		"$(own "$tmp/$api"-trace-*/agent.err "ns an event") ns an event; profile" \
		"$(own "$tmp/$api"-profile-*/agent.err "ms of CPU") ms"
done
# What each H5Dwrite of the last traced HDF5 round says: its file and its
# dataset, FILE:/DATASET (IOR creates and opens datasets through HDF5's 1.6
# API), and the bytes its dataspaces select (IOR's transfer, 1 MiB).
h5dump=$tmp/HDF5-trace-$rounds/dump.txt
if [ -f "$h5dump" ]; then
	awk '$1 == "event" && index($0, "level=hdf5 func=H5Dwrite ") { n++; if (/ bytes=1048576 / && / path=\/[^ ]*:\/[^ ]/) ok++ }
		END { printf "HDF5 trace: %d of %d H5Dwrite calls name their file and dataset and moved 1 MiB\n", ok, n }' "$h5dump"
fi
echo "targets: trace <= dxt's ratio; profile <= darshan's ratio + 0.05 (profile counts include IOR's other calls)"
echo "floor: the empty system-call tracepoints alone, which trace and profile pay before any work of their own"
echo "clock: the same reading the clock at each end, what timing every system call from the kernel costs at least"
echo "io half: the middle half of a tool's runs, as ratios to their median: how far one run lies from another"
echo "lost events in all agent runs: $lost"
