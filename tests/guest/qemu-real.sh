# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: Debian's own qemu-system-x86_64, run inside the rig
# guest (nested TCG), is the client; every QEMU gets exactly the argument
# poolctl printed. The inner guest is tests/guest/bios/pattern-bios.S: it
# writes a pattern into every page of its RAM, prints D, waits for a "go"
# word that the test writes through its own mapping of the domain file,
# and exits with status 99.
#  (a) a guest runs on a named domain: every page checked through a second
#      mapping; the pool nodes' meminfo grows by the pool quota, split as
#      round-robin says, and the domain holds its quotas' worth per tier;
#  (b) while it runs, QEMU's own smaps show >= 90% of the domain mapped
#      with PMDs (FilePmdMapped): align= in the printed argument works;
#  (c) virtio-mem-pci with a domain as memdev: realize discards the whole
#      memdev with fallocate(PUNCH_HOLE) and the domain holds 0 bytes;
#  (d) vm create --prealloc: QEMU, stopped (-S), has touched the whole
#      domain, its prealloc threads in a thread context on the home node;
#  (e) profiles: QEMU with mem-path=<profile dir> (a temporary file,
#      unlinked at once) starts, is refused with a clear message when the
#      size doesn't fit, and gives every byte back when killed with
#      SIGKILL; libvirt's memory_backing_dir layout (per-VM directories,
#      a named file, removed by libvirt after the VM) works too.
. /rig/tests/lib/common.sh
pm_pools_up
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
pools_allocated() { echo $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))); }
guest_done() { grep -q D "$1"; }
# wait_qemu PID: QEMU's exit status in QRC, without tripping set -e (not
# in a $(...) subshell: only this shell can wait for its children)
wait_qemu() { QRC=0; wait "$1" || QRC=$?; }

# ---- (a) + (b): a guest on a named domain ----
out=$(poolctl vm create vm1 --size 128M --local 32M --pool 96M --tier-policy interleave --pool-select round-robin)
arg=$(echo "$out" | sed -n 2p)
info "poolctl printed: $arg"
u0=$(node_used_kb 0) u1=$(node_used_kb $n1) u2=$(node_used_kb $n2)
# shellcheck disable=SC2086 # the printed argument is words
pm_qemu /tmp/con-a $arg > /tmp/qemu-a.log 2>&1 &
qpid=$!
wait_for 240 guest_done /tmp/con-a || fail "inner guest did not fill its RAM: $(cat /tmp/qemu-a.log)"
info "inner guest wrote every page of its RAM"
check_eq "vm1 local bytes (quota)" $((32 * MiB)) "$(dom_attr vm1 local_bytes)"
check_eq "vm1 pool bytes (quota)" $((96 * MiB)) "$(dom_attr vm1 pool_bytes)"
check_eq "vm1 chunks per pool (round-robin)" "24 24" "$(dom_pool_chunks vm1 p0) $(dom_pool_chunks vm1 p1)"
d1=$(($(node_used_kb $n1) - u1)) d2=$(($(node_used_kb $n2) - u2))
info "pool nodes' meminfo grew by $d1 kB (node $n1) and $d2 kB (node $n2)"
d0=$(($(node_used_kb 0) - u0))
info "the home node's meminfo grew by $d0 kB (the local quota, QEMU itself and its TCG buffers)"
[ $d0 -ge $((32 * 1024)) ] || fail "node 0 grew by $d0 kB, less than the 32 MiB local quota"
for d in $d1 $d2; do
	[ $d -ge $((47 * 1024)) ] && [ $d -le $((50 * 1024)) ] ||
		fail "a pool node's MemUsed grew by $d kB, expected 48 MiB (49152 kB)"
done
set -- $(pmtest file-pmd $qpid /run/poolmem/vm1)
info "QEMU's smaps: $1 kB of /run/poolmem/vm1 mapped with PMDs, Rss $2 kB"
[ $(($1 * 10)) -ge $((127 * 1024 * 9)) ] || fail "FilePmdMapped $1 kB is under 90% of the 127 MiB touched"
# vm show names the QEMU that maps the domain
poolctl vm show vm1 | grep -q "^  mapped  by qemu-system-x86 (pid $qpid), 128.0 MiB$" ||
	fail "vm show does not name QEMU (pid $qpid): $(poolctl vm show vm1 | grep mapped)"
pmtest guest-check /run/poolmem/vm1
wait_qemu $qpid
check_eq "QEMU's exit status (guest finished)" $PM_QEMU_GUEST_EXIT $QRC
poolctl vm destroy vm1 >/dev/null
check_eq "pools empty after vm1" 0 "$(pools_allocated)"

