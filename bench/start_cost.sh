#!/usr/bin/env bash
# How long dc-agent takes around a job that does nothing: `dc-agent --
# /bin/true`, wall time from start to exit, with the default sets, and with
# `functions: all` on libmpi and libhdf5_openmpi as well (about 7,400
# probes); beside bpftrace with one uprobe on libc's write around the same
# /bin/true, and /bin/true alone. Interleaved ROUNDS times; medians in ms,
# and the -v breakdown of the last round of each (BTF and load, site
# analysis, attach, node file; detach). Targets: 150 ms and 500 ms.
# Usage: start_cost.sh BUILD_DIR [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/common.sh"
build=${1:?usage: start_cost.sh BUILD_DIR [ROUNDS]}
rounds=${2:-7}
agent=$build/agent/dc-agent
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

libdir=$(dirname "$(ldd "$agent" | awk '$1 == "libc.so.6" { print $3 }')")
for lib in libmpi.so.40 libhdf5_openmpi.so.103; do
	[ -e "$libdir/$lib" ] || { echo "start_cost.sh: $libdir/$lib is missing (scripts/install-deps.sh)" >&2; exit 2; }
	printf 'set: all_%s\ndescription: every function of %s\ncategory: all\nlibrary: %s\nfunctions: all\n' \
		"${lib%%.*}" "$lib" "$lib" >"$tmp/all_${lib%%.*}.yaml"
done
all_sets=posix,stdio,syscalls,$tmp/all_libmpi.yaml,$tmp/all_libhdf5_openmpi.yaml

ms_of() { # command...: its wall time in ms
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>>"$tmp/err" || { echo "start_cost.sh: $* failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
dc() { # LABEL SETS
	"$agent" -v -o "$tmp/out" -j "start-$1-$RANDOM$RANDOM" -p "$2" -- /bin/true 2>"$tmp/$1.v"
}
bpftrace_one() {
	bpftrace -e "uprobe:$libdir/libc.so.6:write { @n = count(); }" -c /bin/true
}
have_bpftrace=$(command -v bpftrace >/dev/null && echo 1 || echo 0)

# The first start of a library decodes it (the site cache keeps it): not
# what a job's start costs from the second on.
dc warm "$all_sets"
declare -A runs
for _ in $(seq "$rounds"); do
	runs[true]+="$(ms_of /bin/true) "
	runs[default]+="$(ms_of dc default posix,stdio,syscalls) "
	runs[all]+="$(ms_of dc all "$all_sets") "
	[ "$have_bpftrace" = 0 ] || runs[bpftrace]+="$(ms_of bpftrace_one) "
done

probes=$(grep -o '[0-9]* probes attached' "$tmp/all.v" | awk '{ n += $1 } END { print n }')
printf '%-44s %8s\n' "dc-agent -- /bin/true, median of $rounds" "ms"
printf '%-44s %8s\n' "/bin/true alone" "$(echo "${runs[true]}" | median)"
[ "$have_bpftrace" = 0 ] || printf '%-44s %8s\n' "bpftrace, one uprobe" "$(echo "${runs[bpftrace]}" | median)"
printf '%-44s %8s   (target 150)\n' "default sets" "$(echo "${runs[default]}" | median)"
printf '%-44s %8s   (target 500)\n' "and functions: all, libmpi + libhdf5 ($probes)" "$(echo "${runs[all]}" | median)"
for what in default all; do
	grep -h "time:" "$tmp/$what.v" | sed "s/^dc-agent: time:/  $what:/"
done
