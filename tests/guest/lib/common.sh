# Helpers for guest tests (sourced inside the QEMU guest).
# A test exits 0 to pass, 77 to skip, anything else to fail; the rig's /init
# also fails it when dmesg shows Call Trace, BUG: or WARNING: afterwards.

TEST=$(basename "$0" .sh)
err() { echo "$TEST: FAIL at line $1" >&2; exit 1; }
trap 'err $LINENO' ERR
set -e

fail() { echo "$TEST: FAIL: $*" >&2; exit 1; }
skip() { echo "$TEST: SKIP: $*" >&2; exit 77; }
info() { echo "$TEST: $*"; }

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	info "ok: $1 = $3"
}

# Ask the host runner to do something (scripts/rig/qmp.py actions).
host_request() { echo "@@RIG HOST $*"; }

# bench_goal ID OP TARGET FIGURE LO HI UNIT GOAL: a bench's goal and what it
# measured (make bench judges it: scripts/bench-verdict). OP is <= < >= >;
# LO and HI bound FIGURE (the rounds' spread, or empty); GOAL says it in
# words.
bench_goal() { echo "goal:$1|$8|$2|$3|$4|$5|$6|$7"; }
# min_max: the smallest and largest of the numbers on stdin, "LO HI"
min_max() { grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }'; }

# fault_inject DIR PROBABILITY: a fault attribute (Documentation/
# fault-injection) failing every time its probability says, quietly, for
# ever (until the probability is 0 again)
fault_inject() {
	echo 0 > $1/verbose
	echo 1 > $1/interval
	echo -1 > $1/times
	echo 0 > $1/space
	echo $2 > $1/probability
}

# mem_settle: a stable reading of free memory next: page cache dropped, the
# per-CPU page lists drained (compaction drains them) and counted, the
# per-CPU counter deltas folded in (stat_refresh); without it node 0's
# MemFree jumps by tens of MiB from one second to the next
mem_settle() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo 1 > /proc/sys/vm/compact_memory
	echo 1 > /proc/sys/vm/stat_refresh
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
	local t=$1 i=0; shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt $((t * 5)) ] || return 1
		sleep 0.2
	done
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }

# pm_scale N: an iteration count for a stress loop, N on Debian's kernel and
# N/4 on the debug kernel (KASAN, lockdep and kmemleak under TCG run the
# same loops 10-20x slower; the same code paths still run many times), and
# N/4 on cxl2, whose memory QEMU emulates a load or store at a time (its
# stress loops took 15x their nvdimm-numa time; they run whole there).
pm_scale() {
	case "$(uname -r) $(cat /proc/cmdline)" in
	*-pmdbg\ * | *rigtopo=cxl2*) echo $(($1 / 4 > 0 ? $1 / 4 : 1)) ;;
	*) echo "$1" ;;
	esac
}

MEMSYS=/sys/devices/system/memory
NODESYS=/sys/devices/system/node
block_bytes() { printf '%d\n' "0x$(cat $MEMSYS/block_size_bytes)"; }

# Memory blocks (memoryN names) of NUMA node $1.
node_blocks() { ls -d $NODESYS/node$1/memory[0-9]* 2>/dev/null | xargs -n1 basename 2>/dev/null || true; }

# MemTotal of node $1 in KiB.
node_memtotal_kb() { awk '/MemTotal/ { print $4 }' $NODESYS/node$1/meminfo; }

# Online every offline block of node $1 as movable; print how many blocks
# of the node are online afterwards.
online_node_blocks() {
	local n=0 b
	for b in $(node_blocks "$1"); do
		[ "$(cat $MEMSYS/$b/state)" = online ] ||
			echo online_movable > $MEMSYS/$b/state
		[ "$(cat $MEMSYS/$b/state)" = online ] && n=$((n + 1))
	done
	echo $n
}

# The NUMA node (number) a dax device's system-ram memory lives on.
dax_node() { cat /sys/bus/dax/devices/$1/target_node; }

