# rig-topologies: libvirt
# rig-timeout: 600
# rig-debug: skip the real libvirtd in a chroot; the kernel side (POOLMEM_VM_BIND, bound mkdir) is plain fs code that pm-fs's paths cover
# THEORY OF OPERATION: one memory_backing_dir for the host, a profile per
# VM, domains named after their VMs, with the real libvirt daemon and
# poolmem's qemu hook (/etc/libvirt/hooks/qemu.d/poolmem, which runs
# poolctl libvirt hook):
#  1. profiles vms (memory_backing_dir's, the default: 50/50), gold
#     (25/75) and silver (all pool, p1 only); the hook installed, libvirtd
#     started with vms's qemu.conf line;
#  2. web1 names gold in its <metadata> (poolctl's XML), web2 gets silver
#     through virsh metadata --set, a VM with a 29-character name names
#     none (libvirt's directory keeps 20), duo has two NUMA cells in gold,
#     nofile's RAM is anonymous. Started paused (QEMU makes and sizes its
#     RAM files before any guest code runs): each file-backed VM's domain
#     is named after it, with its profile's quotas, its file in libvirt's
#     <id>-<vm> directory under vms; duo's second cell is duo.ram-node1;
#     nofile has no domain; no binding is left waiting;
#  3. web1 destroyed and started again: a new id and directory, the same
#     domain name;
#  4. refusals, each with nothing left behind: a profile that does not
#     exist fails virsh start with the hook's message; a VM too big for
#     silver fails with ENOSPC and the kernel's figures naming the profile
#     and the VM; a start that fails after the hook bound the VM (an
#     unknown network) leaves no binding (the hook's release end);
#  5. the kernel's rules, through the hook: a profile removed after the
#     binding fails the bound mkdir; 256 waiting bindings are the limit;
#  6. everything destroyed: no domain, every byte back on the pool nodes;
#  7. poolmem-tools removed but not purged (poolctl gone, the hook a
#     conffile left): the hook exits 0, so libvirtd still starts a VM, and
#     notes poolctl's absence once.
. /rig/tests/lib/common.sh
. /rig/tests/lib/libvirt.sh
pm_pools_up
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
pools_used_kb() { echo $(($(node_used_kb $n1) + $(node_used_kb $n2))); }
BINDS=/sys/kernel/poolmem/vm_bindings
NS=http://poolmem.org/xmlns/libvirt/1.0

# --- 1. profiles, the hook, the daemon ---
lv_mount
poolctl profile create vms --local 50% --pool 50% --owner libvirt-qemu --libvirt > /tmp/vms.out
poolctl profile create gold --local 25% --pool 75% --owner libvirt-qemu --libvirt > /tmp/pgold.out
poolctl profile create silver --pool 100% --pools p1 --owner libvirt-qemu > /dev/null
conf=$(grep '^memory_backing_dir = ' /tmp/vms.out) || fail "no qemu.conf line in poolctl's output"
sed -n '/<memoryBacking>/,/<\/memoryBacking>/p' /tmp/vms.out > /tmp/vms.mb
sed -n '/<metadata>/,/<\/metadata>/p' /tmp/pgold.out > /tmp/gold.md
grep -q "name='gold'" /tmp/gold.md || fail "no <poolmem:profile> in poolctl's output: $(cat /tmp/pgold.out)"
lv_hook_install
lv_up "$conf"
lv_clean
base=$(pools_used_kb)

