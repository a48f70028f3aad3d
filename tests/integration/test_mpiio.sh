#!/usr/bin/env bash
# The MPI-IO level from libdcpmpi.so (the wrapper set mpiio): every
# MPI_File_* call of each rank with exact counts and bytes, in trace and
# profile mode, nested over the POSIX calls it makes; the uprobe set
# mpiio-uprobe for jobs without the wrapper; both chosen, each call once;
# a full ring counts what it drops; Fortran programs, with Open MPI and
# MPICH.
. "$(dirname "$0")/lib.sh"
: "${DC_PMPI:?set by ctest}"
N=3

mpi() { # job probes [agent options...] -- workload args...
	local job=$1 probes=$2
	shift 2
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	trace "$job" -p "$probes" "${opts[@]}" -- mpirun --allow-run-as-root --oversubscribe -np 2 \
		-x LD_PRELOAD="$DC_PMPI" -x DC_RING_SLOTS "$@"
}
pid_of_rank() { awk -v r="$1" '$1 == "rank" && $4 == "rank=" r && $6 == "kind=register" { sub("pid=", "", $3); print $3 }' "$DUMP"; }
# What mpi_io_calls makes on each rank: "function count asked moved".
expected() { # RANK
	cat <<-END
	MPI_File_close $((1 + ($1 == 0))) 0 0
	MPI_File_delete $(($1 == 0)) 0 0
	MPI_File_iread_at 2 8192 8192
	MPI_File_iwrite_at 3 12288 12288
	MPI_File_open $((1 + ($1 == 0))) 0 0
	MPI_File_read_at $N $((N * 4096)) $((N * 4096))
	MPI_File_read_ordered 1 64 64
	MPI_File_seek 1 0 0
	MPI_File_set_size 1 0 0
	MPI_File_set_view 1 0 0
	MPI_File_sync 1 0 0
	MPI_File_write_all 1 4096 4096
	MPI_File_write_at $N $((N * 4096)) $((N * 4096))
	MPI_File_write_at_all_begin 1 4096 0
	MPI_File_write_at_all_end 1 0 4096
	MPI_File_write_shared 1 64 64
	END
}
# The same from the trace: events of the rank's pid at the mpiio level.
traced() { # PID
	awk -v pid="$1" '$1 == "event" && index($0, " level=mpiio ") && index($0, " pid=" pid " ") {
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		c[kv["func"]]++; q[kv["func"]] += kv["req"]; b[kv["func"]] += kv["bytes"] }
		END { for (f in c) print f, c[f], q[f], b[f] }' "$DUMP" | sort | grep -v ' 0 0 0$' || true
}
# The last totals of each function for the pid (profile mode).
counted() { # PID
	awk -v pid="pid=$1" '$1 == "counter" && $3 == pid && $4 == "level=mpiio" { sub("func=", "", $5); last[$5] = $6 " " $8 }
		END { for (f in last) print f, last[f] }' "$DUMP" | sed 's/count=//; s/bytes=//' | sort
}

# --- trace ---
mkdir -p "$TMP/calls"
mpi wrap posix,syscalls,mpiio -- "$DC_WORKLOADS/mpi_io_calls" "$TMP/calls" "$N"
assert_eq "$(grep -c '^function .* level=mpiio .* observed=wrapper$' "$DUMP")" "43" "the mpiio set: 43 MPI-IO calls, recorded by the wrapper"
for r in 0 1; do
	pid=$(pid_of_rank $r)
	[ -n "$pid" ] || fail "rank $r did not register"
	assert_eq "$(traced "$pid" | tr '\n' ';')" "$(expected $r | grep -v ' 0 0 0$' | tr '\n' ';')" "rank $r: every MPI-IO call, count, bytes asked and moved"
	offs=$(grep " level=mpiio func=MPI_File_write_at " "$DUMP" | grep " pid=$pid " | grep -o 'offset=[0-9]*' | tr '\n' ' ')
	assert_eq "$offs" "$(for i in $(seq 0 $((N - 1))); do printf 'offset=%d ' $(((r * N + i) * 4096)); done)" "rank $r: MPI_File_write_at offsets"
