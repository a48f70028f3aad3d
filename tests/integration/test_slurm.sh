#!/usr/bin/env bash
# DataCrumbs under a real Slurm on this host (munged, slurmctld, slurmd):
# srun --prolog/--epilog, two jobs at once kept apart, and sbatch through
# slurm.conf's Prolog=/Epilog=. The daemons are stopped at the end by pid.
. "$(dirname "$0")/lib.sh"
: "${DC_SRC:?set by ctest}"

SL=$TMP/slurm
stop_slurm() { "$DC_SRC/tests/slurm/stop.sh" "$SL"; }
trap 'stop_slurm; [ -n "${DC_KEEP_TMP:-}" ] || cleanup_tmp' EXIT

export DC_OUTPUT_DIR=$TMP/out DC_AGENT DC_STATE_DIR=$TMP/state DC_PROBES=posix,syscalls DC_MERGE
job_dir() { ls -d "$DC_OUTPUT_DIR"/*/ | while read -r d; do basename "$d"; done; }
dump_job() { # job -> DUMP of its (only) node file
	NODEFILE=$(ls "$DC_OUTPUT_DIR/$1"/*.dcnode)
	DUMP=$TMP/job$1.dump
	"$DC_DUMP" "$NODEFILE" >"$DUMP"
}

"$DC_SRC/tests/slurm/start.sh" "$SL" >"$TMP/start.out"
export SLURM_CONF=$SL/slurm.conf
W=$DC_WORKLOADS

# --- srun --prolog/--epilog: both tasks, exact I/O ---
mkdir -p "$TMP/t0" "$TMP/t1"
srun -N1 -n2 --prolog="$DC_SRC/slurm/dc-prolog" --epilog="$DC_SRC/slurm/dc-epilog" \
	bash -c "'$W/posix_write' '$TMP/t'\$SLURM_PROCID 100 512" 2>"$TMP/srun.err"
job=$(job_dir)
dump_job "$job"
assert_contains "$DUMP" "end" "node file complete when srun returns"
for t in 0 1; do
	assert_eq "$(calls posix write "^$TMP/t$t/posix_write\\.dat\$")" "100 51200 51200" "task $t libc writes"
	assert_eq "$(calls syscall write "^$TMP/t$t/posix_write\\.dat\$")" "0 0 0" "task $t writes not reported twice"
done
pids=$(grep -E "func=write .*path=$TMP/t[01]/" "$DUMP" | grep -o ' pid=[0-9]*' | sort -u | wc -l)
assert_eq "$(echo $pids)" "2" "two task processes"
cd "$TMP"
"$DC_MERGE" "$job" -i "$DC_OUTPUT_DIR/$job" -o "$job.json" -q
assert_eq "$(python3 "$DC_TOOLS/trace_summary.py" "$job.json" --path '/t[01]/posix_write[.]dat$' | grep '^posix write ')" \
	"posix write 200 102400 102400" "merged trace holds both tasks"
[ ! -e "$DC_STATE_DIR/$(hostname)/$job.pid" ] || fail "agent pid file left after the epilog"

# --- srun --prolog=dc-agent --epilog=dc-agent: srun runs the agent with the
# step's command as arguments; it does dc-prolog's and dc-epilog's work for
# the job instead of running that command a second time, traced ---
rm -rf "$DC_OUTPUT_DIR"
mkdir -p "$TMP/g0" "$TMP/g1"
srun -N1 -n2 --prolog="$DC_AGENT" --epilog="$DC_AGENT" \
	bash -c "'$W/posix_write' '$TMP/g'\$SLURM_PROCID 100 512" 2>"$TMP/srun-agent.err" ||
	{ cat "$TMP/srun-agent.err"; fail "srun --prolog=dc-agent"; }
job=$(job_dir)
assert_eq "$(ls "$DC_OUTPUT_DIR/$job" | grep -c '\.dcnode$')" "1" "one node file: the step was not run again under the agent"
dump_job "$job"
assert_contains "$DUMP" "end" "node file complete when srun returns (the epilog stopped the agent)"
for t in 0 1; do
	assert_eq "$(calls posix write "^$TMP/g$t/posix_write\\.dat\$")" "100 51200 51200" "task $t's writes, once, traced"
done
[ ! -e "$DC_STATE_DIR/$(hostname)/$job.pid" ] || fail "agent pid file left after dc-agent as the epilog"

# --- two jobs at once: no event of one lands in the other ---
rm -rf "$DC_OUTPUT_DIR"
mkdir -p "$TMP/a" "$TMP/b"
srun -n1 --prolog="$DC_SRC/slurm/dc-prolog" --epilog="$DC_SRC/slurm/dc-epilog" "$W/posix_write" "$TMP/a" 3000 64 2>/dev/null &
one=$!
srun -n1 --prolog="$DC_SRC/slurm/dc-prolog" --epilog="$DC_SRC/slurm/dc-epilog" "$W/posix_write" "$TMP/b" 2000 64 2>/dev/null &
two=$!
wait "$one" "$two"
jobs=$(job_dir | tr '\n' ' ')
assert_eq "$(echo $jobs | wc -w)" "2" "two jobs, two folders"
for j in $jobs; do
	dump_job "$j"
	a=$(calls posix write "^$TMP/a/" | cut -d' ' -f1)
	b=$(calls posix write "^$TMP/b/" | cut -d' ' -f1)
	[ "$a $b" = "3000 0" ] || [ "$a $b" = "0 2000" ] || fail "job $j holds writes of both jobs: $a and $b"
	echo "ok: job $j holds one job's writes only ($a, $b)"
done

# --- sbatch, with dc-prolog/dc-epilog as slurm.conf Prolog=/Epilog= ---
stop_slurm
rm -rf "$DC_OUTPUT_DIR"
cat >"$TMP/dc.conf" <<CONF
DC_OUTPUT_DIR=$DC_OUTPUT_DIR
DC_AGENT=$DC_AGENT
DC_MERGE=$DC_MERGE
DC_DUMP=$DC_DUMP
DC_STATE_DIR=$DC_STATE_DIR
DC_PROBES=posix,syscalls
DC_MERGE_FORMAT=json
CONF
for s in prolog epilog; do
	printf '#!/bin/bash\nexport DC_SLURM_CONF=%s\nexec %s "$@"\n' "$TMP/dc.conf" "$DC_SRC/slurm/dc-$s" >"$TMP/$s"
	chmod 755 "$TMP/$s"
done
"$DC_SRC/tests/slurm/start.sh" "$SL" "$TMP/prolog" "$TMP/epilog" >"$TMP/start2.out"
mkdir -p "$TMP/s1" "$TMP/s2"
cat >"$TMP/job.sh" <<JOB
#!/bin/bash
srun -n2 bash -c "'$W/posix_write' '$TMP/s1' 50 100 && true"
srun -n1 '$W/posix_write' '$TMP/s2' 70 100
JOB
sbatch --wait -n2 -o "$TMP/batch.out" "$TMP/job.sh" >"$TMP/sbatch.out"
job=$(grep -o '[0-9]*' "$TMP/sbatch.out" | head -1)
# The epilog runs after the job ends: wait for its merge.
for _ in $(seq 300); do [ -s "$DC_OUTPUT_DIR/$job.json" ] && break; sleep 0.1; done
[ -s "$DC_OUTPUT_DIR/$job.json" ] || { cat "$DC_STATE_DIR/$job.log" "$SL/slurmd.log" | tail -30; fail "no merged trace from the epilog"; }
echo "ok: the epilog merged job $job"
dump_job "$job"
assert_eq "$(calls posix write "^$TMP/s1/posix_write\\.dat\$")" "100 10000 10000" "step 1 (two tasks) writes"
assert_eq "$(calls posix write "^$TMP/s2/posix_write\\.dat\$")" "70 7000 7000" "step 2 writes"
python3 "$DC_TOOLS/trace_summary.py" "$DC_OUTPUT_DIR/$job.json" --path '/s[12]/posix_write[.]dat$' >"$TMP/batch.txt"
assert_eq "$(grep '^posix write ' "$TMP/batch.txt")" "posix write 170 17000 17000" "merged trace of the batch job"
