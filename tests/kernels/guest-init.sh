#!/bin/sh
# PID 1 of a test guest (busybox): the host's root over 9p, read-only, under
# a tmpfs overlay, so the guest runs the very build under test; the result
# folder shared read-write at /out; the kernel's own modules and config in
# place for modprobe and bpftool; then the script named by dc_cmd= runs in a
# chroot, its exit status is printed, and the guest powers off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod "/mods/$m" 2>/dev/null || echo "guest: insmod $m failed"; done
cmd= ktree=
for a in $(cat /proc/cmdline); do
	case $a in dc_cmd=*) cmd=${a#dc_cmd=} ;; dc_ktree=*) ktree=${a#dc_ktree=} ;; esac
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose host /lower || { echo "guest: no host root"; poweroff -f; }
mount -t tmpfs -o size=1536m tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot || { echo "guest: no overlay"; poweroff -f; }
r=/newroot
mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts devpts $r/dev/pts
mount -t tmpfs tmpfs $r/dev/shm
mount -t tmpfs tmpfs $r/run
mount -t tmpfs tmpfs $r/tmp
mount -t tracefs tracefs $r/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $r/sys/kernel/debug 2>/dev/null
mount -t bpf bpf $r/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 $r/sys/fs/cgroup 2>/dev/null
kv=$(cat /proc/sys/kernel/osrelease)
if [ -n "$ktree" ] && [ -d "$r$ktree/lib/modules/$kv" ]; then
	mkdir -p $r/usr/lib/modules $r/boot
	ln -sfn "$ktree/lib/modules/$kv" "$r/usr/lib/modules/$kv"
	cp "$r$ktree/boot/config-$kv" $r/boot/
fi
mkdir -p $r/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 out $r/out || echo "guest: no /out"
hostname kernel-guest
ip link set lo up # MPI's launcher listens on the loopback
echo "=== GUEST-START"
chroot $r /bin/sh -c "cd /; export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; /bin/sh $cmd" </dev/console >/dev/console 2>&1
echo "=== GUEST-RC=$?"
sync
umount $r/out 2>/dev/null
poweroff -f
