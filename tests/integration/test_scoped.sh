#!/usr/bin/env bash
# Uprobes in the job's processes only (--check's "uprobes placed"): on a
# kernel that can (uprobe_scoped), the breakpoints of the posix and stdio
# sets are in the traced processes' copies of libc and in no other
# process's; elsewhere (an older kernel, the feature forced off) they are
# in every process that maps libc. Either way every call of the job is
# seen: a child and a grandchild that fork without exec, a process taken in
# at its exec (--match-env), and past the bound of processes at once.
. "$(dirname "$0")/lib.sh"

"$DC_AGENT" --check >"$TMP/check.txt" 2>&1 || true
if grep -q "^  uprobes placed  *in the job's processes only" "$TMP/check.txt"; then
	scoped=1
else
	assert_contains "$TMP/check.txt" "uprobes placed     in every process that maps the library; missing" \
		"--check says where uprobes go, and what they lack"
	scoped=0
fi

sleep 120 &
bystander=$!
# The job: the workload, then, its processes gone, the checks from inside
# (scoped_checks.py; the agent is the command's parent).
trace scoped -v -p posix,stdio,syscalls -- bash -c '"$1" "$2" 50 && python3 "$3" $$ "$4" $PPID "$2"; exit' \
	sh "$DC_WORKLOADS/fork_stdio" "$TMP" "$(dirname "$0")/scoped_checks.py" "$bystander"
for who in parent child grandchild; do
	f="^$TMP/$who\\.txt\$"
	assert_eq "$(calls stdio fopen "$f") / $(calls stdio fwrite "$f") / $(calls stdio fclose "$f")" \
		"1 0 0 / 50 800 800 / 1 0 0" "$who's stdio calls (fork, no exec)"
done
assert_eq "$(lost_events)" "0" "lost events"
[ "$(cat "$TMP/own.txt")" -gt 0 ] || fail "the traced shell's libc holds no breakpoint"
if [ "$scoped" = 1 ]; then
	assert_eq "$(cat "$TMP/other.txt")" "0" "breakpoints in a process outside the job"
	# bash and python3 were the job's processes then: a pair each (one plan: libc).
	assert_eq "$(cat "$TMP/links.txt")" "4" "the agent's uprobe links, those of the ended processes let go"
	assert_contains "$TMP/scoped.err" "dc-agent: uprobes placed in the job's processes only: " "-v says it"
else
	[ "$(cat "$TMP/other.txt")" -gt 0 ] || fail "no breakpoint in a process outside the job, uprobes on every process"
	echo "ok: breakpoints in a process outside the job: $(cat "$TMP/other.txt"), uprobes on every process"
fi
kill "$bystander"
wait "$bystander" 2>/dev/null || true

# An exec by a thread: the process's pid passes to that thread's task, which
# the links made for the one before it do not serve; held there for new ones.
trace thread -p posix,stdio,syscalls -- "$DC_WORKLOADS/exec_thread" "$TMP/thread.txt" 40
assert_eq "$(calls stdio fwrite "^$TMP/thread\\.txt\$")" "40 640 640" "fwrites after an exec by a thread"

# Taken in at its exec: held there for its links, then its children by fork.
start_agent env -p posix,stdio,syscalls --match-env DC_SCOPED_TEST=1
mkdir "$TMP/env"
DC_SCOPED_TEST=1 "$DC_WORKLOADS/fork_stdio" "$TMP/env" 20 || fail "the workload failed under --match-env"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exited with $? after SIGTERM"
"$DC_DUMP" "$(ls "$TMP/out/env"/*.dcnode)" >"$TMP/env.dump"
DUMP="$TMP/env.dump"
for who in parent child grandchild; do
	assert_eq "$(calls stdio fwrite "^$TMP/env/$who\\.txt\$")" "20 320 320" "$who's fwrites, taken in by --match-env"
done

# Past the bound (a test build's DC_TEST_SCOPE_PROCS): the uprobes go on
# every process, with a warning, and no call is lost on the way.
mkdir "$TMP/bound"
DC_TEST_SCOPE_PROCS=2 trace bound -p posix,stdio,syscalls -- "$DC_WORKLOADS/fork_stdio" "$TMP/bound" 30
for who in parent child grandchild; do
	assert_eq "$(calls stdio fwrite "^$TMP/bound/$who\\.txt\$")" "30 480 480" "$who's fwrites past the bound"
done
if [ "$scoped" = 1 ]; then
	assert_contains "$TMP/bound.err" "more than 2 processes of the job at once: the uprobes are now on every process" \
		"the bound is said"
fi
wait_detached
echo "ok: scoped uprobes ($([ "$scoped" = 1 ] && echo "in the job's processes only" || echo "on every process"))"
