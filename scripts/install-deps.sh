#!/usr/bin/env bash
# Installs what DataCrumbs builds and runs with, from Debian 12's packages.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (it calls apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	build-essential gfortran cmake pkg-config clang llvm bpftool \
	libbpf-dev libelf-dev zlib1g-dev libisal-dev libyaml-dev libhwloc-dev libcmocka-dev \
	openmpi-bin libopenmpi-dev libhdf5-dev libhdf5-openmpi-dev hdf5-tools slurm-wlm munge \
	python3 util-linux procps libcapstone-dev bpftrace autoconf automake libtool protobuf-compiler >/dev/null
# MPICH, for libdcpmpi-mpich.so; Open MPI stays the default mpicc/mpirun.
apt-get install -y -qq --no-install-recommends mpich libmpich-dev >/dev/null
update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null
update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null
# For the kernel matrix (tests/kernels): stock kernels booted under qemu.
apt-get install -y -qq --no-install-recommends qemu-system-x86 busybox-static kmod cpio e2fsprogs \
	debian-archive-keyring >/dev/null
# The Python package (python/) and its notebook, run by the tests with Debian's python3.
apt-get install -y -qq --no-install-recommends python3-h5py python3-pandas python3-dask jupyter-nbconvert \
	python3-ipykernel >/dev/null
# For the tests: oracles of the system-call level and the programs they watch.
apt-get install -y -qq --no-install-recommends strace sqlite3 tar rsync liburing-dev >/dev/null
# For the tests: the HTML report is loaded and photographed in a real browser.
apt-get install -y -qq --no-install-recommends chromium python3-pil >/dev/null
