#!/usr/bin/env bash
# What a trace costs a process that is not in the job (another user's, a
# daemon): its loop of 16-byte fwrite()s to a buffered stream and of
# 1-byte write()s, side by side in one run: with no agent on the node;
# while an agent traces a job that only sleeps, with STDIO by uprobes
# (posix,stdio,syscalls, the default with --pid or --daemon: placed in the
# job's processes only from Linux 6.13, else in every process that maps
# libc; a test build adds a row with the latter, forced)
# and with STDIO recorded
# inside the job's processes (posix,syscalls,mpiio,stdio-wrapper: no
# uprobe on it; the default with a command is alike); and from 100 ms
# after a trace with STDIO by uprobes ended (its probes go away in the
# background). Interleaved
# rounds, medians; prints ns per call and the ratio to no agent (target:
# <= 1.05 during a trace and from 100 ms after it).
#
# Usage: bystander_cost.sh BUILD_DIR [CALLS] [ROUNDS]   (defaults 200000, 5)
set -euo pipefail
. "$(dirname "$0")/common.sh"
build=$(cd "${1:?usage: bystander_cost.sh BUILD_DIR [CALLS] [ROUNDS]}" && pwd)
calls=${2:-200000}
rounds=${3:-5}
loop=$build/bench/write_loop
agent=$build/agent/dc-agent
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dc-bystander.XXXXXX")
trap 'rm -rf "$tmp"; [ -z "${job:-}" ] || kill "$job" 2>/dev/null || true' EXIT

# during SETS ROUND: the loop while an agent traces a job that sleeps.
during() {
	local dir=$tmp/$2-$3 ns
	mkdir -p "$dir"
	sleep 600 &
	job=$!
	"$agent" -o "$dir/out" -j "by$RANDOM" -p "$1" --pid "$job" --ready-file "$dir/ready" 2>"$dir/agent.err" &
	agent_pid=$!
	for _ in $(seq 300); do [ -e "$dir/ready" ] && break; sleep 0.05; done
	[ -e "$dir/ready" ] || { echo "bystander_cost.sh: the agent did not start: $(cat "$dir/agent.err")" >&2; exit 1; }
	ns=$("$loop" $how "$calls")
	kill "$job"
	wait "$job" 2>/dev/null || true
	kill -TERM "$agent_pid" 2>/dev/null || true
	wait "$agent_pid" 2>/dev/null || true
	job=
	# Uprobes on every process go in the background: the next run starts
	# once they are gone (the "after" row measures what that costs).
	for _ in $(seq 300); do pgrep -x dc-agent-detach >/dev/null || break; sleep 0.1; done
	echo "$ns"
}

# after ROUND: the loop from 100 ms after a trace of a short job ended.
after() {
	local dir=$tmp/after-$1
	mkdir -p "$dir"
	"$agent" -o "$dir/out" -j "af$RANDOM" -p posix,stdio,syscalls -- sleep 0.2 2>"$dir/agent.err"
	sleep 0.1
	"$loop" $how "$calls"
}

run() {
	case $1 in
	bare) "$loop" $how "$calls" ;;
	stdio) during posix,stdio,syscalls stdio "$2" ;;
	unscoped) DC_TEST_FEATURES_OFF=uprobe_scoped during posix,stdio,syscalls unscoped "$2" ;;
	wrapper) during posix,syscalls,mpiio,stdio-wrapper wrapper "$2" ;;
	after) after "$2" ;;
	esac
}

# Where the kernel places uprobes in the job's processes only, the way of
# older kernels too, if this build can force it (a test build).
tools=(bare stdio wrapper after) extra=()
if "$agent" --check 2>/dev/null | grep -q "^  uprobes placed  *in the job's processes only" &&
	DC_TEST_FEATURES_OFF=uprobe_scoped "$agent" --check 2>/dev/null | grep -q "^  uprobe_scoped .*forced off"; then
	tools+=(unscoped)
	extra=("an agent tracing, STDIO by uprobes on every process (before 6.13)" unscoped)
fi

for how in --fwrite ""; do
	what=${how:+16-byte fwrite to a buffered stream}
	what=${what:-1-byte write}
	interleave "$rounds" "${tools[@]}"
	cost_table "a process outside the job, $what, $calls calls x $rounds interleaved rounds, median ns per call" \
		"no agent on the node" bare \
		"an agent tracing, STDIO by uprobes" stdio \
		"${extra[@]}" \
		"an agent tracing, STDIO by the wrappers" wrapper \
		"100 ms after a trace with STDIO by uprobes ended" after
	echo "$what: ratio to no agent: STDIO by uprobes $(awk -v a="${med[stdio]}" -v b="${med[bare]}" 'BEGIN { printf "%.2f", a / b }')," \
		"by the wrappers $(awk -v a="${med[wrapper]}" -v b="${med[bare]}" 'BEGIN { printf "%.2f", a / b }')," \
		"after $(awk -v a="${med[after]}" -v b="${med[bare]}" 'BEGIN { printf "%.2f", a / b }') (target <= 1.05)"
	[ ${#extra[@]} -eq 0 ] ||
		echo "$what: ratio to no agent, STDIO by uprobes on every process (before 6.13):" \
			"$(awk -v a="${med[unscoped]}" -v b="${med[bare]}" 'BEGIN { printf "%.2f", a / b }')"
done