# ---- (c) virtio-mem with a domain as its memdev ----
ram=$(poolctl vm create ram2 --size 64M --local 64M | sed -n 2p)
arg=$(poolctl vm create vmem --size 256M --pool 256M | sed -n 2p)
obj=${arg%% -machine*}	# the -object part of the printed argument
pmtest touch vmem 0 256M >/dev/null
check_eq "vmem holds its memory before QEMU" $((256 * MiB)) "$(dom_attr vmem pool_bytes)"
# guest RAM from ram2 as printed; a later -m adds room for the virtio-mem device
# shellcheck disable=SC2086
pm_qemu /tmp/con-c $ram -m 64M,maxmem=1G $obj -device virtio-mem-pci,id=vm0,memdev=mem-vmem,requested-size=0 \
	> /tmp/qemu-c.log 2>&1 &
qpid=$!
wait_for 240 guest_done /tmp/con-c || fail "QEMU with virtio-mem did not run: $(cat /tmp/qemu-c.log)"
check_eq "vmem after virtio-mem realize" 0 "$(dom_attr vmem pool_bytes)"
check_eq "vmem discards (every chunk)" 128 "$(dom_attr vmem discards)"
pmtest guest-check /run/poolmem/ram2
wait_qemu $qpid
check_eq "QEMU with virtio-mem: exit status" $PM_QEMU_GUEST_EXIT $QRC
grep -q "discarding RAM" /tmp/qemu-c.log && fail "QEMU: $(cat /tmp/qemu-c.log)"
poolctl vm destroy vmem >/dev/null
poolctl vm destroy ram2 >/dev/null

# ---- (d) --prealloc: QEMU touches the domain before the guest runs ----
# -S: the guest never runs, so every byte the domain holds is QEMU's
# preallocation; where QEMU has thread contexts (7.2 and later) its
# threads are confined to the home node's CPUs (node-affinity).
arg=$(poolctl vm create vmp --size 64M --local 16M --pool 48M --prealloc 2 2>/tmp/vmp.err | sed -n 2p)
info "poolctl printed: $arg ($(cat /tmp/vmp.err))"
grep -q "arguments for QEMU [0-9]" /tmp/vmp.err || fail "poolctl did not say which QEMU it printed for: $(cat /tmp/vmp.err)"
for want in "-object thread-context,id=mem-vmp-tc,node-affinity=0 " ",prealloc=on,prealloc-threads=2,prealloc-context=mem-vmp-tc "; do
	case "$arg " in
	*"$want"*) ;;
	*) fail "--prealloc 2: no '$want' in: $arg" ;;
	esac
done
# shellcheck disable=SC2086
pm_qemu /tmp/con-d $arg -S > /tmp/qemu-d.log 2>&1 &
qpid=$!
wait_for 120 sh -c "[ \$(cat $DOMSYS/vmp/pool_bytes) -eq $((48 * MiB)) ]" ||
	fail "--prealloc: the pool window holds $(dom_attr vmp pool_bytes) bytes with the guest stopped: $(cat /tmp/qemu-d.log)"
check_eq "--prealloc: local bytes with the guest stopped" $((16 * MiB)) "$(dom_attr vmp local_bytes)"
kill -9 $qpid
wait_qemu $qpid
# (QEMU may get as far as loading option ROMs, which -L /nonexistent lacks:
# only what concerns the backend or the thread context is an error here)
grep -Eiq "prealloc|thread-context|memory-backend|mem-vmp" /tmp/qemu-d.log && fail "QEMU with --prealloc: $(cat /tmp/qemu-d.log)"
poolctl vm destroy vmp >/dev/null
check_eq "pools empty after vmp" 0 "$(pools_allocated)"

