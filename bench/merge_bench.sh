#!/usr/bin/env bash
# dc-merge throughput and peak memory on synthetic node files, into JSON and
# HDF5, at two trace sizes (so that memory can be seen not to grow with the
# trace). DIR (default: a new temporary folder) holds inputs and outputs:
# on tmpfs it measures dc-merge itself, on disk the disk as well.
# Usage: merge_bench.sh BUILD_DIR [NODES] [EVENTS_PER_NODE] [DIR]
set -euo pipefail
build=${1:?usage: merge_bench.sh BUILD_DIR [NODES] [EVENTS_PER_NODE] [DIR]}
nodes=${2:-16}
per_node=${3:-2000000}
dir=${4:-$(mktemp -d)}
trap 'rm -rf "$dir"' EXIT

run() { # label job format
	local out="$dir/$2.$3" m
	m=$("$build/bench/measure" "$build/collector/dc-merge" "$2" -i "$dir/in/$2" -f "$3" -o "$out" -q --no-progress 2>&1 >/dev/null | tail -1)
	awk -v l="$1" -v f="$3" -v n="$4" -v m="$m" -v sz="$(stat -c %s "$out")" 'BEGIN {
		split(m, a, " "); printf "  %-22s %-5s %12d events %8.2f s %8.2f M events/s  peak %6.1f MiB  output %8.1f MiB\n",
		l, f, n, a[1], n / a[1] / 1e6, a[2] / 1024, sz / 1048576 }'
	rm -f "$out"
}

mkdir -p "$dir/in"
small=$((per_node / 8))
"$build/bench/gen_nodefiles" "$dir/in" big "$nodes" "$per_node"
"$build/bench/gen_nodefiles" "$dir/in" small "$nodes" "$small"
echo "dc-merge of $nodes synthetic node files (targets: >= 5 M events/s into HDF5, >= 1.5 M into JSON, peak < 64 MiB)"
for f in hdf5 json; do
	run "$nodes x $small" small "$f" $((nodes * small))
	run "$nodes x $per_node" big "$f" $((nodes * per_node))
done
