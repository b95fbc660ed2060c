# rig-topologies: cxl2 nvdimm-numa
# THEORY OF OPERATION: a domain belongs to the uid/gid/mode given at
# creation: its device node carries them and open() checks them again. A
# non-owner can't open it; the owner can; nobody but CAP_SYS_ADMIN can open
# the control device.
. /rig/tests/lib.sh
pm_pools_up
pmtest domain-create own 16M 0 16M uid=1000 gid=1000 mode=0600 >/dev/null
check_eq "node owner" "1000 1000" "$(stat -c '%u %g' /dev/poolmem/own)"
check_eq "node mode" 600 "$(stat -c '%a' /dev/poolmem/own)"
pmtest as 1000 1000 try-open own
pmtest as 1000 1000 touch own 0 4M
expect_errno EACCES pmtest as 65534 65534 try-open own
expect_errno EACCES pmtest as 65534 65534 try-open /dev/poolmem/control
# a node made elsewhere (mknod by root) still can't be opened by others
mknod -m 666 /tmp/own-copy c $(printf %d 0x$(stat -c %t /dev/poolmem/own)) $(printf %d 0x$(stat -c %T /dev/poolmem/own))
expect_errno EACCES pmtest as 65534 65534 try-open /tmp/own-copy
# control ioctls need CAP_SYS_ADMIN even on an open descriptor's node
chmod 666 /dev/poolmem/control
expect_errno EPERM pmtest as 65534 65534 pool-list
chmod 600 /dev/poolmem/control
# private and out-of-range mappings are refused
expect_errno EINVAL pmtest mmap-private own
expect_errno EINVAL pmtest mmap-beyond own
pmtest domain-destroy own >/dev/null
