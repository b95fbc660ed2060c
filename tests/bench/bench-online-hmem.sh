# rig-topologies: hmem
# rig-env: RIG_HMEM_SIZES=2G,2G,8G
# Benchmark (make bench): onlining Soft Reserved memory (dax_hmem, dynamic
# dax regions: what a BIOS makes of a CXL volatile expander).
# 1. poolctl pool online --async --first 1G: time until the first GiB is
#    online and the pool registered (the command's return), for a 2 GiB and
#    an 8 GiB device, rounds in alternating order; the medians and their
#    ratio (the goal: at most 1.05, flat in the device's size). The device
#    is split: the first piece is all kmem sets up before that point.
#    15 rounds (9 before 2026-12-01). Also paired by round, and taken
#    apart: device_dax's unbind (the kernel's O(size) memmap teardown)
#    against what poolctl does after it.
# 2. Throughput, 25 rounds (15 on 2026-12-01, 11 before) on the 2 GiB and
#    the 8 GiB device each: poolctl
#    --async until the last piece is online, poolctl synchronous (the device
#    whole), and daxctl reconfigure-device --mode=system-ram (binds kmem and
#    onlines every block). The rate is the 6 GiB between the devices over
#    the difference of the median times, so that a fixed cost (process
#    start, module checks) cancels; that cost is reported apart. Also
#    paired by round: the median of the rounds' own rate ratios. Each
#    ratio also with a 90% bootstrap interval (the rounds resampled), so
#    that a run says when it can't tell a goal met from one missed.
# 3. Block order (2026-12-02): the 8 GiB device bound to kmem, its 64
#    blocks onlined by one shell loop in address order and by the same
#    loop in poolctl's order (the second block last: the kernel's
#    zone-contiguity walk after each block stops at that hole; see
#    online_order() in userspace/src/dax.cpp), and by daxctl
#    online-memory; 15 rounds in turning order. The two loops differ in
#    nothing but the order, so their ratio is the kernel's walk alone.
# Output goes to /dev/null for every tool (the guest's console is a serial
# line: poolctl's progress bar there costs more than the onlining). Times
# come from CLOCK_MONOTONIC (pmtest elapsed); the end of background
# onlining is when its process lets go of the pool's lock (flock waits for
# it without polling).
. /rig/tests/lib/common.sh
pm_load
d2= d8=
for d in $(ls /sys/bus/dax/devices | sort -V); do
	case $(cat /sys/bus/dax/devices/$d/size) in
	2147483648) [ -n "$d2" ] || d2=$d ;;
	8589934592) d8=$d ;;
	esac
