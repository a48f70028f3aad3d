#!/usr/bin/env bash
# A cluster of NODES simulated nodes on this one machine, for the tests and
# the demo: each node is a network namespace (a veth on a bridge this script
# makes; addresses NET.1, NET.2, ...; traffic only between the namespaces)
# and a UTS namespace with its own hostname (node1, node2, ...). The file
# system and the kernel are shared, as containers share them.
# Usage: start.sh DIR [NODES]; node-exec runs a command on a node; stop.sh
# DIR removes everything this made, by the names and pids kept in DIR.
set -euo pipefail
dir=${1:?usage: start.sh DIR [NODES]}
nodes=${2:-3}
net=${DC_CLUSTER_NET:-10.213.7}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -e "$dir/cluster.env" ] && { echo "start.sh: a cluster already runs in $dir (stop.sh $dir)" >&2; exit 1; }
tag=$(printf '%04x' $((RANDOM % 65536)))
bridge=dcbr$tag
names=""
for i in $(seq "$nodes"); do names="$names node$i"; done
cat >"$dir/cluster.env" <<ENV
DC_CLUSTER_TAG=$tag
DC_CLUSTER_BRIDGE=$bridge
DC_CLUSTER_NET=$net
DC_CLUSTER_NODES="${names# }"
ENV

ip link add "$bridge" type bridge
ip link set "$bridge" up
for i in $(seq "$nodes"); do
	ns=dc$tag-node$i
	ip netns add "$ns"
	ip link add "dcv$tag$i" type veth peer name eth0 netns "$ns"
	ip link set "dcv$tag$i" master "$bridge" up
	ip -n "$ns" addr add "$net.$i/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	touch "$dir/uts-node$i"
	unshare --uts="$dir/uts-node$i" hostname "node$i"
	echo "$net.$i node$i" >>"$dir/hosts"
done
# A bridge without STP forwards at once.
echo "cluster of $nodes nodes in $dir:$names"
