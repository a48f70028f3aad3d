#!/usr/bin/env bash
# Fetches a Debian suite's stock kernel (the linux-image-amd64 it depends
# on), unpacked into the cache, not installed, and builds its initramfs.
# usage: kernel.sh SUITE CACHE_DIR   (SUITE: bookworm = Debian 12, 6.1;
#        bullseye = Debian 11, 5.10). Prints the kernel's env file's path.
# Another suite's packages come through a private apt source list and state
# folder, from the archive the system's own sources name: the system's
# sources are never edited.
set -euo pipefail
suite=$1 cache=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
env_file=$cache/$suite.env
[ -s "$env_file" ] && [ -f "$(sed -n 's/^INITRD=//p' "$env_file")" ] && { echo "$env_file"; exit 0; }

apt_opts=()
if [ "$suite" != "$(. /etc/os-release && echo "$VERSION_CODENAME")" ]; then
	a=$cache/apt-$suite
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	mirror=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$a/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$a/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
	apt-get "${apt_opts[@]}" update -qq
fi
pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$pkg" ] || { echo "kernel.sh: no linux-image-amd64 in $suite" >&2; exit 1; }
kver=${pkg#linux-image-}
tree=$cache/$kver
if [ ! -d "$tree/boot" ]; then
	(cd "$cache" && apt-get "${apt_opts[@]}" download -qq "$pkg" 2>/dev/null)
	dpkg-deb -x "$cache/${pkg}_"*.deb "$tree.part"
	rm -f "$cache/${pkg}_"*.deb
	mv "$tree.part" "$tree"
fi
depmod -b "$tree" "$kver"

# The initramfs: a static busybox, the modules that reach the host's root
# (virtio, 9p, overlay) and the disk (virtio_blk), and guest-init.sh.
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w"/{bin,proc,sys,dev,lower,upper,newroot,mods}
cp /usr/bin/busybox "$w/bin/busybox"
for a in sh mount umount mkdir insmod chroot poweroff cat echo ln sync hostname ip; do ln -s busybox "$w/bin/$a"; done
for m in virtio_pci virtio_blk 9pnet_virtio 9p overlay; do
	modprobe -d "$tree" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$w/mods/"
	basename "$ko" >>"$w/mods/order"
done
cp "$here/guest-init.sh" "$w/init"
chmod 755 "$w/init"
(cd "$w" && find . | cpio -o -H newc --quiet | gzip -1) >"$cache/initrd-$kver.gz"
printf 'KVER=%s\nKERNEL=%s\nINITRD=%s\nKTREE=%s\n' "$kver" "$tree/boot/vmlinuz-$kver" "$cache/initrd-$kver.gz" "$tree" >"$env_file"
echo "$env_file"
