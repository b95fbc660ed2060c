# rig-topologies: nvdimm-numa cxl2
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# rig-debug: core (back in the core suite: its interaction with pm-faultinject in one boot, a SIGBUS for want of memory on p0, did not come back in 2026-12-05's runs)
# THEORY OF OPERATION: quotas are admission limits; the memory itself can
# still run out when a pool is overcommitted. p0 is re-registered with a 300%
# overcommit (on four of its node's blocks) and partly filled by one domain. A second domain allowed on p0
# and p1 must fall back to p1 when p0 is full (p0 counts failures). A third,
# allowed only on p0 with no local quota, must get SIGBUS once p0 is full:
# its sigbus counter counts it and the kernel log names it. A profile
# allowed only on p0 then counts, host-wide and in
# /sys/kernel/poolmem/profiles/<name>/, its file's SIGBUS, a refused
# size, the domain made and gone and the bytes it discarded: after the
# domain and its own counters are gone. Removed while a domain made from
# it lives (QEMU's unlinked file), the profile's counts stay and count
# that domain, and a profile made again under the name continues them.
. /rig/tests/lib/common.sh
pm_pools_up
n0=$(pool_attr p0 node)
pmtest pool-remove p0 >/dev/null
# p0 is filled by touching it, and on cxl2 every byte touched is emulated
# one load or store at a time (filling its 2 GiB took 140 s): while the test
# runs, all but four of n0's blocks go offline, so that there is less to
# fill; the checks are the same. They come back before p0 is re-registered.
offlined=""
for b in $(node_blocks $n0 | sort -t y -k 2 -n | tail -n +5); do
	echo offline > $MEMSYS/$b/state 2>/dev/null && offlined="$offlined $b"
done
restore_blocks() {
	for b in $offlined; do echo online_movable > $MEMSYS/$b/state; done
	offlined=""
}
trap restore_blocks EXIT
pmtest pool-add p0 $n0 overcommit=300 >/dev/null
cap=$(( $(pool_attr p0 capacity_bytes) / MiB / 2 * 2 ))

pmtest domain-create fill $((cap - 64))M 0 $((cap - 64))M pools=p0 >/dev/null
pmtest touch fill 0 $((cap - 64))M >/dev/null
info "p0 holds $(( $(pool_attr p0 allocated_bytes) / MiB )) MiB of $cap MiB"

# falls back within quota: round-robin tries p0 every other chunk; once p0
# is full those chunks go to p1
pmtest domain-create fb 512M 0 512M pools=p0,p1 select=round-robin >/dev/null
pmtest touch fb 0 512M >/dev/null
check_eq "fb: all 512 MiB placed" $((512 * MiB)) "$(dom_attr fb pool_bytes)"
check_eq "fb: no SIGBUS" 0 "$(dom_attr fb sigbus)"
on0=$(dom_pool_chunks fb p0) on1=$(dom_pool_chunks fb p1)
info "fb: $on0 chunks on p0, $on1 on p1; p0 failures $(pool_attr p0 failures)"
[ "$on1" -gt 0 ] || fail "nothing fell back to p1"
[ "$(pool_attr p0 failures)" -gt 0 ] || fail "p0 counted no failures"

