#!/usr/bin/env bash
# slurm-start.sh DIR [DC_CONF]: a real Slurm over the test cluster in DIR
# (start.sh first): munged, slurmctld on node1 and one slurmd per node, each
# in its node's namespaces. With DC_CONF (DataCrumbs' Slurm settings, as
# /etc/datacrumbs/slurm.conf holds them), slurm/dc-prolog and dc-epilog are
# slurm.conf's Prolog=/Epilog=, run by each node's slurmd. Pids go to
# DIR/*.pid, which stop.sh stops. Run Slurm's commands on a node:
# node-exec node1 srun ...
set -euo pipefail
dir=$(cd "${1:?usage: slurm-start.sh DIR [DC_CONF]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
prolog= epilog=
if [ -n "${2:-}" ]; then
	# Wrappers named as the scripts: the agent skips programs by that name.
	mkdir -p "$dir/bin"
	for s in prolog epilog; do
		# The node's clock skew (test builds): slurmd gives its prolog
		# an environment of its own making.
		printf '#!/bin/bash\nexport DC_SLURM_CONF=%s\nf=%s/skew-$(hostname)\n[ ! -e "$f" ] || export DC_TEST_CLOCK_SKEW_NS=$(cat "$f")\nexec %s "$@"\n' \
			"$2" "$dir" "$here/../../slurm/dc-$s" >"$dir/bin/dc-$s"
		chmod 755 "$dir/bin/dc-$s"
	done
	prolog=$dir/bin/dc-prolog epilog=$dir/bin/dc-epilog
fi
. "$dir/cluster.env"
export DC_CLUSTER_DIR=$dir
set -- $DC_CLUSTER_NODES
n=$#
mkdir -p "$dir/slurm/state"
"$here/../slurm/munge-start.sh" "$dir"
cp "$dir/munge/munged.pid" "$dir/munged.pid"

cat >"$dir/slurm.conf" <<CONF
# Slurm over the test cluster of $dir (tests/cluster/slurm-start.sh).
ClusterName=dccluster
SlurmctldHost=node1($DC_CLUSTER_NET.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/slurm/state
SlurmdSpoolDir=$dir/slurm/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurm/slurmctld.log
SlurmdLogFile=$dir/slurm/slurmd-%n.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MpiParams=ports=16900-16999
ReturnToService=2
SchedulerParameters=defer_batch=0
${prolog:+Prolog=$prolog}
${epilog:+Epilog=$epilog}
NodeName=node[1-$n] NodeAddr=$DC_CLUSTER_NET.[1-$n] CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=node[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$dir/slurm.conf
"$here/node-exec" node1 slurmctld -f "$SLURM_CONF"
# The nodes share one file system: each slurmd reads the same slurm.conf
# from a folder of its own, whose mpi.conf gives PMIx (srun --mpi=pmix) a
# folder of the node's own for its clients' files (else /tmp, one for all).
for node in $DC_CLUSTER_NODES; do
	mkdir -p "$dir/slurm/conf-$node" "$dir/slurm/pmix-$node"
	cp "$SLURM_CONF" "$dir/slurm/conf-$node/slurm.conf"
	echo "PMIxCliTmpDirBase=$dir/slurm/pmix-$node" >"$dir/slurm/conf-$node/mpi.conf"
	"$here/node-exec" "$node" slurmd -f "$dir/slurm/conf-$node/slurm.conf"
done
for _ in $(seq 150); do
	up=$("$here/node-exec" node1 sinfo -h -N -o '%t' 2>/dev/null | grep -cE '^(idle|mix|alloc)' || true)
	if [ "$up" = "$n" ]; then
		echo "SLURM_CONF=$SLURM_CONF"
		exit 0
	fi
	sleep 0.2
done
echo "slurm-start.sh: the Slurm nodes did not come up; logs in $dir/slurm" >&2
tail -5 "$dir"/slurm/*.log >&2 || true
exit 1
