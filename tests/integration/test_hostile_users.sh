#!/usr/bin/env bash
# Whose processes root's agent traces, against local users who mean harm:
# a registration for a pid that has exited (and whose number another
# user's process then gets), --match-env with a victim's job id, a traced
# task that runs set-user-id and set-group-id programs, an agent given
# capabilities run by a user, a descriptor whose close blocks, a job id
# that forges log lines, and `functions: all` on a library that processes
# outside the job map.
. "$(dirname "$0")/lib.sh"
: "${DC_REGISTER:?set by ctest}" "${DC_MERGE:?set by ctest}"

# Users the test makes; where it cannot (a test guest's read-only root),
# two that every Debian system has.
evil=dcevil victim=dcvictim
for u in "$evil" "$victim"; do id "$u" >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin "$u" 2>/dev/null || break; done
id "$evil" >/dev/null 2>&1 && id "$victim" >/dev/null 2>&1 || evil=nobody victim=daemon
evil_uid=$(id -u "$evil") victim_uid=$(id -u "$victim")
"$DC_AGENT" --check >"$TMP/check.txt" || true
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }
mkdir -p "$TMP/evil" "$TMP/victim" "$TMP/secret"
chown "$evil" "$TMP/evil"
chown "$victim" "$TMP/victim"
chmod 700 "$TMP/secret"
echo "root's own words" >"$TMP/secret/shadow.txt"
chmod 600 "$TMP/secret/shadow.txt"

