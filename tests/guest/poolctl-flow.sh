# rig-topologies: cxl2 nvdimm-numa
# rig-boot: own
# rig-debug: skip poolctl's flows; the ioctls and onlining paths it drives run on the debug kernel in pm-smoke, pm-operator, pm-offline and pm-lifetime
# THEORY OF OPERATION: the operator's flow with poolctl alone, checked
# against the module's sysfs and node meminfo: online two devdax devices as
# pools (one synchronously, one --async with a 256M first step), create two
# VMs with different policies, touch their memory, compare show/map/--json
# with sysfs, destroy, offline, remove (device back to devdax). Every failure
# path gives one line naming the object and the cause, the documented exit
# code, and leaves nothing half-done.
. /rig/tests/lib/common.sh
pm_load
pm_clean
# the loaded module's ABI is poolctl's, and --version says so (sysfs, no root needed)
ours=$(poolctl --version | sed -n 's/.*(kernel ABI \([0-9]*\))$/\1/p')
check_eq "/sys/kernel/poolmem/abi_version" "$ours" "$(cat /sys/kernel/poolmem/abi_version)"
check_eq "poolctl --version, the module's line" "module: kernel ABI $ours" "$(poolctl --version | sed -n 2p)"
set -- $(make_devdax)
[ $# -eq 2 ] || fail "expected two dax devices, got: $*"
da=$1 db=$2

# --- failure paths before anything exists ---
expect_exit 3 "^poolctl: dax9.9: no such dax device" poolctl pool online dax9.9
expect_exit 2 "invalid size" poolctl vm create x --size 12Q --pool 12Q
expect_exit 2 "must cover --size" poolctl vm create x --size 64M --local 8M --pool 8M
expect_exit 2 "" poolctl vm create
expect_exit 3 "^poolctl: poolmem: module not loaded" poolctl --sysfs /tmp pool list
expect_exit 4 "control: cannot open: Permission denied" pmtest run-as 65534 65534 poolctl vm destroy x


# --- online: synchronous ---
out=$(poolctl pool online $da --name pa)
echo "$out"
echo "$out" | grep -qE "^pa: onlined [0-9]+ blocks \([0-9.]+ [GM]iB\) of $da on node [0-9]+ in [0-9.]+ s" ||
	fail "summary line: $out"
na=$(pool_attr pa node)
check_eq "pa: node blocks online" "$(node_blocks $na | wc -w)" "$(online_node_blocks $na)"
check_eq "pa: capacity = node MemTotal" $(($(node_memtotal_kb $na) * 1024)) "$(pool_attr pa capacity_bytes)"
check_eq "pa: zone" Movable "$(cat $MEMSYS/$(node_blocks $na | head -n1)/valid_zones)"

# a failed online leaves the device as it was (duplicate pool name -> rollback)
expect_exit 4 "^poolctl: pa: cannot register pool: a pool of that name exists" poolctl pool online $db --name pa
check_eq "$db still devdax after the refused online" device_dax "$(basename $(readlink /sys/bus/dax/devices/$db/driver))"

# --- online: progressive ---
t0=$(uptime_s)
out=$(poolctl pool online $db --name pb --async --first 256M)
t1=$(uptime_s)
echo "$out"
echo "$out" | grep -qE "^pb: onlined 2 of [0-9]+ blocks .*continues in the background" || fail "async summary: $out"
async_done() { poolctl pool show pb --json | grep -q '"state": "done"'; }
wait_for 60 async_done || fail "background onlining did not finish: $(poolctl pool show pb)"
nb=$(pool_attr pb node)
check_eq "pb: node blocks online" "$(node_blocks $nb | wc -w)" "$(online_node_blocks $nb)"
poolctl pool list
check_eq "pool list --json pools" 2 "$(poolctl pool list --json | grep -c '"name"')"

# --- VMs ---
out=$(poolctl vm create web1 --size 64M --local 16M --pool 48M --tier-policy interleave --pool-select round-robin)
echo "$out"
check_eq "file path line" /run/poolmem/web1 "$(echo "$out" | head -n1)"
echo "$out" | grep -q -- "-object memory-backend-file,id=mem-web1,mem-path=/run/poolmem/web1,size=67108864,share=on,align=2097152 -machine memory-backend=mem-web1 -m 64M" ||
	fail "QEMU argument: $out"
poolctl vm create db --size 32M --pool 32M --tier-policy pool-first --pool-select smart-idle --pools pb \
	--owner tenant --mode 0600 >/dev/null
check_eq "db owner" "1000 1000" "$(stat -c '%u %g' /run/poolmem/db)"
poolctl vm create lv --size 16M --pool 16M --libvirt | grep -q "<path>/run/poolmem/lv</path>" || fail "libvirt snippet"
# --json: what a script starts QEMU with
out=$(poolctl vm create js --size 16M --pool 16M --json) || fail "vm create --json: $out"
for kv in '"name":"js"' '"created":true' '"path":"/run/poolmem/js"' '"size_bytes":16777216' '"chunk_bytes":2097152'; do
	echo "$out" | tr -d ' \n' | grep -qF "$kv" || fail "vm create --json: no $kv: $out"
done
echo "$out" | grep -q '"qemu_arguments": ".*mem-path=/run/poolmem/js,size=16777216' || fail "vm create --json arguments: $out"
poolctl vm destroy js >/dev/null
poolctl vm destroy lv >/dev/null

expect_exit 4 "^poolctl: web1: cannot create domain: a domain of that name exists" \
	poolctl vm create web1 --size 64M --pool 64M
expect_exit 4 "^poolctl: huge: cannot create domain: pool tier on every pool asks 64.0 GiB, .* left of " \
	poolctl vm create huge --size 64G --pool 64G
expect_exit 3 "^poolctl: nosuchuser: no such user" poolctl vm create x --size 16M --pool 16M --owner nosuchuser
expect_exit 3 "^poolctl: nosuch: no such domain" poolctl vm show nosuch

# pinnable (VFIO/RDMA): both pools are onlined movable, so only local DRAM qualifies
check_eq "pool list --json pinnable_bytes" "0 0" \
	"$(poolctl pool list --json | sed -n 's/^ *"pinnable_bytes": \([0-9]*\),*/\1/p' | xargs)"
expect_exit 4 "^poolctl: pin: cannot create domain: pinnable pool tier .*--zone normal" \
	poolctl vm create pin --size 16M --pool 16M --pinnable
poolctl vm create pin --size 16M --local 16M --pinnable >/dev/null
poolctl vm show pin | grep -q "^  pinning pinnable" || fail "vm show: $(poolctl vm show pin)"
poolctl vm show pin --json | grep -q '"pinnable": true' || fail "vm show --json: no pinnable"
poolctl vm show web1 --json | grep -q '"pinnable": false' || fail "web1 --json: pinnable not false"
poolctl vm destroy pin >/dev/null

pmtest touch web1 0 64M >/dev/null
pmtest run-as 1000 1000 pmtest touch db 0 32M >/dev/null
poolctl vm list
poolctl vm show web1
poolctl vm map web1
poolctl status

j=$(poolctl vm show web1 --json)
for f in local_bytes pool_bytes chunks faults; do
	check_eq "vm show --json $f = sysfs" "$(dom_attr web1 $f)" \
		"$(echo "$j" | sed -n "s/^  \"$f\": \([0-9]*\),*/\1/p")"
