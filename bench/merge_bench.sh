#!/usr/bin/env bash
# dc-merge throughput, peak memory and bytes an event on synthetic node
# files, into HDF5, JSON, Perfetto (deflated, the default, and with
# --no-compress) and pfw, at two trace sizes (so that memory can be seen not
# to grow with the trace). Each merge runs ROUNDS times in a row and the median time is
# reported: one run on a shared machine can be off by half. The formats do
# not take turns: the gigabytes of page cache a JSON merge writes and frees
# slow the kernel for seconds after, which an HDF5 merge would pay for.
#
# DIR holds inputs and outputs. By default it is a new folder on tmpfs
# (/dev/shm) when there is room, so that dc-merge is measured, not the disk:
# a JSON merge writes about 190 bytes an event. On a disk folder the disk's
# write speed is part of the figure.
# Usage: merge_bench.sh BUILD_DIR [NODES] [EVENTS_PER_NODE] [DIR] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/common.sh"
build=${1:?usage: merge_bench.sh BUILD_DIR [NODES] [EVENTS_PER_NODE] [DIR] [ROUNDS]}
nodes=${2:-16}
per_node=${3:-2000000}
dir=${4:-}
rounds=${5:-3}
small=$((per_node / 8))
need_kib=$((nodes * (per_node + small) * (72 + 200) / 1024))

if [ -z "$dir" ]; then
	base=/tmp
	if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((need_kib * 2)) ]; then
		base=/dev/shm
	fi
	dir=$(mktemp -d "$base/dc-merge-bench.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir/in"

# Prints "SECONDS PEAK_KIB" of one merge.
# perfetto-raw: Perfetto's packets as they are (--no-compress).
merge_once() { # job format
	local how=(-f "$2")
	[ "$2" != perfetto-raw ] || how=(-f perfetto --no-compress)
	"$build/bench/measure" "$build/merge/dc-merge" "$1" -i "$dir/in/$1" "${how[@]}" -o "$dir/out.$2" \
		-q --no-progress 2>&1 >/dev/null | tail -1
}


"$build/bench/gen_nodefiles" "$dir/in" big "$nodes" "$per_node"
"$build/bench/gen_nodefiles" "$dir/in" small "$nodes" "$small"
echo "dc-merge of $nodes synthetic node files in $(df -P "$dir" | awk 'NR == 2 { print $1 }'), median of $rounds rounds"
echo "targets: >= 5 M events/s into HDF5, >= 1.5 M into JSON and pfw, perfetto at least JSON's rate; peak memory < 64 MiB;"
echo "         perfetto at most 12 B/event deflated (the default), 40 B with --no-compress (perfetto-raw)"
for job in small big; do
	events=$((nodes * per_node))
	[ "$job" = big ] || events=$((nodes * small))
	for f in hdf5 json perfetto perfetto-raw pfw; do
		times="" peak=0
		for ((r = 0; r < rounds; r++)); do
			read -r t p < <(merge_once "$job" "$f")
			times+="$t"$'\n'
			[ "$peak" -ge "$p" ] || peak=$p
			size=$(stat -c %s "$dir/out.$f")
			rm -f "$dir/out.$f"
		done
		t=$(grep . <<<"$times" | median)
		# Perfetto's target is the JSON writer's rate in this run.
		[ "$f" = json ] && json_rate=$(awk -v n="$events" -v t="$t" 'BEGIN { print n / t / 1e6 }')
		awk -v job="$nodes x $((events / nodes))" -v f="$f" -v n="$events" -v t="$t" -v jr="${json_rate:-1.5}" \
			-v p="$peak" -v sz="$size" -v big="$([ "$job" = big ] && echo 1 || echo 0)" 'BEGIN {
			rate = n / t / 1e6; target = f == "hdf5" ? 5 : f ~ /^perfetto/ ? jr : 1.5
			verdict = !big ? "(memory only)" : rate >= target ? "meets target" : "BELOW target"
			printf "  %-18s %-8s %10d events %7.2f s %6.2f M events/s = %4.2fx target %-14s peak %5.1f MiB%s  output %7.1f MiB, %5.1f B/event\n",
				job, f, n, t, rate, rate / target, verdict, p / 1024, p / 1024 < 64 ? "" : " (over 64)", sz / 1048576, sz / n }'
	done
done
