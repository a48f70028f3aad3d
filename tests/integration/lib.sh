# Shared helpers of the integration tests: run dc-agent for real and check
# what it recorded through dc-dump. Sourced by each test script; ctest sets
# DC_AGENT, DC_DUMP and DC_WORKLOADS.
set -euo pipefail

: "${DC_AGENT:?set by ctest}" "${DC_DUMP:?set by ctest}" "${DC_WORKLOADS:?set by ctest}"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dc-test.XXXXXX")
chmod 755 "$TMP"
# A test that fails leaves no agent or workload of its own behind (they
# would hold the next test's job or ctest's output open).
cleanup_tmp() {
	local jobs
	jobs=$(jobs -p)
	[ -z "$jobs" ] || kill $jobs 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup_tmp EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

assert_eq() { # actual expected what
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
	echo "ok: $3 = $2"
}

assert_contains() { # file text what
	grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$3: '$2' not found"; }
	echo "ok: $3"
}

# trace JOB ARGS... -- COMMAND...: runs the agent, keeps its stderr in
# $TMP/JOB.err and the node file's path in NODEFILE.
# A command that must fail (non-zero exit) and say text on stderr.
expect_fail() { # what text command...
	local what=$1 text=$2 rc=0
	shift 2
	"$@" >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
	[ "$rc" -ne 0 ] || { cat "$TMP/err.txt"; fail "$what: exit status 0"; }
	assert_contains "$TMP/err.txt" "$text" "$what"
}

trace() {
	local job=$1
	shift
	"$DC_AGENT" -o "$TMP/out" -j "$job" "$@" 2>"$TMP/$job.err" || {
		local rc=$?
		cat "$TMP/$job.err" >&2
		return $rc
	}
	NODEFILE=$(ls "$TMP/out/$job"/*.dcnode)
	"$DC_DUMP" "$NODEFILE" >"$TMP/$job.dump"
	DUMP="$TMP/$job.dump"
}

# calls LEVEL FUNC PATHREGEX [PID]: "count req bytes" of matching events.
calls() {
	awk -v l="$1" -v f="$2" -v p="$3" -v pid="${4:-}" '
	$1 == "event" {
		split($0, halves, " path=")
		path = halves[2]
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (kv["level"] != l || kv["func"] != f || path !~ p) next
		if (pid != "" && kv["pid"] != pid) next
		c++; req += kv["req"]; bytes += kv["bytes"]
	}
	END { printf "%d %d %d\n", c, req, bytes }' "$DUMP"
}

# seconds LEVEL FUNC PATHREGEX: "fd2 path2" of each matching event, a line
# each: the file its data came from (dc-dump prints path2 before path).
seconds() {
	awk -v l="$1" -v f="$2" -v p="$3" '
	$1 == "event" {
		split($0, halves, " path=")
		n = index(halves[1], " path2=")
		path2 = n ? substr(halves[1], n + 7) : ""
		delete kv
		for (i = 2; i <= NF; i++) { k = index($i, "="); kv[substr($i, 1, k - 1)] = substr($i, k + 1) }
		if (kv["level"] != l || kv["func"] != f || halves[2] !~ p) next
		print (("fd2" in kv) ? kv["fd2"] : "-1") " " path2
	}' "$DUMP"
}

# field LINE_KIND KEY FILTER_KEY FILTER_VALUE: values of KEY on matching lines.
field() {
	awk -v kind="$1" -v key="$2" -v fk="$3" -v fv="$4" '
	$1 == kind {
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (fk == "" || kv[fk] == fv) print kv[key]
	}' "$DUMP"
}

# spans: "start end tid level func bytes" of every event, by start time:
# for checks that one call holds another on its thread.
spans() {
	awk '$1 == "event" {
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		printf "%.0f %.0f %s %s %s %s\n", kv["ts"], kv["ts"] + kv["dur"], kv["tid"], kv["level"], kv["func"], kv["bytes"] }' "$DUMP" | sort -n
}

# Statistics are cumulative: the last chunk's, one line per CPU, count.
lost_events() {
	awk '$1 == "node" { for (i = 2; i <= NF; i++) if ($i ~ /^ncpus=/) n = substr($i, 7) }
	     $1 == "stats" { split($3, a, "="); v[++k] = a[2] }
	     END { for (i = k - n + 1; i <= k; i++) if (i > 0) s += v[i]; print s + 0 }' "$DUMP"
}

# start_agent JOB ARGS...: an agent in the background for JOB, its control
# socket $TMP/JOB.sock, its stderr $TMP/JOB.err, its pid in AGENT; returns
# once it is ready.
start_agent() {
	local job=$1
	shift
	rm -f "$TMP/ready"
	"$DC_AGENT" -o "$TMP/out" -j "$job" --daemon --socket "$TMP/$job.sock" --ready-file "$TMP/ready" "$@" 2>"$TMP/$job.err" &
	AGENT=$!
	for _ in $(seq 100); do [ -e "$TMP/ready" ] && return; sleep 0.1; done
	cat "$TMP/$job.err"
	fail "agent did not start"
}

# A probe set of libc open and write alone (open names the fd's file).
write_only_set() {
	printf 'set: writeonly\ncategory: posix\nlibrary: libc.so.6\nfunctions:\n  - {name: open, path: 1, ret: fd}\n  - {name: write, fd: 1, bytes: 3, ret: bytes}\n' >"$TMP/writeonly.yaml"
	echo "$TMP/writeonly.yaml"
}

# Entries of one of our BPF maps, by name (one agent running).
# map_entries NAME PID: entries of the map NAME that process PID holds
# (another agent on the node has maps of the same name).
map_entries() {
	local id
	for id in $(bpf_ids map "$2"); do
		if bpftool -j map show id "$id" | grep -q "\"name\":\"$1\""; then
			bpftool -j map dump id "$id" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
			return
		fi
	done
	fail "process $2 holds no map $1"
}

# bpf_ids KIND PID: the ids of the BPF objects of KIND (prog, map, link)
# that process PID holds, one a line: what this test's agent loaded, apart
# from any other tracer on the node.
bpf_ids() {
	{
		sed -n "s/^$1_id:[[:space:]]*//p" /proc/"$2"/fdinfo/* 2>/dev/null
		# A program attached to a perf event (a uprobe, a kprobe) may be
		# held by that event alone.
		[ "$1" != prog ] || bpftool -j perf show 2>/dev/null | python3 -c 'import json, sys
for e in json.load(sys.stdin):
    if e.get("pid") == int(sys.argv[1]):
        print(e["prog_id"])' "$2"
	} | sort -un
}

# bpf_names KIND PID: "TYPE NAME" of each program (KIND prog) or map
# (KIND map) that process PID holds, one a line.
bpf_names() {
	local id
	for id in $(bpf_ids "$1" "$2"); do
		bpftool -j "$1" show id "$id" 2>/dev/null
		echo
	done | python3 -c 'import json, sys
for line in sys.stdin:
    if line.strip():
        o = json.loads(line)
        print(o.get("type", ""), o.get("name", ""))'
}

# bpf_alive KIND IDS...: how many of the ids still name a BPF object, once
# the kernel has had 10 s to let go of them: a program only a program
# array holds (a tail call's) goes in work the kernel defers after the
# array's last descriptor is closed.
bpf_alive() {
	local kind=$1 id n i
	shift
	for i in $(seq 100); do
		n=0
		for id in "$@"; do bpftool "$kind" show id "$id" >/dev/null 2>&1 && n=$((n + 1)); done
		[ "$n" -gt 0 ] || break
		sleep 0.1
	done
	echo "$n"
}

# Waits (at most 60 s) until no agent's detaching child is left: an agent's
# child detaches its probes after the agent ends, and probes and links are
# counted only once it is done.
wait_detached() {
	local i
	for i in $(seq 600); do
		# A zombie has let go of every probe already.
		pgrep -r D,R,S,T -x dc-agent-detach >/dev/null || return 0
		sleep 0.1
	done
	fail "an agent's detaching child still runs after 60 s"
}

# pftrace_decode TRACE TEXT: a Perfetto trace as protoc's text, its
# compressed batches inflated first as trace_processor inflates them (what
# tests/tools/pftrace_unpack.py found is in TEXT.batches), decoded with the
# trace's io extension (tests/perfetto/datacrumbs_io.proto) over the schema
# subset the repository carries (tests/perfetto/subset); where Perfetto's
# whole schema is at hand ($DC_PERFETTO_PROTO, or the shared copy beside the
# repository in CI), decoded over it too: the two texts must be the same,
# which they are only while the subset names every field written. The io
# schema the trace carries for trace_processor must be datacrumbs_io.proto's.
pftrace_decode() {
	local dir=$DC_SRC/tests/perfetto
	local full=${DC_PERFETTO_PROTO:-$DC_SRC/../shared/perfetto/perfetto_trace.proto}
	command -v protoc >/dev/null || fail "protoc not installed (Debian: protobuf-compiler)"
	python3 "$DC_TOOLS/pftrace_unpack.py" "$1" "$2.unpacked" >"$2.batches" || return 1
	protoc --decode=perfetto.protos.Trace -I "$dir/subset" -I "$dir" "$dir/datacrumbs_io.proto" \
		<"$2.unpacked" >"$2" || return 1
	protoc --descriptor_set_out=/dev/stdout -I "$dir/subset" -I "$dir" "$dir/datacrumbs_io.proto" |
		protoc --decode=perfetto.protos.FileDescriptorSet -I "$dir/subset" "$dir/subset/perfetto_trace.proto" \
			>"$2.io" || return 1
	python3 "$DC_TOOLS/pftrace_check.py" --io-schema "$2" "$2.io" >/dev/null || fail "$1: its io extension schema"
	rm -f "$2.io"
	[ -r "$full" ] || { rm -f "$2.unpacked"; return 0; }
	# The io extension imports its schema as perfetto_trace.proto.
	mkdir -p "$2.schema"
	ln -sf "$(realpath "$full")" "$2.schema/perfetto_trace.proto"
	protoc --decode=perfetto.protos.Trace -I "$2.schema" -I "$dir" "$dir/datacrumbs_io.proto" \
		<"$2.unpacked" >"$2.full" || return 1
	rm -rf "$2.unpacked" "$2.schema"
	cmp -s "$2" "$2.full" || { diff "$2" "$2.full" | head -5 >&2; fail "$1: the schema subset misses a field the full schema decodes"; }
	rm -f "$2.full"
}
