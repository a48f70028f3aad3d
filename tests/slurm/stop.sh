#!/usr/bin/env bash
# Stops what start.sh started, by the pids in its pid files.
dir=$1
for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
	[ -s "$f" ] || continue
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || continue
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
done
