#!/usr/bin/env bash
# The fallbacks older kernels need, forced on this one (a test build's
# DC_TEST_FEATURES_OFF): each is the mechanism in use, not just reported.
# ctest also runs a subset of the other integration tests under each
# (tests/CMakeLists.txt, fallback_*), with their own assertions.
. "$(dirname "$0")/lib.sh"

"$DC_AGENT" --version | grep -q "test build" || fail "needs a test build (scripts/test.sh)"
wait_detached

# --check says what was taken away, and the mechanism it falls back to.
DC_TEST_FEATURES_OFF=uprobe_multi "$DC_AGENT" --check >"$TMP/check.txt"
assert_contains "$TMP/check.txt" "uprobe_multi       no   uprobe_multi links (Linux 6.6), forced off" "uprobe_multi forced off"
assert_contains "$TMP/check.txt" "user calls         a uprobe perf event pair per function, with attach cookies" "per-function uprobes with cookies"
all=uprobe_multi,cookie,task_storage,bpf_loop,tp_btf
DC_TEST_FEATURES_OFF=$all "$DC_AGENT" --check >"$TMP/check.txt"
assert_contains "$TMP/check.txt" "per-thread state   hash maps by thread id" "hash maps instead of task storage"
assert_contains "$TMP/check.txt" "user calls         a uprobe perf event pair per function, each with a program of its own" "a program per probe without cookies"
assert_contains "$TMP/check.txt" "system calls       raw_tp sys_enter/sys_exit" "raw tracepoints"
assert_contains "$TMP/check.txt" "bounded loop (no bpf_loop" "environment read without bpf_loop"

# While it runs, the kernel holds what the fallback says: hash maps by
# thread id, not task storage; a program per probe; raw tracepoints.
set=$(write_only_set)
mkfifo "$TMP/go"
bash -c "read line < '$TMP/go'; exec '$DC_WORKLOADS/posix_write' '$TMP' 100 512" &
target=$!
DC_TEST_FEATURES_OFF=$all "$DC_AGENT" -v -o "$TMP/out" -j fb -p "$set,syscalls" --pid "$target" \
	--ready-file "$TMP/ready" 2>"$TMP/fb.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { cat "$TMP/fb.err"; fail "agent never became ready"; }
# What this agent holds: another tracer on the node has programs and maps
# of the same names.
maps=$(bpf_names map "$agent" | awk '{ print $2 }' | sort -u | tr '\n' ' ')
progs=$(bpf_names prog "$agent")
prog_ids=$(bpf_ids prog "$agent")
# (The kernel keeps 15 characters of a map's name.)
case "$maps" in *dc_stacks_tid*dc_sysframes_ti*) ;; *) fail "hash maps by thread id not created: $maps" ;; esac
case " $maps" in *" dc_stacks "*|*" dc_sysframes "*) fail "task storage created although forced off: $maps" ;; esac
echo "ok: per-thread state in hash maps by thread id"
# The object's entry and return programs, and a copy of one of them for
# each probe: 2 functions of the write-only set x entry and return.
assert_eq "$(grep -c ' dc_call_e' <<<"$progs")" "6" "uprobe programs: the object's 2 and one per probe (2 x 2)"
assert_eq "$(grep -c '^raw_tracepoint dc_sys_e' <<<"$progs")" "2" "system calls through raw tracepoints"
echo go >"$TMP/go"
wait "$target"
kill -TERM "$agent"
wait "$agent" || fail "agent exited with $?"
assert_contains "$TMP/fb.err" "attached with a uprobe perf event pair per function, each with a program of its own" "-v names the mechanism"
NODEFILE=$(ls "$TMP/out/fb"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/fb.dump"
DUMP=$TMP/fb.dump
assert_eq "$(calls posix write "^$TMP/posix_write\\.dat\$")" "100 51200 51200" "libc writes through per-probe programs"
assert_eq "$(calls syscall openat "^$TMP/posix_write\\.dat\$")" "1 0 0" "openat through raw tracepoints"
# Nothing is left in the kernel once the agent and its detaching child are gone.
wait_detached
# shellcheck disable=SC2086
assert_eq "$(bpf_alive prog $prog_ids)" "0" "programs left behind"

# Per-function uprobes of the default sets (46 perf events): the agent ends
# at once, and a child of its own detaches them, the programs stopped.
# The programs and links of the agent, taken by its detaching child, are
# those the child holds once the agent ended.
start=$(date +%s%N)
DC_TEST_FEATURES_OFF=uprobe_multi "$DC_AGENT" -v -o "$TMP/out" -j bg -- "$DC_WORKLOADS/posix_write" "$TMP" 10 512 2>"$TMP/bg.err"
end=$(date +%s%N)
assert_contains "$TMP/bg.err" "detaches the probes in the background" "many per-function probes detach in the background"
cleaner=$(sed -n 's/.* pid \([0-9]*\) detaches the probes in the background.*/\1/p' "$TMP/bg.err")
echo "ok: the agent ran and ended in $(((end - start) / 1000000)) ms; detaching child $cleaner"
held_progs=$(bpf_ids prog "$cleaner")
held_links=$(bpf_ids link "$cleaner")
wait_detached
# shellcheck disable=SC2086
assert_eq "$(bpf_alive prog $held_progs)" "0" "programs left once the detaching child is done"
# shellcheck disable=SC2086
assert_eq "$(bpf_alive link $held_links)" "0" "links left once the detaching child is done"
DUMP=$TMP/bg.dump
"$DC_DUMP" "$(ls "$TMP/out/bg"/*.dcnode)" >"$DUMP"
assert_eq "$(calls posix write "^$TMP/posix_write\\.dat\$")" "10 5120 5120" "the trace is whole before the detach"

# Per-function probes go in and out one agent at a time (5.10 can hang on
# two at once): an agent that finds the node's probe lock held waits for it,
# then traces in full.
flock /run/datacrumbs/probes.lock sleep 2 &
holder=$!
for _ in $(seq 50); do flock -n /run/datacrumbs/probes.lock true 2>/dev/null || break; sleep 0.1; done
DC_TEST_FEATURES_OFF=uprobe_multi "$DC_AGENT" -o "$TMP/out" -j lk -p "$set" -- "$DC_WORKLOADS/posix_write" "$TMP" 10 512 2>"$TMP/lk.err"
wait "$holder"
assert_contains "$TMP/lk.err" "waiting for another dc-agent to finish with its probes" "an agent waits for the probe lock"
DUMP=$TMP/lk.dump
"$DC_DUMP" "$(ls "$TMP/out/lk"/*.dcnode)" >"$DUMP"
assert_eq "$(calls posix write "^$TMP/posix_write\\.dat\$")" "10 5120 5120" "the trace after the wait is whole"
wait_detached
