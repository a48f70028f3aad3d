#!/usr/bin/env bash
# Runs each fuzz harness for SECONDS on a small seed corpus: the shipped
# YAML files, a node file written by the agent's own writer, bytes for the
# packed-events decoder, file names for the escapers, and the choices that
# make a merged HDF5 file for dc-summary's reader, and a shared object for
# the ELF reader that looks at the job's library files.
# Usage: tests/fuzz/run.sh FUZZ_BUILD_DIR [SECONDS]
set -euo pipefail
build=${1:?usage: run.sh FUZZ_BUILD_DIR [SECONDS]}
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/nodefile" "$work/event_pack" "$work/probeset" "$work/control" "$work/escape" "$work/rank_ring" \
	"$work/h5summary" "$work/elf"
printf 'caf\303\251-\342\202\254-\360\237\230\200.dat' >"$work/escape/utf8"
printf 'bad-\377\376\300\200\355\240\200\n\033[31m\302\205\\' >"$work/escape/bytes"
cp "$here"/corpus/probeset/* "$work/probeset/"
"$build/bench/gen_nodefiles" "$work/gen" seed 1 6
cp "$work/gen/seed/"*.dcnode "$work/nodefile/seed.dcnode"
printf '\002\200\040\006\016\020\002\000\002\000\200\100\000\000\000\012\004\002\100\000\000\000\000\000\000\200\100\000\000\000\000\000' >"$work/event_pack/two"
# The HDF5 file's contents, as the harness reads them: four functions, three
# paths, two processes, two nodes, eight events, each of the layout's shape.
printf '\004\003\002\002\010\001\003\001\002\001\001\000\000\002\004\003\003\002\004\005' >"$work/h5summary/seed"
# A small shared object of the build's own (its soname, its symbols).
cp "$build/tests/workloads/libdctest.so" "$work/elf/"
for f in nodefile event_pack probeset control escape rank_ring h5summary elf; do
	echo "fuzz_$f: $secs s"
	# dc-summary's reports and messages: not in the log.
	quiet=()
	[ "$f" != h5summary ] || quiet=(-close_fd_mask=3)
	"$build/tests/fuzz/fuzz_$f" -max_total_time="$secs" -max_len=65536 -print_final_stats=1 "${quiet[@]}" \
		"$work/$f" 2>"$work/$f.log" || { tail -50 "$work/$f.log"; exit 1; }
	grep -E "stat::number_of_executed_units|Done" "$work/$f.log" | tail -2
done
