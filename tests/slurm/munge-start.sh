#!/usr/bin/env bash
# munge-start.sh DIR: munged with a key of its own and the standard socket,
# its files and pid in DIR/munge (for Slurm in the tests and the demo).
set -euo pipefail
dir=${1:?usage: munge-start.sh DIR}
mkdir -p "$dir/munge"
key=$dir/munge/munge.key
dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
chown -R munge:munge "$dir/munge"
chmod 700 "$dir/munge"
chmod 400 "$key"
mkdir -p /run/munge && chown munge:munge /run/munge
runuser -u munge -- /usr/sbin/munged --key-file="$key" --socket=/run/munge/munge.socket.2 \
	--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --force