# Make every CXL memdev (own region per root decoder) or NVDIMM namespace a
# devdax device, stopping before system-ram: what "poolctl pool online"
# starts from. Prints the dax device names.
make_devdax() {
	local dec r out ns
	ndctl list >/dev/null 2>&1 || true
	if [ -d /sys/bus/cxl/devices/mem0 ]; then
		wait_for 20 cxl_pmem_ready || fail "cxl_pmem: nvdimm bridge or pmem devices missing"
		for dec in $(ls -d /sys/bus/cxl/devices/decoder0.* | xargs -n1 basename); do
			ls -d /sys/bus/cxl/devices/$dec/region[0-9]* >/dev/null 2>&1 && continue
			r=$(cxl create-region -d "$dec" -t pmem 2>/dev/null | sed -n 's/.*"region":"\(region[0-9]*\)".*/\1/p')
			[ -n "$r" ] || fail "$dec: cxl create-region failed"
			wait_for 20 ndctl_has_region "$r" || fail "$r: no nvdimm region appeared"
			out=$(ndctl create-namespace -r "$r" -m devdax 2>&1) || fail "$r: ndctl create-namespace failed: $out"
		done
	else
		for ns in $(ls -d /sys/bus/nd/devices/namespace*.0 | xargs -n1 basename); do
			ndctl list -N -n "$ns" 2>/dev/null | grep -q '"mode":"devdax"' && continue
			out=$(ndctl create-namespace -f -e "$ns" -m devdax 2>&1) || fail "$ns: ndctl create-namespace failed: $out"
		done
	fi
	ls /sys/bus/dax/devices/
}

# expect_exit CODE MESSAGE-PATTERN CMD...: CMD must exit with CODE and print
# a line matching MESSAGE-PATTERN (grep -E) on stderr or stdout.
expect_exit() {
	local code=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1) && rc=0 || rc=$?
	[ "$rc" = "$code" ] || fail "'$*': exit $rc, expected $code; output: $out"
	echo "$out" | grep -qE "$pat" || fail "'$*': output does not match '$pat': $out"
	info "ok: '$*' -> exit $code: $out"
}

ndctl_has_region() { ndctl list -R -r "$1" 2>/dev/null | grep -q '"dev"'; }

cxl_pmem_ready() {
	local d=/sys/bus/cxl/devices
	[ -e $d/nvdimm-bridge0/driver ] &&
		[ "$(ls $d | grep -c '^pmem[0-9]')" = "$(ls $d | grep -c '^mem[0-9]')" ] &&
		for p in $(ls $d | grep '^pmem[0-9]'); do [ -e $d/$p/driver ] || return 1; done
}

# Hand every dax device to kmem (blocks stay offline) unless it is already
# in system-ram mode; print the dax device names.
dax_to_system_ram() {
	local dax out
	for dax in $(ls /sys/bus/dax/devices/); do
		if [ "$(basename "$(readlink /sys/bus/dax/devices/$dax/driver)")" != kmem ]; then
			out=$(daxctl reconfigure-device --mode=system-ram --no-online "$dax" 2>&1) ||
				fail "$dax: daxctl reconfigure-device failed: $out"
		fi
		echo "$dax"
	done
}

# Bring every CXL memdev (own pmem region per root decoder) or NVDIMM
# namespace into system-ram through devdax and kmem, blocks left offline.
# Idempotent. Prints the dax device names.
devices_to_system_ram() {
	make_devdax >/dev/null
	dax_to_system_ram
}

# ---- poolmem module helpers ----
POOLSYS=/sys/kernel/poolmem/pools
DOMSYS=/sys/class/poolmem
MiB=1048576

pm_load() {
	lsmod | grep -q '^poolmem ' || modprobe poolmem || fail "modprobe poolmem failed"
	[ -c /dev/poolmem/control ] || fail "/dev/poolmem/control missing"
}

PMFS=/run/poolmem

