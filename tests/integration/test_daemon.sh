#!/usr/bin/env bash
# Daemon mode: --pid of a running process, until SIGTERM; every probe is
# detached afterwards.
. "$(dirname "$0")/lib.sh"

wait_detached
uprobes_before=$(grep -c . /sys/kernel/tracing/uprobe_events || true)

mkfifo "$TMP/go"
# The target waits for the agent, then runs the workload in its own child.
bash -c "read line < '$TMP/go'; '$DC_WORKLOADS/posix_write' '$TMP' 100 512" &
target=$!

"$DC_AGENT" -o "$TMP/out" -j daemon --pid "$target" --ready-file "$TMP/ready" 2>"$TMP/daemon.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { cat "$TMP/daemon.err"; fail "agent never became ready"; }
assert_eq "$(cat "$TMP/ready")" "$agent" "ready file holds the agent's pid"
# Its own links (another tracer on the node has others).
links=$(bpf_ids link "$agent")
[ -n "$links" ] || fail "the agent holds no BPF link"

echo go >"$TMP/go"
wait "$target"
kill -TERM "$agent"
wait "$agent" || fail "agent exited with $? after SIGTERM"
[ ! -e "$TMP/ready" ] || fail "ready file left behind"

NODEFILE=$(ls "$TMP/out/daemon"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/daemon.dump"
DUMP="$TMP/daemon.dump"
assert_eq "$(calls posix write "^$TMP/posix_write\\.dat\$")" "100 51200 51200" "writes of the target's child"
assert_contains "$DUMP" "end" "node file closed with its end mark"

# Nothing of ours stays attached (once a detaching child, if any, is done).
wait_detached
assert_eq "$(grep -c . /sys/kernel/tracing/uprobe_events || true)" "$uprobes_before" "uprobe events after exit"
# shellcheck disable=SC2086
assert_eq "$(bpf_alive link $links)" "0" "the agent's BPF links after exit"