# --- 2. five VMs, started paused ---
cells="<cpu><numa><cell id='0' cpus='0' memory='65536' unit='KiB'/><cell id='1' memory='65536' unit='KiB'/></numa></cpu>"
long=tenant-vm-with-a-long-name-07
vm_xml() { # NAME MEMORY-KIB METADATA-FILE-OR-EMPTY [MEMORY_BACKING-FILE-OR-EMPTY]
	local md="@METADATA@=" mb="@MEMORY_BACKING@</tmp/vms.mb"
	[ -z "$3" ] || md="@METADATA@<$3"
	[ $# -lt 4 ] || mb="@MEMORY_BACKING@=$4"
	lv_xml profile.xml "$1" "$mb" "$md" "@MEMORY@=$2"
}
vm_xml web1 131072 /tmp/gold.md | lv_define web1
vm_xml web2 131072 "" | lv_define web2
virsh metadata web2 --uri $NS --key poolmem --set "<profile name='silver'/>" --config ||
	fail "virsh metadata --set on web2"
virsh dumpxml --inactive web2 | grep -q "<poolmem:profile xmlns:poolmem=\"$NS\" name=\"silver\"/>" ||
	fail "web2's XML lacks the metadata virsh set: $(virsh dumpxml --inactive web2 | grep -A2 metadata)"
vm_xml $long 65536 "" | lv_define $long
vm_xml duo 131072 /tmp/gold.md | sed "s|</features>|</features>$cells|" | lv_define duo
vm_xml nofile 65536 "" "" | lv_define nofile
for v in web1 web2 $long duo nofile; do
	virsh start --paused $v > /tmp/start.out 2>&1 || fail "virsh start --paused $v: $(cat /tmp/start.out)"
done
virsh list

# check_vm VM DOMAIN PROFILE LOCAL-QUOTA POOL-QUOTA FILE: VM's DOMAIN was
# made from PROFILE with those quotas, of FILE in libvirt's directory for VM
check_vm() {
	local f dir="[0-9]*-$(echo "$1" | cut -c1-20)"
	[ -d $DOMSYS/$2 ] || fail "VM $1: no domain named $2 (domains: $(ls $DOMSYS | xargs))"
	check_eq "$2: its profile" "$3" "$(dom_attr $2 profile)"
	check_eq "$2: its quotas" "$4 $5" "$(dom_attr $2 local_quota_bytes) $(dom_attr $2 pool_quota_bytes)"
	f=$(dom_attr $2 file)
	# shellcheck disable=SC2254
	case "$f" in /vms/libvirt/qemu/$dir/$6) ;; *) fail "$2: file $f is not $6 in libvirt's directory for $1" ;; esac
	[ -f "$PMFS$f" ] || fail "$2: no file $PMFS$f"
	info "ok: VM $1: domain $2 of $PMFS$f"
}
check_vm web1 web1 gold $((32 * MiB)) $((96 * MiB)) pc.ram
check_vm web2 web2 silver 0 $((128 * MiB)) pc.ram
check_vm $long $long vms $((32 * MiB)) $((32 * MiB)) pc.ram
check_vm duo duo gold $((16 * MiB)) $((48 * MiB)) ram-node0
check_vm duo duo.ram-node1 gold $((16 * MiB)) $((48 * MiB)) ram-node1
[ -z "$(ls $PMFS/vms/libvirt/qemu/ | grep nofile)" ] || fail "nofile's RAM is anonymous, yet libvirt made a directory for it"
check_eq "domains" "5" "$(ls $DOMSYS | wc -l)"
check_eq "bindings waiting" "" "$(cat $BINDS)"

# --- 3. a restart keeps the name ---
id1=$(virsh domid web1)
virsh destroy web1 > /dev/null
wait_for 20 sh -c "[ ! -d $DOMSYS/web1 ]" || fail "web1's domain outlived its QEMU"
virsh start --paused web1 > /dev/null || fail "virsh start web1 again"
id2=$(virsh domid web1)
[ "$id1" != "$id2" ] || fail "web1 kept id $id1: the restart proves nothing"
check_vm web1 web1 gold $((32 * MiB)) $((96 * MiB)) pc.ram
info "ok: web1 restarted as id $id2 (was $id1): its domain is web1 again"

# --- 4. refusals ---
sed "s/name='gold'/name='nosuch'/" /tmp/gold.md > /tmp/nosuch.md
vm_xml bad 65536 /tmp/nosuch.md | lv_define bad
virsh start bad > /tmp/bad.out 2>&1 && fail "bad started with a profile that does not exist"
cat /tmp/bad.out
grep -q "poolctl: VM bad: profile nosuch: no such profile" /tmp/bad.out || fail "libvirt's error lacks the hook's reason: $(cat /tmp/bad.out)"

sed "s/name='gold'/name='silver'/" /tmp/gold.md > /tmp/silver.md
vm_xml huge 3145728 /tmp/silver.md | lv_define huge
dmesg -c > /dev/null
virsh start huge > /tmp/huge.out 2>&1 && fail "a 3 GiB VM started in silver, which has p1's 2 GiB"
cat /tmp/huge.out
grep -q "No space left on device" /tmp/huge.out || fail "libvirt's error does not carry the reason: $(cat /tmp/huge.out)"
dmesg | grep poolmem || true
dmesg | grep -q "poolmem: profile silver: file /vms/libvirt/qemu/[0-9]*-huge/pc.ram: domain huge refused" ||
	fail "the kernel's refusal names neither the profile nor the VM"

# a start that fails after the hook bound the VM: libvirt prepares the
# network before it makes the memory directory
vm_xml lost 65536 /tmp/gold.md |
	sed "s|<memballoon|<interface type='network'><source network='nosuch'/></interface><memballoon|" |
	lv_define lost
