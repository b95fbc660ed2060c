# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: zNUMA through a profile, as libvirt 9.0 uses one
# (issue 17). A znuma profile's VM directory gets two files from the same
# QEMU, ram-node0 then ram-node1 (libvirt's per-cell backends): the first
# one sized becomes the local window and makes the domain, the next one
# the same process creates there joins it as the pool window, already
# sized. The test:
#  1. poolctl and the kernel refuse znuma profiles whose quotas are not
#     percentages adding up to 100, and VM sizes that don't split into
#     whole chunks;
#  2. takes the cells from "poolctl profile show --libvirt" and runs
#     Debian's QEMU with the command line libvirt 9.0 builds from them
#     (qemu_command.c, qemuBuildNumaCommandLine: each cell's JSON
#     memory-backend-file in <memory_backing_dir>/libvirt/qemu/<id>-<vm>/,
#     then its -numa node; the distances; HMAT). The guest
#     (pattern-bios) writes every page of both nodes;
#  3. checks from outside: the two files are one inode with two links,
#     each with its window's size; one domain holds exactly the local
#     window in local memory and the pool window in the pool, the pool
#     node's used memory grew by it; every page reads back through both
#     files (the pool window at its guest physical base);
#  4. discards through the pool window (fallocate, MADV_REMOVE) reach only
#     it; another process's file in the directory does not join; an
#     unlinked file (mem-path=DIR) and a node 1 larger than the
#     window are refused with a clear message (QEMU maps a smaller one
#     in part, as with any larger file);
#  5. libvirt's cleanup (unlink both, rmdir) gives every byte back.
. /rig/tests/lib/common.sh
pm_pools_up
MiB=1048576
n0=$(pool_attr p0 node)
pools_allocated() { echo $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))); }
guest_done() { grep -q D "$1"; }
wait_qemu() { QRC=0; wait "$1" || QRC=$?; }

# --- 1. refusals ---
expect_exit 2 "must be percentages adding up to 100" poolctl profile create zx --znuma --local 25% --pool 1G
expect_exit 2 "must be percentages adding up to 100" poolctl profile create zx --znuma --local 25% --pool 80%
expect_exit 2 "needs --size" poolctl profile create zx --znuma --local 25% --pool 75% --libvirt
expect_exit 2 "for --znuma --libvirt only" poolctl profile create zx --local 25% --pool 75% --size 1G
# the kernel's own check, without poolctl's: POOLMEM_DOMAIN_ZNUMA is 0x2
dmesg -c >/dev/null
pmtest profile-create zx 25% 1G flags=2 >/dev/null 2>&1 && fail "kernel took a znuma profile with a byte quota"
dmesg | grep -q "profile zx refused: znuma: the local and pool quotas must be percentages" ||
	fail "no log line for the refused znuma profile: $(dmesg | tail -n 3)"
[ ! -e $PMFS/zx ] || fail "a refused profile left a directory"

poolctl profile create zgold --znuma --local 25% --pool 75% --pools p0 >/dev/null
poolctl profile show zgold | grep -q "znuma windows" || fail "profile show does not say znuma: $(poolctl profile show zgold)"
check_eq "profile JSON znuma" true "$(poolctl profile show zgold --json | sed -n 's/.*"znuma": *\([a-z]*\).*/\1/p')"
expect_exit 2 "split it .use --size 104M" poolctl profile show zgold --libvirt --size 100M

