#!/usr/bin/env bash
# Three nodes on one machine (tests/cluster: network and UTS namespaces),
# one agent each, an MPI job of 2 ranks per node through Open MPI's rsh
# launcher, and node clocks that disagree by a few milliseconds: each node
# file holds exactly its own node's ranks and calls; the merged timeline
# corrects each node's clock within the bound it reports and keeps every
# message's cause before its effect.
. "$(dirname "$0")/lib.sh"
: "${DC_MERGE:?set by ctest}" "${DC_PMPI:?set by ctest}" "${DC_SRC:?set by ctest}" "${DC_SUMMARY:?set by ctest}"

"$DC_AGENT" --version | grep -q "test build" ||
	fail "this build has no test hooks for the clock skews: build with -DDC_TEST_HOOKS=ON (scripts/test.sh does)"
export DC_CLUSTER_DIR=$TMP/cluster
cluster=$DC_SRC/tests/cluster
trap '"$cluster/stop.sh" "$DC_CLUSTER_DIR"; cleanup_tmp' EXIT
"$cluster/start.sh" "$DC_CLUSTER_DIR" 3 >/dev/null
# Known skews, both signs (test builds only: common/test_hooks.h).
declare -A skew=([node1]=3000000 [node2]=-4000000 [node3]=2000000)
for n in node1 node2 node3; do echo "${skew[$n]}" >"$DC_CLUSTER_DIR/skew-$n"; done

job=cjob
for n in node1 node2 node3; do
	"$cluster/node-exec" "$n" "$DC_AGENT" -o "$TMP/out" -j "$job" -p posix --match-env DC_CLUSTER_JOB=$job \
		--ready-file "$TMP/ready-$n" 2>"$TMP/agent-$n.err" &
	echo $! >"$DC_CLUSTER_DIR/agent-$n.pid"
done
for n in node1 node2 node3; do
	for _ in $(seq 100); do [ -e "$TMP/ready-$n" ] && break; sleep 0.1; done
	[ -e "$TMP/ready-$n" ] || { cat "$TMP/agent-$n.err"; fail "agent on $n did not start"; }
done

mkdir -p "$TMP/p" "$TMP/c"
chmod 777 "$TMP/p" "$TMP/c"
mpi() {
	"$cluster/node-exec" node1 mpirun --allow-run-as-root --oversubscribe -np 6 --host node1:2,node2:2,node3:2 \
		--mca plm_rsh_agent "$cluster/rsh" --mca btl tcp,self --mca btl_tcp_if_include "$DC_CLUSTER_NET.0/24" \
		--mca oob_tcp_if_include "$DC_CLUSTER_NET.0/24" -x DC_CLUSTER_JOB=$job -x DC_JOB_ID=$job \
		-x LD_PRELOAD="$DC_PMPI" "$@"
}
. "$DC_CLUSTER_DIR/cluster.env"
mpi "$DC_WORKLOADS/mpi_posix" "$TMP/p" >/dev/null
mpi "$DC_WORKLOADS/mpi_chain" "$TMP/c" >/dev/null

for n in node1 node2 node3; do
	pid=$(cat "$DC_CLUSTER_DIR/agent-$n.pid")
	kill -TERM "$pid"
	wait "$pid" || { cat "$TMP/agent-$n.err"; fail "agent on $n failed"; }
	rm "$DC_CLUSTER_DIR/agent-$n.pid"
done

# Each node file: its own host, its own two ranks, their exact calls.
i=0
for n in node1 node2 node3; do
	NODEFILE=$TMP/out/$job/$n.dcnode
	[ -f "$NODEFILE" ] || fail "no node file for $n"
	"$DC_DUMP" "$NODEFILE" >"$TMP/$n.dump"
	DUMP=$TMP/$n.dump
	assert_contains "$DUMP" "host=$n " "$n: node file of its own host"
	ranks=$(awk '$1 == "rank" && / kind=register / { for (i = 2; i <= NF; i++) if ($i ~ /^rank=/) print substr($i, 6) }' "$DUMP" | sort -n | uniq | tr '\n' ' ')
	# mpi_posix and mpi_chain each register ranks 2i and 2i+1 here.
	assert_eq "$ranks" "$((2 * i)) $((2 * i + 1)) " "$n: its own ranks, and no other node's"
	for r in $((2 * i)) $((2 * i + 1)); do
		k=$((10 * (r + 1)))
		assert_eq "$(calls posix write "^$TMP/p/rank_$r\\.dat\$")" "$k $((k * 1000)) $((k * 1000))" "$n: rank $r's writes"
		assert_eq "$(calls posix write "^$TMP/c/chain_$r\\.dat\$")" "1 100 100" "$n: rank $r's chain write"
	done
	assert_eq "$(grep -cE "^event .* path=$TMP/[pc]/(rank|chain)_" "$DUMP" | tr -d ' ')" \
		"$(grep -cE "^event .* path=$TMP/[pc]/(rank|chain)_($((2 * i))|$((2 * i + 1)))\\.dat\$" "$DUMP" | tr -d ' ')" \
		"$n: no call of another node's ranks"
	i=$((i + 1))
