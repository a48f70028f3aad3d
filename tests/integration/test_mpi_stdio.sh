#!/usr/bin/env bash
# The STDIO level from libdcpmpi.so (the wrapper set stdio-wrapper): every
# C library stream call of each rank between MPI_Init and MPI_Finalize,
# with exact counts, bytes and files, the standard output named by the
# kernel's name of its descriptor; none before MPI_Init; with the stdio
# uprobe set beside it, each call once; profile mode's totals.
. "$(dirname "$0")/lib.sh"
: "${DC_PMPI:?set by ctest}"
N=4

W=mpi_stdio
mpi() { # job probes [agent options...]
	local job=$1 probes=$2
	shift 2
	trace "$job" -p "$probes" "$@" -- mpirun --allow-run-as-root --oversubscribe -np 2 \
		-x LD_PRELOAD="$DC_PMPI" "$DC_WORKLOADS/$W" "$TMP" "$N"
}
pid_of_rank() { awk -v r="$1" '$1 == "rank" && $4 == "rank=" r && $6 == "kind=register" { sub("pid=", "", $3); print $3 }' "$DUMP"; }
# What mpi_stdio makes on each rank's file, and on its standard output:
# "function count asked moved".
on_file() {
	cat <<-END
	fclose 2 0 0
	fgets 1 16 16
	fopen 2 0 0
	fprintf 1 12 12
	fputc 1 1 1
	fputs 1 6 6
	fread 1 32 32
	fseek 1 0 0
	ftell 1 0 0
	fwrite $N $((16 * N)) $((16 * N))
	getc 1 1 1
	putc 1 1 1
	rewind 1 0 0
	END
}
on_stdout() {
	cat <<-END
	fflush 1 0 0
	printf 1 8 8
	putchar 1 1 1
	puts 1 6 6
	END
}
# calls_of PID PATH: "function count asked moved" of the pid's STDIO calls on PATH.
calls_of() {
	awk -v pid="$1" -v p="$2" '$1 == "event" {
		split($0, halves, " path=")
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (kv["pid"] != pid || kv["level"] != "stdio" || halves[2] != p) next
		c[kv["func"]]++; req[kv["func"]] += kv["req"]; by[kv["func"]] += kv["bytes"]
	} END { for (f in c) print f, c[f], req[f], by[f] }' "$DUMP" | sort
}
ranks() { # WHAT
	for r in 0 1; do
		pid=$(pid_of_rank $r)
		[ -n "$pid" ] || fail "$1: rank $r did not register"
		assert_eq "$(calls_of "$pid" "$TMP/rank_$r.txt" | tr '\n' ';')" "$(on_file | tr '\n' ';')" \
			"$1: rank $r's calls on its file: count, bytes asked and moved"
		out=$(awk -v pid="$pid" '$1 == "event" && $0 ~ " pid=" pid " " && / level=stdio func=printf / { sub(/.* path=/, ""); print }' "$DUMP")
		[ -n "$out" ] || fail "$1: rank $r's printf has no file"
		assert_eq "$(calls_of "$pid" "$out" | tr '\n' ';')" "$(on_stdout | tr '\n' ';')" \
			"$1: rank $r's calls on its standard output, named $out"
		assert_eq "$(grep " pid=$pid .* level=stdio " "$DUMP" | grep -vc -e " path=$TMP/rank_$r.txt\$" -e " path=$out\$" || true)" "0" \
			"$1: rank $r, no other STDIO call"
	done
	assert_eq "$(grep -c " level=stdio .* path=$TMP/early_" "$DUMP" || true)" "0" "$1: no STDIO call before MPI_Init"
}

mpi wrap posix,stdio-wrapper
ranks "stdio-wrapper"
assert_eq "$(field function observed name fwrite)" "wrapper" "fwrite recorded by the wrapper"
assert_eq "$(grep -c 'path=[^ ]*memfd:datacrumbs-' "$DUMP" || true)" "0" "no call on a rank's ring (libdcpmpi's own)"
assert_eq "$(lost_events)" "0" "lost events"

# Beside the uprobe sets: the calls the wrapper records are not probed.
mpi both stdio,stdio-chars,stdio-wrapper
ranks "with the stdio and stdio-chars sets"
assert_eq "$(field function observed name fwrite | tr '\n' ' ')" "wrapper " "fwrite once in the table, by the wrapper"

# Preloaded but not asked for: each call reaches the C library as itself
# (the variadic ones too), for the stdio uprobe set to record.
mpi uprobes stdio
for r in 0 1; do
	pid=$(pid_of_rank $r)
	assert_eq "$(calls_of "$pid" "$TMP/rank_$r.txt" | grep -E '^(fprintf|vfprintf|fwrite) ' | cut -d' ' -f1,2 | tr '\n' ';')" \
		"fprintf 1;fwrite $N;" "the stdio set alone: rank $r's fprintf as fprintf, not vfprintf"
done
assert_eq "$(field function observed name fprintf)" "uprobe" "fprintf probed, not recorded by the wrapper"

# Profile mode: each rank's totals, from its ring's counters.
mpi prof stdio-wrapper --mode profile
for r in 0 1; do
	pid=$(pid_of_rank $r)
	got=$(awk -v pid="$pid" '$1 == "counter" {
		delete kv
		for (i = 2; i <= NF; i++) { n = index($i, "="); kv[substr($i, 1, n - 1)] = substr($i, n + 1) }
		if (kv["pid"] == pid && kv["func"] == "fwrite") line = kv["count"] " " kv["bytes"]
	} END { print line }' "$DUMP")
	assert_eq "$got" "$N $((16 * N))" "profile: rank $r's fwrite total"
done

# A program built with _FORTIFY_SOURCE: the checking forms, recorded under
# their names (an optimized build makes vprintf an __vfprintf_chk on stdout).
W=mpi_stdio_fortified
mpi fortified stdio-wrapper
for r in 0 1; do
	pid=$(pid_of_rank $r)
	[ -n "$pid" ] || fail "fortified: rank $r did not register"
	assert_eq "$(calls_of "$pid" "$TMP/fort_$r.txt" | tr '\n' ';')" \
		"$(printf '%s\n' '__fgets_chk 1 4 4' '__fprintf_chk 1 4 4' '__fread_chk 1 4 4' '__vfprintf_chk 1 4 4' \
			'fclose 2 0 0' 'fopen 2 0 0' | sort | tr '\n' ';')" "fortified: rank $r's calls on its file"
	out=$(awk -v pid="$pid" '$1 == "event" && $0 ~ " pid=" pid " " && / level=stdio func=__printf_chk / { sub(/.* path=/, ""); print }' "$DUMP")
	[ -n "$out" ] || fail "fortified: rank $r's __printf_chk has no file"
	assert_eq "$(calls_of "$pid" "$out" | tr '\n' ';')" \
		"$(printf '%s\n' '__printf_chk 1 4 4' '__vfprintf_chk 1 5 5' 'fflush 1 0 0' | sort | tr '\n' ';')" \
		"fortified: rank $r's calls on its standard output"
done
assert_eq "$(lost_events)" "0" "lost events"
