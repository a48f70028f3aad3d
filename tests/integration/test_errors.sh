#!/usr/bin/env bash
# Bad input and missing privileges: a clear message, a non-zero exit, no damage.
. "$(dirname "$0")/lib.sh"

"$DC_AGENT" --help >"$TMP/help.txt"
for opt in --job-id --output --mode --interval --probes --config --pid --uid --ringbuf-mb --ready-file --socket --match-env --daemon --group-read --verbose --version; do
	assert_contains "$TMP/help.txt" "$opt" "--help documents $opt"
done
assert_contains <("$DC_AGENT" --version) "dc-agent (DataCrumbs)" "--version"

# Nothing named to trace: how to use it, exit 2, and no daemon left waiting.
rc=0
timeout 10 "$DC_AGENT" -o "$TMP/o" >"$TMP/bare.out" 2>"$TMP/bare.err" || rc=$?
assert_eq "$rc" "2" "a bare dc-agent: exit status 2"
assert_contains "$TMP/bare.err" "Usage: dc-agent [OPTIONS] -- COMMAND" "a bare dc-agent: its usage"
[ ! -e "$TMP/o" ] || fail "a bare dc-agent made its output folder"
# -v: the kernel's features and each level's mechanism agree (tp_btf is
# learnt from the load), a line a set; each function's site is -vv's.
"$DC_AGENT" -v -o "$TMP/o" -j verbose -- true 2>"$TMP/v.err"
tp=$(awk '$1 == "tp_btf" { print $2 }' "$TMP/v.err")
if grep -q "^  system calls *tp_btf" "$TMP/v.err"; then assert_eq "$tp" "yes" "-v: tp_btf as the level uses it"; else assert_eq "$tp" "no" "-v: tp_btf as the level uses it"; fi
! grep -q "^dc-agent: site " "$TMP/v.err" || fail "-v prints each function's site (that is -vv's)"
assert_contains "$TMP/v.err" "io_uring requests  not probed: no io_uring set asks for it" "-v: a level no set asks for, not probed"
rm -rf "$TMP/o"
expect_fail "unknown option" "Try 'dc-agent --help'" "$DC_AGENT" --bogus
expect_fail "bad mode" "expected trace or profile" "$DC_AGENT" --mode fast -- true
expect_fail "bad ring buffer size" "not a power of two" "$DC_AGENT" --ringbuf-mb 3 -- true
expect_fail "unknown probe set" "probe set 'nosuchset' not found" "$DC_AGENT" -o "$TMP/o" -p nosuchset -- true
# The search path, as paths: no empty entry where no folder was given.
grep -q "looked for nosuchset.yaml in /" "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "the search path starts with an empty entry"; }
DC_PROBE_DIR=$TMP/sets expect_fail "unknown probe set, DC_PROBE_DIR" "looked for nosuchset.yaml in $TMP/sets:/" \
	"$DC_AGENT" -o "$TMP/o" -p nosuchset -- true
expect_fail "bad job id" "must be 1-63 letters" "$DC_AGENT" -o "$TMP/o" -j "../escape" -- true

printf 'set: broken\nlibrary: libc.so.6\nfunctions:\n  - {name: read, fd: 7}\n' >"$TMP/broken.yaml"
expect_fail "bad probe set" "$TMP/broken.yaml:4: fd: '7' is not a whole number" \
	"$DC_AGENT" -o "$TMP/o" -p "$TMP/broken.yaml" -- true
printf 'mode: trace\nbogus: 1\n' >"$TMP/agent.yaml"
expect_fail "bad agent config" "$TMP/agent.yaml:2: unknown setting 'bogus'" "$DC_AGENT" -c "$TMP/agent.yaml" -- true