done

# One timeline: clocks corrected within their bound, causes before effects.
"$DC_MERGE" $job -i "$TMP/out/$job" -o "$TMP/cjob.json" -q
"$DC_MERGE" $job -i "$TMP/out/$job" -f hdf5 -o "$TMP/cjob.h5" -q
python3 - "$TMP/cjob.json" "$TMP/c" "${skew[node1]}" "${skew[node2]}" "${skew[node3]}" <<'PY' || fail "merged timeline"
import json, sys
t = json.load(open(sys.argv[1]))
chain, skews = sys.argv[2], {"node%d" % (i + 1): int(v) for i, v in enumerate(sys.argv[3:6])}
for n in t["otherData"]["nodes"]:
    want = skews["node1"] - skews[n["host"]]  # to rank 0's clock (rank 0 is on node1)
    got, bound = n["mpi_clock_offset_ns"], n["mpi_clock_error_ns"]
    assert bound is not None, n
    assert abs(got - want) <= max(bound, 1000), (n["host"], got, want, bound)
    # And a bound that makes the correction mean something: at most a
    # quarter of the skew corrected. The bound is half the shortest round
    # trip: 13-20 us on a quiet machine after eight; while the machine is
    # busy (six ranks and three agents on two cores) all of eight can take
    # milliseconds, so a rank pings on, up to 64, for a short one.
    assert bound <= abs(want) / 4, (n["host"], got, want, bound, "a bound too wide for the skew")
    print("ok: %s corrected by %d ns (skew %+d ns to node1), error bound %d ns" % (n["host"], got, want, bound))
writes = {}
for e in t["traceEvents"]:
    p = e.get("args", {}).get("path", "")
    if e.get("ph") == "X" and e["name"] == "write" and p.startswith(chain + "/chain_"):
        writes[int(p.rsplit("_", 1)[1].split(".")[0])] = (e["ts"], e["ts"] + e["dur"])
assert sorted(writes) == list(range(6)), writes
for r in range(5):
    assert writes[r + 1][0] > writes[r][1], ("rank", r + 1, "writes before rank", r, "ends", writes)
print("ok: each rank's write begins after the write of the rank before it ends")
names = {}
for e in t["traceEvents"]:
    if e.get("ph") == "M" and e["name"] == "process_name":
        names[e["pid"]] = e["args"]["name"]
order = sorted((e["args"]["sort_index"], names.get(e["pid"], "")) for e in t["traceEvents"]
               if e.get("ph") == "M" and e["name"] == "process_sort_index")
ranks = [int(n.split()[1]) for _, n in order if n.startswith("rank ")]
assert len(ranks) == 12 and ranks == sorted(ranks), ranks  # two jobs of 6 ranks
assert all(n.startswith("rank ") for _, n in order[:12]), order
print("ok: the 12 ranks of the two MPI jobs first, in rank order")
PY
python3 - "$TMP/cjob.h5" <<'PY' 2>/dev/null || echo "ok: (h5py not installed: HDF5 node table checked by h5dump)"
import h5py, sys
f = h5py.File(sys.argv[1])
nodes = f["nodes"][:]
assert all(r["mpi_clock_error_ns"] >= 0 for r in nodes)
print("ok: HDF5 nodes table states each node's correction and bound")
PY
h5dump -H -d nodes "$TMP/cjob.h5" | grep -q mpi_clock_error_ns || fail "HDF5 nodes table has no mpi_clock_error_ns"
echo "ok: HDF5 nodes table has the correction and its bound"

