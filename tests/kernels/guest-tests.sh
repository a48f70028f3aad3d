#!/bin/sh
# Inside a test guest: the named integration tests, as ctest runs them (the
# same scripts, the environment tests/CMakeLists.txt writes to
# integration.env), with TMPDIR on the ext4 disk.
# usage: guest-tests.sh BUILD_DIR OUT_DIR TEST...
# env: DC_EXPECT_* (what --check must say on this kernel), passed through;
# DC_GUEST_TEST_TIMEOUT (seconds a test, 300; mpi gets twice that);
# DC_EMULATED_GUEST=1 is set for the tests.
build=$1 out=$2
shift 2
set -a
. "$build/tests/integration.env"
set +a
modprobe ext4 || echo "guest: no ext4 module"
mkdir -p /mnt/ext4
mount -t ext4 /dev/vda /mnt/ext4 || { echo "guest: cannot mount the ext4 disk"; exit 1; }
mkdir -p /mnt/ext4/tmp
export TMPDIR=/mnt/ext4/tmp
# Tests that need real round-trip times skip that part here.
export DC_EMULATED_GUEST=1
uname -r
"$DC_AGENT" --check | tee "$out/check.txt"
passed=0 failed=0
for t in "$@"; do
	start=$(cut -d' ' -f1 /proc/uptime)
	limit=${DC_GUEST_TEST_TIMEOUT:-300}
	# mpi runs a dozen MPI jobs, each of whose starts is seconds under TCG:
	# 160-260 s on 5.10, where every probe is a program of its own.
	[ "$t" != mpi ] || limit=$((limit * 2))
	# A test past its time that timeout cannot end (a task stuck in the
	# kernel): the kernel's list of blocked tasks goes to the console,
	# which boot.sh shows when the guest does not finish.
	(
		sleep $((limit + 20))
		echo "guest: test $t still runs after $((limit + 20)) s; blocked tasks:"
		echo 8 >/proc/sys/kernel/printk
		echo 1 >/proc/sys/kernel/sysrq
		echo w >/proc/sysrq-trigger
	) &
	watchdog=$!
	if timeout -k 10 "$limit" bash "$DC_SRC/tests/integration/test_$t.sh" >"$out/$t.log" 2>&1; then
		r=passed passed=$((passed + 1))
	else
		r=FAILED failed=$((failed + 1))
		tail -15 "$out/$t.log"
		# What was still running, for a test that hung.
		ps -eo pid,ppid,stat,wchan:24,etime,args >"$out/$t.ps" 2>&1
	fi
	kill "$watchdog" 2>/dev/null
	echo "test $t: $r ($(echo "$(cut -d' ' -f1 /proc/uptime) $start" | awk '{ printf "%.0f", $1 - $2 }') s)"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
