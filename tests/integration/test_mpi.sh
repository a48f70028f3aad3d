#!/usr/bin/env bash
# mpirun -np 4 under dc-agent with libdcpmpi.so preloaded: every rank named,
# exact calls and bytes per rank and per level, levels nested, the merged
# timeline ordered by rank.
. "$(dirname "$0")/lib.sh"
: "${DC_PMPI:?set by ctest}"

mpi() { # job probes workload args...
	local job=$1 probes=$2
	shift 2
	trace "$job" -p "$probes" -- mpirun --allow-run-as-root --oversubscribe -np 4 \
		-x LD_PRELOAD="$DC_PMPI" "$@"
}
# "rank bound" of each registered rank, by rank.
bounds() { awk '$1 == "rank" && $6 == "kind=register" { sub("rank=", "", $4); sub("clock_error_ns=", "", $8); print $4, $8 }' "$DUMP" | sort -n; }
pid_of_rank() { awk -v r="$1" '$1 == "rank" && $4 == "rank=" r && $6 == "kind=register" { sub("pid=", "", $3); print $3 }' "$DUMP"; }

# --- POSIX I/O per rank ---
mkdir -p "$TMP/posix"
mpi mpiposix posix,syscalls "$DC_WORKLOADS/mpi_posix" "$TMP/posix"
assert_eq "$(grep -c '^rank .* world=4 kind=register' "$DUMP")" "4" "ranks registered, world size 4"
assert_eq "$(grep -c '^rank .* kind=finalize' "$DUMP")" "4" "ranks finalized"
assert_eq "$(for r in 0 1 2 3; do pid_of_rank $r; done | sort -u | wc -l | tr -d ' ')" "4" "four distinct pids"
quiet_bound=$(bounds | awk '$2 > m { m = $2 } END { print m + 0 }') # this machine's, unhindered
for r in 0 1 2 3; do
	n=$((10 * (r + 1)))
	assert_eq "$(calls posix write "^$TMP/posix/rank_$r\\.dat\$" "$(pid_of_rank $r)")" "$n $((n * 1000)) $((n * 1000))" "rank $r libc writes"
	assert_eq "$(calls syscall write "^$TMP/posix/rank_$r\\.dat\$" "$(pid_of_rank $r)")" "0 0 0" "rank $r writes not reported twice"
done

cd "$TMP"
"$DC_MERGE" mpiposix -i "$TMP/out/mpiposix" -o mpiposix.json -q
python3 "$DC_TOOLS/trace_summary.py" mpiposix.json --processes >processes.txt
head -4 processes.txt >ranks.txt
assert_eq "$(tr '\n' ' ' <ranks.txt)" "rank 0 rank 1 rank 2 rank 3 " "merged timeline: ranks first, in order"
assert_eq "$(python3 "$DC_TOOLS/trace_summary.py" mpiposix.json --path 'rank_[0-9][.]dat$' | grep '^posix write ')" \
	"posix write 100 100000 100000" "merged libc writes of the four ranks"
"$DC_MERGE" mpiposix -i "$TMP/out/mpiposix" -r 1,3 -o odd.json -q
assert_eq "$(python3 "$DC_TOOLS/trace_summary.py" odd.json --path 'rank_[0-9][.]dat$' | grep '^posix write ')" \
	"posix write 60 60000 60000" "--ranks 1,3 keeps ranks 1 and 3 only"
python3 "$DC_TOOLS/trace_summary.py" odd.json --processes >/dev/null

# --- MPI-IO collective write ---
mkdir -p "$TMP/mpiio"
mpi mpiio posix,syscalls,mpiio "$DC_WORKLOADS/mpi_io" "$TMP/mpiio" 1024
assert_eq "$(calls mpiio MPI_File_open "^$TMP/mpiio/shared\\.dat\$")" "4 0 0" "MPI_File_open, one per rank"
assert_eq "$(calls mpiio MPI_File_write_at_all "^$TMP/mpiio/shared\\.dat\$")" "4 16384 16384" "MPI_File_write_at_all: 1024 MPI_INTs per rank, path carried from MPI_File_open"
for r in 0 1 2 3; do
	off=$(grep "level=mpiio func=MPI_File_write_at_all " "$DUMP" | grep " pid=$(pid_of_rank $r) " | grep -o 'offset=[0-9]*')
	assert_eq "$off" "offset=$((r * 4096))" "rank $r writes at its own offset"
