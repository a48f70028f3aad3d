#!/usr/bin/env bash
# The cluster view without a cluster: starts a test cluster of 3 nodes on
# this machine (network and UTS namespaces, tests/cluster), a real Slurm
# over it with dc-prolog/dc-epilog on every node, runs a 3-node MPI job of 6
# ranks (POSIX writes of each rank's own file, then a collective MPI-IO
# write of a shared one), lets the first node's epilog merge the three node
# files, prints the trace's path and removes the cluster. As root, after
# ./scripts/quickstart.sh (or ./scripts/build.sh).
# Usage: scripts/demo-cluster.sh [OUTPUT_DIR]   (default ./datacrumbs-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${DC_BUILD_DIR:-build}
[ "$(id -u)" -eq 0 ] || { echo "demo-cluster.sh: run as root (it makes namespaces and starts Slurm)" >&2; exit 1; }
[ -x "$build/agent/dc-agent" ] || ./scripts/build.sh
build=$(cd "$build" && pwd)
out=$(mkdir -p "${1:-datacrumbs-demo}" && cd "${1:-datacrumbs-demo}" && pwd)
work=$(mktemp -d /tmp/dc-demo.XXXXXX)
chmod 755 "$work" # munged and the job's user read parts of it
export DC_CLUSTER_DIR=$work/cluster
trap '"$src/tests/cluster/stop.sh" "$DC_CLUSTER_DIR"; rm -rf "$work"' EXIT

echo "demo-cluster: starting 3 nodes and Slurm..." >&2
"$src/tests/cluster/start.sh" "$DC_CLUSTER_DIR" 3 >/dev/null
. "$DC_CLUSTER_DIR/cluster.env"
cat >"$work/dc.conf" <<CONF
DC_OUTPUT_DIR=$out
DC_AGENT=$build/agent/dc-agent
DC_MERGE=$build/merge/dc-merge
DC_DUMP=$build/dump/dc-dump
DC_STATE_DIR=$work/state
DC_PROBES=posix,stdio,syscalls,mpiio
DC_MERGE_FORMAT=json
CONF
"$src/tests/cluster/slurm-start.sh" "$DC_CLUSTER_DIR" "$work/dc.conf" >/dev/null
export SLURM_CONF=$DC_CLUSTER_DIR/slurm.conf
mkdir -p "$work/data"
chmod 777 "$work/data"
cat >"$work/job.sh" <<JOB
#!/bin/bash
mpi="mpirun --allow-run-as-root --mca btl tcp,self --mca btl_tcp_if_include $DC_CLUSTER_NET.0/24 --mca oob_tcp_if_include $DC_CLUSTER_NET.0/24 -x LD_PRELOAD=$build/mpi_hooks/libdcpmpi.so"
\$mpi $build/tests/workloads/mpi_posix $work/data
\$mpi $build/tests/workloads/mpi_io $work/data
JOB
chmod 755 "$work/job.sh"
echo "demo-cluster: sbatch -N 3 -n 6 (2 MPI ranks per node)..." >&2
job=$("$src/tests/cluster/node-exec" node1 sbatch -N3 -n6 --parsable --wait -o "$work/job.out" "$work/job.sh")
for _ in $(seq 600); do [ -s "$out/$job.json" ] && break; sleep 0.1; done
[ -s "$out/$job.json" ] || { cat "$work/job.out" "$work"/state/*/*.log >&2 || true; echo "demo-cluster: no merged trace" >&2; exit 1; }
"$build/summary/dc-summary" "$job" -i "$out/$job" --top 6 | sed -n '/^## Per node/,/^# slowest for writes/p' >&2
echo "demo-cluster: job $job: node files in $out/$job/, one timeline (open it at ui.perfetto.dev):" >&2
echo "$out/$job.json"
