#!/usr/bin/env bash
# dc-merge at scale: the per-node step (dc-merge --part, one a node, run on
# the job's own nodes after the job) and the login-node step (--stitch),
# timed apart, for jobs of 8, 64 and 512 synthetic node files; and the
# single-process merge of the same job beside them where it fits.
#
# What it shows: the login-node step grows with the number of nodes, not
# with the number of events (the largest job is stitched again with a tenth
# of the events to show it), and each node's own step is about what the
# single-process merge spends on one node's events.
#
# Per-node time is measured one part at a time, on a sample of nodes (the
# first, the middle, the last), with nothing else running; all parts are
# then made two at a time so the stitch has them. Times are medians of
# ROUNDS runs; this machine is shared, one run can be off by half.
#
# Usage: merge_scale.sh BUILD_DIR [EVENTS_PER_NODE] [NODE_COUNTS] [DIR] [ROUNDS]
#   defaults: 1000000 events a node, "8 64 512", a new folder in /tmp, 3.
#   512 x 1M events needs about 45 GB in DIR and a few minutes.
set -euo pipefail
. "$(dirname "$0")/common.sh"
build=${1:?usage: merge_scale.sh BUILD_DIR [EVENTS_PER_NODE] [NODE_COUNTS] [DIR] [ROUNDS]}
per_node=${2:-1000000}
counts=${3:-8 64 512}
dir=${4:-}
rounds=${5:-3}
merge=$build/merge/dc-merge
gen=$build/bench/gen_nodefiles
single_max=${DC_SCALE_SINGLE_MAX:-70000000} # events: larger single merges are estimated, not run

if [ -z "$dir" ]; then
	dir=$(mktemp -d /tmp/dc-merge-scale.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# Median seconds of a command run ROUNDS times.
timed() {
	local t times=""
	for ((r = 0; r < rounds; r++)); do
		t=$(now)
		"$@" >/dev/null 2>&1 || { echo "merge_scale: failed: $*" >&2; exit 1; }
		times+="$(elapsed "$t")"$'\n'
	done
	grep . <<<"$times" | median
}

stitch_once() { # job nodes-dir parts out
	local rc=0
	"$merge" "$1" -i "$2" -f hdf5 --stitch --parts "$3" -o "$4" -q || rc=$?
	[ "$rc" -eq 0 ]
}

all_parts() { # job in parts nodes
	seq 0 $(($4 - 1)) | xargs -P "$(nproc)" -I{} "$merge" "$1" -i "$2" -f hdf5 --part "{}/$4" --parts "$3" -q
}

echo "dc-merge --part / --stitch on synthetic jobs of $per_node events a node, in $(df -P "$dir" | awk 'NR == 2 { print $1 }'), median of $rounds rounds"
echo "target: the login-node step (stitch) for 512 nodes x 1 M events under 10 s, growing with nodes, not events"
printf '%-6s %12s %14s %14s %12s %14s %12s\n' nodes events "per-node s" "per-node max" "stitch s" "single s" "single/stitch"
declare -A stitch_s
for n in $counts; do
	job=j$n
	rm -rf "$dir/in" "$dir/parts" "$dir"/*.h5
	"$gen" "$dir/in" "$job" "$n" "$per_node"
	# Per node: a sample of parts, each alone.
	part_times=""
	for k in 0 $((n / 2)) $((n - 1)); do
		part_times+="$(timed "$merge" "$job" -i "$dir/in/$job" -f hdf5 --part "$k/$n" --parts "$dir/sample" -q)"$'\n'
		rm -rf "$dir/sample"
	done
	per=$(grep . <<<"$part_times" | median)
	per_max=$(grep . <<<"$part_times" | sort -n | tail -1)
	all_parts "$job" "$dir/in/$job" "$dir/parts" "$n"
	st=$(timed stitch_once "$job" "$dir/in/$job" "$dir/parts" "$dir/stitched.h5")
	stitch_s[$n]=$st
	events=$((n * per_node))
	if [ "$events" -le "$single_max" ]; then
		single=$(timed "$merge" "$job" -i "$dir/in/$job" -f hdf5 -o "$dir/single.h5" -q)
	else
		single=n/a
	fi
	awk -v n="$n" -v e="$events" -v p="$per" -v pm="$per_max" -v s="$st" -v m="$single" 'BEGIN {
		printf "%-6d %12d %14.3f %14.3f %12.3f %14s %12s\n", n, e, p, pm, s, m, m == "n/a" ? "n/a" : sprintf("%.1f", m / s) }'
	last=$n
done

# The largest job again with a tenth of the events: the stitch should not move.
small=$((per_node / 10))
job=j${last}s
rm -rf "$dir/in" "$dir/parts" "$dir"/*.h5
"$gen" "$dir/in" "$job" "$last" "$small"
all_parts "$job" "$dir/in/$job" "$dir/parts" "$last"
st_small=$(timed stitch_once "$job" "$dir/in/$job" "$dir/parts" "$dir/stitched.h5")
rm -rf "$dir/in" "$dir/parts" "$dir"/*.h5
first=${counts%% *}
awk -v n="$last" -v f="$first" -v sn="${stitch_s[$last]}" -v sf="${stitch_s[$first]}" -v ss="$st_small" \
	-v e="$per_node" -v es="$small" 'BEGIN {
	printf "stitch time, %d nodes over %d nodes: %.1fx for %.0fx the nodes\n", n, f, sn / sf, n / f
	printf "stitch time, %d nodes x %d events over %d nodes x %d events: %.2fx for 10x the events\n", n, e, n, es, sn / ss
	verdict = n == 512 && e == 1000000 ? (sn < 10 ? "meets the target (under 10 s)" : "BELOW the target (under 10 s)") : \
		"(the target is for 512 nodes x 1000000 events: under 10 s)"
	printf "login-node step for %d nodes x %d events: %.3f s %s\n", n, e, sn, verdict
}'
