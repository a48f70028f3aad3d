#!/usr/bin/env bash
# Children and a grandchild are traced, each with its own I/O and exit status.
. "$(dirname "$0")/lib.sh"

trace fork -- "$DC_WORKLOADS/fork_tree" "$TMP" 3

root=$(field process pid kind start)
assert_eq "$(field process pid kind fork | wc -l | tr -d ' ')" "4" "forked processes (3 children, 1 grandchild)"
assert_eq "$(field process pid kind exit | wc -l | tr -d ' ')" "5" "process exits"
for i in 0 1 2; do
	pid=$(awk -v p="$TMP/child_$i.dat" '$1 == "event" && /level=posix func=write / && index($0, " path=" p) { for (i = 2; i <= NF; i++) if ($i ~ /^pid=/) print substr($i, 5) }' "$DUMP")
	assert_eq "$(calls posix write "^$TMP/child_$i\\.dat\$" "$pid")" "1 $((1000 * (i + 1))) $((1000 * (i + 1)))" "child $i write"
	assert_eq "$(awk -v p="$pid" '$1 == "process" && $3 == "kind=fork" && $4 == "pid=" p { print $5 }' "$DUMP")" "ppid=$root" "child $i parent"
	assert_eq "$(awk -v p="$pid" '$1 == "process" && $3 == "kind=exit" && $4 == "pid=" p { print $6 }' "$DUMP")" "exit=$i" "child $i exit status"
done
assert_eq "$(calls posix write "^$TMP/grandchild\\.dat\$")" "1 777 777" "grandchild libc write"