done
check_eq "web1 interleave 16:48" "$((16 * MiB)) $((48 * MiB))" "$(dom_attr web1 local_bytes) $(dom_attr web1 pool_bytes)"
maptotal=$(poolctl vm map web1 --json | sed -n 's/.*"length": \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }')
check_eq "vm map --json covers the domain" $((64 * MiB)) "$maptotal"
check_eq "db all in pb" 16 "$(dom_pool_chunks db pb)"
# one "tier_policy" per domain object (the host's counts have a "sigbus" too)
check_eq "status --json domains" 2 "$(poolctl status --json | grep -c '"tier_policy"')"
check_eq "status --json counts" 1 "$(poolctl status --json | grep -c '"admission_refusals"')"
poolctl top --iterations 2 --interval 0.2 >/dev/null

# --- pool show names the hardware: dax device, region, memdevs, zone ---
show=$(poolctl pool show pa)
echo "$show"
echo "$show" | grep -qE "^  device     $da \([0-9.]+ [MG]iB at 0x[0-9a-f]+\) <- (cxl|nvdimm) region[0-9]+$" ||
	fail "pool show: no device chain line for $da"
echo "$show" | grep -qE "^  zone       [0-9]+ blocks Movable$" || fail "pool show: no zone line"
if [ -d /sys/bus/cxl/devices/mem0 ]; then
	m=$(echo "$show" | sed -n 's/^  memdev     \(mem[0-9]*\) serial \(0x[0-9a-f]*\).*/\1 \2/p' | head -n1)
	[ -n "$m" ] || fail "pool show: no CXL memdev line"
	set -- $m
	check_eq "$1 serial in pool show = sysfs" "$(cat /sys/bus/cxl/devices/$1/serial)" "$2"
	case $2 in 0xc0ffee0[12]) ;; *) fail "$1: serial $2, the rig sets 0xc0ffee01/02 (cxl2.sh sn=)" ;; esac
	check_eq "pool show --json memdev" "$1" \
		"$(poolctl pool show pa --json | sed -n 's/.*"name": "\(mem[0-9]*\)".*/\1/p' | head -n1)"
fi

# --- offline and remove refuse while chunks live there, naming the domains ---
expect_exit 4 "^poolctl: pb: cannot offline: chunks of domains live there: .*db \(16 chunks\)" poolctl pool offline pb
expect_exit 4 "^poolctl: pa: cannot remove: chunks of domains live there: web1" poolctl pool remove pa