done
[ -n "$d2" ] && [ -n "$d8" ] || fail "expected 2 GiB and 8 GiB hmem devices: $(ls /sys/bus/dax/devices)"
elapsed() { pmtest elapsed "$@" 2>/dev/null | sed -n 's/^elapsed: //p'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
bg_state() { cut -d' ' -f4- /run/poolctl/$1.online 2>/dev/null; }
# boot MODE: how far the bench's figure can be trusted, from its own rounds
BOOT_AWK=$(cat <<'AWK'
# 90% bootstrap interval: rounds resampled with replacement 2000 times
# (seeded: the same samples give the same interval). Input: one line,
# series separated by '|', each the rounds' values in round order.
# mode=ratio: med(S2) / med(S1); mode=rate: (med(S4) - med(S3)) /
# (med(S2) - med(S1)), a way's rate over daxctl's with S1 S2 the way's
# 2 GiB and 8 GiB times and S3 S4 daxctl's; mode=paired: the median over
# rounds of (S4 - S3) / (S2 - S1), each round's own. Prints "LO HI".
function med(a, n,   s, i, j, v) {
	for (i = 1; i <= n; i++) s[i] = a[i]
	for (i = 2; i <= n; i++) { v = s[i]; for (j = i - 1; j >= 1 && s[j] > v; j--) s[j + 1] = s[j]; s[j + 1] = v }
	return (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
{
	k = split($0, f, "|")
	n = split(f[1], x1, " "); split(f[2], x2, " "); split(f[3], x3, " "); split(f[4], x4, " ")
}
END {
	srand(1)
	m = 0
	for (b = 1; b <= 2000; b++) {
		for (i = 1; i <= n; i++) {
			r = int(rand() * n) + 1
			y1[i] = x1[r]; y2[i] = x2[r]; y3[i] = x3[r]; y4[i] = x4[r]
		}
		if (mode == "ratio") {
			st = med(y2, n) / med(y1, n)
		} else if (mode == "paired") {
			# the median of the resampled rounds' own rate ratios
			k = 0
			for (i = 1; i <= n; i++)
				if (y2[i] > y1[i] && y4[i] > y3[i]) z[++k] = (y4[i] - y3[i]) / (y2[i] - y1[i])
			if (!k) continue
			st = med(z, k)
		} else {
			dw = med(y2, n) - med(y1, n); dd = med(y4, n) - med(y3, n)
			if (dw <= 0 || dd <= 0) continue
			st = dd / dw
		}
		v[++m] = st
	}
	# sort the m statistics (insertion sort is too slow for 2000: shell sort)
	for (g = int(m / 2); g > 0; g = int(g / 2))
		for (i = g + 1; i <= m; i++) { t = v[i]; for (j = i; j > g && v[j - g] > t; j -= g) v[j] = v[j - g]; v[j] = t }
	printf "%.3f %.3f\n", v[int(0.05 * m) + 1], v[int(0.95 * m)]
}
AWK
)
boot() { awk -v mode=$1 "$BOOT_AWK"; }


# online_first DEV: seconds until poolctl returns with the first GiB usable
online_first() {
	local t
	t=$(elapsed sh -c "poolctl pool online $1 --name first --async --first 1G >/dev/null 2>&1")
	[ -n "$t" ] || fail "$1: pool online failed"
	flock /run/poolctl/first.lock true
	[ "$(bg_state first)" = done ] || fail "$1: background onlining: $(bg_state first)"
	poolctl pool remove first >/dev/null || fail "$1: pool remove failed"
	echo $t
}
# Each round also takes the command apart: device_dax's unbind, which
# tears down the ZONE_DEVICE memmap of the whole device (memunmap_pages:
# kernel work in the device's size, before anything can be reshaped),
# timed alone, then poolctl on the unbound device. The sum is not the
# goal's figure (a second process start sits in it); it shows where the
# size-dependence is.
t2= t8= u2= u8= p2= p8=
for round in $(seq 15); do
	if [ $((round % 2)) = 1 ]; then order="$d2 $d8"; else order="$d8 $d2"; fi
	for dev in $order; do
		t=$(online_first $dev) || exit 1
		u=$(elapsed sh -c "echo $dev > /sys/bus/dax/drivers/device_dax/unbind")
		[ -n "$u" ] && [ ! -e /sys/bus/dax/devices/$dev/driver ] || fail "$dev: device_dax unbind failed"
		p=$(online_first $dev) || exit 1
		if [ $dev = $d2 ]; then t2="$t2 $t" u2="$u2 $u" p2="$p2 $p"; else t8="$t8 $t" u8="$u8 $u" p8="$p8 $p"; fi
	done
done
m2=$(echo $t2 | median) m8=$(echo $t8 | median)
echo "bench: first GiB usable (--async --first 1G), 2 GiB device: median $m2 s of$t2"
echo "bench: first GiB usable (--async --first 1G), 8 GiB device: median $m8 s of$t8"
# paired by round: the two devices' runs of a round are back to back
pr=$(echo "$t2|$t8" | awk -F'|' '{ n = split($1, a, " "); split($2, b, " ")
	for (i = 1; i <= n; i++) r[i] = b[i] / a[i]
	for (i = 2; i <= n; i++) { v = r[i]; for (j = i - 1; j >= 1 && r[j] > v; j--) r[j + 1] = r[j]; r[j + 1] = v }
	print (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }')
ci=$(echo "$t2|$t8" | boot ratio)
bench_goal first-gib-flat '<=' 1.05 "$pr" $ci x \
	"time to the first GiB usable (--async --first 1G), 8 GiB device / 2 GiB device, paired by round"
awk -v a=$m2 -v b=$m8 -v pr=$pr -v ci="$ci" 'BEGIN { split(ci, c, " ")
	printf "bench: t_firstGiB(8 GiB) / t_firstGiB(2 GiB) = %.3f (goal <= 1.05); paired by round %.3f; 90%% bootstrap interval [%.3f, %.3f]\n", b / a, pr, c[1], c[2] }'
mu2=$(echo $u2 | median) mu8=$(echo $u8 | median) mp2=$(echo $p2 | median) mp8=$(echo $p8 | median)
awk -v u2=$mu2 -v u8=$mu8 -v p2=$mp2 -v p8=$mp8 -v d=$(awk -v a=$m2 -v b=$m8 'BEGIN { print b - a }') 'BEGIN {
	printf "bench: apart: device_dax unbind 2 GiB %.3f s, 8 GiB %.3f s (+%.3f s); poolctl on the unbound device 2 GiB %.3f s, 8 GiB %.3f s (ratio %.3f); whole command +%.3f s\n",
		u2, u8, u8 - u2, p2, p8, p8 / p2, d }'

# 2. throughput: each way on the 2 GiB and the 8 GiB device; the rate is
# 6 GiB over the difference of the medians (a fixed start cost, such as a
# process's dynamic linking, cancels out), the fixed cost what is left
undo_daxctl() {
	local n=$(dax_node $1) b
	for b in $(node_blocks $n); do echo offline > $MEMSYS/$b/state; done
	daxctl reconfigure-device --mode=devdax $1 >/dev/null 2>&1 || fail "$1: back to devdax"
}
run_way() { # WAY DEV: prints seconds until every block of DEV is online
	case $1 in
	async) pmtest elapsed sh -c "poolctl pool online $2 --name all --async --first 1G >/dev/null 2>&1 &&
		flock /run/poolctl/all.lock true" ;;
	whole) pmtest elapsed sh -c "poolctl pool online $2 --name all >/dev/null 2>&1" ;;
	daxctl) pmtest elapsed sh -c "daxctl reconfigure-device --mode=system-ram $2 >/dev/null 2>&1" ;;
	esac | sed -n 's/^elapsed: //p'
	local n=$(dax_node $2)
	[ "$(node_blocks $n | wc -w)" = "$(for b in $(node_blocks $n); do cat $MEMSYS/$b/state; done | grep -cx online)" ] ||
		fail "$1 $2: not every block online"
	case $1 in
	async | whole) poolctl pool remove all >/dev/null ;;
	daxctl) undo_daxctl $2 ;;
	esac
}
# rounds interleave the ways (in turning order) so that the host's drift
# falls on all of them alike
ways="async whole daxctl"
for w in $ways; do eval "t2_$w= t8_$w="; done
for round in $(seq 25); do
	set -- $ways
	shift $((round % 3))
	for w in "$@" $(echo $ways | cut -d' ' -f1-$((round % 3))); do
		[ -n "$w" ] || continue
		eval "t2_$w=\"\$t2_$w $(run_way $w $d2)\""
		eval "t8_$w=\"\$t8_$w $(run_way $w $d8)\""
	done
