#!/usr/bin/env bash
# stop.sh DIR: stops what runs on the test cluster of DIR (the pids in
# DIR/*.pid), and removes its namespaces and bridge. Safe to run twice.
set -uo pipefail
dir=${1:?usage: stop.sh DIR}
[ -e "$dir/cluster.env" ] || exit 0
. "$dir/cluster.env"
for f in "$dir"/*.pid; do
	[ -e "$f" ] || continue
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	rm -f "$f"
done
for node in $DC_CLUSTER_NODES; do
	ns=dc$DC_CLUSTER_TAG-$node
	# Anything left in the namespace ends with it.
	for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
	ip netns del "$ns" 2>/dev/null
	umount "$dir/uts-$node" 2>/dev/null
	rm -f "$dir/uts-$node"
done
ip link del "$DC_CLUSTER_BRIDGE" 2>/dev/null
rm -f "$dir/cluster.env" "$dir/hosts"
exit 0