done
assert_eq "$(calls mpiio MPI_File_write_at "^$TMP/calls/calls\\.dat\$" | cut -d' ' -f1)" "$((2 * N))" "paths carried from MPI_File_open to the handle's calls"
assert_eq "$(calls mpiio MPI_File_delete "^$TMP/calls/gone\\.dat\$")" "1 0 0" "MPI_File_delete names its path"
assert_eq "$(grep ' level=mpiio ' "$DUMP" | grep -c ' pid=0 ' || true)" "0" "no record without its rank's pid"
# Each MPI_File_write_at holds its rank's one 4096-byte pwrite (libc, seen
# at its system call), on the same thread: the wrapper's clock and thread
# ids are the kernel's.
nested=$(spans | awk '
	$4 == "mpiio" && $5 == "MPI_File_write_at" { end[$3] = $2; n++; next }
	$4 == "posix" && $5 == "pwrite" && $6 == 4096 && $2 <= end[$3] { inside++ }
	END { print n + 0, inside + 0 }')
assert_eq "$nested" "$((2 * N)) $((2 * N))" "MPI_File_write_at calls, and pwrites nested in them"
grep -q "records of its MPI-IO, HDF5 and STDIO calls lost" "$TMP/wrap.err" && fail "records lost: $(cat "$TMP/wrap.err")"
echo "ok: no MPI-IO record lost"

# --- profile: the same totals, counted in the rank ---
mpi wrapprof posix,mpiio --mode profile -- "$DC_WORKLOADS/mpi_io_calls" "$TMP/calls" "$N"
for r in 0 1; do
	assert_eq "$(counted "$(pid_of_rank $r)" | tr '\n' ';')" "$(expected $r | grep -v ' 0 0 0$' | awk '{ print $1, $2, $4 }' | tr '\n' ';')" "profile: rank $r totals (count, bytes moved)"
done

# --- the uprobe set, without the wrapper's ring ---
trace uprobe -p posix,mpiio-uprobe -- mpirun --allow-run-as-root --oversubscribe -np 2 "$DC_WORKLOADS/mpi_io_calls" "$TMP/calls" "$N"
assert_eq "$(field function observed name MPI_File_write_at)" "uprobe" "mpiio-uprobe: MPI_File_write_at by uprobe"
assert_eq "$(calls mpiio MPI_File_write_at "^$TMP/calls/calls\\.dat\$")" "$((2 * N)) $((2 * N * 4096)) $((2 * N * 4096))" "mpiio-uprobe: MPI_File_write_at of both ranks"

# --- both sets: the wrapper records, the uprobe set leaves those calls alone ---
mpi both posix,mpiio,mpiio-uprobe -- "$DC_WORKLOADS/mpi_io_calls" "$TMP/calls" "$N"
assert_contains "$TMP/both.err" "probe set 'mpiio-uprobe': 13 functions recorded by libdcpmpi (a wrapper set), so not probed" "the uprobe set leaves the wrapper's calls alone"
assert_eq "$(field function observed name MPI_File_write_at)" "wrapper" "MPI_File_write_at once in the table, by the wrapper"
assert_eq "$(calls mpiio MPI_File_write_at "^$TMP/calls/calls\\.dat\$")" "$((2 * N)) $((2 * N * 4096)) $((2 * N * 4096))" "each call recorded once"

# --- Fortran: Open MPI's bindings call PMPI_File_* and PMPI_Wait ---
# What mpi_io_fortran makes on each rank.
expected_f() { # RANK
	cat <<-END
	MPI_File_close 1 0 0
	MPI_File_delete $(($1 == 0)) 0 0
	MPI_File_iwrite_at 1 4096 4096
	MPI_File_open 1 0 0
	MPI_File_read_at $N $((N * 4096)) $((N * 4096))
	MPI_File_seek 1 0 0
	MPI_File_sync 1 0 0
	MPI_File_write_all 1 4096 4096
	MPI_File_write_at $N $((N * 4096)) $((N * 4096))
	END
}
fortran_ranks() { # WHAT
	for r in 0 1; do
		pid=$(pid_of_rank $r)
		[ -n "$pid" ] || fail "$1: rank $r did not register"
		assert_eq "$(traced "$pid" | tr '\n' ';')" "$(expected_f $r | grep -v ' 0 0 0$' | tr '\n' ';')" \
			"$1: rank $r, every MPI-IO call once, count, bytes asked and moved"
	done
	assert_eq "$(calls mpiio MPI_File_write_at "^$TMP/f/fortran\\.dat\$" | cut -d' ' -f1)" "$((2 * N))" \
		"$1: the path from MPI_File_open"
}
mkdir -p "$TMP/f"
mpi fortran posix,mpiio -- "$DC_WORKLOADS/mpi_io_fortran" "$TMP/f" "$N"
fortran_ranks "Fortran (Open MPI)"
mpi fortranboth posix,mpiio,mpiio-uprobe -- "$DC_WORKLOADS/mpi_io_fortran" "$TMP/f" "$N"
fortran_ranks "Fortran (Open MPI), both sets"

# --- a ring too small: what does not fit is counted, the rest recorded ---
M=400
DC_RING_SLOTS=64 mpi small posix,mpiio -- "$DC_WORKLOADS/mpi_io_calls" "$TMP/calls" "$M"
lost=$(sed -n 's/.*pid \([0-9]*\): \([0-9]*\) records of its MPI-IO, HDF5 and STDIO calls lost.*/\1 \2/p' "$TMP/small.err")
[ -n "$lost" ] || { cat "$TMP/small.err"; fail "a 64-slot ring took $((2 * M)) calls a rank and lost none"; }
for r in 0 1; do
	pid=$(pid_of_rank $r)
	l=$(echo "$lost" | awk -v p="$pid" '$1 == p { print $2 }')
	got=$(traced "$pid" | awk '{ s += $2 } END { print s + 0 }')
	want=$(expected $r | sed "s/^MPI_File_\(write\|read\)_at [0-9]*/MPI_File_\1_at $M/" | awk '{ s += $2 } END { print s }')
	assert_eq "$((got + ${l:-0}))" "$want" "rank $r: calls recorded ($got) and lost (${l:-0}) add up"
done

# --- MPICH: the same calls through libdcpmpi-mpich.so, the same counts ---
if [ -z "${DC_PMPI_MPICH:-}" ]; then
	echo "note: built without MPICH (libmpich-dev): libdcpmpi-mpich.so not tested"
	exit 0
fi
mpich() { # job probes [agent options...]
	local job=$1 probes=$2
	shift 2
	trace "$job" -p "$probes" "$@" -- mpiexec.mpich -launcher fork -n 2 -genv LD_PRELOAD "$DC_PMPI_MPICH" \
		"$DC_WORKLOADS/mpi_io_calls_mpich" "$TMP/calls" "$N"
}
mpich mpich posix,syscalls,mpiio
for r in 0 1; do
	pid=$(pid_of_rank $r)
	[ -n "$pid" ] || fail "MPICH rank $r did not register"
	assert_eq "$(traced "$pid" | tr '\n' ';')" "$(expected $r | grep -v ' 0 0 0$' | tr '\n' ';')" "MPICH rank $r: every MPI-IO call, count, bytes asked and moved"
done
mpich mpichprof posix,mpiio --mode profile
for r in 0 1; do
	assert_eq "$(counted "$(pid_of_rank $r)" | tr '\n' ';')" "$(expected $r | grep -v ' 0 0 0$' | awk '{ print $1, $2, $4 }' | tr '\n' ';')" "MPICH profile: rank $r totals"
done
trace mpichf -p posix,mpiio -- mpiexec.mpich -launcher fork -n 2 -genv LD_PRELOAD "$DC_PMPI_MPICH" \
	"$DC_WORKLOADS/mpi_io_fortran_mpich" "$TMP/f" "$N"
fortran_ranks "Fortran (MPICH)"

# A relative name is made absolute against the rank's working directory,
# as the kernel names the files of the other levels (ROMIO's prefixes:
# unit.path_join).
mkdir -p "$TMP/rel/calls"
cd "$TMP/rel"
mpi relative mpiio -- "$DC_WORKLOADS/mpi_io_calls" calls 1
assert_eq "$(calls mpiio MPI_File_open "^$TMP/rel/calls/calls\\.dat\$" | cut -d' ' -f1)" "2" \
	"MPI_File_open of a relative name, named absolutely"
assert_eq "$(calls mpiio MPI_File_write_at "^$TMP/rel/calls/calls\\.dat\$" | cut -d' ' -f1)" "2" \
	"the handle's calls under the absolute name"
cd "$TMP"
