# rig-topologies: cxl2 nvdimm-numa
# rig-debug: skip permission rules of the file system and control device; the same open/ioctl paths run on the debug kernel in pm-fs and pm-bad-input
# THEORY OF OPERATION: a domain belongs to the uid/gid/mode given at
# creation: its file carries them and open() checks them (the VFS, as for
# any file); chown and chmod change them. A non-owner can't open it; the
# owner can; nobody but CAP_SYS_ADMIN can open the control device.
. /rig/tests/lib/common.sh
pm_pools_up
pmtest domain-create own 16M 0 16M uid=1000 gid=1000 mode=0600 >/dev/null
check_eq "file owner" "1000 1000" "$(stat -c '%u %g' /run/poolmem/own)"
check_eq "file mode" 600 "$(stat -c '%a' /run/poolmem/own)"
pmtest as 1000 1000 try-open own
pmtest as 1000 1000 touch own 0 4M
expect_errno EACCES pmtest as 65534 65534 try-open own
expect_errno EACCES pmtest as 65534 65534 try-open /dev/poolmem/control
# chmod and chown hand the domain to someone else
chmod 0666 /run/poolmem/own
pmtest as 65534 65534 try-open own
chmod 0600 /run/poolmem/own
chown 65534:65534 /run/poolmem/own
pmtest as 65534 65534 try-open own
expect_errno EACCES pmtest as 1000 1000 try-open own
check_eq "domain info follows chown" "65534 65534" "$(pmtest domain-info own | sed -n 's/.* uid=\([0-9]*\) gid=\([0-9]*\).*/\1 \2/p')"
# nobody but root makes files in the root of the file system
expect_errno EACCES pmtest as 1000 1000 create-file /run/poolmem/x
# control ioctls need CAP_SYS_ADMIN even on an open descriptor's node
chmod 666 /dev/poolmem/control
expect_errno EPERM pmtest as 65534 65534 pool-list
chmod 600 /dev/poolmem/control
# private and out-of-range mappings are refused
expect_errno EINVAL pmtest mmap-private own
expect_errno EINVAL pmtest mmap-beyond own
pmtest domain-destroy own >/dev/null
