#!/usr/bin/env bash
# The control socket: a process registers only itself, only as the job's
# user; a job with no agent still runs.
. "$(dirname "$0")/lib.sh"
: "${DC_PMPI:?set by ctest}" "${DC_REGISTER:?set by ctest}"

stop_agent() { kill -TERM "$AGENT"; wait "$AGENT"; }

start_agent sec -p posix
assert_eq "$(stat -c '%a %U' "$TMP/sec.sock")" "600 root" "socket private to the job's user"
out=$("$DC_REGISTER" "$TMP/sec.sock" 1 0 4 || true)
echo "$out" | grep -qE "^refused: refused: pid [0-9]+ may register only itself, not pid 1$" || fail "claiming another pid: $out"
echo "ok: a process claiming another pid is refused"
if id nobody >/dev/null 2>&1; then
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$DC_REGISTER" "$TMP/sec.sock" 0 0 4 || true)
	echo "$out" | grep -q "refused: cannot connect to $TMP/sec.sock: Permission denied" || fail "another uid: $out"
	echo "ok: another uid cannot even connect"
fi
out=$("$DC_REGISTER" "$TMP/sec.sock" 0 0 4)
assert_eq "$out" "accepted" "a process registering itself"
# A process the agent did not trace joins by registering: its threads had
# already looked up "traced?" (its 3 writes before), and look again (the 5 after).
out=$("$DC_REGISTER" "$TMP/sec.sock" 0 1 4 "$TMP/joined.dat")
joined=${out#accepted }
[ "$joined" != "$out" ] || fail "registering after writing: $out"
stop_agent
assert_contains "$TMP/sec.err" "refused a registration from pid" "agent logs the refusal"
NODEFILE=$(ls "$TMP/out/sec"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/sec.dump"
assert_eq "$(grep -c '^rank .* kind=register' "$TMP/sec.dump")" "2" "only the accepted registrations are recorded"
assert_eq "$(grep -c '^rank .* kind=ended_without_finalize' "$TMP/sec.dump")" "2" "the clients exited without MPI_Finalize"
DUMP=$TMP/sec.dump
# Its 5 one-byte writes after it registered, and its answer ("accepted PID\n") on stdout.
printed=$((${#out} + 1))
assert_eq "$(calls posix write '' "$joined")" "6 $((5 + printed)) $((5 + printed))" \
	"a joining process's writes after it registered, none before"

# MPI-IO rings a rank means harm with: turned down or dropped, with a
# reason, the registration itself and the other rings unharmed.
ring() { DC_TEST_RING=$1 "$DC_REGISTER" "$TMP/$2.sock" 0 0 1; }
start_agent ring -p posix,mpiio
assert_eq "$(ring pipe ring)" "accepted: ok; its MPI-IO, HDF5 and STDIO calls not recorded: the rank's ring is not a memfd sealed against shrinking" "a pipe for a ring"
assert_eq "$(ring unsealed ring)" "accepted: ok; its MPI-IO, HDF5 and STDIO calls not recorded: the rank's ring is not a memfd sealed against shrinking" "an unsealed memfd"
good=$(ring good ring)
assert_eq "$good" "accepted: ok; its MPI-IO, HDF5 and STDIO calls recorded" "a true ring"
DC_TEST_RING=damaged bash -c 'echo $$; exec "$0" "$@"' "$DC_REGISTER" "$TMP/ring.sock" 0 0 1 >"$TMP/damaged.out"
bad_pid=$(head -1 "$TMP/damaged.out")
stop_agent
assert_contains "$TMP/ring.err" "the ring of pid $bad_pid (its MPI-IO, HDF5 and STDIO calls) is damaged (a record claims more slots than it may have)" "a damaged ring, named"
DUMP=$TMP/ring.dump
"$DC_DUMP" "$(ls "$TMP/out/ring"/*.dcnode)" >"$DUMP"
assert_eq "$(calls mpiio MPI_File_write_at '' "$bad_pid")" "2 14 14" "the damaged ring's records before the damage"
assert_eq "$(calls mpiio MPI_File_write_at '')" "4 28 28" "the true ring's two records and those two, no more"
start_agent plain -p posix
assert_eq "$(ring good plain)" "accepted: ok; its MPI-IO, HDF5 and STDIO calls not recorded here (no wrapper set among the agent's probe sets)" "an agent without the mpiio set"
stop_agent

# An agent serving another uid refuses root's processes.
start_agent other --uid 65534 -p posix
out=$("$DC_REGISTER" "$TMP/other.sock" 0 0 4 || true)
echo "$out" | grep -q "uid 0 is not the job's user (uid 65534)" || fail "wrong uid: $out"
echo "ok: a process of another uid is refused"
stop_agent

# No agent at all: the MPI job completes, with one warning per rank.
mkdir -p "$TMP/noagent"
DC_AGENT_SOCKET="$TMP/none.sock" mpirun --allow-run-as-root --oversubscribe -np 2 -x DC_AGENT_SOCKET \
	-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_posix" "$TMP/noagent" 2>"$TMP/noagent.err" ||
	{ cat "$TMP/noagent.err"; fail "MPI job failed without an agent"; }
assert_eq "$(stat -c %s "$TMP/noagent/rank_1.dat")" "20000" "the job did its I/O"
assert_eq "$(grep -c 'libdcpmpi: warning: rank [01]: .*this job runs on untraced' "$TMP/noagent.err")" "2" "one warning per rank"