expect_fail "command not found" "cannot run 'no-such-command-dc'" "$DC_AGENT" -o "$TMP/o" -j nf -- no-such-command-dc
rc=0
"$DC_AGENT" -o "$TMP/o" -j nf2 -- no-such-command-dc 2>/dev/null || rc=$?
assert_eq "$rc" "127" "a command that cannot be executed: 127, as a shell says"
"$DC_DUMP" "$(ls "$TMP/o/nf2"/*.dcnode)" >"$TMP/nf2.dump"
assert_eq "$(grep -c '^process .* kind=exit .* exit=127 ' "$TMP/nf2.dump")" "1" "and its exit record in the node file"

# A set naming a missing library: warned about, the others still trace.
printf 'set: ghost\nlibrary: libghost.so.3\nfunctions: [ghost_read]\n' >"$TMP/ghost.yaml"
trace ghost -p "$TMP/ghost.yaml,posix" -- "$DC_WORKLOADS/posix_write" "$TMP" 10 100
assert_contains "$TMP/ghost.err" "probe set 'ghost': library libghost.so.3 not found" "missing library warning"
assert_eq "$(calls posix write "^$TMP/posix_write\\.dat\$")" "10 1000 1000" "other sets still traced"

# The command's exit status is the agent's.
rc=0
"$DC_AGENT" -o "$TMP/o" -j st -- sh -c 'exit 7' 2>/dev/null || rc=$?
assert_eq "$rc" "7" "exit status passed through"

# Without privileges: which capability is missing.
if id nobody >/dev/null 2>&1; then
	expect_fail "unprivileged" "missing capabilities CAP_BPF and CAP_PERFMON" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$DC_AGENT" -o "$TMP/o" -- true
	expect_fail "CAP_BPF only" "missing capability CAP_PERFMON" \
		setpriv --inh-caps=-all --bounding-set=-all,+bpf "$DC_AGENT" -o "$TMP/o" -- true
fi

# The node file belongs to the job's user, private.
trace owned --uid 65534 -p posix -- true
assert_eq "$(stat -c '%u %a' "$NODEFILE")" "65534 600" "node file owned by --uid, mode 0600"
assert_eq "$(stat -c '%u %a' "$TMP/out/owned")" "65534 750" "job folder owned by --uid"

# A symlink planted where the job's folder goes is refused, not followed.
mkdir -p "$TMP/victim" "$TMP/o2"
ln -s "$TMP/victim" "$TMP/o2/planted"
expect_fail "planted symlink" "cannot create output folder $TMP/o2/planted" "$DC_AGENT" -o "$TMP/o2" -j planted -- true
assert_eq "$(ls "$TMP/victim" | wc -l | tr -d ' ')" "0" "nothing written through the symlink"

# CAP_BPF and CAP_PERFMON are enough: uid 0 with every other capability
# taken out of the bounding set (no CAP_SYS_ADMIN, no DAC override).
mkdir -p "$TMP/capdir"
setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all "$DC_AGENT" -o "$TMP/capout" -j caps -p posix,syscalls -- \
	"$DC_WORKLOADS/posix_write" "$TMP/capdir" 10 100 2>"$TMP/caps.err" || { cat "$TMP/caps.err"; fail "agent with CAP_BPF+CAP_PERFMON only"; }
NODEFILE=$(ls "$TMP/capout/caps"/*.dcnode)
"$DC_DUMP" "$NODEFILE" >"$TMP/caps.dump"
DUMP=$TMP/caps.dump
assert_eq "$(calls posix write "^$TMP/capdir/posix_write\\.dat\$")" "10 1000 1000" "traced with CAP_BPF+CAP_PERFMON only"
assert_eq "$(field function observed name write)" "syscall" "libc write observed at its system call"
assert_eq "$(calls syscall openat "^$TMP/capdir/posix_write\\.dat\$")" "1 0 0" "system calls too"

# --group-read: 0640 node files, and a 0640 merged output.
trace grp --group-read -p posix -- true
assert_eq "$(stat -c '%a' "$NODEFILE")" "640" "node file with --group-read"
"$DC_MERGE" grp -i "$TMP/out/grp" --group-read -q
assert_eq "$(stat -c '%a' "$TMP/out/grp/grp.json")" "640" "merged output with --group-read"