# --check: the checks alone; web1 stays
out=$(poolctl vm destroy web1 --check) || fail "vm destroy web1 --check: $out"
echo "$out" | grep -q "^web1: destroy would go ahead (" || fail "vm destroy --check: $out"
[ -d $DOMSYS/web1 ] || fail "vm destroy --check destroyed web1"
poolctl vm destroy web1
poolctl vm destroy db
check_eq "pools empty" "0 0" "$(pool_attr pa allocated_bytes) $(pool_attr pb allocated_bytes)"
out=$(poolctl pool offline pb --check) || fail "pool offline pb --check: $out"
echo "$out" | grep -q "^pb: offline would go ahead: no chunk there, [0-9]* blocks on node $nb$" || fail "pool offline --check: $out"
out=$(poolctl pool remove pa --check) || fail "pool remove pa --check: $out"
check_eq "pb: blocks still online after the checks" "$(node_blocks $nb | wc -l)" "$(online_node_blocks $nb)"
[ -d $POOLSYS/pa ] || fail "pool remove --check removed pa"
poolctl pool offline pb
check_eq "pb: blocks online after offline" 0 "$(node_blocks $nb | while read b; do grep -l online $MEMSYS/$b/state; done | wc -l)"
poolctl pool show pb | grep -q "^  zone       no block online$" || fail "pool show pb after offline: $(poolctl pool show pb)"
# the way back from pool offline: pool online POOL
cap=$(node_blocks $nb | wc -l)
out=$(poolctl pool online pb)
echo "$out"
echo "$out" | grep -qE "^pb: onlined $cap blocks \([0-9.]+ [MG]iB\) again on node $nb in [0-9.]+ s, zone movable$" ||
	fail "re-online summary: $out"
check_eq "pb: blocks online again" "$cap" "$(online_node_blocks $nb)"
check_eq "pb: capacity back" $(($(node_memtotal_kb $nb) * 1024)) "$(pool_attr pb capacity_bytes)"
poolctl vm create back --size 16M --pool 16M --pools pb >/dev/null
pmtest touch back 0 16M >/dev/null
check_eq "chunks on the re-onlined pool" 8 "$(dom_pool_chunks back pb)"
# the verbs' results in --json, for scripts (Documentation/json.md)
out=$(poolctl vm destroy back --json) || fail "vm destroy --json: $out"
echo "$out" | grep -q '"destroyed": true' && echo "$out" | grep -q "\"held_bytes\": $((16 * MiB))" ||
	fail "vm destroy --json: $out"
out=$(poolctl pool offline pb --json) || fail "pool offline --json: $out"
echo "$out" | grep -q '"offlined": true' && echo "$out" | grep -q "\"blocks\": $cap" || fail "pool offline --json: $out"
out=$(poolctl pool online pb --json) || fail "pool online pb --json: $out"
echo "$out" | grep -q '"onlined": true' && echo "$out" | grep -q "\"blocks\": $cap," ||
	fail "pool online --json: $out"
check_eq "pb: blocks online after online --json" "$cap" "$(online_node_blocks $nb)"
poolctl pool offline pb >/dev/null
poolctl pool remove pa
out=$(poolctl pool remove pb --json) || fail "pool remove --json: $out"
echo "$out" | grep -q '"removed": true' && echo "$out" | grep -A2 '"devices"' | grep -q "\"$db\"" ||
	fail "pool remove --json: $out"
check_eq "pools after remove" "" "$(ls $POOLSYS)"
for d in $da $db; do
	check_eq "$d back to devdax" device_dax "$(basename $(readlink /sys/bus/dax/devices/$d/driver))"
done

# --- pool add --node: memory online already (as firmware leaves it) ---
expect_exit 2 "^poolctl: --node 0: the node has CPUs" poolctl pool add dram --node 0
daxctl reconfigure-device --mode=system-ram $da >/dev/null 2>&1 || fail "$da: system-ram"
nf=$(dax_node $da)
blocks=$(online_node_blocks $nf)
[ "$blocks" -gt 0 ] || fail "node $nf: no block online"
out=$(poolctl pool add fw --node $nf)
echo "$out"
echo "$out" | grep -qE "^fw: node $nf \([0-9.]+ [MG]iB online\) registered as a pool$" || fail "pool add: $out"
poolctl pool show fw | grep -q "registered as it was (pool add --node)" || fail "pool show fw: $(poolctl pool show fw)"
expect_exit 4 "^poolctl: fw2: cannot register pool: .*" poolctl pool add fw2 --node $nf
poolctl vm create onfw --size 16M --pool 16M --pools fw >/dev/null
pmtest touch onfw 0 16M >/dev/null
check_eq "chunks on the added pool" 8 "$(dom_pool_chunks onfw fw)"
poolctl vm destroy onfw >/dev/null
out=$(poolctl pool remove fw)
echo "$out" | grep -q "^fw: unregistered; node $nf's memory stays online$" || fail "pool remove fw: $out"
check_eq "node $nf blocks still online after remove" "$blocks" "$(node_blocks $nf | while read b; do grep -l online $MEMSYS/$b/state; done | wc -l)"
info "pass"
