# rig-topologies: libvirt
# rig-timeout: 900
# rig-debug: skip nested QEMU guests under KASAN take many minutes; the znuma windows run on the debug kernel in pm-znuma-libvirt
# THEORY OF OPERATION: zNUMA and two tenants through the real libvirt
# daemon (tests/guest/lib/libvirt.sh), driven only through virsh:
#  1. a znuma profile (owner libvirt-qemu): the cells "poolctl profile
#     create --znuma --libvirt --size 256M" printed go into
#     tests/guest/libvirt/znuma.xml; libvirt backs cell 0 and cell 1 with
#     ram-node0 and ram-node1, which become the local and pool windows of
#     one domain; the guest sees node 1 without CPUs, of the pool window's
#     size;
#  2. a second profile with another owner (tenant, uid 1000): qemu.conf's
#     memory_backing_dir changes to it and libvirtd restarts while the
#     zNUMA VM runs; a VM with a static DAC label +1000:+64055 (the
#     group: Debian's /var/lib/libvirt/qemu is libvirt-qemu's, 0750)
#     (tests/guest/libvirt/tenant.xml) gets its boot RAM there and a named
#     domain as an NVDIMM. libvirt's DAC driver chowns the poolmem file to
#     the VM's user and back after, as on hugetlbfs; each VM's directory
#     belongs to its QEMU's user, and neither QEMU's user can open the
#     other's files;
#  3. destroying the zNUMA VM after the restart cleans up the first
#     profile's directory (libvirt keeps the path in its status XML); every
#     byte is back.
. /rig/tests/lib/common.sh
. /rig/tests/lib/libvirt.sh
pm_pools_up
lv_mount	# libvirt-qemu is a user of the root
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
pools_used_kb() { echo $(($(node_used_kb $n1) + $(node_used_kb $n2))); }
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
pools_alloc() { echo $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))); }
base=$(pools_used_kb) abase=$(pools_alloc)

# --- 1. zNUMA ---
poolctl profile create zgold --znuma --local 25% --pool 75% --owner libvirt-qemu \
	--libvirt --size 256M --vcpus 1 > /tmp/zgold.out