stop_agent() { # job
	kill -TERM "$AGENT"
	wait "$AGENT" || fail "agent exited with $?"
	NODEFILE=$(ls "$TMP/out/$1"/*.dcnode)
	"$DC_DUMP" "$NODEFILE" >"$TMP/$1.dump"
	DUMP=$TMP/$1.dump
}
# Nothing in the trace names the secret folder.
no_secret() { # what
	grep -q "$TMP/secret" "$DUMP" && { grep "$TMP/secret" "$DUMP" | head -5; fail "$1"; }
	echo "ok: $1"
}

# --- 1. a registration for a pid that has exited, then reused by the victim ---
# A child of the job's user connects and exits; the dead child's pid is
# handed to a victim's process (ns_last_pid); then the registration for
# that pid goes out on the dead child's connection (register_client does it
# all, quickly: a silent connection is dropped after 100 ms).
dead_peer() { # job
	DC_JOB_ID=$1 DC_TEST_REUSE="$evil_uid:$(id -g "$evil"):$victim_uid:$(id -g "$victim"):$TMP/victim/mine.txt" \
		"$DC_REGISTER" "$TMP/$1.sock" 0 0 1 >"$TMP/$1.out" || true
	REUSED=$(sed -n 's/^victim //p' "$TMP/$1.out")
	out=$(sed -n '2p' "$TMP/$1.out")
	[ -n "$REUSED" ] || fail "the dead child's pid could not be handed to the victim: $(cat "$TMP/$1.out")"
	echo "ok: the dead child's pid $REUSED now belongs to the victim's process"
	sleep 0.5
	kill "$REUSED"
}
echo data >"$TMP/victim/mine.txt"
chown "$victim" "$TMP/victim/mine.txt"
for mode in peer_pidfd pidfd_open; do
	off=${DC_TEST_FEATURES_OFF:-}
	[ "$mode" = pidfd_open ] && off=$off${off:+,}peer_pidfd
	DC_TEST_FEATURES_OFF=$off start_agent "reuse-$mode" --uid "$evil_uid" -p posix,syscalls
	dead_peer "reuse-$mode"
	# The process that connected, or (without SO_PEERPIDFD) the one that has its pid.
	if [ "$mode" = peer_pidfd ] && grep -q "(SO_PEERPIDFD)" "$TMP/check.txt"; then
		want="refused: refused: pid $REUSED is not a running process"
	else
		want="refused: refused: pid $REUSED runs as uid $victim_uid, not as uid $evil_uid alone"
	fi
	assert_eq "$out" "$want" "$mode: a registration for the dead child's pid"
	stop_agent "reuse-$mode"
	assert_eq "$(grep -c "pid=$REUSED \|$TMP/victim/mine.txt" "$DUMP" || true)" "0" \
		"$mode: nothing of the victim's process in the trace"
	assert_contains "$TMP/reuse-$mode.err" "refused a registration from pid $REUSED" "$mode: the refusal logged"
done

# --- 2. --match-env: only the job user's programs join ---
start_agent menv --uid "$victim_uid" -p posix --match-env DC_HOSTILE_JOB=4242
as "$evil" env DC_HOSTILE_JOB=4242 "$DC_WORKLOADS/posix_write" "$TMP/evil" 3 10
as "$victim" env DC_HOSTILE_JOB=4242 "$DC_WORKLOADS/posix_write" "$TMP/victim" 3 10
env DC_HOSTILE_JOB=4242 "$DC_WORKLOADS/posix_write" "$TMP/secret" 3 10
stop_agent menv
assert_eq "$(calls posix write "^$TMP/victim/posix_write\\.dat\$")" "3 30 30" "the job user's program joined by its environment"
assert_eq "$(calls posix write "^$TMP/evil/")" "0 0 0" "another user's program with the job's variable is not"
no_secret "root's program with the job's variable is not"

# --- 9. --match-env and long environments ---
# The job's variable after a 10,000-byte variable, an exported function,
# and 300 others: taken in (300 others are past the walk's 256 steps
# without bpf_loop). After 20,000 others (more than the walk's steps): not,
# and named as a program whose environment was not read whole.
mkdir -p "$TMP/victim/long" "$TMP/victim/many" "$TMP/victim/toomany"
chown "$victim" "$TMP/victim/long" "$TMP/victim/many" "$TMP/victim/toomany"
long=$(head -c 10000 /dev/zero | tr '\0' p)
seq -f 'V%g=1' 300 >"$TMP/many.env"
seq -f 'V%g=1' 20000 >"$TMP/toomany.env"
start_agent lenv --uid "$victim_uid" -p posix --match-env DC_HOSTILE_JOB=77
as "$victim" env -i LONG_PATH="$long" BASH_FUNC_f%%="() { $long; }" DC_HOSTILE_JOB=77 \
	"$DC_WORKLOADS/posix_write" "$TMP/victim/long" 2 10
as "$victim" env -i $(cat "$TMP/many.env") DC_HOSTILE_JOB=77 "$DC_WORKLOADS/posix_write" "$TMP/victim/many" 2 10
cp "$DC_WORKLOADS/posix_write" "$TMP/many_vars_writer"
as "$victim" env -i $(cat "$TMP/toomany.env") DC_HOSTILE_JOB=77 "$TMP/many_vars_writer" "$TMP/victim/toomany" 2 10
stop_agent lenv
assert_eq "$(calls posix write "^$TMP/victim/long/")" "2 20 20" "the job's variable after long ones"
if grep -q "bounded loop" "$TMP/check.txt"; then
	assert_eq "$(calls posix write "^$TMP/victim/many/")" "0 0 0" "not after 300 others, in 256 steps"
	unread=2 names="posix_write, many_vars_write"
else
	assert_eq "$(calls posix write "^$TMP/victim/many/")" "2 20 20" "the job's variable after 300 others"
	unread=1 names="many_vars_write"
fi
assert_eq "$(calls posix write "^$TMP/victim/toomany/")" "0 0 0" "not after 20,000 others"
assert_contains "$TMP/lenv.err" \
	"--match-env could not read the whole environment of $unread programs, which may have been missed: $names" \
	"the programs whose environment was not read whole, counted and named"

# --- 3. a traced task runs set-user-id and set-group-id programs ---
cp /usr/bin/timeout "$TMP/suidtimeout"
chmod 4755 "$TMP/suidtimeout"
cp /bin/cat "$TMP/sgidcat"
chgrp root "$TMP/sgidcat"
chmod 2755 "$TMP/sgidcat"
chgrp root "$TMP/secret" "$TMP/secret/shadow.txt"
chmod 750 "$TMP/secret"
chmod 640 "$TMP/secret/shadow.txt"
mkfifo "$TMP/go"
chmod 666 "$TMP/go"
mkdir -p "$TMP/victim/before" "$TMP/victim/after"
chown "$victim" "$TMP/victim/before" "$TMP/victim/after"
# setpriv forked here: the pid given to the agent is the victim's bash.
setpriv --reuid="$victim" --regid="$(id -g "$victim")" --clear-groups bash -c 'read line <"$1"; "$5" "$2/before" 1 5
	"$3/suidtimeout" 5 cat "$4" >/dev/null; "$3/sgidcat" "$4" >/dev/null; "$5" "$2/after" 1 5' \
	sh "$TMP/go" "$TMP/victim" "$TMP" "$TMP/secret/shadow.txt" "$DC_WORKLOADS/posix_write" &
target=$!
start_agent suid --uid "$victim_uid" --pid "$target" -p posix,stdio,syscalls
echo go >"$TMP/go"
wait "$target" || fail "the victim's script failed"
stop_agent suid
assert_eq "$(calls posix write "^$TMP/victim/before/") $(calls posix write "^$TMP/victim/after/")" \
	"1 5 5 1 5 5" "the job user's own writes before and after"
no_secret "nothing a privileged program read is in the trace"
assert_eq "$(grep -c '^process .*kind=left pid=.* why=privileges comm=suidtimeout$' "$DUMP")" "1" \
	"the set-user-id program left the job, and why"
assert_eq "$(grep -c '^process .*kind=left pid=.* why=privileges comm=sgidcat$' "$DUMP")" "1" \
	"the set-group-id program left the job, and why"
# "pid ts" of each process that left, then its calls that began later.
awk '$1 == "process" && / kind=left / { delete kv
	for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
	print kv["pid"], kv["ts"] }' "$DUMP" >"$TMP/left.txt"
assert_eq "$(wc -l <"$TMP/left.txt")" "2" "two processes left"
while read -r p ts; do
	assert_eq "$(awk -v p="$p" -v ts="$ts" '$1 == "event" { delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (kv["pid"] == p && kv["ts"] + 0 > ts + 0) c++ } END { print c + 0 }' "$DUMP")" "0" \
		"no call of pid $p after it left"
done <"$TMP/left.txt"
assert_eq "$(grep -c ' kind=fork .* comm=suidtimeout$' "$DUMP" || true)" "0" "the privileged program's child is not taken in"

# --- 4. an agent given capabilities, run by a user ---
cp "$DC_AGENT" "$TMP/capagent"
setcap cap_bpf,cap_perfmon+ep "$TMP/capagent"
setpriv --reuid="$victim" --regid="$(id -g "$victim")" --clear-groups sleep 30 &
vshell=$!
for _ in $(seq 100); do [ "$(stat -c %u "/proc/$vshell")" = "$victim_uid" ] && break; sleep 0.02; done
expect_fail "--pid of another user's process" \
	"--pid $vshell: pid $vshell runs as uid $victim_uid, not as uid $evil_uid alone: only root traces another user's processes" \
	as "$evil" "$TMP/capagent" -o "$TMP/evil/out" -j cap1 --socket "$TMP/evil/c1.sock" --pid "$vshell"
expect_fail "--uid of another user" "--uid $victim_uid: only root traces another user's job (you are uid $evil_uid)" \
	as "$evil" "$TMP/capagent" -o "$TMP/evil/out" -j cap2 --socket "$TMP/evil/c2.sock" --uid "$victim_uid" -- true
[ ! -e "$TMP/evil/out" ] || fail "the refused agents wrote $(ls -R "$TMP/evil/out")"
kill "$vshell"

# --- 7, 8. a descriptor whose close blocks; a job id that forges log lines ---
start_agent linger -p posix
DC_JOB_ID=linger DC_TEST_LINGER=1 "$DC_REGISTER" "$TMP/linger.sock" 0 0 2 >"$TMP/linger.out" &
lingerer=$!
sleep 0.5
t0=$(date +%s%N)
out=$(DC_JOB_ID=linger DC_TEST_WRITES=20000 "$DC_REGISTER" "$TMP/linger.sock" 0 1 2 "$TMP/flow.dat")
t1=$(date +%s%N)
[ "${out%% *}" = accepted ] || fail "a registration after the lingering socket: $out"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "the registration took $(((t1 - t0) / 1000000)) ms"
echo "ok: another rank registered in $(((t1 - t0) / 1000000)) ms while the passed socket lingers"
flow_pid=${out#accepted }
forged=$'x\ndc-agent: warning: forged\e]0;title\a\e[2J'
out=$(DC_JOB_ID=$forged "$DC_REGISTER" "$TMP/linger.sock" 0 0 1 || true)
wait "$lingerer" || true
assert_eq "$(cat "$TMP/linger.out")" "accepted: ok; its MPI-IO, HDF5 and STDIO calls not recorded: the rank's ring is not a memfd sealed against shrinking" \
	"the lingering socket, announced as a ring, turned down at once"
stop_agent linger
assert_eq "$(calls posix write "^$TMP/flow\\.dat\$" "$flow_pid")" "20000 20000 20000" "the other rank's writes, none lost"
assert_eq "$(lost_events)" "0" "events lost"
assert_contains "$TMP/linger.err" \
	"refused a registration from pid" "the forged job id's refusal logged"
assert_contains "$TMP/linger.err" 'job '"'"'x\x0adc-agent: warning: forged\x1b]0;title\x07\x1b[2J'"'"' is not this agent'"'"'s job linger' \
	"the client's job id escaped in root's log"
grep -q '^dc-agent: warning: forged' "$TMP/linger.err" && fail "a forged line in root's log"
grep -q $'\e' "$TMP/linger.err" && fail "an escape byte in root's log"
echo "ok: no forged line and no escape byte in root's log"

# --- 11. functions: all, on a copy of libc that a process outside the job maps ---
# Per-function probes (no uprobe_multi) take minutes to detach from all of libc.
grep -q "^  user calls  *uprobe_multi links" "$TMP/check.txt" || { echo "ok: functions: all left to uprobe_multi kernels"; exit 0; }
mkdir -p "$TMP/lib"
libc=$(ldd /bin/bash | awk '$1 == "libc.so.6" { print $3 }')
cp "$libc" "$TMP/lib/libc.so.6"
printf 'set: everything\nlibrary: %s\nfunctions: all\n' "$TMP/lib/libc.so.6" >"$TMP/all.yaml"
start_agent all -p "$TMP/all.yaml"
out=$(as "$evil" env LD_LIBRARY_PATH="$TMP/lib" bash -c 'f() { return 3; }; g() { f; echo "f gave $?"; }; g
	for i in 1 2 3; do f || true; done; echo alive' 2>&1) || fail "bash outside the job under functions: all: $out"
assert_eq "$out" "f gave 3
alive" "a bash function's return, in a process outside the job"
stop_agent all
assert_contains "$TMP/all.err" "left out, as functions that return twice or never" "the functions left out, said"
assert_contains "$TMP/check.txt" "never probed       functions that return twice or never get no probe in any library: setjmp, _setjmp" \
	"--check names them"
for fn in __sigsetjmp _setjmp siglongjmp longjmp vfork getcontext swapcontext exit; do
	assert_eq "$(grep -c "^function .* name=$fn observed=" "$DUMP" || true)" "0" "$fn not probed"
done
probed=$(grep -c '^function ' "$DUMP")
[ "$probed" -gt 1000 ] || fail "only $probed functions of libc probed"
echo "ok: the rest of libc probed: $probed functions"