# dc-summary: per node and per rank, the slowest of each, the same from
# the node files and from the merged HDF5 file.
"$DC_SUMMARY" $job -i "$TMP/out/$job" --format json --top 100 >"$TMP/sum.json"
"$DC_SUMMARY" "$TMP/cjob.h5" --format json --top 100 >"$TMP/sum-h5.json"
"$DC_SUMMARY" $job -i "$TMP/out/$job" >"$TMP/sum.txt"
python3 - "$TMP/sum.json" "$TMP/sum-h5.json" <<'PY' || fail "dc-summary per node and rank"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    hosts = [n["host"] for n in d["nodes_io"]]
    assert sorted(hosts) == ["node1", "node2", "node3"], hosts
    ranks = {r["rank"]: r["host"] for r in d["ranks_io"]}
    assert ranks == {r: "node%d" % (r // 2 + 1) for r in range(6)}, ranks
    for op in ("read", "write"):
        s = d["slowest"][op]
        if s["node"] is not None:
            top = max(d["nodes_io"], key=lambda n: n[op + "_s"])
            assert s["node"] == top["host"], (op, s, top)
    w = max(d["ranks_io"], key=lambda r: r["write_s"])
    assert d["slowest"]["write"]["rank"] == w["rank"], (d["slowest"], w)
key = lambda d: (sorted((n["host"], n["writes"], n["write_bytes"]) for n in d["nodes_io"]),
                 sorted((r["rank"], r["writes"], r["write_bytes"]) for r in d["ranks_io"]))
assert key(a) == key(b), (key(a), key(b))
print("ok: per node and per rank tables, the same from node files and HDF5")
PY
assert_contains "$TMP/sum.txt" "## Per node (reads and writes at the posix level)" "text summary: per node"
assert_contains "$TMP/sum.txt" "# slowest for writes: node node" "text summary: slowest node and rank"

# --- Slurm over the three nodes: sbatch -N 3, dc-prolog/dc-epilog run by
# each node's slurmd (slurm.conf Prolog=/Epilog=), the first node merges ---
export DC_OUTPUT_DIR=$TMP/sout
mkdir -p "$DC_OUTPUT_DIR" "$TMP/s"
chmod 777 "$TMP/s"
cat >"$TMP/dc.conf" <<CONF
DC_OUTPUT_DIR=$DC_OUTPUT_DIR
DC_AGENT=$DC_AGENT
DC_MERGE=$DC_MERGE
DC_DUMP=$DC_DUMP
DC_STATE_DIR=$TMP/state
DC_PROBES=posix
DC_MERGE_FORMAT=json
CONF
"$cluster/slurm-start.sh" "$DC_CLUSTER_DIR" "$TMP/dc.conf" >/dev/null
export SLURM_CONF=$DC_CLUSTER_DIR/slurm.conf
cat >"$TMP/job.sh" <<JOB
#!/bin/bash
srun -N3 -n6 bash -c 'mkdir -p $TMP/s/\$SLURM_PROCID && exec $DC_WORKLOADS/posix_write $TMP/s/\$SLURM_PROCID \$((100 * (SLURM_PROCID + 1))) 512'
JOB
chmod 755 "$TMP/job.sh"
sjob=$("$cluster/node-exec" node1 sbatch -N3 -n6 --parsable --wait -o "$TMP/job.out" "$TMP/job.sh") ||
	{ cat "$TMP/job.out"; fail "sbatch -N 3"; }
for _ in $(seq 300); do [ -s "$DC_OUTPUT_DIR/$sjob.json" ] && break; sleep 0.1; done
[ -s "$DC_OUTPUT_DIR/$sjob.json" ] || { cat "$TMP/state"/*/"$sjob.log"; fail "no merged trace from node1's epilog"; }
i=0
for n in node1 node2 node3; do
	NODEFILE=$DC_OUTPUT_DIR/$sjob/$n.dcnode
	[ -f "$NODEFILE" ] || fail "no node file for $n"
	"$DC_DUMP" "$NODEFILE" >"$TMP/s-$n.dump"
	DUMP=$TMP/s-$n.dump
	for t in 0 1 2 3 4 5; do
		want="0 0 0"
		[ $((t / 2)) = $i ] && want="$((100 * (t + 1))) $((51200 * (t + 1))) $((51200 * (t + 1)))"
		assert_eq "$(calls posix write "^$TMP/s/$t/posix_write\\.dat\$")" "$want" "$n: task $t's writes"
	done
	grep -E "^process .* kind=(start|fork|exec) " "$DUMP" | grep -vE " comm=(srun|slurm_script|mkdir|posix_write)$" >&2 || true
	# Only the job: srun, the batch script, the tasks and what they start.
	assert_eq "$(grep -E '^process .* kind=(start|fork|exec) ' "$DUMP" | grep -vcE ' comm=(srun|slurm_script|bash|mkdir|posix_write)$' || true)" \
		"0" "$n: no prolog or epilog process traced"
	i=$((i + 1))
done
python3 - "$DC_OUTPUT_DIR/$sjob.json" "$TMP/s" <<'PY' || fail "merged Slurm trace"
import json, sys
t = json.load(open(sys.argv[1]))
assert sorted(n["host"] for n in t["otherData"]["nodes"]) == ["node1", "node2", "node3"], t["otherData"]["nodes"]
w = sum(1 for e in t["traceEvents"] if e.get("ph") == "X" and e["name"] == "write"
        and e.get("args", {}).get("path", "").startswith(sys.argv[2] + "/"))
assert w == 100 * (1 + 2 + 3 + 4 + 5 + 6), w
print("ok: the epilog merged the three node files:", w, "writes")
names = {e["args"]["name"] for e in t["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
want = {"task %d (node%d)" % (k, k // 2 + 1) for k in range(6)}
assert want <= names, sorted(names)
print("ok: Slurm tasks named by task id and node:", ", ".join(sorted(want)))
PY

# --- MPI ranks started by srun itself through PMIx, as most clusters start
# them (no mpirun): the same checks as for mpirun above ---
mkdir -p "$TMP/x"
chmod 777 "$TMP/x"
cat >"$TMP/mpijob.sh" <<JOB
#!/bin/bash
export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=$DC_CLUSTER_NET.0/24
# Six ranks on two cores: srun cannot tell Open MPI it is oversubscribed, as
# mpirun --oversubscribe does, so ranks would spin in their receives and
# starve the clock ping-pongs of the CPU.
export OMPI_MCA_mpi_yield_when_idle=1
# Each task on its node's clock (the test build's skew), as node-exec sets it.
srun --mpi=pmix -N3 -n6 bash -c 'export DC_TEST_CLOCK_SKEW_NS=\$(cat $DC_CLUSTER_DIR/skew-\$(hostname)); exec env LD_PRELOAD=$DC_PMPI $DC_WORKLOADS/mpi_chain $TMP/x'
JOB
chmod 755 "$TMP/mpijob.sh"
mjob=$("$cluster/node-exec" node1 sbatch -N3 -n6 --parsable --wait -o "$TMP/mpijob.out" "$TMP/mpijob.sh") ||
	{ cat "$TMP/mpijob.out"; fail "srun --mpi=pmix -N 3 -n 6"; }
for _ in $(seq 300); do [ -s "$DC_OUTPUT_DIR/$mjob.json" ] && break; sleep 0.1; done
[ -s "$DC_OUTPUT_DIR/$mjob.json" ] || { cat "$TMP/mpijob.out" "$TMP/state"/*/"$mjob.log"; fail "no merged trace of the PMIx job"; }
i=0
for n in node1 node2 node3; do
	NODEFILE=$DC_OUTPUT_DIR/$mjob/$n.dcnode
	[ -f "$NODEFILE" ] || fail "PMIx job: no node file for $n"
	"$DC_DUMP" "$NODEFILE" >"$TMP/x-$n.dump"
	DUMP=$TMP/x-$n.dump
	ranks=$(awk '$1 == "rank" && / kind=register / && / world=6 / { for (i = 2; i <= NF; i++) if ($i ~ /^rank=/) print substr($i, 6) }' "$DUMP" | sort -n | tr '\n' ' ')
	assert_eq "$ranks" "$((2 * i)) $((2 * i + 1)) " "PMIx job, $n: its own two ranks registered, world 6"
	for r in 0 1 2 3 4 5; do
		want="0 0 0"
		[ $((r / 2)) = $i ] && want="1 100 100"
		assert_eq "$(calls posix write "^$TMP/x/chain_$r\\.dat\$")" "$want" "PMIx job, $n: rank $r's chain write"
	done
	i=$((i + 1))
done
python3 - "$DC_OUTPUT_DIR/$mjob.json" "$TMP/x" "${skew[node1]}" "${skew[node2]}" "${skew[node3]}" <<'PY' || fail "merged PMIx job"
import json, sys
t = json.load(open(sys.argv[1]))
chain, skews = sys.argv[2], {"node%d" % (i + 1): int(v) for i, v in enumerate(sys.argv[3:6])}
for n in t["otherData"]["nodes"]:
    want = skews["node1"] - skews[n["host"]]
    got, bound = n["mpi_clock_offset_ns"], n["mpi_clock_error_ns"]
    # Within its own error bound, at most a quarter of the skew (as above).
    assert bound is not None and abs(got - want) <= max(bound, 1000) and bound <= abs(want) / 4, (n, want)
    print("ok: PMIx job: %s corrected by %d ns (skew %+d ns to node1), bound %d ns" % (n["host"], got, want, bound))
writes = {}
for e in t["traceEvents"]:
    p = e.get("args", {}).get("path", "")
    if e.get("ph") == "X" and e["name"] == "write" and p.startswith(chain + "/chain_"):
        writes[int(p.rsplit("_", 1)[1].split(".")[0])] = (e["ts"], e["ts"] + e["dur"])
assert sorted(writes) == list(range(6)), writes
for r in range(5):
    assert writes[r + 1][0] > writes[r][1], ("rank", r + 1, "writes before rank", r, "ends", writes)
print("ok: PMIx job: each rank's write begins after the write of the rank before it ends")
names = {e["args"]["name"] for e in t["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
want = {"rank %d" % r for r in range(6)}
assert all(any(n.startswith(w + " ") or n == w for n in names) for w in want), sorted(names)
print("ok: PMIx job: the six ranks named")
PY
