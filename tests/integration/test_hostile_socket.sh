#!/usr/bin/env bash
# The control socket under a flood of clients that connect and say nothing
# (a hostile or buggy process of the job's user): registrations are still
# answered at once, and SIGTERM is obeyed within a second.
. "$(dirname "$0")/lib.sh"
: "${DC_REGISTER:?set by ctest}"

sock=$TMP/f.sock
"$DC_AGENT" -o "$TMP/out" -j f --daemon --socket "$sock" -p posix --ready-file "$TMP/ready" 2>"$TMP/f.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { cat "$TMP/f.err"; fail "agent did not start"; }

# Two threads that connect, wait for an answer that never comes, and do it
# again, for 4 s (each connection held until the agent lets it go).
python3 - "$sock" <<'PY' &
import socket, sys, threading, time
def flood():
    end = time.time() + 4
    while time.time() < end:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(sys.argv[1])
            s.recv(1)
        except OSError:
            pass
        s.close()
ts = [threading.Thread(target=flood) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
PY
flood=$!
sleep 1
# Events flowing meanwhile: a process that registers, so the agent traces
# it, then writes 200,000 times; none of its writes may be lost.
DC_JOB_ID=f DC_TEST_WRITES=200000 "$DC_REGISTER" "$sock" 0 0 1 "$TMP/flow.dat" >"$TMP/flow.out" &
flow=$!
worst=0
for i in 1 2 3 4 5; do
	t0=$(date +%s%N)
	out=$(DC_JOB_ID=f "$DC_REGISTER" "$sock" 0 0 1 || true)
	t1=$(date +%s%N)
	assert_eq "$out" "accepted" "registration $i during the flood"
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -gt "$worst" ] && worst=$ms
done
# 100 ms is the aim; the bound leaves room for a busy 2-core machine.
[ "$worst" -lt 300 ] || fail "a registration took $worst ms during the flood"
echo "ok: registrations answered during the flood, the slowest in $worst ms (process start included)"
wait "$flow" || fail "the writing process failed: $(cat "$TMP/flow.out")"
t0=$(date +%s%N)
kill -TERM "$agent"
wait "$agent" || fail "agent exited with $?"
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
[ "$ms" -lt 1000 ] || fail "SIGTERM during the flood took $ms ms"
echo "ok: SIGTERM obeyed during the flood in $ms ms"
wait "$flood" || true
"$DC_DUMP" "$(ls "$TMP/out/f"/*.dcnode)" >"$TMP/f.dump"
DUMP=$TMP/f.dump
assert_eq "$(grep -c '^rank .* kind=register' "$DUMP")" "6" "every registration recorded (five and the writer's)"
flow_pid=$(sed -n 's/^accepted \([0-9]*\)$/\1/p' "$TMP/flow.out")
assert_eq "$(calls posix write "^$TMP/flow\\.dat\$" "$flow_pid")" "200000 200000 200000" "the writer's 200,000 writes during the flood, none lost"
assert_eq "$(lost_events)" "0" "events lost during the flood"
