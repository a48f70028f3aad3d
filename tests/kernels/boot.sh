#!/usr/bin/env bash
# Boots a kernel of kernel.sh under qemu (TCG: no KVM is needed) with the
# host's root shared read-only, runs one script in it, and exits with the
# script's exit status; the console goes to stdout.
# usage: boot.sh ENV_FILE OUT_DIR SCRIPT [DISK_IMAGE]
#   OUT_DIR: shared read-write, as /out in the guest; SCRIPT: a path under
#   it; DISK_IMAGE: a raw image, /dev/vda in the guest.
# env: DC_VM_MEM (2G), DC_VM_CPUS (2), DC_VM_TIMEOUT (seconds, 1200: above a whole
#      matrix with mpi at its limit in guest-tests.sh),
#      DC_VM_TCG_THREAD (single: both vCPUs on one host thread; multi can
#      leave both vCPUs spinning on a kernel int3 while the guest patches a
#      tracepoint's static branch, a soft lockup seen on 6.1 and 5.10),
#      DC_VM_LOGLEVEL (the console's kernel messages, 3; 7 shows backtraces)
set -uo pipefail
env_file=$1 out=$2 script=$3 disk=${4:-}
. "$env_file"
drive=()
[ -z "$disk" ] || drive=(-drive "file=$disk,if=virtio,format=raw,cache=unsafe")
log=$out/console.log
timeout "${DC_VM_TIMEOUT:-1200}" qemu-system-x86_64 -accel tcg,thread=${DC_VM_TCG_THREAD:-single} -cpu max \
	-m "${DC_VM_MEM:-2G}" -smp "${DC_VM_CPUS:-2}" -nographic -no-reboot -monitor none -serial stdio -nodefaults \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyS0 quiet loglevel=${DC_VM_LOGLEVEL:-3} panic=-1 dc_cmd=/out/${script#"$out"/} dc_ktree=$KTREE" \
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$out,mount_tag=out,security_model=none" "${drive[@]}" </dev/null >"$log" 2>&1
qrc=$?
tr -d '\r' <"$log" | grep -v -e '^\[' -e 'SeaBIOS' -e 'Booting from' || true
rc=$(tr -d '\r' <"$log" | sed -n 's/^=== GUEST-RC=\([0-9]*\).*/\1/p' | tail -1)
if [ -z "$rc" ]; then
	# The kernel's own last words (a hung task, a blocked-task list).
	echo "boot.sh: the guest did not finish (qemu exit $qrc); the console's last kernel messages:" >&2
	tr -d '\r' <"$log" | grep '^\[' | tail -80 >&2
	exit 125
fi
exit "$rc"
