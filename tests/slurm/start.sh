#!/usr/bin/env bash
# Starts munged, slurmctld and slurmd on this host for the tests, all state
# under DIR. Prolog=/Epilog= run PROLOG and EPILOG (or nothing).
# Usage: start.sh DIR [PROLOG EPILOG]; prints SLURM_CONF=... on success.
set -euo pipefail
dir=$1
prolog=${2:-}
epilog=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
host=$(hostname -s)
mkdir -p "$dir/state" "$dir/spool"
"$here/munge-start.sh" "$dir"

sed -e "s|@HOST@|$host|g" -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|${DC_SLURMCTLD_PORT:-16817}|" \
	-e "s|@SLURMD_PORT@|${DC_SLURMD_PORT:-16818}|" \
	-e "s|^Prolog=@PROLOG@|${prolog:+Prolog=$prolog}|" -e "s|^Epilog=@EPILOG@|${epilog:+Epilog=$epilog}|" \
	"$here/slurm.conf.in" >"$dir/slurm.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
	if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
		echo "SLURM_CONF=$SLURM_CONF"
		exit 0
	fi
	sleep 0.2
done
echo "start.sh: the Slurm node did not come up; logs in $dir" >&2
tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