cat /tmp/zgold.out
sed -n '/^<memory unit/,/^<\/cpu>/p' /tmp/zgold.out > /tmp/zgold.cells
sed -n '/<memoryBacking>/,/<\/memoryBacking>/p' /tmp/zgold.out > /tmp/zgold.mb
[ -s /tmp/zgold.cells ] && [ -s /tmp/zgold.mb ] || fail "poolctl printed no cells or no <memoryBacking>"
lv_up "$(grep '^memory_backing_dir = ' /tmp/zgold.out)"
lv_clean
lv_xml znuma.xml zvm "@ZNUMA@</tmp/zgold.cells" "@MEMORY_BACKING@</tmp/zgold.mb" | lv_define zvm
t0=$(uptime_s)
virsh start zvm >/dev/null || fail "virsh start zvm: $(tail -n 20 $LV$LVLOG)"
zdir=$(ls -d $PMFS/zgold/libvirt/qemu/*-zvm)
ls -lin $zdir
i0=$(stat -c %i $zdir/ram-node0) i1=$(stat -c %i $zdir/ram-node1)
check_eq "ram-node0 and ram-node1: one inode" "$i0" "$i1"
zd=$(dom_of_file $zdir/ram-node0)
[ -n "$zd" ] || fail "no domain for $zdir/ram-node0: $(ls $DOMSYS)"
info "domain $zd, windows: $(cat $DOMSYS/$zd/windows | tr '\n' ';')"
pw=$(awk '$1 == "pool" { print $3 }' $DOMSYS/$zd/windows)
check_eq "pool window: 75% of 256 MiB" $((192 * MiB)) "$pw"
con=$(lv_console zvm)
wait_for 400 grep -q "INNER NODE1" $con || fail "the zNUMA guest did not boot: $(cat $con)"
info "guest, $(since $t0) s after virsh start: $(grep 'INNER NODE' $con | tr '\n' ' ')"
grep -q "INNER NODE1 CPUS \[\] " $con || fail "guest node 1 has CPUs: $(grep NODE1 $con)"
kb=$(sed -n 's/.*INNER NODE1 CPUS \[\] MemTotal: \([0-9]*\) kB.*/\1/p' $con)
# node 1's MemTotal: the window less the guest's reserved memory (its
# struct pages, about 1.6%, and what firmware reserves at the top)
[ "$kb" -le $((pw / 1024)) ] && [ "$kb" -ge $((pw / 1024 * 90 / 100)) ] ||
	fail "guest node 1 has $kb kB, the pool window is $((pw / 1024)) kB"
info "ok: guest node 1 has no CPUs and $((kb / 1024)) MiB of the pool window's $((pw / MiB)) MiB"

# --- 2. another profile, another owner ---
poolctl profile create silver --local 50% --pool 50% --owner tenant --libvirt > /tmp/silver.out
sed -n '/<memoryBacking>/,/<\/memoryBacking>/p' /tmp/silver.out > /tmp/silver.mb
poolctl vm create tnv --size 64M --pool 64M --libvirt | grep -v '^<!--' > /tmp/tnv.xml
check_eq "the named domain's file before" "0:0 600" "$(stat -c '%u:%g %a' $PMFS/tnv)"
lv_up "$(grep '^memory_backing_dir = ' /tmp/silver.out)"	# restarts libvirtd
virsh domstate zvm | grep -q running || fail "zvm did not survive libvirtd's restart: $(virsh domstate zvm)"
lv_xml tenant.xml tvm "@MEMORY_BACKING@</tmp/silver.mb" "@NVDIMM@</tmp/tnv.xml" | lv_define tvm
virsh start tvm >/dev/null || fail "virsh start tvm: $(tail -n 20 $LV$LVLOG)"
tdir=$(ls -d $PMFS/silver/libvirt/qemu/*-tvm)
ls -ln $tdir
zq=$(lv_qemu_pid zvm) tq=$(lv_qemu_pid tvm)
check_eq "zvm's QEMU runs as" 64055 "$(awk '/^Uid:/ { print $2 }' /proc/$zq/status)"
check_eq "tvm's QEMU runs as" 1000 "$(awk '/^Uid:/ { print $2 }' /proc/$tq/status)"
check_eq "zvm's directory" "64055:64055 700" "$(stat -c '%u:%g %a' $zdir)"
check_eq "tvm's directory" "1000:64055 700" "$(stat -c '%u:%g %a' $tdir)"
check_eq "tvm's boot RAM" "1000:64055" "$(stat -c '%u:%g' $tdir/ram-node0)"
check_eq "the named domain's file, relabelled by libvirt" "1000:64055" "$(stat -c '%u:%g' $PMFS/tnv)"
td=$(dom_of_file $tdir/ram-node0)
check_eq "tvm's RAM: the silver profile's quotas" "$((64 * MiB)) $((64 * MiB))" \
	"$(dom_attr $td local_quota_bytes) $(dom_attr $td pool_quota_bytes)"
# each QEMU's credentials (uid, gid, groups) can't open the other's files
as_qemu() { # PID CMD...: run CMD with QEMU PID's uid, gid and groups
	local pid=$1 u g gs
	shift
	u=$(awk '/^Uid:/ { print $2 }' /proc/$pid/status)
	g=$(awk '/^Gid:/ { print $2 }' /proc/$pid/status)
	gs=$(awk '/^Groups:/ { $1 = ""; print }' /proc/$pid/status | xargs | tr ' ' ,)
	[ -n "$gs" ] && gs=--groups=$gs || gs=--clear-groups
	lv /usr/bin/setpriv --reuid=$u --regid=$g $gs -- "$@"
}
denied() { # WHO PID FILE: QEMU PID's credentials get EACCES opening FILE
	local out
	out=$(as_qemu $2 sh -c "exec 3<>$3" 2>&1) && fail "$1's QEMU user opened $3"
	echo "$out" | grep -q "Permission denied" || fail "$1's QEMU user, opening $3: $out"
}
denied zvm $zq $tdir/ram-node0
denied zvm $zq $PMFS/tnv
denied tvm $tq $zdir/ram-node0
as_qemu $zq sh -c "exec 3<>$zdir/ram-node0" || fail "zvm's QEMU user can't open its own file: the check proves nothing"
as_qemu $tq sh -c "exec 3<>$PMFS/tnv" || fail "tvm's QEMU user can't open its own NVDIMM"
info "ok: each QEMU's user opens its own files and not the other's"

# --- 3. destroy both: every directory, domain and byte back ---
virsh destroy tvm >/dev/null
check_eq "the named domain's file after, restored by libvirt" "0:0 600" "$(stat -c '%u:%g %a' $PMFS/tnv)"
virsh destroy zvm >/dev/null
virsh undefine tvm >/dev/null
virsh undefine zvm >/dev/null
gone() { [ ! -e $zdir ] && [ ! -e $tdir ]; }
wait_for 20 gone || fail "libvirt left $(ls -d $zdir $tdir 2>/dev/null)"
[ ! -e $DOMSYS/$zd ] && [ ! -e $DOMSYS/$td ] || fail "domains outlived their VMs: $(ls $DOMSYS)"
poolctl vm destroy tnv >/dev/null
# poolmem's own count exactly; the nodes' meminfo within 8 MiB (the rig's
# kernel and the nested QEMUs spill a little page cache and slab onto the
# pool nodes when node 0 is short)
back() { [ $(pools_alloc) -eq $abase ] && [ $(($(pools_used_kb) - base)) -le 8192 ]; }
wait_for 20 back || fail "the pools still hold $((($(pools_alloc) - abase) / MiB)) MiB, their nodes use $((($(pools_used_kb) - base) / 1024)) MiB more than before"
info "both VMs destroyed: directories, domains and memory back (pool nodes within $(($(pools_used_kb) - base)) KiB) (the first profile's directory after libvirtd's restart too)"
lv_stop_daemon
rm -r $PMFS/zgold/libvirt $PMFS/silver/libvirt
poolctl profile remove zgold >/dev/null
poolctl profile remove silver >/dev/null
