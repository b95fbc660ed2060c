# rig-topologies: nvdimm-numa
# rig-boot: own (every slab cache tracks its allocations)
# rig-append: slub_debug=U
# Benchmark (make bench): the kernel memory an idle named domain costs,
# each byte put to its allocation site (issue 45: "at most 4 KiB per idle
# domain besides sysfs"). bench-scale's figure comes from /proc/meminfo
# and counts the kernfs caches as the sysfs directory; a sysfs directory
# costs more than its kernfs nodes, and this says how much, by reading
# what allocated each object.
#
# Booted with slub_debug=U, every slab cache records each live object's
# allocation stack (debugfs slab/<cache>/alloc_traces: a count per
# stack). N domains are made (2 MiB each, pool quota 2 MiB, no chunk);
# the live objects per stack are counted before and after, times the
# cache's object size (/sys/kernel/slab/<cache>/object_size: the object,
# not the tracking added to it). A stack through kernfs, sysfs or the
# driver core's device_add (the directory, its attribute nodes and their
# names, the kernfs id tree, the device's private part, its power
# attributes) is the sysfs directory's; any other is the domain's own.
# Memory outside the slab caches (page tables, vmalloc, percpu) comes
# from /proc/meminfo's deltas and counts as the domain's own.
. /rig/tests/lib/common.sh
pm_pools_up
for p in p0 p1; do echo 1000 > $POOLSYS/$p/overcommit_pct; done
N=${BENCH_KMEM_DOMAINS:-2000}
[ -d /sys/kernel/debug/slab ] || mount -t debugfs none /sys/kernel/debug
[ -r /sys/kernel/debug/slab/kmalloc-64/alloc_traces ] || fail "no slab allocation traces (slub_debug=U)"
# traces OUT: "cache<TAB>count<TAB>class<TAB>stack" for every live object's stack
traces() {
	for d in /sys/kernel/debug/slab/*/; do
		c=$(basename "$d")
		[ -r "$d/alloc_traces" ] || continue
		awk -v c="$c" -v size="$(cat /sys/kernel/slab/$c/object_size 2>/dev/null || echo 0)" '
			function flush() { if (n) printf "%s\t%d\t%d\t%s\t%s\n", c, n, size, (st ~ /kernfs|sysfs|device_add|dpm_sysfs/ ? "sysfs" : "own"), st; n = 0; st = "" }
			/^ *[0-9]+ / { flush(); n = $1; st = $2; next }
			NF { st = st " " $1 }
			END { flush() }' "$d/alloc_traces"
	done
}
nonslab() { awk '/^(Percpu|VmallocUsed|PageTables|KernelStack):/ { s += $2 } END { print s * 1024 }' /proc/meminfo; }
settle() { sync; echo 2 > /proc/sys/vm/drop_caches; }
settle; traces > /tmp/t0; ns0=$(nonslab)
out=$(pmtest scale-create km 0 $N 2M 0 2M) || fail "scale-create: $out"
echo "bench: $out"
settle; traces > /tmp/t1; ns1=$(nonslab)
# per stack: (after - before) objects x size, per domain
awk -F'\t' -v n=$N 'FNR == NR { a[$1 "\t" $5] += $2; next }
	{ k = $1 "\t" $5; b[k] += $2; size[k] = $3; class[k] = $4 }
	END { for (k in b) { d = (b[k] - a[k]) * size[k] / n; if (d != 0) { split(k, f, "\t"); printf "%.1f\t%s\t%s\t%s\n", d, class[k], f[1], f[2] } } }' /tmp/t0 /tmp/t1 |
	sort -g -r > /tmp/per
sysfs=$(awk -F'\t' '$2 == "sysfs" { s += $1 } END { printf "%.0f", s }' /tmp/per)
own=$(awk -F'\t' '$2 == "own" { s += $1 } END { printf "%.0f", s }' /tmp/per)
nons=$(( (ns1 - ns0) / N ))
echo "bench: per idle domain ($N made): sysfs directory $sysfs bytes; the domain's own $own bytes in slab caches and $nons outside them (page tables, vmalloc, percpu)"
echo "bench: the domain's own, by cache and allocation site (bytes per domain, over 16):"
awk -F'\t' '$2 == "own" && $1 > 16 { split($4, s, " "); printf "bench:   %6.0f %s: %s <- %s <- %s\n", $1, $3, s[1], s[2], s[3] }' /tmp/per | head -n 15
echo "bench: the sysfs directory, by cache (bytes per domain):"
awk -F'\t' '$2 == "sysfs" { c[$3] += $1 } END { for (k in c) if (c[k] > 8) printf "bench:   %6.0f %s\n", c[k], k }' /tmp/per | sort -nr
echo "csv:kmem-sites.csv:bytes_per_domain,class,cache,stack"
awk -F'\t' '$1 > 1 || $1 < -1 { printf "csv:kmem-sites.csv:%s,%s,%s,\"%s\"\n", $1, $2, $3, $4 }' /tmp/per
bench_goal kmem-own-per-domain '<=' 4096 "$(( own + nons ))" "" "" B \
	"kernel memory per idle domain besides its sysfs directory, by allocation site (slub_debug=U), bytes"
out=$(pmtest scale-destroy km 0 $N) || fail "scale-destroy: $out"
check_eq "no domain left" "" "$(pmtest domain-list | xargs)"
