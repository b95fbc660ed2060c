# rig-topologies: nvdimm-numa cxl2
# THEORY OF OPERATION: the poolmem file system as an operator and libvirt
# use it. One superblock for every mount; named domains are files in the
# root, profiles directories; nobody creates anything else in the root.
# In a profile directory a new file is a domain only once ftruncate gives
# it a size (admission then), whose quotas are the profile's fractions;
# subdirectories inherit the profile; a domain's size is fixed. statfs
# reports the pools; st_blocks what the domain holds; unlink destroys.
. /rig/tests/lib/common.sh
pm_pools_up
pmtest domain-create fsd 16M 0 16M >/dev/null

# one superblock: a second mount shows the same files
mkdir -p /tmp/pm2
mount -t poolmem poolmem /tmp/pm2
check_eq "second mount sees the domain" fsd "$(ls /tmp/pm2)"
umount /tmp/pm2
check_eq "file system type" "$(printf '%x' 0x706d656d)" "$(stat -f -c %t /run/poolmem)"
cap=$(($(pool_attr p0 capacity_bytes) + $(pool_attr p1 capacity_bytes)))
check_eq "statfs: pool capacity in 2 MiB blocks" $((cap / (2 * MiB))) "$(stat -f -c %b /run/poolmem)"

# the root takes no new files or directories from anybody
expect_errno EACCES pmtest create-file /run/poolmem/newfile
mkdir /run/poolmem/newdir 2>/dev/null && fail "mkdir in the root succeeded"
info "ok: no mkdir in the root"

# a profile: 50% local, 50% pool, owned by tenant
poolctl profile create silver --local 50% --pool 50% --owner tenant --mode 0750 >/dev/null
check_eq "profile directory owner and mode" "1000 1000 750" "$(stat -c '%u %g %a' /run/poolmem/silver)"
poolctl profile list
check_eq "profile list --json" 1 "$(poolctl profile list --json | grep -c '"name": "silver"')"
# a file is not a domain until it has a size
pmtest as 1000 1000 create-file /run/poolmem/silver/a
check_eq "sizeless file: no domain" "" "$(profile_domain silver)"
expect_errno ENOSPC pmtest as 1000 1000 mmap-beyond silver/a
# ftruncate: sizes must be whole chunks; then admission; then the size is fixed
pmtest as 1000 1000 create-file /run/poolmem/silver/odd
truncate -s 3M /run/poolmem/silver/odd 2>/dev/null && fail "3M (not a chunk multiple) was accepted"
check_eq "refused size: still no domain" "" "$(profile_domain silver)"
truncate -s 32M /run/poolmem/silver/a
dom=$(profile_domain silver)
[ -n "$dom" ] || fail "ftruncate made no domain"
check_eq "$dom quotas (50%/50%)" "$((16 * MiB)) $((16 * MiB))" "$(dom_attr $dom local_quota_bytes) $(dom_attr $dom pool_quota_bytes)"
check_eq "$dom file" /silver/a "$(dom_attr $dom file)"
check_eq "$dom owner: the file's" "1000 1000" "$(stat -c '%u %g' /run/poolmem/silver/a)"
truncate -s 64M /run/poolmem/silver/a 2>/dev/null && fail "resizing a domain succeeded"
check_eq "size unchanged" $((32 * MiB)) "$(stat -c %s /run/poolmem/silver/a)"
pmtest touch silver/a 0 32M >/dev/null
check_eq "du: st_blocks = bytes held / 512" $((32 * MiB / 512)) "$(stat -c %b /run/poolmem/silver/a)"
check_eq "profile show: live domains" 1 "$(poolctl profile show silver --json | sed -n 's/.*"domains": \([0-9]*\).*/\1/p')"
# subdirectories carry the profile (libvirt's per-VM directories)
mkdir -p /run/poolmem/silver/libvirt/qemu/7-db
touch /run/poolmem/silver/libvirt/qemu/7-db/pc.ram
truncate -s 16M /run/poolmem/silver/libvirt/qemu/7-db/pc.ram
check_eq "domains of silver" 2 "$(poolctl profile show silver --json | sed -n 's/.*"domains": \([0-9]*\).*/\1/p')"
expect_exit 4 "not empty" poolctl profile remove silver
# unlink returns the memory of an unmapped domain at once
rm /run/poolmem/silver/a /run/poolmem/silver/libvirt/qemu/7-db/pc.ram /run/poolmem/silver/odd
check_eq "no silver domain after unlink" "" "$(profile_domain silver)"
check_eq "pools empty" "0 0" "$(pool_attr p0 allocated_bytes) $(pool_attr p1 allocated_bytes)"
rm -r /run/poolmem/silver/libvirt
rmdir /run/poolmem/silver
check_eq "rmdir removes the profile" "" "$(pmtest profile-list | xargs)"

# profiles that can't be: percentages under 100%, mixed, bad names
expect_exit 2 "must cover" poolctl profile create thin --local 20% --pool 30%
expect_exit 2 "invalid percentage" poolctl profile create over --pool 101%
expect_exit 4 "exists" poolctl profile create fsd --pool 100%

# a named domain: unlink destroys it
rm /run/poolmem/fsd
check_eq "unlink destroyed fsd" "" "$(pmtest domain-list | xargs)"