# --- 2. the cells libvirt gets, and QEMU as libvirt runs it ---
xml=$(poolctl profile show zgold --libvirt --size 128M --vcpus 1)
echo "$xml"
cell() { echo "$xml" | sed -n "s/.*<cell id='$1'.* memory='\([0-9]*\)' unit='KiB'.*/\1/p"; }
L=$(($(cell 0) * 1024)) P=$(($(cell 1) * 1024))
check_eq "cells: local 25%, pool 75% of 128M" "$((32 * MiB)) $((96 * MiB))" "$L $P"
dist=$(echo "$xml" | sed -n "s/.*<sibling id='1' value='\([0-9]*\)'.*/\1/p" | head -n 1)
check_eq "cell distance is the host's" "$(awk -v n=$n0 '{ print $(n + 1) }' $NODESYS/node0/distance)" "$dist"
hmat=
for t in 0 1; do
	lat=$(echo "$xml" | sed -n "s/.*<latency initiator='0' target='$t' type='access' value='\([0-9]*\)'.*/\1/p")
	[ -n "$lat" ] || fail "no HMAT latency for cell $t in the XML (the rig has HMAT)"
	hmat="$hmat -numa hmat-lb,initiator=0,target=$t,hierarchy=memory,data-type=access-latency,latency=$lat"
done
for t in 0 1; do	# libvirt gives QEMU the XML's MiB/s in KiB/s
	bw=$(echo "$xml" | sed -n "s/.*<bandwidth initiator='0' target='$t' type='access' value='\([0-9]*\)' unit='MiB'.*/\1/p")
	[ -z "$bw" ] ||
		hmat="$hmat -numa hmat-lb,initiator=0,target=$t,hierarchy=memory,data-type=access-bandwidth,bandwidth=$((bw * 1024))K"
done
echo "$xml" | grep -q "^memory_backing_dir = \"$PMFS/zgold\"$" || fail "no qemu.conf line"

dir=$PMFS/zgold/libvirt/qemu/1-zvm
mkdir -p $dir
backend() { # ID FILE SIZE: libvirt 9.0's JSON -object for a cell with memAccess='shared'
	echo "{\"qom-type\":\"memory-backend-file\",\"id\":\"$1\",\"mem-path\":\"$2\",\"share\":true,\"size\":$3}"
}
u0=$(node_used_kb $n0) a0=$(pools_allocated)
# shellcheck disable=SC2086 # $hmat is words
pm_qemu /tmp/con-z -machine pc,hmat=on -m $(((L + P) / MiB)) -smp 1 \
	-object "$(backend ram-node0 $dir/ram-node0 $L)" -numa node,nodeid=0,cpus=0,initiator=0,memdev=ram-node0 \
	-object "$(backend ram-node1 $dir/ram-node1 $P)" -numa node,nodeid=1,initiator=0,memdev=ram-node1 \
	-numa dist,src=0,dst=0,val=10 -numa dist,src=0,dst=1,val=$dist \
	-numa dist,src=1,dst=0,val=$dist -numa dist,src=1,dst=1,val=10 $hmat > /tmp/qemu-z.log 2>&1 &
qpid=$!
wait_for 240 guest_done /tmp/con-z || fail "QEMU with libvirt's znuma cells did not run: $(cat /tmp/qemu-z.log)"
info "the inner guest wrote every page of both nodes"

# --- 3. one domain, two windows ---
set -- $(stat -c '%i %h %s' $dir/ram-node0) $(stat -c '%i %h %s' $dir/ram-node1)
check_eq "ram-node0: links, size" "2 $L" "$2 $3"
check_eq "ram-node1: links, size" "2 $P" "$5 $6"
check_eq "ram-node0 and ram-node1 are one inode" "$1" "$4"
dom=$(profile_domain zgold)
[ -n "$dom" ] || fail "no domain of profile zgold"
check_eq "one domain of the profile" 1 "$(poolctl profile show zgold --json | sed -n 's/.*"domains": *\([0-9]*\).*/\1/p')"
check_eq "domain size" $((L + P)) "$(dom_attr $dom size_bytes)"
check_eq "windows" "local 0 $L pool $L $P" "$(dom_attr $dom windows | xargs)"
check_eq "local bytes: the local window, all of it" $L "$(dom_attr $dom local_bytes)"
check_eq "pool bytes: the pool window, all of it" $P "$(dom_attr $dom pool_bytes)"
check_eq "pools' allocation grew by the pool window" $((a0 + P)) "$(pools_allocated)"
d=$(($(node_used_kb $n0) - u0))
info "p0's node grew by $d kB"
[ $d -ge $((P / 1024 - 1024)) ] && [ $d -le $((P / 1024 + 1024)) ] ||
	fail "p0's node grew by $d kB, expected the pool window's $((P / 1024)) kB"