done
for w in $ways; do
	eval "a=\$t2_$w b=\$t8_$w"
	m2=$(echo $a | median) m8=$(echo $b | median)
	awk -v w=$w -v a=$m2 -v b=$m8 -v ra="$a" -v rb="$b" 'BEGIN {
		r = 6 / (b - a)
		printf "bench: %-6s 2 GiB median %.3f s (of %s), 8 GiB median %.3f s (of %s): %.1f GiB/s, fixed cost %.3f s\n",
			w, a, ra, b, rb, r, a - 2 / r }'
	eval "rate_$w=\$(awk -v a=$m2 -v b=$m8 'BEGIN { print 6 / (b - a) }')"
done
awk -v a=$rate_async -v w=$rate_whole -v d=$rate_daxctl 'BEGIN {
	printf "bench: onlining rate / daxctl'"'"'s: poolctl --async (pieces) %.2f, poolctl whole %.2f (goal: at least 1.00)\n", a / d, w / d }'
# The same, paired by round: each round ran every way on both devices
# back to back, so the host's drift is common to a round's figures. A
# round's rate for a way is 6 GiB over its own 8 GiB - 2 GiB time; the
# median over rounds of poolctl's rate over daxctl's that round.
paired() { # WAY: the median of the rounds' rate ratios against daxctl
	eval "a=\$t2_$1 b=\$t8_$1"
	echo "$a|$b|$t2_daxctl|$t8_daxctl" | awk -F'|' '{
		n = split($1, a, " "); split($2, b, " "); split($3, c, " "); split($4, d, " ")
		for (i = 1; i <= n; i++) if (b[i] > a[i] && d[i] > c[i]) r[++m] = (d[i] - c[i]) / (b[i] - a[i])
		for (i = 2; i <= m; i++) { v = r[i]; for (j = i - 1; j >= 1 && r[j] > v; j--) r[j + 1] = r[j]; r[j + 1] = v }
		print (m % 2) ? r[(m + 1) / 2] : (r[m / 2] + r[m / 2 + 1]) / 2 }'
}
echo "bench: onlining rate / daxctl's, median of the rounds' ratios: poolctl --async (pieces) $(paired async), poolctl whole $(paired whole) (goal: at least 1.00)"
# A goal is shown only when the interval lies on its side of it; an
# interval across it means this run can't tell (2026-12-01: the whole
# device's spanned 0.53-1.03 and 0.61-1.11 in two runs)
echo "bench: onlining rate / daxctl's, 90% bootstrap interval (rounds resampled): poolctl --async (pieces) [$(echo "$t2_async|$t8_async|$t2_daxctl|$t8_daxctl" | boot rate | tr ' ' ',')], poolctl whole [$(echo "$t2_whole|$t8_whole|$t2_daxctl|$t8_daxctl" | boot rate | tr ' ' ',')]; paired by round: --async [$(echo "$t2_async|$t8_async|$t2_daxctl|$t8_daxctl" | boot paired | tr ' ' ',')], whole [$(echo "$t2_whole|$t8_whole|$t2_daxctl|$t8_daxctl" | boot paired | tr ' ' ',')]"
bench_goal online-rate-vs-daxctl '>=' 1 "$(paired async)" \
	$(echo "$t2_async|$t8_async|$t2_daxctl|$t8_daxctl" | boot paired) x \
	"onlining rate of poolctl pool online --async / daxctl's, paired by round"

