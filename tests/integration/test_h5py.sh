#!/usr/bin/env bash
# h5py (Debian's, on the serial HDF5 the hdf5 set probes): a file made by
# a relative name, a group and a dataset of 1,024 doubles written, then
# the file opened again and the dataset read through H5Oopen, as h5py
# opens objects. Every call is on its absolute FILE:OBJECT name, and the
# read's 8 KiB are those of the system calls made inside it. h5py closes
# its ids through H5Idec_ref: each file's last one, on the file's name.
. "$(dirname "$0")/lib.sh"

/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null ||
	fail "h5py and numpy are needed for /usr/bin/python3 (scripts/install-deps.sh installs python3-h5py)"
mkdir -p "$TMP/h"
cd "$TMP/h"
trace h5py -p posix,syscalls,hdf5 -- /usr/bin/python3 -c '
import h5py, numpy as np
with h5py.File("data.h5", "w") as f:
    f.create_group("run").create_dataset("x", data=np.arange(1024, dtype="f8"))
with h5py.File("data.h5", "r") as f:
    assert f["run/x"][...].sum() == 1023 * 1024 / 2
'
cd "$TMP"
f="$TMP/h/data\\.h5"
assert_eq "$(calls hdf5 H5Fcreate "^$f\$")" "1 0 0" "H5Fcreate of a relative name, named absolutely"
assert_eq "$(calls hdf5 H5Gcreate2 "^$f:/run\$")" "1 0 0" "H5Gcreate2: FILE:/run"
assert_eq "$(calls hdf5 H5Dcreate2 "^$f:/run/x\$")" "1 0 0" "H5Dcreate2: FILE:/run/x"
assert_eq "$(calls hdf5 H5Dwrite "^$f:/run/x\$" | cut -d' ' -f1)" "1" "H5Dwrite on the dataset"
assert_eq "$(calls hdf5 H5Fopen "^$f\$")" "1 0 0" "H5Fopen"
assert_eq "$(calls hdf5 H5Oopen "^$f:/run/x\$")" "1 0 0" "H5Oopen of run/x, named in its file"
assert_eq "$(calls hdf5 H5Dread "^$f:/run/x\$")" "1 0 8192" "H5Dread through the H5Oopen'd id: 1,024 doubles"
# Closed through H5Idec_ref: each file and the dataset twice (written,
# then read), at the last reference (ret 0); the file opened for reading
# also let go of once while the dataset still held it (ret 1).
decref() { grep " level=hdf5 func=H5Idec_ref ret=$1 .* path=$2\$" "$DUMP" | wc -l; }
assert_eq "$(decref 0 "$f") $(decref 1 "$f") $(decref 0 "$f:/run/x") $(decref 0 "$f:/run")" "2 1 2 1" \
	"H5Idec_ref: the files, the dataset and the group closed, each on its name"
# The other ids h5py lets go of are no file or object (property lists,
# dataspaces, types): nameless, as they should be.
assert_eq "$(grep ' level=hdf5 .* path=$' "$DUMP" | grep -vc ' func=H5Idec_ref ' || true)" "0" \
	"no other HDF5 call without its name"
assert_eq "$(lost_events)" "0" "lost events"