# ---- (e) profiles ----
poolctl profile create gold --local 25% --pool 75% --tier-policy interleave >/dev/null
obj="-object memory-backend-file,id=mem0,mem-path=/run/poolmem/gold,size=67108864,share=on,align=2097152"
# shellcheck disable=SC2086
pm_qemu /tmp/con-e $obj -machine memory-backend=mem0 -m 64M > /tmp/qemu-e.log 2>&1 &
qpid=$!
wait_for 240 guest_done /tmp/con-e || fail "QEMU on a profile did not run: $(cat /tmp/qemu-e.log)"
dom=$(profile_domain gold)
[ -n "$dom" ] || fail "no domain of profile gold while QEMU runs"
info "QEMU's domain: $dom, file $(dom_attr $dom file), made by $(dom_attr $dom creator)"
check_eq "$dom local bytes (25%)" $((16 * MiB)) "$(dom_attr $dom local_bytes)"
check_eq "$dom pool bytes (75%)" $((48 * MiB)) "$(dom_attr $dom pool_bytes)"
check_eq "profile directory empty (QEMU unlinked its file)" "" "$(ls /run/poolmem/gold)"
poolctl vm list | grep -q "^$dom .*/gold/qemu_back_mem.mem0" || fail "vm list does not show $dom: $(poolctl vm list)"
# its file unlinked: vm show still names the QEMU that maps it
poolctl vm show $dom --json | tr -d ' \n' |
	grep -q "\"mapped_by\":\[{\"comm\":\"qemu-system-x86\",\"mapped_bytes\":67108864,\"pid\":$qpid}\]" ||
	fail "vm show --json does not name QEMU (pid $qpid) for the unlinked $dom: $(poolctl vm show $dom --json | grep -A6 mapped_by)"
kill -9 $qpid
wait_qemu $qpid
wait_for 10 sh -c "[ ! -d $DOMSYS/$dom ]" || fail "$dom still there after QEMU was killed"
check_eq "pools empty after SIGKILL" 0 "$(pools_allocated)"
check_eq "no domain left" "" "$(pmtest domain-list | xargs)"

# refused: more than the pools hold
big="-object memory-backend-file,id=mem0,mem-path=/run/poolmem/gold,size=68719476736,share=on,align=2097152"
dmesg -c >/dev/null
rc=0
# shellcheck disable=SC2086
(pm_qemu /tmp/con-r $big -machine memory-backend=mem0 -m 64G) > /tmp/qemu-r.log 2>&1 || rc=$?
info "QEMU said: $(tr '\n' ' ' < /tmp/qemu-r.log)"
[ $rc -ne 0 ] && [ $rc -ne $PM_QEMU_GUEST_EXIT ] || fail "QEMU with 64G on profile gold: exit $rc"
grep -q "No space left on device" /tmp/qemu-r.log || fail "QEMU did not say why: $(cat /tmp/qemu-r.log)"
dmesg | grep -q "profile gold: file /gold/qemu_back_mem.mem0.* refused: local quota 16384 MiB" ||
	fail "no admission line naming the profile: $(dmesg | tail -n 5)"
info "kernel said: $(dmesg | grep refused | head -n 1)"
check_eq "no domain left after the refusal" "" "$(pmtest domain-list | xargs)"

# libvirt's memory_backing_dir: <dir>/libvirt/qemu/<id>-<vm>/pc.ram, created by QEMU
mkdir -p /run/poolmem/gold/libvirt/qemu/1-web
ram=/run/poolmem/gold/libvirt/qemu/1-web/pc.ram
# shellcheck disable=SC2086
pm_qemu /tmp/con-l -object memory-backend-file,id=pc.ram,mem-path=$ram,share=on,size=67108864 \
	-machine memory-backend=pc.ram -m 64M > /tmp/qemu-l.log 2>&1 &
qpid=$!
wait_for 240 guest_done /tmp/con-l || fail "QEMU in libvirt's layout did not run: $(cat /tmp/qemu-l.log)"
dom=$(profile_domain gold)
check_eq "libvirt-style domain file" /gold/libvirt/qemu/1-web/pc.ram "$(dom_attr $dom file)"
# libvirt passes no align= for boot RAM: QEMU's 4 KiB-aligned reservation (for the record)
info "no align=: $(pmtest file-pmd $qpid $ram | awk '{ print $1 " of " $2 }') kB of QEMU's mapping are PMD-mapped"
check_eq "file size" 67108864 "$(stat -c %s $ram)"
pmtest guest-check $ram
wait_qemu $qpid
check_eq "QEMU (libvirt layout): exit status" $PM_QEMU_GUEST_EXIT $QRC
expect_exit 4 "^poolctl: gold: cannot remove profile: its directory is not empty" poolctl profile remove gold
# what libvirt does after the VM: unlink its files, remove the VM's directory
rm -f $ram
rmdir /run/poolmem/gold/libvirt/qemu/1-web
check_eq "pools empty after libvirt's cleanup" 0 "$(pools_allocated)"
rm -rf /run/poolmem/gold/libvirt
poolctl profile remove gold >/dev/null
[ ! -e /run/poolmem/gold ] || fail "profile directory left after remove"