# 3. block order: the 8 GiB device in kmem, blocks offline; one loop in
# address order, the same loop in poolctl's order, daxctl online-memory
daxctl reconfigure-device --mode=system-ram --no-online $d8 >/dev/null 2>&1 || fail "$d8: to kmem without onlining"
n8=$(dax_node $d8)
addr=$(node_blocks $n8 | sed 's/^memory//' | sort -n | xargs)
set -- $addr
[ $# -ge 3 ] || fail "$d8: $# blocks"
first=$1 second=$2; shift 2
# online_order(): the second block last; offline_order(): it first
echo "for b in $addr; do echo online_movable > $MEMSYS/memory\$b/state; done" > /tmp/order-addr.sh
echo "for b in $first $* $second; do echo online_movable > $MEMSYS/memory\$b/state; done" > /tmp/order-pm.sh
offorder="$second $* $first"
offline8() {
	local b
	for b in $offorder; do
		[ "$(cat $MEMSYS/memory$b/state)" = offline ] || echo offline > $MEMSYS/memory$b/state
	done
}
t_addr= t_pm= t_dax=
for round in $(seq 15); do
	case $((round % 3)) in
	0) order="addr pm dax" ;; 1) order="pm dax addr" ;; 2) order="dax addr pm" ;;
	esac
	for o in $order; do
		case $o in
		dax) t=$(elapsed sh -c "daxctl online-memory $d8 >/dev/null 2>&1") ;;
		*) t=$(elapsed sh /tmp/order-$o.sh) ;;
		esac
		[ -n "$t" ] && [ "$(for b in $addr; do cat $MEMSYS/memory$b/state; done | grep -cx online)" = $(echo $addr | wc -w) ] ||
			fail "block order $o: not every block online"
		eval "t_$o=\"\$t_$o $t\""
		offline8
	done
done
daxctl reconfigure-device --mode=devdax $d8 >/dev/null 2>&1 || fail "$d8: back to devdax"
ma=$(echo $t_addr | median) mp=$(echo $t_pm | median) md=$(echo $t_dax | median)
echo "bench: block order, $(echo $addr | wc -w) blocks of $d8: address order median $ma s (of$t_addr)"
echo "bench: block order: poolctl's order median $mp s (of$t_pm)"
echo "bench: block order: daxctl online-memory median $md s (of$t_dax)"
ci=$(echo "$t_pm|$t_addr" | boot ratio)
awk -v a=$ma -v p=$mp -v d=$md -v ci="$ci" 'BEGIN { split(ci, c, " ")
	printf "bench: block order: address order / poolctl'"'"'s order = %.2f (90%% bootstrap interval [%.2f, %.2f]); daxctl online-memory / poolctl'"'"'s order = %.2f\n", a / p, c[1], c[2], d / p }'