# kill_procs NAME [ARG]: SIGKILL the processes whose argv[0] is NAME (any
# directory) and, if given, whose argv[1] is ARG; wait up to 20 s for them
# to be gone (their mappings go with them); print their pids. (The rig's
# busybox has no pkill.) One ps for all processes: reading each
# /proc/PID/cmdline through a tr of its own cost a fork per process and
# call, 600 of them in each pm_clean, most of a minute per test on the
# debug kernel.
kill_procs() {
	local p pids
	pids=$(ps -o pid,args | awk -v me=$$ -v name="$1" -v arg="${2:-}" '
		NR > 1 && $1 != me {
			n = split($2, a, "/")
			if (a[n] == name && (arg == "" || $3 == arg)) printf "%s ", $1
		}')
	[ -n "$pids" ] || return 0
	kill -9 $pids 2>/dev/null || true
	for p in $pids; do
		wait_for 20 sh -c "[ ! -d /proc/$p ]" || true
	done
	echo $pids
}

# Destroy every domain and profile a previous test left (a failed test may
# not have cleaned up), so failures do not cascade: QEMUs still running,
# profile directories, named domains.
pm_clean() {
	local d f
	# fault injection a failed test may have left on (debug kernel)
	for f in /sys/kernel/debug/poolmem/fail /sys/kernel/debug/failslab /sys/kernel/debug/fail_page_alloc; do
		[ -w $f/probability ] && echo 0 > $f/probability
	done
	if [ -n "$(kill_procs qemu-system-x86_64)" ]; then
		info "killed a QEMU left by an earlier test"
	fi
	# writers a failed test left running keep their domains mapped
	for f in hammer stamp hold stall xdp-pin; do
		if [ -n "$(kill_procs pmtest $f)" ]; then
			info "killed a pmtest $f left by an earlier test"
		fi
	done
	# a cluster agent and its etcd a failed test left (pm-cluster-agent):
	# the agent keeps its pool's node and blocks
	for f in poolmem-agent etcd; do
		if [ -n "$(kill_procs $f)" ]; then
			info "killed a $f left by an earlier test"
		fi
	done
	for d in $(pmtest pool-list 2>/dev/null); do
		case $d in p[0-9]*) continue ;; esac
		if poolctl pool remove "$d" >/dev/null 2>&1; then
			info "removed pool $d left by an earlier test"
		fi
	done
	# pools a failed test left draining take no chunks
	for d in $(pmtest pool-list 2>/dev/null); do
		if [ "$(cat $POOLSYS/$d/state 2>/dev/null)" = draining ]; then
			pmtest drain "$d" cancel=1 >/dev/null 2>&1 || true
			info "ended the draining of pool $d left by an earlier test"
		fi
	done
	for d in $(pmtest profile-list 2>/dev/null); do
		rm -rf "${PMFS:?}/$d"
		info "cleaned up profile $d left by an earlier test"
	done
	for d in $(pmtest domain-list); do
		pmtest domain-destroy "$d" >/dev/null 2>&1 || true
		info "cleaned up domain $d left by an earlier test"
	done
}

