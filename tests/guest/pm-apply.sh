# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-debug: skip only userspace (TOML to poolctl commands); the ioctls it drives are in pm-operator and poolctl-flow
# THEORY OF OPERATION: the host's state as a file. poolctl apply makes the
# pools (from dax devices), a profile and named domains of a TOML file true:
# --dry-run plans and changes nothing; apply creates; a second apply plans
# nothing; an edited quota becomes a live vm set; what can't change in place
# (a size) is a conflict (exit 4) that changes nothing. Then the reboot: the
# state is exported, torn down to devdax devices as a fresh boot leaves
# them, and apply of the exported file brings back the same state (export
# again is byte for byte the same).
. /rig/tests/lib/common.sh
pm_load
pm_clean
set -- $(make_devdax)
[ $# -eq 2 ] || fail "expected two dax devices, got: $*"
da=$1 db=$2
mkdir -p /etc/poolmem
cat > /etc/poolmem/poolmem.toml <<CONF
[pools.pa]
device = "$da"
[pools.pb]
device = "$db"
overcommit = 150

[profiles.gold]
local = "25%"
pool = "75%"
pools = ["pa", "pb"]

[domains.web1]
size = "64M"
local = "16M"
pool = "48M"
tier_policy = "interleave"
pools = ["pa", "pb"]
owner = "tenant"
mode = "0600"

[domains.db]
size = "32M"
pool = "32M"
tier_policy = "pool-first"
pools = ["pb"]
CONF

out=$(poolctl apply --dry-run)
echo "$out"
echo "$out" | grep -q "poolmem.toml: 5 steps" || fail "dry run: $out"
check_eq "pools after dry run" "" "$(ls $POOLSYS 2>/dev/null)"
[ -e /run/poolmem/web1 ] && fail "dry run created web1"

poolctl apply || fail "apply"
check_eq "pools" "pa pb" "$(ls $POOLSYS | xargs)"
check_eq "pb overcommit" 150 "$(pool_attr pb overcommit_pct)"
check_eq "web1 quotas" "$((16 * MiB)) $((48 * MiB))" "$(dom_attr web1 local_quota_bytes) $(dom_attr web1 pool_quota_bytes)"
check_eq "web1 policy" interleave "$(dom_attr web1 tier_policy)"
check_eq "web1 owner" "1000 0600" "$(stat -c '%u %04a' /run/poolmem/web1)"
pmtest touch db 0 32M >/dev/null
check_eq "db chunks all on pb (pools = [pb])" 16 "$(dom_pool_chunks db pb)"
[ -d /run/poolmem/gold ] || fail "profile gold not created"

out=$(poolctl apply)
echo "$out" | grep -q "the host matches; nothing to do" || fail "second apply planned: $out"

# an edited quota is a live change
sed -i 's/^local = "16M"/local = "32M"/; s/^pool = "48M"/pool = "32M"/' /etc/poolmem/poolmem.toml
pmtest touch web1 0 64M >/dev/null
out=$(poolctl apply)
echo "$out"
echo "$out" | grep -q "poolctl vm set web1 --local 32M --pool 32M" || fail "no vm set planned: $out"
check_eq "web1 quotas after apply" "$((32 * MiB)) $((32 * MiB))" "$(dom_attr web1 local_quota_bytes) $(dom_attr web1 pool_quota_bytes)"

# a size can't change in place: a conflict, nothing changed
sed -i 's/^size = "32M"/size = "64M"/' /etc/poolmem/poolmem.toml
expect_exit 4 "1 conflict left" poolctl apply
poolctl apply --dry-run 2>&1 | grep -q "^! domain db: size 32.0 MiB, configured 64M" || fail "conflict line"
check_eq "db size unchanged" $((32 * MiB)) "$(dom_attr db size_bytes)"
sed -i '/^\[domains.db\]/,/^\[/ s/^size = "64M"/size = "32M"/' /etc/poolmem/poolmem.toml

# every step is checked before any runs, as its own command with --check
# (the kernel's admission included, nothing made): a bad step fails
# --dry-run and apply with the command's own message and exit code, and
# apply then applies nothing
cp /etc/poolmem/poolmem.toml /tmp/good.toml
cat >> /etc/poolmem/poolmem.toml <<CONF

[domains.small]
size = "16M"
local = "16M"
CONF
out=$(poolctl apply --dry-run) || fail "dry run of a domain that fits: $out"
echo "$out" | grep -q "^checks: 1 passed, 0 failed" || fail "checks line: $out"
[ -e /run/poolmem/small ] && fail "the dry run's check created small (POOLMEM_DOMAIN_CHECK made a domain)"
refusals=$(cat /sys/kernel/poolmem/admission_refusals)
cat >> /etc/poolmem/poolmem.toml <<CONF

[domains.zhuge]
size = "8G"
pool = "8G"
pools = ["pa"]
CONF
direct=$(poolctl vm create zhuge --size 8G --pool 8G --pools pa 2>&1 >/dev/null) && direct_rc=0 || direct_rc=$?
check_eq "the direct command's exit code" 4 "$direct_rc"
echo "$direct" | grep -q "cannot create domain: " || fail "direct: $direct"
check_eq "admission refusals counted (the direct command)" $((refusals + 1)) "$(cat /sys/kernel/poolmem/admission_refusals)"
for mode in --dry-run ""; do
	out=$(poolctl apply $mode 2>&1) && rc=0 || rc=$?
	echo "$out"
	check_eq "apply $mode: exit code" 4 "$rc"
	echo "$out" | grep -qxF "$direct" || fail "apply $mode lacks the command's own line: $direct"
	echo "$out" | grep -q "^x step 2 (+ domain zhuge: 8G) would fail with exit code 4" || fail "apply $mode: no x line"
	echo "$out" | grep -q "1 step would fail (x lines above); nothing applied" || fail "apply $mode: $out"
	[ -e /run/poolmem/small ] && fail "apply $mode applied small though zhuge's check failed"
done
check_eq "admission refusals after the checks" $((refusals + 1)) "$(cat /sys/kernel/poolmem/admission_refusals)"
# a quota change that does not fit the size: vm set's own error, exit 2
cp /tmp/good.toml /etc/poolmem/poolmem.toml
sed -i '/^\[domains.web1\]/,/^\[/ { s/^local = "32M"/local = "8M"/; s/^pool = "32M"/pool = "8M"/; }' /etc/poolmem/poolmem.toml
grep -A3 'domains.web1' /etc/poolmem/poolmem.toml
direct=$(poolctl vm set web1 --local 8M --pool 8M 2>&1 >/dev/null) && direct_rc=0 || direct_rc=$?
check_eq "vm set's exit code" 2 "$direct_rc"
out=$(poolctl apply --dry-run 2>&1) && rc=0 || rc=$?
echo "$out"
check_eq "apply --dry-run of a quota change that does not fit: exit code" 2 "$rc"
echo "$out" | grep -qxF "$direct" || fail "apply lacks vm set's own line: $direct"
cp /tmp/good.toml /etc/poolmem/poolmem.toml
# a quota change that admission refuses: vm set says so (not "0 B must move")
cap=$(pool_attr pa capacity_bytes)
# all of pa that is not committed: web1's 32 MiB there, grown to 64, is then 32 MiB too many
hog=$(( (cap - $(pool_attr pa committed_bytes)) / (2 * MiB) * 2 ))
poolctl vm create hog --size ${hog}M --pool ${hog}M --pools pa >/dev/null || fail "hog of ${hog}M on pa"
out=$(poolctl vm set web1 --local 0 --pool 64M --pools pa 2>&1) && fail "vm set past pa's admission limit: $out"
echo "$out" | grep -q "cannot change: the new quotas do not fit the pools' admission limits" || fail "vm set refusal: $out"
info "ok: $out"
poolctl vm destroy hog >/dev/null

# a typo is found with its line, before anything happens
printf '[pools.pc]\ndevice = "x"\nzonee = "normal"\n' > /tmp/bad.toml
expect_exit 2 "^poolctl: /tmp/bad.toml:3: pools.pc: unknown key 'zonee'" poolctl apply --config /tmp/bad.toml

# --- reboot: export, tear down to what a fresh boot leaves, apply ---
poolctl export -o /tmp/state.toml
cat /tmp/state.toml
poolctl vm destroy web1 >/dev/null
poolctl vm destroy db >/dev/null
poolctl profile remove gold >/dev/null
poolctl pool remove pa >/dev/null
poolctl pool remove pb >/dev/null
check_eq "pools after teardown" "" "$(ls $POOLSYS)"
out=$(poolctl apply --config /tmp/state.toml)
echo "$out"
poolctl export -o /tmp/state2.toml
diff -u /tmp/state.toml /tmp/state2.toml || fail "state after apply differs from the exported one"
out=$(poolctl apply --config /tmp/state.toml)
echo "$out" | grep -q "nothing to do" || fail "apply of the exported state planned: $out"
# leave the devices as found
poolctl vm destroy web1 >/dev/null
poolctl vm destroy db >/dev/null
poolctl profile remove gold >/dev/null
poolctl pool remove pa >/dev/null
poolctl pool remove pb >/dev/null
rm -f /etc/poolmem/poolmem.toml
info "pass"
