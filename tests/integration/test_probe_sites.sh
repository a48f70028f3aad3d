#!/usr/bin/env bash
# Probes off the entry never change what a program computes. prefix_lib.S
# has prologues that branch into themselves, that another function jumps
# into, that overwrite an argument the probe reads, that move rsp or store
# over the return address first: a traced run prints the untraced run's
# checksum, every call is counted exactly once, and the arguments read are
# the caller's. Patterns select functions; an instruction the kernel will not
# probe is skipped and named, and the rest attach.
. "$(dirname "$0")/lib.sh"

lib=$DC_WORKLOADS/libdcprefix.so
run=$DC_WORKLOADS/prefix_calls
untraced=$("$run" 10)

cat >"$TMP/prefix.yaml" <<YAML
set: prefix
category: prefix
library: $lib
functions:
  - {name: pf_cmp, bytes: 2}
  - {name: pf_loop, bytes: 1}
  - {name: pf_joined, bytes: 2}
  - {name: pf_side, bytes: 2}
  - {name: pf_clobber, bytes: 2}
  - pf_frame
  - pf_store
  - pf_push
  - pf_getpid
  - {name: pf_moved, bytes: 1, offset: 2}
  - {name: pf_swap, bytes: 2}
  - {name: pf_lost, bytes: 2}
YAML
trace named -vv -p "$TMP/prefix.yaml" -- sh -c "'$run' 10 >'$TMP/named.out'"
assert_eq "$(cat "$TMP/named.out")" "$untraced" "checksum of the traced run"
i=1
for f in pf_cmp pf_loop pf_joined pf_side pf_clobber pf_frame pf_store pf_push pf_getpid pf_moved pf_swap pf_lost; do
	assert_eq "$(calls prefix $f '' | cut -d' ' -f1)" "$((10 * i))" "$f calls"
	i=$((i + 1))
done
# Arguments as the caller passed them (pf_clobber's site stays at the entry).
assert_eq "$(calls prefix pf_cmp '' | cut -d' ' -f2)" "110" "pf_cmp: sum of its second arguments"
assert_eq "$(calls prefix pf_loop '' | cut -d' ' -f2)" "120" "pf_loop: sum of its first arguments"
assert_eq "$(calls prefix pf_clobber '' | cut -d' ' -f2)" "50100" "pf_clobber: its second argument before it is overwritten"
# Arguments the prefix moved, read where it moved them: pf_moved's first
# argument (i, 10 calls each: 10 x 55), pf_swap's second (3000 + k) and,
# at the entry, pf_lost's second (4000 + k).
assert_eq "$(calls prefix pf_moved '' | cut -d' ' -f2)" "550" "pf_moved: sum of its first arguments, moved to rsi"
assert_eq "$(calls prefix pf_swap '' | cut -d' ' -f2)" "$((10 * (11 * 3000 + 55)))" "pf_swap: sum of its second arguments, moved to rdi"
assert_eq "$(calls prefix pf_lost '' | cut -d' ' -f2)" "$((10 * (12 * 4000 + 66)))" "pf_lost: sum of its second arguments"
assert_eq "$(grep '^event .*func=pf_moved ' "$DUMP" | grep -c 'offset=200[0-9] ')" "100" "pf_moved: its second argument, moved to rdx, as the offset"
# The sites, and why.
err=$TMP/named.err
assert_contains "$err" "site prefix pf_cmp+0x7 (je" "pf_cmp probed on its je"
assert_contains "$err" "site prefix pf_loop+0x0 (xor eax, eax)" "pf_loop at its entry"
assert_contains "$err" "site prefix pf_joined+0x0 (mov rax, rdi): a branch or symbol lands inside the prefix" "pf_joined at its entry"
assert_contains "$err" "site prefix pf_clobber+0x0 (mov esi, 7): an argument register is written" "pf_clobber at its entry"
assert_contains "$err" "site prefix pf_frame+0x0 (sub rsp, 8): rsp moves" "pf_frame at its entry"
assert_contains "$err" "site prefix pf_moved+0xb (jmp" "pf_moved probed on its jmp"
assert_contains "$err" "site prefix pf_swap+0x9 (jmp" "pf_swap probed on its jmp"
assert_contains "$err" "site prefix pf_lost+0x0 (mov rax, rsi): an argument register is written" "pf_lost at its entry"
assert_contains "$err" "site prefix pf_store+0x0 (mov rax, qword ptr [rsp]): the return address may be written" "pf_store at its entry"
assert_eq "$(lost_events)" "0" "lost events"

# Another agent's probes on the library (a second job on the node, or a
# detach still under way) put their breakpoints into every mapping of it
# that may execute: the sites are decided from the file's bytes all the
# same.
start_agent holder -p "$TMP/prefix.yaml"
trace beside -vv -p "$TMP/prefix.yaml" -- "$run" 1 >/dev/null
kill -INT "$AGENT"
wait "$AGENT" || true
assert_contains "$TMP/beside.err" "site prefix pf_cmp+0x7 (je" "pf_cmp on its je beside another agent's probes"
assert_eq "$(grep -c 'site prefix .*(int3)' "$TMP/beside.err" || true)" "0" "no breakpoint decoded as the library's code"

# Patterns: a glob, and a regular expression.
cat >"$TMP/glob.yaml" <<YAML
set: prefix
library: $lib
functions:
  - match: "pf_[cj]*"
  - regex: "^pf_(push|getpid)\$"
YAML
trace glob -p "$TMP/glob.yaml" -- "$run" 10
assert_eq "$(grep -E '^function .*level=prefix' "$DUMP" | sed 's/.*name=//; s/ .*//' | sort | tr '\n' ' ')" \
	"pf_clobber pf_cmp pf_getpid pf_joined pf_push " "functions a glob and a regex select"
assert_eq "$(calls prefix pf_joined '' | cut -d' ' -f1)" "30" "pf_joined calls"
assert_eq "$(calls prefix pf_getpid '' | cut -d' ' -f1)" "90" "pf_getpid calls"

# functions: all while another process maps the library: the kernel refuses
# pf_trap's int3 at attach time; it is skipped and named, the rest attach.
# pf_locked's lock prefix is left out before the kernel is asked.
cat >"$TMP/all.yaml" <<YAML
set: prefix
library: $lib
functions: all
YAML
"$run" 0 hold >"$TMP/hold.out" &
holder=$!
for _ in $(seq 50); do [ -s "$TMP/hold.out" ] && break; sleep 0.1; done
trace all -p "$TMP/all.yaml" -- sh -c "'$run' 10 >'$TMP/all.out'"
kill "$holder"
wait "$holder" 2>/dev/null || true
assert_eq "$(cat "$TMP/all.out")" "$untraced" "checksum with every function probed"
assert_contains "$TMP/all.err" "the kernel refused to probe 2 functions" "the refused functions counted"
assert_contains "$TMP/all.err" "pf_trap" "the refused int3 named"
assert_contains "$TMP/all.err" "pf_locked" "the refused lock prefix named"
assert_eq "$(calls prefix pf_store '' | cut -d' ' -f1)" "70" "pf_store calls with functions: all"
assert_eq "$(grep -c '^event .*level=prefix' "$DUMP")" "780" "every call of the library, once"