# The first line of /sys/class/poolmem/*/profile that names profile $1: its
# domain's name ("<profile>.<inode>"), or nothing.
profile_domain() {
	local f
	for f in $DOMSYS/*/profile; do
		[ -f "$f" ] && [ "$(cat "$f")" = "$1" ] && { basename "$(dirname "$f")"; return; }
	done
	return 0
}

# Free memory of node $1 in kB, as the page allocator sees it: MemFree plus
# the free pages parked on per-cpu lists (/proc/zoneinfo "count:", in
# pages), which MemFree does not include: order-0 frees, and 2 MiB ones,
# land there.
node_memfree_kb() {
	local mf pcp
	mf=$(awk '/MemFree/ { print $4 }' $NODESYS/node$1/meminfo)
	pcp=$(awk -v n="$1" '/^Node/ { node = $2; sub(",", "", node) } node == n && $1 == "count:" { s += $2 } END { print s + 0 }' /proc/zoneinfo)
	echo $((mf + pcp * 4))
}

# Zero reserve held on node $1, kB (/sys/kernel/poolmem/zero_reserve).
node_reserve_kb() {
	awk -v n="$1" '$1 == n { printf "%d\n", $3 / 1024; f = 1 } END { if (!f) print 0 }' /sys/kernel/poolmem/zero_reserve 2>/dev/null || echo 0
}

# Free memory of node $1 in kB for poolmem's purposes: node_memfree_kb plus
# the zero reserve there (zeroed memory waiting for new chunks, given back
# on demand: free to a domain, not held by one).
node_free_kb() { echo $(($(node_memfree_kb $1) + $(node_reserve_kb $1))); }

# Used memory of node $1 in kB (MemTotal less node_free_kb).
node_used_kb() { echo $(($(awk '/MemTotal/ { print $4 }' $NODESYS/node$1/meminfo) - $(node_free_kb $1))); }

# Debian's QEMU inside the guest, TCG, no ROM files, with the test firmware
# (tests/guest/bios/pattern-bios.S): it writes a pattern into every page of
# guest RAM, prints D on the debug console $1, waits for the "go" word
# (pmtest guest-check) and exits with status 99. It execs QEMU: run it as
# "pm_qemu ... &" ($! is QEMU's pid) or in a subshell.
PM_QEMU_GUEST_EXIT=99
pm_qemu() { # CONSOLE ARGS...
	local con=$1
	shift
	rm -f "$con"
	exec qemu-system-x86_64 -accel tcg,tb-size=64 -nodefaults -display none -L /nonexistent \
		-bios /rig/bin/pattern-bios.bin -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-debugcon file:"$con" "$@"
}

# Touch all free memory of pool $1's node once, through a domain, before a
# benchmark compares memory of that node: the rig's NVDIMMs are host memfd,
# and the first guest touch of a page costs the host a fault that later
# touches don't pay (a 2 GiB prealloc took 7x longer on a fresh node).
pm_warm_pool() {
	local mib
	mib=$((($(node_memfree_kb "$(pool_attr "$1" node)") / 1024 - 128) / 2 * 2))
	pmtest domain-create pm-warm ${mib}M 0 ${mib}M tier=pool-first pools="$1" >/dev/null ||
		fail "warm-up domain of $mib MiB on $1"
	pmtest touch pm-warm 0 ${mib}M >/dev/null || fail "warm-up of $mib MiB on $1"
	pmtest domain-destroy pm-warm >/dev/null
}

# Benchmarks: the pool nodes are host memory (memfd) that the host maps on
# first touch; touch all of each named pool once, so that no measurement
# pays for it. pm_warm_pools POOL...
pm_warm_pools() {
	local p w
	for p in "$@"; do
		w=$(( $(pool_attr $p free_bytes) / MiB / 2 * 2 - 64 ))
		pmtest domain-create warm ${w}M 0 ${w}M pools=$p >/dev/null || fail "warm-up of $p"
		pmtest touch warm 0 ${w}M >/dev/null
		pmtest domain-destroy warm >/dev/null
	done
}

# Bring the topology's far memory online and register one pool per node,
# named p0, p1, ... in node order. Prints nothing; sets POOL_NODES.
pm_pools_up() {
	local daxes dax node i=0
	pm_load
	pm_clean
	daxes=$(devices_to_system_ram)
	POOL_NODES=$(for dax in $daxes; do dax_node "$dax"; done | sort -n | xargs)
	for node in $POOL_NODES; do
		online_node_blocks "$node" >/dev/null
		if [ ! -d $POOLSYS/p$i ]; then
			pmtest pool-add p$i "$node" >/dev/null || fail "pool p$i on node $node: add failed"
		fi
		i=$((i + 1))
	done
}

# quota_samples VM...: every 0.5 s, a line "VM local_quota local pool_quota
# pool" (bytes, sysfs) per domain that exists, then "--"; runs until killed
# (start it in the background, redirected to a file: the autopilot and
# rebalancing tests judge quotas and budgets from it).
quota_samples() {
	local v
	while :; do
		for v in "$@"; do
			[ -d $DOMSYS/$v ] || continue
			printf '%s %s %s %s %s\n' $v $(cat $DOMSYS/$v/local_quota_bytes $DOMSYS/$v/local_bytes \
				$DOMSYS/$v/pool_quota_bytes $DOMSYS/$v/pool_bytes)
		done
		echo --
		sleep 0.5
	done
}

pool_attr() { cat $POOLSYS/$1/$2; }
dom_attr() { cat $DOMSYS/$1/$2; }
# Chunks of domain $1 in pool $2 (from pool_chunks).
dom_pool_chunks() { awk -v p="$2" '$1 == p { print $2 }' $DOMSYS/$1/pool_chunks; }

# expect_errno ERRNO CMD...: CMD must fail with ERRNO (pmtest's message).
expect_errno() {
	local want=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected $want"
	fi
	echo "$out" | grep -q ": $want " || fail "'$*': expected $want, got: $out"
	info "ok: '$*' -> $want"
}