pmtest guest-check $dir/ram-node1 nogo $L | tee /tmp/gc1
grep -q " 0 bad" /tmp/gc1 || fail "the pool window does not read back the guest's pages"
pmtest guest-check $dir/ram-node0
wait_qemu $qpid
check_eq "QEMU's exit status (guest finished)" $PM_QEMU_GUEST_EXIT $QRC

# --- 4. discards, strangers, refusals ---
pmtest qemu zgold/libvirt/qemu/1-zvm/ram-node1 >/dev/null || fail "pmtest qemu through the pool window"
pmtest guest-check $dir/ram-node0 nogo | tee /tmp/gc0
grep -q " 0 bad" /tmp/gc0 || fail "discards through the pool window reached the local window"
check_eq "local bytes after the pool window's discards" $L "$(dom_attr $dom local_bytes)"

mkdir $dir-2
truncate -s 32M $dir-2/a
touch $dir-2/b
set -- $(stat -c '%i %h %s' $dir-2/a) $(stat -c '%i %h %s' $dir-2/b)
[ "$1" != "$4" ] || fail "another process's file joined the domain as its pool window"
check_eq "a: a local window alone" "1 $((32 * MiB))" "$2 $3"
check_eq "b: an empty file of its own" "1 0" "$5 $6"
rm -r $dir-2

dmesg -c >/dev/null
rc=0
# shellcheck disable=SC2086
(pm_qemu /tmp/con-t -m 128M -object "$(backend ram-node0 $PMFS/zgold $L)" -numa node,nodeid=0,cpus=0,memdev=ram-node0 \
	-object "$(backend ram-node1 $PMFS/zgold $P)" -numa node,nodeid=1,memdev=ram-node1) > /tmp/qemu-t.log 2>&1 || rc=$?
info "QEMU with mem-path=DIR said: $(tr '\n' ' ' < /tmp/qemu-t.log)"
[ $rc -ne 0 ] && [ $rc -ne $PM_QEMU_GUEST_EXIT ] || fail "QEMU on unlinked znuma files: exit $rc"
dmesg | grep -q "a znuma profile's windows must be named files" ||
	fail "no log line for an unlinked window: $(dmesg | tail -n 3)"

mkdir $dir-3
rc=0
# shellcheck disable=SC2086
(pm_qemu /tmp/con-s -m 160M -object "$(backend ram-node0 $dir-3/ram-node0 $L)" -numa node,nodeid=0,cpus=0,memdev=ram-node0 \
	-object "$(backend ram-node1 $dir-3/ram-node1 $((128 * MiB)))" -numa node,nodeid=1,memdev=ram-node1) > /tmp/qemu-s.log 2>&1 || rc=$?
info "QEMU with a 128M node 1 said: $(tr '\n' ' ' < /tmp/qemu-s.log)"
[ $rc -ne 0 ] && [ $rc -ne $PM_QEMU_GUEST_EXIT ] || fail "QEMU with a node 1 unlike the window: exit $rc"
# QEMU 7.2: "... does not match 'size' option"; 10.0: "... is too small for
# 'size' option ... plus 'offset' option"
grep -qE "(does not match|is too small for) 'size' option" /tmp/qemu-s.log || fail "QEMU did not say the window's size differs"
rm -r $dir-3

# --- 5. libvirt's cleanup ---
rm $dir/ram-node0 $dir/ram-node1
rmdir $dir
check_eq "pools back to before the VM" "$a0" "$(pools_allocated)"
check_eq "no domain of zgold left" "" "$(profile_domain zgold)"
rm -r $PMFS/zgold/libvirt
poolctl profile remove zgold >/dev/null
info "ok: a znuma profile in libvirt's layout"
