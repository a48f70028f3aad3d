#!/usr/bin/env bash
# From a fresh Debian 12 machine, as root: installs the packages, builds,
# traces a bundled workload with dc-agent and prints where the trace and
# the job report are.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh"
b=$top/${DC_BUILD_DIR:-build}
work=$(mktemp -d)
out=${DC_OUTPUT_DIR:-$PWD/datacrumbs}
job=quickstart-$(date +%Y%m%d-%H%M%S)
echo "Tracing: 1000 writes of 4 KiB, then 10 files through stdio, then 3 forked children"
"$b/agent/dc-agent" -o "$out" -j "$job" -- sh -c "
	'$b/tests/workloads/posix_write' '$work' 1000 4096 &&
	'$b/tests/workloads/stdio_files' '$work' 10 &&
	'$b/tests/workloads/fork_tree' '$work' 3"
rm -rf "$work"
"$b/merge/dc-merge" "$job" -i "$out/$job" -o "$out/$job.json"
"$b/merge/dc-merge" "$job" -i "$out/$job" -f perfetto -o "$out/$job.pftrace" -q
"$b/summary/dc-summary" "$job" -i "$out/$job" --html "$out/$job.html" >/dev/null
echo "Trace for Perfetto (open either at ui.perfetto.dev): $out/$job.json, or natively $out/$job.pftrace"
echo "Job report for a browser: $out/$job.html (text: dc-summary $out/$job)"
