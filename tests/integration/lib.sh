# Shared helpers of the integration tests: run dc-agent for real and check
# what it recorded through dc-dump. Sourced by each test script; ctest sets
# DC_AGENT, DC_DUMP and DC_WORKLOADS.
set -euo pipefail

: "${DC_AGENT:?set by ctest}" "${DC_DUMP:?set by ctest}" "${DC_WORKLOADS:?set by ctest}"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dc-test.XXXXXX")
chmod 755 "$TMP"
cleanup_tmp() { rm -rf "$TMP"; }
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

# field LINE_KIND KEY FILTER_KEY FILTER_VALUE: values of KEY on matching lines.
field() {
	awk -v kind="$1" -v key="$2" -v fk="$3" -v fv="$4" '
	$1 == kind {
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (fk == "" || kv[fk] == fv) print kv[key]
	}' "$DUMP"
}

lost_events() {
	awk '$1 == "stats" { split($3, a, "="); s += a[2] } END { print s + 0 }' "$DUMP"
}
