#!/usr/bin/env bash
# 1000 writes of 4096 bytes, traced at the libc and the system-call level,
# while an untraced process does the same next to it. libc's write and
# close are thin wrappers: each is observed once, at its system call, under
# its libc name; open is uprobed and contains its openat system call.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/traced" "$TMP/other"
# The unrelated process runs the whole time the traced one does.
"$DC_WORKLOADS/posix_write" "$TMP/other" 200000 64 &
other=$!

trace posix -- "$DC_WORKLOADS/posix_write" "$TMP/traced" 1000 4096
kill "$other" 2>/dev/null || true
wait "$other" 2>/dev/null || true

f="^$TMP/traced/posix_write.dat\$"
assert_eq "$(calls posix write "$f")" "1000 4096000 4096000" "libc write: count, bytes asked, bytes written"
assert_eq "$(calls syscall write "$f")" "0 0 0" "no write reported twice"
assert_eq "$(field function observed name write)" "syscall" "libc write observed at its system call"
assert_eq "$(calls posix open "$f")" "1 0 0" "libc open"
assert_eq "$(calls syscall openat "$f")" "1 0 0" "openat system call"
assert_eq "$(calls posix close "$f")" "1 0 0" "libc close"
assert_eq "$(calls syscall close "$f")" "0 0 0" "no close reported twice"
assert_eq "$(lost_events)" "0" "lost events"
# The agent's own descriptors (its launch gate, a pipe) are never the command's.
assert_eq "$(grep -c ' path=pipe:' "$DUMP" || true)" "0" "calls on the agent's launch pipe"

# The node's topology, from hwloc's core discovery (the agent loads none of
# its plugins): the processing units online, and the memory /proc sees.
topo=$(grep '^topology ' "$DUMP")
assert_eq "$(echo "$topo" | grep -o ' pus=[0-9]*')" " pus=$(getconf _NPROCESSORS_ONLN)" "topology: processing units"
mem=$(echo "$topo" | sed -n 's/.* memory_mb=\([0-9]*\).*/\1/p')
total=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
[ -n "$mem" ] && [ $((mem * 100)) -ge $((total * 99)) ] && [ $((mem * 100)) -le $((total * 101)) ] ||
	fail "topology: memory_mb=$mem, /proc/meminfo says $total MiB"
echo "ok: topology: memory $mem MiB of $total"
echo "$topo" | grep -Eq ' packages=[1-9][0-9]* numa=[1-9][0-9]* cores=[1-9][0-9]* ' || fail "topology: $topo"

# Calls of the unrelated process are absent, by path and by pid.
assert_eq "$(calls posix write "^$TMP/other/" | cut -d' ' -f1)" "0" "writes of the untraced process"
assert_eq "$(grep -c " pid=$other " "$DUMP" || true)" "0" "events of the untraced pid"

# Levels nest: the openat system call lies inside the libc open of its thread.
nested=$(grep -E "func=(open|openat) .*path=$TMP/traced/" "$DUMP" | awk '
	{ for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	  print kv["ts"], kv["dur"], kv["tid"], kv["level"] }' | sort -n | awk '
	$4 == "posix" { end[$3] = $1 + $2; next }
	$4 == "syscall" { if ($1 <= end[$3] && $1 + $2 <= end[$3]) ok++; else bad++ }
	END { printf "%d %d\n", ok, bad }')
assert_eq "$nested" "1 0" "openat system call nested in libc open (inside, outside)"

# The fd of the open is carried to every write.
fd=$(field event ret func open | head -1)
assert_eq "$(grep -E "level=posix func=write .*path=$TMP/traced/" "$DUMP" | grep -vc " fd=$fd " || true)" "0" "writes on another fd than open returned"
