#!/usr/bin/env bash
# Faults: the agent killed mid-trace, a crashing application.
. "$(dirname "$0")/lib.sh"

wait_detached
uprobes_before=$(grep -c . /sys/kernel/tracing/uprobe_events || true)

# SIGKILL in the middle of a trace: readable up to the last whole chunk.
mkdir -p "$TMP/k"
"$DC_AGENT" -o "$TMP/out" -j killed -p posix --match-env DC_TEST_KILL=1 --ready-file "$TMP/ready" 2>/dev/null &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
DC_TEST_KILL=1 "$DC_WORKLOADS/stress" "$TMP/k" 1 2 3 0 >/dev/null &
work=$!
sleep 2
# Its own links (another tracer on the node has others).
links=$(bpf_ids link "$agent")
[ -n "$links" ] || fail "the agent holds no BPF link"
kill -KILL "$agent"
wait "$agent" 2>/dev/null || true
wait "$work" || fail "the workload was disturbed by the agent's death"
NODEFILE=$(ls "$TMP/out/killed"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/killed.dump" 2>"$TMP/killed.err"
assert_contains "$TMP/killed.err" "without an end mark" "dump names the missing end"
n=$(grep -c '^event ' "$TMP/killed.dump" || true)
[ "$n" -gt 0 ] || fail "no events kept from before the kill"
echo "ok: $n events kept from before the kill"
cd "$TMP"
"$DC_MERGE" "$TMP/out/killed" -o killed.json 2>"$TMP/merge.err"
assert_contains "$TMP/merge.err" "merged up to its last whole chunk" "dc-merge warns and merges"
python3 "$DC_TOOLS/trace_summary.py" killed.json >/dev/null
sleep 0.5
assert_eq "$(grep -c . /sys/kernel/tracing/uprobe_events || true)" "$uprobes_before" "uprobes left by the killed agent"
# shellcheck disable=SC2086
assert_eq "$(bpf_alive link $links)" "0" "BPF links left by the killed agent"

# A crashing application: its I/O up to the crash kept, its end marked.
rc=0
trace crash -p posix -- "$DC_WORKLOADS/crash" "$TMP" 5 || rc=$?
assert_eq "$rc" "139" "the agent exits with the crashed command's status"
NODEFILE=$(ls "$TMP/out/crash"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/crash.dump"
DUMP=$TMP/crash.dump
assert_eq "$(calls posix write "^$TMP/crash\\.dat\$")" "5 50 50" "writes before the crash"
assert_eq "$(awk '$1 == "process" && $3 == "kind=exit" { print $6 }' "$DUMP")" "signal=11" "process marked as ended by SIGSEGV"
"$DC_MERGE" "$TMP/out/crash" -o crash.json -q
grep -q '"labels":"[^"]*killed by signal 11"' crash.json || fail "merged label of the crashed process"
echo "ok: merged timeline labels the crash"
