# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: regression tests for what a review of the fault path
# found (each failed before its fix):
#  - a chunk still referenced at discard (vmsplice into a pipe) was
#    uncharged while its memory stayed allocated: discard, refault, repeat
#    took any amount of memory past the quota. Now it stays charged
#    (retired) until the pipe lets go;
#  - names took bytes 0xC0-0xFF (Latin-1 isalnum);
#  - the list ioctls copied to userspace under pm_lock: a stalled copy
#    (userfaultfd) blocked every other control ioctl.
. /rig/tests/lib.sh
pm_pools_up

# quota escape through vmsplice: quota 4 MiB, 8 rounds of touch/vmsplice/punch
pmtest domain-create esc 4M 0 4M pools=p0 >/dev/null
out=$(pmtest splice-escape esc 8)
echo "$out"
echo "$out" | grep -q "charged at most 4194304 bytes" || fail "charge went past the 4 MiB quota: $out"
echo "$out" | grep -q "SIGBUS in round 2" || fail "the third round should have hit the quota: $out"
echo "$out" | grep -q "after the pipes closed: 0 retired, 0 bytes charged" ||
	fail "retired chunks not freed after the pipes closed: $out"
check_eq "p0 empty once the pipes let go" 0 "$(pool_attr p0 allocated_bytes)"
pmtest domain-destroy esc >/dev/null

# ASCII names only
expect_errno EINVAL pmtest domain-create "$(printf 'caf\351')" 16M 0 16M
expect_errno EINVAL pmtest domain-create "$(printf '\303\251t\303\251')" 16M 0 16M

# no lock across copy_to_user
pmtest domain-create uf 16M 0 16M >/dev/null
pmtest uffd-list
pmtest domain-destroy uf >/dev/null