done
assert_eq "$(calls mpiio MPI_File_close '')" "4 0 0" "MPI_File_close"

# --- serial HDF5 per rank: HDF5 > libc > system call ---
mkdir -p "$TMP/h5"
mpi mpihdf5 posix,syscalls,hdf5 "$DC_WORKLOADS/mpi_hdf5" "$TMP/h5" 4096
assert_eq "$(calls hdf5 H5Fcreate "^$TMP/h5/rank_[0-3]\\.h5\$")" "4 0 0" "H5Fcreate per rank"
assert_eq "$(calls hdf5 H5Dcreate2 "^$TMP/h5/rank_[0-3]\\.h5:/data\$")" "4 0 0" "H5Dcreate2 per rank, named FILE:/data from the file it is made in"
for r in 0 1 2 3; do
	assert_eq "$(calls hdf5 H5Dwrite "^$TMP/h5/rank_$r\\.h5:/data\$" "$(pid_of_rank $r)")" "1 0 0" "rank $r's H5Dwrite names its own file and the dataset"
done
assert_eq "$(field function observed name pwrite)" "syscall" "libc pwrite observed at its pwrite64 system call"
assert_eq "$(calls syscall pwrite64 "^$TMP/h5/rank_[0-3]\\.h5\$" | cut -d' ' -f1)" "0" "no pwrite reported twice"
# The 4096 doubles of each rank: a 32768-byte pwrite (seen at its system
# call) inside an HDF5 call, on the same thread.
nested=$(spans | awk '
	$4 == "hdf5" { h_end[$3] = $2; next }
	$4 == "posix" && $5 == "pwrite" && $6 == 32768 { if ($2 <= h_end[$3]) inside++; else outside++ }
	END { print inside + 0, outside + 0 }')
assert_eq "$nested" "4 0" "data writes nested HDF5 > pwrite (per rank: inside, outside)"

# --- the same through HDF5's 1.6 API (IOR's HDF5 back end): names carried ---
# 16384 doubles (128 KiB, past HDF5's 64 KiB sieve buffer) go to the kernel
# inside H5Dwrite and come back inside H5Dread: their bytes are the system
# calls' nested in them (4096 doubles above stay in HDF5's buffer until
# H5Fclose, and H5Dwrite moves none of them).
mkdir -p "$TMP/h5v16"
mpi mpihdf5v16 posix,syscalls,hdf5 "$DC_WORKLOADS/mpi_hdf5" "$TMP/h5v16" 16384 1.6
v16="^$TMP/h5v16/rank_[0-3]\\.h5:/run"
assert_eq "$(calls hdf5 H5Gcreate1 "$v16\$")" "4 0 0" "H5Gcreate1 per rank: the group named FILE:/run"
assert_eq "$(calls hdf5 H5Dcreate1 "$v16/data\$")" "4 0 0" "H5Dcreate1 per rank in the group: named FILE:/run/data"
assert_eq "$(calls hdf5 H5Dwrite "$v16/data\$")" "4 0 524288" "H5Dwrite on an H5Dcreate1 dataset: file and dataset named, 128 KiB a rank moved by the writes inside it"
assert_eq "$(calls hdf5 H5Dopen1 "$v16/data\$")" "4 0 0" "H5Dopen1 per rank by the absolute name, from the file"
assert_eq "$(calls hdf5 H5Dread "$v16/data\$")" "4 0 524288" "H5Dread on an H5Dopen1 dataset: file and dataset named, 128 KiB a rank read inside it"
assert_eq "$(grep -c '^function .* name=H5D\(write\|read\) observed=uprobe bytes=nested$' "$DUMP")" "2" "H5Dwrite and H5Dread say their bytes came from below"

# --- HDF5 recorded by libdcpmpi.so (hdf5-wrapper), beside the uprobe set ---
# 4096 doubles a rank stay in HDF5's buffer through H5Dwrite: the wrapper
# still counts their 32 KiB, from the dataset's dataspace (H5S_ALL), where
# the uprobe set's nested bytes said 0. With the uprobe set chosen too,
# each call is recorded once, by the wrapper. The files are named by a
# relative name, which the wrapper makes absolute.
mkdir -p "$TMP/h5w"
cd "$TMP"
mpi mpihdf5w posix,syscalls,hdf5,hdf5-wrapper "$DC_WORKLOADS/mpi_hdf5" h5w 4096 1.6
cd - >/dev/null
w16="^$TMP/h5w/rank_[0-3]\\.h5:/run"
assert_eq "$(field function observed name H5Dwrite)" "wrapper" "H5Dwrite recorded by the wrapper"
assert_eq "$(grep -c '^function .* name=H5D\(write\|read\) observed=wrapper bytes=dataspace$' "$DUMP")" "2" "H5Dwrite and H5Dread say their bytes came from the dataspaces"
assert_eq "$(calls hdf5 H5Fcreate "^$TMP/h5w/rank_[0-3]\\.h5\$")" "4 0 0" "wrapper: H5Fcreate per rank"
assert_eq "$(calls hdf5 H5Gcreate1 "$w16\$")" "4 0 0" "wrapper: H5Gcreate1 named FILE:/run"
assert_eq "$(calls hdf5 H5Dcreate1 "$w16/data\$")" "4 0 0" "wrapper: H5Dcreate1 in the group named FILE:/run/data"
for r in 0 1 2 3; do
	assert_eq "$(calls hdf5 H5Dwrite "^$TMP/h5w/rank_$r\\.h5:/run/data\$" "$(pid_of_rank $r)")" "1 32768 32768" "wrapper: rank $r's H5Dwrite, its file, dataset and 4096 doubles"
	assert_eq "$(calls hdf5 H5Dread "^$TMP/h5w/rank_$r\\.h5:/run/data\$" "$(pid_of_rank $r)")" "1 32768 32768" "wrapper: rank $r's H5Dread by H5Dopen1's name"
done
assert_eq "$(calls hdf5 H5Dclose "$w16/data\$")" "8 0 0" "wrapper: H5Dclose of the created and the opened dataset"
assert_eq "$(calls hdf5 H5Fclose "^$TMP/h5w/rank_[0-3]\\.h5\$")" "4 0 0" "wrapper: H5Fclose per rank"
assert_eq "$(grep -c '^event .* level=hdf5 ' "$DUMP")" "40" "every HDF5 call once: 10 a rank (create, group, dataset, write, two closes, open, read, close, file close)"
# The data reaches the kernel when the dataset is closed: its 32 KiB
# pwrite nests in that H5Dclose.
nested=$(spans | awk '
	$4 == "hdf5" && $5 == "H5Dclose" { h_end[$3] = $2; next }
	$4 == "posix" && $5 == "pwrite" && $6 == 32768 { if ($2 <= h_end[$3]) inside++; else outside++ }
	END { print inside + 0, outside + 0 }')
assert_eq "$nested" "4 0" "the wrapper's H5Dclose holds the data's pwrite on its thread (inside, outside)"

# --- a dataset opened as an object (H5Oopen, as h5py opens them), read,
# flushed and closed: named FILE:/data, by the uprobe set and the wrapper ---
# Two MPI jobs more: not in the emulated test guests, where each takes a
# minute and the mechanisms are those the sections above use.
mkdir -p "$TMP/h5o"
sets="hdf5 hdf5-wrapper"
if [ -n "${DC_EMULATED_GUEST:-}" ]; then
	sets=""
	echo "ok: H5Oopen left to the host (an emulated guest)"
fi
for set in $sets; do
	mpi "mpihdf5o-$set" "posix,$set" "$DC_WORKLOADS/mpi_hdf5" "$TMP/h5o" 4096 oopen
	o="^$TMP/h5o/rank_[0-3]\\.h5:/data\$"
	for fn in H5Dread H5Dflush H5Oclose; do
		assert_eq "$(calls hdf5 $fn "$o" | cut -d' ' -f1)" "4" "$set: $fn per rank, named FILE:/data"
	done
	assert_eq "$(calls hdf5 H5Oopen "$o" | cut -d' ' -f1)" "8" "$set: H5Oopen twice per rank, named FILE:/data"
	assert_eq "$(grep -c " func=H5Idec_ref ret=0 .* path=$TMP/h5o/rank_[0-3]\\.h5:/data\$" "$DUMP") $(grep -c " func=H5Idec_ref ret=1 .* path=$TMP/h5o/rank_[0-3]\\.h5\$" "$DUMP")" \
		"4 4" "$set: H5Idec_ref per rank, closing the dataset (none left) and not the file (one left)"
done
# The wrapper's H5Dread on the H5Oopen'd dataset: its 4096 doubles.
[ -n "${DC_EMULATED_GUEST:-}" ] ||
	assert_eq "$(calls hdf5 H5Dread "$o")" "4 131072 131072" "hdf5-wrapper: H5Dread's bytes from the dataspaces"

# Profile mode: each rank's totals per HDF5 call, from its ring's counters.
mkdir -p "$TMP/h5p"
trace mpihdf5p -m profile -p posix,hdf5-wrapper -- mpirun --allow-run-as-root --oversubscribe -np 4 \
	-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_hdf5" "$TMP/h5p" 4096 1.6
last_counter() { # FUNC PID: "count bytes" of the pid's last snapshot
	awk -v f="func=$1" -v p="pid=$2" '$1 == "counter" && $3 == p && $4 == "level=hdf5" && $5 == f { c = $6 " " $8 }
		END { gsub(/count=|bytes=/, "", c); print c }' "$DUMP"
}
for r in 0 1 2 3; do
	assert_eq "$(last_counter H5Dwrite "$(pid_of_rank $r)") $(last_counter H5Dclose "$(pid_of_rank $r)")" "1 32768 2 0" \
		"profile: rank $r's H5Dwrite (once, 32 KiB) and H5Dclose (twice)"
done

# A program's bad ids: the wrapper records the failed call and asks HDF5
# nothing that would add to the error stack HDF5 prints.
mpirun --allow-run-as-root --oversubscribe -np 1 "$DC_WORKLOADS/mpi_h5_bad_ids" "$TMP/bad.bare"
trace mpih5bad -p hdf5-wrapper -- mpirun --allow-run-as-root --oversubscribe -np 1 \
	-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_h5_bad_ids" "$TMP/bad.wrapped"
grep -q "HDF5-DIAG" "$TMP/bad.bare" || fail "HDF5 printed no error stack for the bad ids"
assert_eq "$(diff "$TMP/bad.bare" "$TMP/bad.wrapped" && echo same)" "same" "the wrapper adds nothing to HDF5's error output"
assert_eq "$(field event ret func H5Dwrite) $(calls hdf5 H5Dwrite '')" "-1 1 0 0" "the failed H5Dwrite recorded: ret -1, no bytes"

# --- a rank that crashes: its I/O before the crash is kept, its end marked ---
mkdir -p "$TMP/crash"
rc=0
mpi mpicrash posix "$DC_WORKLOADS/mpi_crash" "$TMP/crash" || rc=$?
[ "$rc" -ne 0 ] || fail "mpirun should report the crashed rank"
NODEFILE=$(ls "$TMP/out/mpicrash"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/mpicrash.dump"
DUMP="$TMP/mpicrash.dump"
crashed=$(pid_of_rank 1)
assert_eq "$(calls posix write "^$TMP/crash/rank_1\\.dat\$" "$crashed")" "1 17 17" "the crashed rank's write before the crash"
assert_eq "$(awk -v p="pid=$crashed" '$1 == "process" && $3 == "kind=exit" && $4 == p { print $6 }' "$DUMP")" "signal=6" "the crashed rank ended by SIGABRT"
assert_eq "$(grep -c "^rank .* pid=$crashed rank=1 .*kind=ended_without_finalize" "$DUMP")" "1" "marked as ended without MPI_Finalize"
"$DC_MERGE" mpicrash -i "$TMP/out/mpicrash" -o crash.json -q
grep -q '"labels":"[^"]*rank 1 of 4, killed by signal 6, ended without MPI_Finalize"' crash.json || fail "crashed rank's label"
echo "ok: merged timeline labels the crashed rank"

# --- Fortran ranks ---
trace mpifortran -p posix -- mpirun --allow-run-as-root --oversubscribe -np 2 -x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/mpi_fortran"
assert_eq "$(grep -c '^rank .* world=2 kind=register' "$DUMP")" "2" "Fortran ranks registered"
assert_eq "$(grep -c '^rank .* world=2 kind=finalize' "$DUMP")" "2" "Fortran ranks finalized"

# --- parallel HDF5: HDF5 > MPI-IO > libc > system call, on each rank ---
mkdir -p "$TMP/ph5"
mpi mpiphdf5 posix,syscalls,mpiio,hdf5_openmpi "$DC_WORKLOADS/mpi_phdf5" "$TMP/ph5" 4096
assert_eq "$(calls hdf5 H5Dwrite "^$TMP/ph5/shared\\.h5:/data\$" | cut -d' ' -f1)" "4" "H5Dwrite per rank, on the shared file's dataset"
# Each rank's 32 KiB slab: H5Dwrite contains an MPI-IO write, which contains
# the libc pwrite (observed at its pwrite64 system call), on one thread.
nested=$(spans | awk '
	$4 == "hdf5" && $5 == "H5Dwrite" { h[$3] = $2; next }
	$4 == "mpiio" && $5 ~ /^MPI_File_write/ && $6 == 32768 { if ($2 <= h[$3]) { m[$3] = $2; l2++ } next }
	$4 == "posix" && $5 == "pwrite" && $6 == 32768 { if ($2 <= m[$3]) l3++ }
	END { print l2 + 0, l3 + 0 }')
assert_eq "$nested" "4 4" "levels nested on every rank (MPI-IO in H5Dwrite, the libc pwrite at its system call in that)"

# --- parallel HDF5 from the wrapper: a hyperslab's bytes, levels nested ---
mkdir -p "$TMP/ph5w"
mpi mpiphdf5w posix,syscalls,mpiio,hdf5-wrapper "$DC_WORKLOADS/mpi_phdf5" "$TMP/ph5w" 4096
assert_eq "$(calls hdf5 H5Dwrite "^$TMP/ph5w/shared\\.h5:/data\$")" "4 131072 131072" "wrapper: each rank's H5Dwrite of its 4096-double slab (the memory dataspace's selection)"
nested=$(spans | awk '
	$4 == "hdf5" && $5 == "H5Dwrite" { h[$3] = $2; next }
	$4 == "mpiio" && $5 ~ /^MPI_File_write/ && $6 == 32768 { if ($2 <= h[$3]) { m[$3] = $2; l2++ } next }
	$4 == "posix" && $5 == "pwrite" && $6 == 32768 { if ($2 <= m[$3]) l3++ }
	END { print l2 + 0, l3 + 0 }')
assert_eq "$nested" "4 4" "wrapper: levels nested on every rank (MPI-IO in H5Dwrite, pwrite in that)"

# --- clock offsets on a busy node: rank 0's first answers held, pinging on ---
"$DC_AGENT" --version | grep -q "test build" ||
	fail "this build has no test hooks for slow clock pings: build with -DDC_TEST_HOOKS=ON (scripts/test.sh does)"
mkdir -p "$TMP/slow"
# Every answer held: the bound says so (64 pings at most, each over 3 ms).
# That holds on any machine, however slow its round trips.
mpi allslow posix -x DC_TEST_SLOW_PONGS=100 "$DC_WORKLOADS/mpi_posix" "$TMP/slow"
assert_eq "$(bounds | awk '$1 > 0 && $2 >= 1500000' | wc -l | tr -d ' ')" "3" \
	"every round trip slow: a bound of at least half of 3 ms: $(bounds | tr '\n' ' ')"
# Finding a short round trip after 12 held ones needs round trips that are
# short unhindered. An emulated guest's vary from 0.2 to 8 ms from one job to
# the next, so one quiet job's bound does not say that they are.
if [ -n "${DC_EMULATED_GUEST:-}" ]; then
	echo "skip: pinging past held answers: round trip times in an emulated guest are not a machine's"
	exit 0
fi
if [ "$quiet_bound" -ge 500000 ]; then
	echo "skip: pinging past held answers: round trips here already take $((2 * quiet_bound / 1000)) us unhindered"
	exit 0
fi
# Each rank's first 12 round trips take over 3 ms: rank 0 holds its answers.
mpi slowpongs posix -x DC_TEST_SLOW_PONGS=12 "$DC_WORKLOADS/mpi_posix" "$TMP/slow"
assert_eq "$(bounds | awk '$1 > 0 && $2 < 1500000' | wc -l | tr -d ' ')" "3" \
	"ranks 1-3 ping past 12 slow round trips to a short one: $(bounds | tr '\n' ' ')"
