# rig-topologies: hmem nvdimm-numa
# rig-boot: own (booted to online hot-added memory itself, as Debian's 6.12 is)
# rig-append: memhp_default_state=online
# rig-core: yes (6.1 auto-onlines with the same parameter)
# THEORY OF OPERATION: on a kernel that onlines hot-added memory by itself
# (Debian's 6.12 by default: into ZONE_NORMAL, where it can't reliably go
# again), pool online needs no reboot parameter and no --force. Booted with
# memhp_default_state=online (the rig's other boots say offline), with the
# documented commands only:
#  - nvdimm-numa: a devdax device goes to kmem with the kernel's
#    auto-onlining off for the bind (libpoolmem's AutoOnlineOff), so every
#    block comes online in ZONE_MOVABLE, by poolctl; the policy reads
#    "online" again afterwards; a policy left behind by a poolctl that died
#    holding it (auto-online.saved) is restored by the next one;
#  - hmem: dax_hmem's devices were bound to kmem and onlined into
#    ZONE_NORMAL at boot. pool online takes one back (offline) and onlines
#    it movable where the kernel can give it back; where it can't (with
#    auto-onlining, the memmap of a device's later blocks lands in its
#    first block), it is refused naming the block, the blocks stay as they
#    were, and --zone normal adopts the device as it is; --zone normal
#    takes the other as it is.
# A VM's memory on each pool reads back what it wrote.
. /rig/tests/lib/common.sh
pm_load
pm_clean
daxsys=/sys/bus/dax/devices
check_eq "the kernel's auto-online policy at boot" online "$(cat $MEMSYS/auto_online_blocks)"
zones() { # NODE: the zones of its online blocks, counted
	local b
	for b in $(node_blocks "$1"); do
		[ "$(cat $MEMSYS/$b/state)" = online ] && cut -d' ' -f1 $MEMSYS/$b/valid_zones
	done | sort | uniq -c | xargs
}
kmem_bound() { [ "$(basename "$(readlink $daxsys/$1/driver 2>/dev/null)")" = kmem ]; }
# hmem: dax_hmem's devices, bound to kmem at boot; nvdimm-numa: devdax
# namespaces made here (make_devdax)
set -- $(for d in $(ls $daxsys | sort); do [ "$(cat $daxsys/$d/size)" != 0 ] && kmem_bound $d && echo $d; done)
[ $# -ge 2 ] || set -- $(make_devdax)
[ $# -ge 2 ] || fail "expected two dax devices, got: $*"
da=$1 db=$2

if kmem_bound $da; then
	# --- hmem: the kernel bound them to kmem and onlined them at boot ---
	nb=$(cat $daxsys/$da/target_node)
	info "$da at boot: node $nb, $(zones $nb)"
	case "$(zones $nb)" in *Normal*) ;; *) fail "$da: the kernel did not online it into ZONE_NORMAL at boot: $(zones $nb)" ;; esac
	# Taken back where the kernel can give it back. Where it put memory
	# of its own there (with auto-onlining, the memmap of a device's later
	# blocks lands in its first block, online by then), it can't: refused,
	# naming the block, and the device stays as it was.
	if out=$(poolctl pool online $da --name ha 2>&1); then
		echo "$out"
		echo "$out" | grep -q "took back [0-9]* blocks the kernel had onlined into ZONE_Normal itself" ||
			fail "no line saying the blocks were taken back: $out"
		na=$(pool_attr ha node)
		check_eq "ha: every block of node $na online, movable" "$(node_blocks $na | wc -w) Movable" "$(zones $na)"
		info "$da taken back: $(zones $na)"
	else
		echo "$out" | grep -q "^poolctl: $da: [0-9]* of the [0-9]* blocks the kernel onlined into ZONE_Normal by itself can't go offline (memory[0-9]*: .*): --zone normal takes the device as it is" ||
			fail "pool online $da: $out"
		check_eq "$da: its blocks as the kernel left them after the refusal" "$(node_blocks $nb | wc -w) Normal" "$(zones $nb)"
		[ -d $POOLSYS/ha ] && fail "a refused online registered pool ha"
		info "$da can't be taken back: $out"
		out=$(poolctl pool online $da --name ha --zone normal 2>&1) || fail "pool online $da --zone normal: $out"
		check_eq "ha: adopted as it is" "$(node_blocks $nb | wc -w) Normal" "$(zones $(pool_attr ha node))"
	fi
	# the other, as the kernel left it
	nb=$(cat $daxsys/$db/target_node)
	before=$(zones $nb)
	out=$(poolctl pool online $db --name hb --zone normal 2>&1) || fail "pool online $db --zone normal: $out"
	echo "$out" | grep -q "took back" && fail "$db was taken back though --zone normal asks for its zone: $out"
	check_eq "hb: its blocks as the kernel onlined them" "$before" "$(zones $(pool_attr hb node))"
	pools="ha hb"
else
	# --- nvdimm-numa: devdax devices, bound to kmem by poolctl ---
	kmem_bound $db && fail "$db is bound to kmem before anything asked"
	out=$(poolctl pool online $da --name pa 2>&1) || fail "pool online $da with the kernel auto-onlining: $out"
	echo "$out"
	na=$(pool_attr pa node)
	nblk=$(node_blocks $na | wc -w)
	check_eq "pa: every block of node $na online, movable (poolctl's, not the kernel's)" "$nblk Movable" "$(zones $na)"
	check_eq "auto-online policy after pool online" online "$(cat $MEMSYS/auto_online_blocks)"
	[ ! -e /run/poolctl/auto-online.saved ] || fail "auto-online.saved left behind: $(cat /run/poolctl/auto-online.saved)"
	# a poolctl that died holding the policy off left it saved: the next restores it
	echo offline > $MEMSYS/auto_online_blocks
	echo online > /run/poolctl/auto-online.saved
	out=$(poolctl pool online $db --name pb 2>&1) || fail "pool online $db: $out"
	check_eq "pb: every block movable" "$(node_blocks $(pool_attr pb node) | wc -w) Movable" "$(zones $(pool_attr pb node))"
	check_eq "auto-online policy restored from the one a dead poolctl saved" online "$(cat $MEMSYS/auto_online_blocks)"
	[ ! -e /run/poolctl/auto-online.saved ] || fail "auto-online.saved left behind after the restore"
	pools="pa pb"
fi

# memory of each pool serves a VM
for p in $pools; do
	pmtest domain-create v$p 32M 0 32M pools=$p >/dev/null || fail "a domain on $p"
	pmtest fill v$p 0 32M 5 >/dev/null || fail "fill on $p"
	pmtest expect v$p 0 32M 5 >/dev/null || fail "read back on $p"
	check_eq "v$p: all on $p" $((32 * MiB)) "$(dom_attr v$p pool_bytes)"
	pmtest domain-destroy v$p >/dev/null
done
info "pools $pools online with the kernel auto-onlining, no reboot parameter, no --force"
for p in $pools; do
	out=$(poolctl pool remove $p 2>&1) && continue
	# a device taken as it is: the kernel's own memmap block can't go
	# offline; the pool is unregistered and the rest offlined all the same
	echo "$out" | grep -q "^poolctl: $p: cannot offline memory (memory[0-9]* and [0-9]* more)" ||
		fail "pool remove $p: $out"
	[ ! -d $POOLSYS/$p ] || fail "pool remove $p: still registered after: $out"
	info "pool remove $p: $out"
done
check_eq "auto-online policy at the end" online "$(cat $MEMSYS/auto_online_blocks)"
