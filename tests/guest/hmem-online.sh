# rig-topologies: hmem
# THEORY OF OPERATION: memory the firmware reserves (Soft Reserved, as for a
# CXL volatile expander) comes as dax_hmem devices on dynamic dax regions.
# Progressive onlining (--async) splits such a device so that the first
# piece's memmap and block devices are all kmem sets up before the pool is
# usable: the device shrinks to --first, then the rest of the region is made
# one more device, bound to kmem and onlined in the background. Checked: the
# device's size when the command returns, the second device, every block
# online and the pool's capacity at the end, memory beyond the first piece
# usable by a VM, the lock that keeps remove away from a running background
# onlining, and remove giving the region back as one devdax device of its
# old size. A synchronous online leaves the device whole.
. /rig/tests/lib/common.sh
pm_load
pm_clean
daxsys=/sys/bus/dax/devices
dev_size() { cat $daxsys/$1/size; }
region_devs() { # region id: devices of that region with a size
	local d
	for d in $(ls $daxsys); do
		[ "$(cat $daxsys/$d/size)" != 0 ] || continue
		case $d in dax$1.*) echo $d ;; esac
	done
}
set -- $(ls $daxsys | sort)
[ $# -eq 2 ] || fail "expected two hmem dax devices, got: $*"
da=$1 db=$2
ra=${da#dax}; ra=${ra%%.*}
# 6.1 names the range after dax_hmem's device (hmem.N); 6.12 after the
# firmware's reservation, with the dax device under it
grep -qE "hmem|Soft Reserved" /proc/iomem || fail "no Soft Reserved memory in /proc/iomem"
[ -e "$(readlink -f $daxsys/$da/..)/dax_region/create" ] || fail "$da: region not dynamic"
full=$(dev_size $da)
check_eq "$da: 1 GiB" $((1024 * MiB)) $full
# online blocks of node $1, counted without onlining any (online_node_blocks would)
online_blocks() {
	local n=0 b
	for b in $(node_blocks "$1"); do [ "$(cat $MEMSYS/$b/state)" != online ] || n=$((n + 1)); done
	echo $n
}

# --- progressive: the device is split ---
out=$(poolctl pool online $da --name ha --async --first 256M)
echo "$out"
echo "$out" | grep -qE "^ha: onlined 2 of 8 blocks \(256.0 MiB\) of $da on node [0-9]+ .*background as a second dax device" ||
	fail "async summary: $out"
check_eq "$da shrunk to the first piece when the command returned" $((256 * MiB)) "$(dev_size $da)"
async_done() { ! poolctl pool show ha --json | grep -q '"state": "running"'; }
wait_for 60 async_done || fail "background onlining did not finish: $(poolctl pool show ha)"
poolctl pool show ha --json | grep -q '"state": "done"' || fail "background onlining: $(poolctl pool show ha)"
na=$(pool_attr ha node)
check_eq "ha: every block of node $na online" 8 "$(online_blocks $na)"
check_eq "ha: capacity = the whole device" $full "$(pool_attr ha capacity_bytes)"
devs=$(region_devs $ra | xargs)
echo "region $ra: $devs"
# the first piece, then the rest as one device: a piece costs a device
# made and bound to kmem, so only the first is small
check_eq "region $ra: the device and one more" 2 "$(echo $devs | wc -w)"
check_eq "piece sizes" "256 768" \
	"$(for d in $devs; do echo $(($(dev_size $d) / MiB)); done | sort -n | xargs)"
for d in $devs; do
	check_eq "$d: kmem" kmem "$(basename $(readlink $daxsys/$d/driver))"
done
piece=$(echo $devs | tr ' ' '\n' | grep -vx $da | head -n1)
poolctl pool show ha
poolctl pool show ha | grep -qE "^  device +$da \(256.0 MiB at 0x[0-9a-f]+\) <- hmem hmem\.[0-9]+$" ||
	fail "pool show does not name $da and its hmem device"
check_eq "pool show --json names the device and a piece" 2 \
	"$(poolctl pool show ha --json | grep -cE "\"dax\": \"($da|$piece)\"")"

# memory beyond the first piece serves a VM (768 MiB > 256 MiB)
poolctl vm create hv --size 768M --pool 768M --pools ha >/dev/null
pmtest touch hv 0 768M >/dev/null || fail "touching 768 MiB of pool ha"
check_eq "hv: every chunk in ha" 384 "$(dom_pool_chunks hv ha)"
poolctl vm destroy hv >/dev/null

# remove waits for a running background onlining (its lock)
# (a process that holds it as the background one does: a subshell takes it
# on fd 9, then becomes sleep; killing that lets go of it)
(exec 9>/run/poolctl/ha.lock && flock 9 && exec sleep 60) &
holder=$!
held() { ! flock -n /run/poolctl/ha.lock true; }
wait_for 10 held || fail "the test's lock holder did not take the lock"
expect_exit 4 "^poolctl: ha: onlining continues in the background; wait for it" poolctl pool remove ha
expect_exit 4 "^poolctl: ha: onlining continues in the background" poolctl pool offline ha
kill $holder
wait $holder 2>/dev/null || true

# --- remove: one device of the old size again ---
out=$(poolctl pool remove ha)
echo "$out"
echo "$out" | grep -q "^ha: $da handed back to devdax whole (1.0 GiB, 1 piece deleted)" || fail "remove: $out"
check_eq "$da: whole again" $full "$(dev_size $da)"
check_eq "$da: devdax" device_dax "$(basename $(readlink $daxsys/$da/driver))"
check_eq "region $ra: one device" "$da" "$(region_devs $ra | xargs)"
[ ! -e /run/poolctl/ha.pieces ] || fail "pieces file left behind"

# --- and again, after the merge (the region is reusable) ---
poolctl pool online $da --name ha --async --first 512M >/dev/null
wait_for 60 async_done || fail "second background onlining did not finish: $(poolctl pool show ha)"
poolctl pool show ha --json | grep -q '"state": "done"' || fail "second background onlining: $(poolctl pool show ha)"
check_eq "ha: capacity after a second split" $full "$(pool_attr ha capacity_bytes)"
check_eq "ha: every block online after a second split" 8 "$(online_blocks $(pool_attr ha node))"
poolctl pool remove ha >/dev/null
check_eq "$da: whole after the second remove" $full "$(dev_size $da)"

# --- synchronous: no split ---
poolctl pool online $db --name hb >/dev/null
check_eq "$db: synchronous online keeps it whole" $full "$(dev_size $db)"
check_eq "hb: capacity" $full "$(pool_attr hb capacity_bytes)"
[ ! -e /run/poolctl/hb.pieces ] || fail "synchronous online recorded pieces"
poolctl pool remove hb >/dev/null
check_eq "$db: devdax after remove" device_dax "$(basename $(readlink $daxsys/$db/driver))"
