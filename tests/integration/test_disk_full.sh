#!/usr/bin/env bash
# A full output disk: the agent says so and stops tracing; the job runs on
# and the node file is valid up to its last whole chunk.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/small"
mount -t tmpfs -o size=512k tmpfs "$TMP/small"
trap 'umount "$TMP/small" 2>/dev/null || true; cleanup_tmp' EXIT

# One link per probed function: the agent's child then takes a while to
# detach them, after the agent itself has exited.
export DC_TEST_FEATURES_OFF=uprobe_multi
rc=0
"$DC_AGENT" -o "$TMP/small" -j full -p posix -- "$DC_WORKLOADS/posix_write" "$TMP" 50000 16 \
	2>"$TMP/full.err" || rc=$?
assert_eq "$rc" "0" "the workload's own exit status"
assert_eq "$(stat -c %s "$TMP/posix_write.dat")" "800000" "the workload wrote all its data"
assert_contains "$TMP/full.err" "No space left on device; tracing stopped" "agent names the full disk"

NODEFILE=$(ls "$TMP/small/full"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/full.dump" 2>"$TMP/dump.err"
assert_contains "$TMP/dump.err" "without an end mark" "reader sees where the file stops"
n=$(grep -c "^event " "$TMP/full.dump" || true)
[ "$n" -gt 1000 ] && [ "$n" -lt 50000 ] || fail "expected some but not all events, got $n"
echo "ok: $n whole events kept"

# The agent let go of the full file system when the write failed: even its
# child that detaches the probes in the background holds nothing there.
umount "$TMP/small" || { fuser -vm "$TMP/small" >&2 || true; fail "the full file system is still busy"; }
echo "ok: the full file system is free once the agent exits"