virsh start lost > /tmp/lost.out 2>&1 && fail "lost started on a network that does not exist"
cat /tmp/lost.out
check_eq "bindings waiting after three refused starts" "" "$(cat $BINDS)"
for v in bad huge lost; do
	virsh list --all | grep -q " $v *shut off" || fail "$v is not shut off: $(virsh list --all)"
	[ -z "$(ls $PMFS/vms/libvirt/qemu/ | grep -- "-$v\$")" ] || fail "$v's refused start left its directory"
	virsh undefine $v > /dev/null
done
check_eq "domains after the refusals" "5" "$(ls $DOMSYS | wc -l)"

# --- 5. the kernel's rules, through the hook ---
hook() { # VM ID PROFILE-OR-EMPTY OP SUBOP
	local md=""
	[ -z "$3" ] || md="<metadata><poolmem:profile xmlns:poolmem='$NS' name='$3'/></metadata>"
	echo "<domain id='$2'><name>$1</name><memoryBacking><source type='file'/></memoryBacking>$md</domain>" |
		poolctl libvirt hook "$1" "$4" "$5" -
}
poolctl profile create brief --pool 100% > /dev/null
hook gone 900 brief prepare begin || fail "binding gone to brief"
check_eq "the waiting binding" "gone brief 900-gone" "$(cut -d' ' -f1,2,4 $BINDS)"
poolctl profile remove brief > /dev/null
mkdir $PMFS/vms/900-gone 2> /tmp/mkdir.out && fail "a directory bound to a removed profile was made"
grep -q "No such file" /tmp/mkdir.out || fail "mkdir: $(cat /tmp/mkdir.out)"
dmesg | grep -q "poolmem: directory 900-gone for VM gone: profile brief was removed" ||
	fail "the kernel did not say why the mkdir failed"
i=0
while [ $i -lt 256 ]; do
	hook many$i $i "" prepare begin || fail "binding $i of 256 refused"
	i=$((i + 1))
done
hook many256 256 "" prepare begin 2> /tmp/full.out && fail "a 257th binding was taken"
grep -q "256 bindings already wait" /tmp/full.out || fail "the 257th: $(cat /tmp/full.out)"
# the file holds what fits in a page (182 of these lines), oldest first
check_eq "the oldest binding waiting" "many0 - 0-many0" "$(head -n 1 $BINDS | cut -d' ' -f1,2,4)"
[ "$(wc -c < $BINDS)" -le 4096 ] || fail "vm_bindings runs over its page"
i=0
while [ $i -lt 256 ]; do
	hook many$i $i "" release end || fail "release of many$i"
	i=$((i + 1))
done
check_eq "bindings after 256 releases" "" "$(cat $BINDS)"
info "ok: the 257th binding refused, releases take them back"

# --- 6. clean up ---
for v in web1 web2 $long duo nofile; do
	virsh destroy $v > /dev/null
	virsh undefine $v > /dev/null
done
wait_for 20 sh -c "[ -z \"\$(ls $DOMSYS)\" ]" || fail "domains left: $(ls $DOMSYS | xargs)"

# --- 7. poolmem-tools removed, not purged: its hook stays (a conffile) ---
# With poolctl gone, the hook must not stop libvirt's VMs: it exits 0 and
# notes poolctl's absence once; the VM starts, its RAM file in the backing
# directory's profile.
lv_hook_install
rm -f $LV/usr/local/sbin/poolctl $LV/run/poolmem-libvirt-hook.missing
lv_up "$conf"
vm_xml orphan 65536 /tmp/gold.md | lv_define orphan
virsh start --paused orphan > /tmp/orphan.out 2>&1 ||
	fail "with poolctl removed, the hook stopped a VM's start: $(cat /tmp/orphan.out)"
grep -q "poolctl is missing" $LV/run/poolmem-libvirt-hook.missing ||
	fail "the hook did not note poolctl's absence"
info "ok: poolctl removed: orphan started under libvirtd; the hook noted: $(cat $LV/run/poolmem-libvirt-hook.missing)"
virsh destroy orphan > /dev/null
virsh undefine orphan > /dev/null
rm -f $LV/run/poolmem-libvirt-hook.missing
wait_for 20 sh -c "[ -z \"\$(ls $DOMSYS)\" ]" || fail "orphan's domain outlived its QEMU: $(ls $DOMSYS | xargs)"
lv_hook_remove
rm -r $PMFS/vms/libvirt
for p in vms gold silver; do poolctl profile remove $p > /dev/null; done
used=$(($(pools_used_kb) - base))
[ $used -le 2048 ] || fail "the pool nodes hold $((used / 1024)) MiB more than before the VMs"
info "ok: every domain gone, the pool nodes within $used KiB of before"
