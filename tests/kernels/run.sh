#!/usr/bin/env bash
# The kernel matrix: the integration tests that matter per kernel, run on
# Debian's stock kernels under qemu with this build (the host's root shared
# read-only): Debian 12's 6.1 and Debian 11's 5.10. Each kernel must offer
# what --check is expected to say there, and pass the same assertions as on
# the host. Run as root, with nothing tracing the host meanwhile.
# usage: tests/kernels/run.sh BUILD_DIR [SUITE...]   (default: bookworm bullseye)
# env: DC_KERNEL_CACHE (kernels and initramfs; default BUILD_DIR/kernels),
#      DC_KERNEL_TESTS (the tests to run, to look into one; default: all below)
#      DC_GUEST_TEST_TIMEOUT (seconds a test in the guest; guest-tests.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [SUITE...]}" && pwd)
shift
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm bullseye)
cache=${DC_KERNEL_CACHE:-$build/kernels}
[ -f "$build/tests/integration.env" ] || { echo "run.sh: $build has no tests/integration.env: build it first" >&2; exit 2; }
for tool in qemu-system-x86_64 busybox cpio mkfs.ext4; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
done

# What each kernel offers, as --check says it (the rest must then work).
expect() { # SUITE
	case $1 in
	bookworm) # 6.1: no uprobe_multi or kprobe_multi; cookies, task storage, fentry
		echo "user calls         a uprobe perf event pair per function, with attach cookies"
		echo "uprobes placed     in every process that maps the library; missing uprobe_multi (Linux 6.6), uprobe_scoped (Linux 6.13)"
		echo "per-thread state   task storage"
		echo "kernel functions   fentry/fexit, a program pair per function where the function has BTF, else a kprobe/kretprobe perf event pair per function, with attach cookies"
		echo "system calls       tp_btf" ;;
	bullseye) # 5.10: no cookies, task storage or bpf_loop; no BTF for modules
		echo "user calls         a uprobe perf event pair per function, each with a program of its own"
		echo "uprobes placed     in every process that maps the library; missing uprobe_multi (Linux 6.6), uprobe_scoped (Linux 6.13)"
		echo "per-thread state   hash maps by thread id"
		echo "kernel functions   fentry/fexit, a program pair per function where the function has BTF, else a kprobe/kretprobe perf event pair per function, each with a program of its own"
		echo "processes          sched tracepoints; --match-env reads an environment in up to 256 steps, in a bounded loop" ;;
	esac
}
tests=${DC_KERNEL_TESTS:-posix_write stdio container scoped probe_sites fork fd_reuse oracle uring mmap aio mixed profile daemon kernel_funcs kernel_sets mpi hostile_users}

total_pass=0 total_fail=0
for suite in "${suites[@]}"; do
	env_file=$("$here/kernel.sh" "$suite" "$cache")
	out=$(mktemp -d "${TMPDIR:-/tmp}/dc-kernel-$suite.XXXXXX")
	chmod 755 "$out"
	# The ext4 set and the block level need a real disk under TMPDIR.
	truncate -s 1G "$out/ext4.img"
	mkfs.ext4 -q -F "$out/ext4.img"
	{
		echo "export DC_EXPECT_KFUNCS='fentry/fexit'"
		# The guest starts with an environment of its own.
		[ -z "${DC_GUEST_TEST_TIMEOUT:-}" ] || echo "export DC_GUEST_TEST_TIMEOUT=$((DC_GUEST_TEST_TIMEOUT))"
		echo "sh $here/guest-tests.sh $build /out $tests"
	} >"$out/cmd.sh"
	echo "=== $suite ($(. "$env_file" && echo "$KVER"))"
	start=$(date +%s)
	rc=0
	"$here/boot.sh" "$env_file" "$out" "$out/cmd.sh" "$out/ext4.img" | tee "$out/run.txt" || rc=$?
	missing=0
	while IFS= read -r line; do
		if grep -qF -- "$line" "$out/check.txt" 2>/dev/null; then
			echo "ok: $suite --check: $line"
		else
			echo "FAIL: $suite --check does not say: $line"
			missing=1
		fi
	done < <(expect "$suite")
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$out/run.txt" | tail -1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$out/run.txt" | tail -1)
	[ -n "$p" ] || { p=0; f=$(echo "$tests" | wc -w); echo "FAIL: $suite: the guest ran no test to its end (status $rc)"; }
	f=$((f + missing))
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
	echo "=== $suite: $p passed, $f failed in $(($(date +%s) - start)) s (logs: $out)"
	[ "$f" -gt 0 ] || rm -rf "$out"
done
echo "kernels: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
