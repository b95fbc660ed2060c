# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: admission sums what the other domains commit: the
# local quotas of the domains homed on the node, and the pool quotas of
# the domains allowed on any pool the new one may use. The module keeps
# those sums per (home node, pool set) rather than walking every domain
# (issue 33); a debug kernel (CONFIG_DEBUG_VM) checks each bucket against
# a walk after every change and warns. Shown here through the figures of
# a refusal (POOLMEM_DOMAIN_CREATE copies them out), exact:
#  1. sums over pool sets that overlap the asked one, and per home node;
#  2. after creates, destroys, and live changes of quotas and pools
#     (POOLMEM_DOMAIN_SET moves a domain between buckets);
#  3. after a pool's removal takes it out of every domain's pools, which
#     merges the buckets that become one;
#  4. no kernel warning (on the debug kernel: the walk agrees), checked
#     before every figure;
#  5. poolctl capacity's committed bytes and limits are those figures, and
#     as many VMs of a shape as it says fit are admitted, one more is not.
. /rig/tests/lib/common.sh
pm_pools_up
n0=$(pool_attr p0 node)

# committed POOLS: the pool quota MiB the others commit there, from the
# figures a refused request for 64 GiB on POOLS copies out (the kernel's
# log line is rate limited); committed local: the local MiB on the home node
committed() {
	local out
	dmesg | grep -q "poolmem: committed quotas" && fail "bucket and walk disagree: $(dmesg | grep 'committed quotas' | head -n 1)"
	if [ "$1" = local ]; then
		out=$(pmtest domain-create probe 65536M 65536M 0 2>&1) && fail "a 64 GiB local quota was admitted"
	else
		out=$(pmtest domain-create probe 65536M 0 65536M pools=$1 2>&1) && fail "a 64 GiB pool quota was admitted"
	fi
	out=$(echo "$out" | sed -n 's/^refused: why [0-9]* committed \([0-9]*\) limit.*/\1/p')
	[ -n "$out" ] || fail "no refusal with figures for $1"
	echo $((out / MiB))
}
sums() { echo "$(committed p0) $(committed p1) $(committed p0,p1) $(committed local)"; }
# poolctl capacity's figures for the tier TIER ("local", or pools POOLS) are
# the kernel's: the committed bytes and limit a refusal copies out
capacity_is_kernels() { # local | POOLS
	local j k want got
	if [ "$1" = local ]; then
		j=$(poolctl capacity --json | sed -n '/^  "local": {/,/^  }/p')
		k=$(pmtest domain-create probe 65536M 65536M 0 2>&1) && fail "a 64 GiB local quota was admitted"
	else
		j=$(poolctl capacity --pools $1 --json | sed -n '/^  "pool": {/,/^  }/p')
		k=$(pmtest domain-create probe 65536M 0 65536M pools=$1 2>&1) && fail "a 64 GiB pool quota was admitted"
	fi
	want=$(echo "$k" | sed -n 's/^refused: why [0-9]* committed \([0-9]*\) limit \([0-9]*\).*/\1 \2/p')
	got="$(echo "$j" | sed -n 's/.*"committed_bytes": \([0-9]*\).*/\1/p') $(echo "$j" | sed -n 's/.*"limit_bytes": \([0-9]*\).*/\1/p')"
	check_eq "poolctl capacity's committed and limit for $1" "$want" "$got"
}
capacity_all() { for t in local p0 p1 p0,p1; do capacity_is_kernels $t; done; }
check_eq "nothing committed (p0 p1 p0,p1 local)" "0 0 0 0" "$(sums)"

# --- 1. overlapping pool sets, one home node ---
pmtest domain-create a 110M 10M 100M pools=p0 >/dev/null
pmtest domain-create b 80M 20M 60M pools=p1 >/dev/null
check_eq "a on p0, b on p1" "100 60 160 30" "$(sums)"
pmtest domain-create y 34M 4M 30M pools=p0,p1 >/dev/null
check_eq "and y on p0,p1" "130 90 190 34" "$(sums)"
pmtest domain-create y2 30M 0 30M pools=p0,p1 >/dev/null
check_eq "and y2 (the same bucket as y)" "160 120 220 34" "$(sums)"
capacity_all
pmtest domain-destroy y2 >/dev/null
check_eq "y2 gone" "130 90 190 34" "$(sums)"

# --- 2. live changes move a domain between buckets ---
poolctl vm set a --pools p0,p1 >/dev/null || fail "vm set a --pools p0,p1"
check_eq "a on p0,p1" "130 190 190 34" "$(sums)"
poolctl vm set b --pool 80M >/dev/null || fail "vm set b --pool 80M"
check_eq "b's pool quota 80M" "130 210 210 34" "$(sums)"
poolctl vm set y --local 8M >/dev/null || fail "vm set y --local 8M"
check_eq "y's local quota 8M" "130 210 210 38" "$(sums)"
pmtest domain-destroy y >/dev/null
check_eq "y gone" "100 180 180 30" "$(sums)"
capacity_all

# --- 3. a pool's removal: a's set {p0,p1} becomes {p1}, b's bucket ---
pmtest drain p0 >/dev/null || fail "drain p0"
pmtest pool-remove p0 >/dev/null || fail "pool-remove p0"
check_eq "p1 after p0's removal" 180 "$(committed p1)"
pmtest domain-destroy b >/dev/null
check_eq "p1 with b gone (the merged bucket)" 100 "$(committed p1)"
check_eq "local with b gone" 10 "$(committed local)"
pmtest domain-destroy a >/dev/null
check_eq "p1 with a gone" 0 "$(committed p1)"
check_eq "local with a gone" 0 "$(committed local)"
pmtest pool-add p0 $n0 >/dev/null || fail "pool-add p0 again"
check_eq "everything gone (p0 p1 p0,p1 local)" "0 0 0 0" "$(sums)"

# --- poolctl capacity: as many VMs of a shape as it says fit are admitted, one more is not ---
capacity_all
out=$(poolctl capacity --shape 512M/25% --pools p0) || fail "capacity: $out"
info "$out"
n=$(poolctl capacity --shape 512M/25% --pools p0 --json | sed -n 's/^  "fits": \([0-9]*\).*/\1/p')
[ "${n:-0}" -ge 2 ] || fail "capacity: ${n:-no} VMs of 512M/25% on p0 fit: $out"
i=0
while [ $i -lt $n ]; do
	i=$((i + 1))
	poolctl vm create cap$i --size 512M --local 128M --pool 384M --pools p0 >/dev/null ||
		fail "capacity said $n fit, but VM $i was refused"
done
check_eq "capacity once they are in" 0 \
	"$(poolctl capacity --shape 512M/25% --pools p0 --json | sed -n 's/^  "fits": \([0-9]*\).*/\1/p')"
expect_exit 4 "^poolctl: cap$((n + 1)): cannot create domain" \
	poolctl vm create cap$((n + 1)) --size 512M --local 128M --pool 384M --pools p0
capacity_all
i=0
while [ $i -lt $n ]; do i=$((i + 1)); poolctl vm destroy cap$i >/dev/null; done
info "capacity: $n VMs of 512M/25% fit on p0, and were admitted; the next was refused"

# --- 4. the debug kernel's walk agreed throughout ---
dmesg | grep -q "poolmem: committed quotas" && fail "bucket and walk disagree: $(dmesg | grep 'committed quotas' | head -n 1)"
info "pass"
