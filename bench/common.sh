# Sourced by every benchmark: definitions only.

# The kernel's per-program accounting (kernel.bpf_stats_enabled=1, left on
# by a `bpftool prog show` session) adds two clock reads to every program
# run: figures taken with it on are not the product's.
warn_bpf_stats() {
	if [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null)" = 1 ]; then
		echo "$(basename "$0"): warning: kernel.bpf_stats_enabled is 1, which slows every BPF program;" \
			"for the product's figures: sysctl -w kernel.bpf_stats_enabled=0" >&2
	fi
}

# build_peers BUILD_DIR: builds IOR and Darshan from the shared peers
# sources (PEERS_SRC) into PEERS_DIR (default BUILD_DIR/peers); sets peers.
build_peers() {
	local src=${PEERS_SRC:-$(cd "$(dirname "$0")" && pwd)/../../shared/peers}
	peers=${PEERS_DIR:-$1/peers}
	[ -x "$src/build.sh" ] || { echo "$(basename "$0"): no $src/build.sh (set PEERS_SRC)" >&2; exit 2; }
	"$src/build.sh" "$peers" >/dev/null
}

# The agent as a cluster runs it: started before the job (dc-prolog) with
# --match-env, stopped after it (dc-epilog); only the job's time is timed.
# agent_start AGENT DIR JOB MODE SETS TAG: joins programs started with
# DC_BENCH_RUN=TAG; output in DIR/out, messages (-v: with its own work)
# in DIR/agent.err.
agent_start() {
	"$1" -v -o "$2/out" -j "$3" -m "$4" -p "$5" --match-env "DC_BENCH_RUN=$6" \
		--ready-file "$2/ready" 2>"$2/agent.err" &
	agent_pid=$!
	for _ in $(seq 300); do [ -e "$2/ready" ] && return 0; sleep 0.05; done
	echo "$(basename "$0"): the agent did not start: $(cat "$2/agent.err")" >&2
	exit 1
}

agent_stop() { # DIR
	kill -TERM "$agent_pid"
	wait "$agent_pid" || { echo "$(basename "$0"): the agent failed: $(cat "$1/agent.err")" >&2; exit 1; }
}

# median: the middle one of the numbers on stdin (on lines or one line).
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# spread: the middle half of the numbers on stdin (on lines or one line),
# its ends as ratios to their median ("0.91-1.08"): how far apart a tool's
# own runs lie, against which a difference between two medians is read.
spread() {
	tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 }
		END { m = v[int((NR + 1) / 2)]; if (m > 0) printf "%.2f-%.2f\n", v[int((NR + 3) / 4)] / m, v[int((3 * NR + 3) / 4)] / m }'
}

# lost_in FILE...: the events the agents said on stderr they lost, summed.
lost_in() { cat "$@" 2>/dev/null | { grep -o '[0-9]* events lost' || true; } | awk '{ s += $1 } END { print s + 0 }'; }

# own FILE... FIELD: the median of the agent's own work (its -v line) over
# the files, FIELD one of "ms of CPU", "ns an event", "a second" (wake-ups).
own() {
	local field=${*: -1}
	cat "${@:1:$#-1}" 2>/dev/null | sed -n "/^dc-agent: own work:/s/.* \([0-9.]*\) $field.*/\1/p" | median
}

# rotated ROUND TOOL...: the tools in the order round ROUND runs them, each
# round starting one further on, so that no tool always follows the same
# one (a run leaves dirty pages, freed memory and a warm cache behind).
rotated() {
	local r=$1
	shift
	local n=$#
	local -a t=("$@")
	for ((i = 0; i < n; i++)); do echo "${t[((i + r - 1) % n)]}"; done
}

# interleave ROUNDS TOOL...: round after round, `run TOOL ROUND` (the
# caller's) for each tool in turn (rotated), so that every tool sees the
# machine's same hours; then med[TOOL] is the median of what each run
# printed, and spr[TOOL] their spread.
interleave() {
	local rounds=$1 r t
	local -A runs
	shift
	declare -gA med spr
	for r in $(seq "$rounds"); do
		for t in $(rotated "$r" "$@"); do runs[$t]+="$(run "$t" "$r") "; done
	done
	for t in "$@"; do
		med[$t]=$(echo "${runs[$t]}" | median)
		spr[$t]=$(echo "${runs[$t]}" | spread)
	done
}

# cost_table TITLE LABEL TOOL [LABEL TOOL...]: interleave's medians as a
# table of ns per call, above bare and the spread of each tool's runs.
cost_table() {
	echo "$1"
	shift
	printf '  %-46s %9s %12s %11s\n' tool "ns/call" "above bare" "runs' half"
	while [ $# -gt 1 ]; do
		printf '  %-46s %9s %12s %11s\n' "$1" "${med[$2]}" "$(above "$2")" "${spr[$2]}"
		shift 2
	done
}

# above TOOL: med[TOOL] less med[bare], in whole ns.
above() { awk -v a="${med[$1]}" -v z="${med[bare]}" 'BEGIN { printf "%.0f", a - z }'; }

# above_ratio TOOL PEER: TOOL's cost above bare as a ratio to PEER's.
above_ratio() { awk -v a="$(above "$1")" -v b="$(above "$2")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
