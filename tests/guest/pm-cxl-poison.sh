# rig-topologies: cxl2
# rig-boot: own (it leaves a poisoned page on a pool's node)
# THEORY OF OPERATION: a CXL device's media error, reported in its poison
# list before anything reads it, reaches the VM it hits as a memory error
# at the right address, and nothing else: QEMU 10's emulated type-3 device
# takes poison through QMP (cxl-inject-poison, at a device physical
# address), the kernel reads the list when asked (trigger_poison_list;
# cxl:cxl_poison trace events with the host address), and poolctl pool
# poison-scan names the pool, domain and offset through poolmem's reverse
# map and takes the page out of use (hard_offline_page: memory_failure(),
# which poolmem handles). Then:
#  - the domain's page at that offset gives SIGBUS BUS_MCEERR_AR at its
#    address, every other page reads back what was written;
#  - the domain's and the pool's memory_errors count it;
#  - the exporter shows the poison record with the pool's and the domain's
#    labels, and the domain's error counter, in one scrape;
#  - a General Media event record QEMU puts in the device's failure log
#    (cxl-inject-general-media-event) counts for that device.
. /rig/tests/lib/common.sh
pm_pools_up
PAGE=517	# chunk 1, sixth page: offset 0x205000

pmtest domain-create cp 8M 0 8M pools=p0 >/dev/null
out=$(pmtest memerr cp huge none $PAGE) || fail "stamping: $out"
echo "$out" | grep -q "other pages intact: 2047 of 2047" || fail "stamped data did not read back: $out"
hpa=$(pmtest phys cp 0x205000) || fail "no host address for offset 0x205000"

# host address -> region -> endpoint decoder -> memdev and device address
region= start=
for r in /sys/bus/cxl/devices/region*; do
	s=$(($(cat $r/resource))) z=$(($(cat $r/size)))
	if [ $((hpa)) -ge $s ] && [ $((hpa)) -lt $((s + z)) ]; then region=$r start=$s; fi
done
[ -n "$region" ] || fail "no CXL region holds $hpa"
check_eq "$(basename $region) interleave ways" 1 "$(cat $region/interleave_ways)"
dec=$(cat $region/target0)
dpa=$(( ($(cat /sys/bus/cxl/devices/$dec/dpa_resource) + hpa - start) & ~63 ))
ep=$(basename "$(dirname "$(readlink -f /sys/bus/cxl/devices/$dec)")")	# endpointN
memdev=$(basename "$(readlink -f /sys/bus/cxl/devices/$ep/uport)")
case $(cat /sys/bus/cxl/devices/$memdev/serial) in
0xc0ffee01) qdev=cxl-pmem0 ;;
0xc0ffee02) qdev=cxl-pmem1 ;;
*) fail "$memdev: unknown serial $(cat /sys/bus/cxl/devices/$memdev/serial)" ;;
esac
info "offset 0x205000 of cp: host $hpa, $(basename $region), $dec, $memdev ($qdev) DPA $(printf %#x $dpa)"

out=$(poolctl pool poison-scan p0) || fail "poison-scan of a clean device: $out"
echo "$out" | grep -q "no poison on 1 memory device" || fail "poison before any was injected: $out"

host_request cxl-inject-poison $qdev $(printf %#x $dpa) 64
found=
for i in $(seq 1 40); do
	out=$(poolctl pool poison-scan p0 --no-offline) || fail "poison-scan --no-offline: $out"
	echo "$out" | grep -q " cp " && { found=1; break; }
	sleep 0.5
done
[ -n "$found" ] || fail "the injected poison never showed in $memdev's poison list: $out"
info "listed: $(echo "$out" | tr '\n' '|')"
check_eq "memory_errors before the scan takes the page" 0 "$(dom_attr cp memory_errors)"

out=$(poolctl pool poison-scan p0) || fail "poison-scan: $out"
info "scan: $(echo "$out" | tr '\n' '|')"
echo "$out" | grep -q "^$memdev  *$(printf %#x $dpa)  *64  *$(printf %#x $((hpa & ~63)))  *p0  *cp  *0x205000  *[A-Za-z]*  *isolated" ||
	fail "poison-scan did not name the pool, domain and offset, or did not isolate the page: $out"
check_eq "domain memory_errors" 1 "$(dom_attr cp memory_errors)"
check_eq "pool memory_errors" 1 "$(pool_attr p0 memory_errors)"
out=$(pmtest memerr cp huge check $PAGE)
echo "$out" | grep -q "page $PAGE: SIGBUS BUS_MCEERR_AR at its address" || fail "the poisoned page: $out"
echo "$out" | grep -q "other pages intact: 2047 of 2047" || fail "other pages: $out"

# one scrape shows it, labelled
out=$(poolmem-exporter --once --no-collector.probe)
echo "$out" | grep -q "^poolmem_cxl_poison_records{memdev=\"$memdev\",pool=\"p0\",domain=\"cp\"} 1" ||
	fail "exporter: no poison record for cp: $(echo "$out" | grep cxl_poison)"
echo "$out" | grep -q '^poolmem_domain_memory_errors_total{domain="cp"} 1' ||
	fail "exporter: cp's memory error not counted: $(echo "$out" | grep memory_errors)"
echo "$out" | grep -q '^poolmem_pool_memory_errors_total{pool="p0"} 1' || fail "exporter: p0's error not counted"
# health: QEMU 10's type-3 emulation has no Get Health Info; the scan says so
echo "$out" | grep -q "^poolmem_cxl_health_supported{memdev=\"$memdev\",pool=\"p0\"} 0" ||
	fail "exporter: $memdev's health support not as QEMU has it: $(echo "$out" | grep cxl_health)"

# a General Media event record (the device's own report of an error it met)
# counts for its device, from the scans on
host_request cxl-inject-general-media-event $qdev $(printf %#x $dpa)
n=0
for i in $(seq 1 40); do
	poolctl pool poison-scan p0 --no-offline >/dev/null || fail "poison-scan after the event"
	n=$(poolmem-exporter --once --no-collector.probe |
		sed -n "s/^poolmem_cxl_events_total{memdev=\"$memdev\",pool=\"p0\",type=\"general_media\"} //p")
	[ "${n:-0}" -ge 1 ] && break
	sleep 0.5
done
check_eq "general media events counted for $memdev" 1 "${n:-0}"
pmtest domain-destroy cp >/dev/null
if dmesg | grep -E "WARNING:|BUG:|Oops"; then fail "warnings in the log"; fi
info "ok"