pmtest domain-create starve 512M 0 512M pools=p0 >/dev/null
rc=0
out=$(pmtest touch starve 0 512M) || rc=$?
echo "$out"
check_eq "starve: touch ends in SIGBUS (exit 3)" 3 $rc
[ "$(dom_attr starve sigbus)" -ge 1 ] || fail "sigbus counter did not count"
dmesg | grep -q "domain starve: no memory within quota" || fail "no log line names the domain"
info "starve: $(dom_attr starve sigbus) SIGBUS, $(( $(dom_attr starve pool_bytes) / MiB )) MiB placed"
# --- counts that outlive domains (host-wide, per profile, per pool) ---
PMK=/sys/kernel/poolmem
counts() { (cd $1 && cat sigbus admission_refusals domains_created domains_destroyed discarded_bytes | xargs); }
set -- $(counts $PMK)
s0=$1 r0=$2 c0=$3 x0=$4 b0=$5
p0d=$(pool_attr p0 discarded_bytes) p1d=$(pool_attr p1 discarded_bytes)
poolctl profile create starved --pool 100% --pools p0 >/dev/null
PC=$PMK/profiles/starved
check_eq "a new profile's counts (sigbus refusals created destroyed discarded)" "0 0 0 0 0" "$(counts $PC)"
# refused at ftruncate: a profile refusal
touch $PMFS/starved/big
truncate -s 16G $PMFS/starved/big 2>/dev/null && fail "a 16 GiB profile file was admitted"
rm $PMFS/starved/big
# p0 is full: a profile file's touch ends in SIGBUS
touch $PMFS/starved/vm
truncate -s 32M $PMFS/starved/vm
dom=$(profile_domain starved)
rc=0
pmtest touch starved/vm 0 32M >/dev/null 2>&1 || rc=$?
check_eq "starved/vm: touch ends in SIGBUS (exit 3)" 3 $rc
sb=$(dom_attr $dom sigbus)
[ "$sb" -ge 1 ] || fail "$dom counted no SIGBUS"
# room on p0 again (fill's 448 MiB): the profile file takes 4 MiB and gives them back
pmtest domain-destroy fill >/dev/null
pmtest touch starved/vm 0 4M >/dev/null
pmtest punch starved/vm 0 4M >/dev/null
# fb's first 4 MiB: two chunks given back, from whichever pools hold them
pmtest punch fb 0 4M >/dev/null
rm $PMFS/starved/vm
[ ! -e $DOMSYS/$dom ] || fail "$dom outlived its file"
# the domain and its own counters are gone; the profile's and the host's stay
check_eq "profile starved's counts after its domain went" "$sb 1 1 1 $((4 * MiB))" "$(counts $PC)"
check_eq "host-wide counts since the profile's test" "$((s0 + sb)) $((r0 + 1)) $((c0 + 1)) $((x0 + 2)) $((b0 + 8 * MiB))" \
	"$(set -- $(counts $PMK); echo $1 $2 $3 $4 $5)"
check_eq "pools' discarded bytes (p0: the profile's 4 MiB and fb's there)" $((8 * MiB)) \
	$(( $(pool_attr p0 discarded_bytes) - p0d + $(pool_attr p1 discarded_bytes) - p1d ))
# what the exporter makes of them, from the live module
poolmem-exporter --once --no-collector.probe --no-collector.domains > /tmp/counts.prom
check_eq "exporter: poolmem_profile_sigbus_total{profile=starved}" "$sb" \
	"$(sed -n 's/^poolmem_profile_sigbus_total{profile="starved"} //p' /tmp/counts.prom)"
check_eq "exporter: poolmem_admission_refusals_total" "$(cat $PMK/admission_refusals)" \
	"$(sed -n 's/^poolmem_admission_refusals_total //p' /tmp/counts.prom)"
poolctl profile show starved
check_eq "profile show --json: counts.sigbus" "$sb" \
	"$(poolctl profile show starved --json | sed -n 's/.*"sigbus": \([0-9]*\).*/\1/p')"
check_eq "status --json: counts.admission_refusals" "$(cat $PMK/admission_refusals)" \
	"$(poolctl status --json | sed -n 's/.*"admission_refusals": \([0-9]*\).*/\1/p')"
info "profile starved: $sb SIGBUS, 1 refusal, 1 domain made and gone, 4 MiB discarded, counted after its domain went"
# --- a profile removed while a VM made from it runs ---
# QEMU unlinks the file it makes in the profile's directory at once, so the
# directory can go while the VM runs: the VM still counts in the profile's
# counts, and a profile made again under the name continues them.
touch $PMFS/starved/run
truncate -s 8M $PMFS/starved/run
exec 9<> $PMFS/starved/run
rm $PMFS/starved/run
poolctl profile remove starved >/dev/null || fail "profile remove starved with its file unlinked"
[ -e $PC ] || fail "profile starved's counts went while a domain made from it lives"
RUN=../../proc/$$/fd/9	# pmtest opens MNT/NAME: the shell's open file
pmtest touch $RUN 0 4M >/dev/null || fail "the removed profile's domain could not touch 4 MiB"
pmtest punch $RUN 0 4M >/dev/null || fail "the removed profile's domain could not discard"
check_eq "profile starved's counts with the profile removed, its domain running" \
	"$sb 1 2 1 $((8 * MiB))" "$(counts $PC)"
poolctl profile create starved --pool 100% --pools p0 >/dev/null
check_eq "profile starved made again: the same counts go on" "$sb 1 2 1 $((8 * MiB))" "$(counts $PC)"
exec 9>&-
wait_for 10 sh -c "[ \$(cat $PC/domains_destroyed) = 2 ]" ||
	fail "the removed profile's domain went uncounted: $(counts $PC)"
poolctl profile remove starved >/dev/null
[ ! -e $PC ] || fail "profile starved's sysfs directory outlived it and its domains"

for d in fb starve; do pmtest domain-destroy $d >/dev/null; done
pmtest pool-remove p0 >/dev/null
restore_blocks
pmtest pool-add p0 $n0 >/dev/null
