# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: a domain mapped the way QEMU maps guest RAM (the
# kernel picks the address; poolmem aligns it) gets each 2 MiB unit mapped
# with one PMD on first touch, like anonymous THP: FilePmdMapped in smaps
# covers the whole mapping and there is one fault per unit. A mapping that
# can't take PMDs (placed one page past a 2 MiB boundary) still gets each
# chunk mapped whole by its first fault. Splitting a PMD (mprotect, partial
# munmap) keeps every page's data; the runner fails the test on any
# WARNING or BUG in dmesg, which is where a refcount or mapcount mistake in
# the PMD path would show.
. /rig/tests/lib/common.sh
pm_pools_up

pmtest domain-create hm 16M 4M 12M tier=local-first >/dev/null
out=$(pmtest layout hm)
info "$out"
check_eq "huge: PMD-mapped" "layout: $((16 * MiB)) of $((16 * MiB)) bytes mapped with PMDs" \
	"$(echo "$out" | head -n 1)"
check_eq "split: the other units keep their PMDs" \
	"layout: split, $((14 * MiB)) bytes still PMD-mapped, data intact" "$(echo "$out" | tail -n 1)"
# one fault per 2 MiB chunk, then one per remaining page of the split unit
check_eq "faults: 8 PMDs + 511 pages of the split unit" 519 "$(dom_attr hm faults)"
check_eq "chunks" 8 "$(dom_attr hm chunks)"
pmtest domain-destroy hm >/dev/null

# small mapping: one fault maps the whole chunk with PTEs
pmtest domain-create sm 16M 4M 12M >/dev/null
pmtest touch sm 0 16M layout=small >/dev/null
check_eq "small: one fault per chunk" 8 "$(dom_attr sm faults)"
check_eq "small: chunks" 8 "$(dom_attr sm chunks)"
pmtest domain-destroy sm >/dev/null

# 4 MiB chunks: the first touch allocates both units; each unit is one PMD
pmtest domain-create big 32M 0 32M chunk=4M >/dev/null
pmtest touch big 0 2M >/dev/null
check_eq "4M chunk: first touch allocates the whole chunk" $((4 * MiB)) "$(dom_attr big pool_bytes)"
pmtest touch big 0 32M >/dev/null
check_eq "4M chunks" 8 "$(dom_attr big chunks)"
check_eq "4M chunks, huge: one fault per unit (1 + 16)" 17 "$(dom_attr big faults)"
pmtest touch big 0 32M layout=small >/dev/null
check_eq "4M chunks, small: one fault per chunk (17 + 8)" 25 "$(dom_attr big faults)"
pmtest domain-destroy big >/dev/null

for p in p0 p1; do
	check_eq "$p allocated after destroy" 0 "$(pool_attr $p allocated_bytes)"
done
