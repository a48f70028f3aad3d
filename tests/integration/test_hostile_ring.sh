#!/usr/bin/env bash
# MPI-IO rings from an unprivileged job user who means harm: descriptors
# that are not rings, a ring it shrinks or unmaps, made-up times, a ring it
# fills as fast as it can, one ring registered by two processes. The agent
# turns each down or drops what it cannot trust, says so, keeps recording
# the others, and writes a valid node file with nothing on the wrong pid.
. "$(dirname "$0")/lib.sh"
: "${DC_REGISTER:?set by ctest}"

evil=dcevil
id "$evil" >/dev/null 2>&1 || useradd -M -N -s /usr/sbin/nologin "$evil"
evil_uid=$(id -u "$evil")
as_evil() { setpriv --reuid="$evil" --regid="$(id -g "$evil")" --clear-groups "$@"; }
mkdir -p "$TMP/evil"
chown "$evil" "$TMP/evil"
as_evil mkfifo "$TMP/evil/fifo"

sock=$TMP/r.sock
"$DC_AGENT" -o "$TMP/out" -j r --daemon --uid "$evil_uid" --socket "$sock" -p posix,mpiio --ready-file "$TMP/ready" \
	2>"$TMP/r.err" &
agent=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { cat "$TMP/r.err"; fail "agent did not start"; }
# ring KIND: the client's output, on one line; its pid in $TMP/evil/KIND.pid.
ring() {
	as_evil env DC_JOB_ID=r DC_TEST_RING="$1" DC_TEST_RING_PATH="${2:-}" \
		bash -c 'echo $$ >"$0"; exec "$@"' "$TMP/evil/$1.pid" "$DC_REGISTER" "$sock" 0 0 2 | tr '\n' ';'
}
not_ring="accepted: ok; its MPI-IO, HDF5 and STDIO calls not recorded: the rank's ring is not a memfd sealed against shrinking;"
assert_eq "$(ring pipe)" "$not_ring" "a pipe"
assert_eq "$(ring fifo "$TMP/evil/fifo")" "$not_ring" "a FIFO"
assert_eq "$(ring socket)" "$not_ring" "a socket"
assert_eq "$(ring file /etc/passwd)" "$not_ring" "a file of root's"
assert_eq "$(ring unsealed)" "$not_ring" "a memfd without the seal"
assert_eq "$(ring truncate)" "shrink refused;accepted: ok; its MPI-IO, HDF5 and STDIO calls recorded;" "the seal holds against shrinking"
assert_eq "$(ring damaged)" "accepted: ok; its MPI-IO, HDF5 and STDIO calls recorded;" "a ring then damaged"
assert_eq "$(ring times)" "accepted: ok; its MPI-IO, HDF5 and STDIO calls recorded;" "records with made-up times"
flood=$(ring flood)
put=$(echo "$flood" | sed -n 's/^flood: \([0-9]*\) records put;.*/\1/p')
[ -n "$put" ] || fail "flood: $flood"
shared=$(ring shared)
echo "$shared" | grep -qF "child: ok; its MPI-IO, HDF5 and STDIO calls not recorded: this ring is pid $(cat "$TMP/evil/shared.pid")'s already;" ||
	fail "a ring registered by a second process (pid $(cat "$TMP/evil/shared.pid")): $shared"
echo "ok: a ring registered by a second process is turned down"
good=$(ring good)
assert_eq "$good" "accepted: ok; its MPI-IO, HDF5 and STDIO calls recorded;" "a true ring after all that"
kill -TERM "$agent"
wait "$agent" || fail "agent exited with $?"

assert_contains "$TMP/r.err" "the ring of pid $(cat "$TMP/evil/damaged.pid") (its MPI-IO, HDF5 and STDIO calls) is damaged" "the damaged ring, named"
assert_contains "$TMP/r.err" "pid $(cat "$TMP/evil/times.pid"): 2 records of its MPI-IO, HDF5 and STDIO calls with impossible times dropped" "made-up times counted"
lost=$(sed -n "s/.*pid $(cat "$TMP/evil/flood.pid"): \([0-9]*\) records of its MPI-IO, HDF5 and STDIO calls lost.*/\1/p" "$TMP/r.err")
DUMP=$TMP/r.dump
"$DC_DUMP" "$(ls "$TMP/out/r"/*.dcnode)" >"$DUMP" || fail "the node file does not read back"
got=$(calls mpiio MPI_File_write_at '' "$(cat "$TMP/evil/flood.pid")" | cut -d' ' -f1)
echo "ok: flood: $put records put, $got recorded, ${lost:-0} lost"
assert_eq "$got" "$put" "flood: every record that fit the ring recorded"
[ "${lost:-0}" -gt 0 ] || fail "flood: a 64-slot ring filled for a second lost nothing"
for k in truncate damaged times shared good; do
	assert_eq "$(calls mpiio MPI_File_write_at '' "$(cat "$TMP/evil/$k.pid")")" "2 14 14" "$k: its two good records, on its own pid"
done
# Every record is on a pid that registered a ring the agent took.
pids=$(for k in truncate damaged times flood shared good; do cat "$TMP/evil/$k.pid"; done | sort -u | tr '\n' ' ')
others=$(awk -v ok=" $pids" '$1 == "event" && index($0, " level=mpiio ") { split($4, a, "="); if (index(ok, " " a[2] " ") == 0) n++ } END { print n + 0 }' "$DUMP")
assert_eq "$others" "0" "MPI-IO records on any other pid"
