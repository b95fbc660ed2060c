# throwaway: where poolctl's whole-device onlining spends per GiB more than daxctl
. /rig/tests/lib.sh
pm_load
d2= d8=
for d in $(ls /sys/bus/dax/devices | sort -V); do
	case $(cat /sys/bus/dax/devices/$d/size) in
	2147483648) [ -n "$d2" ] || d2=$d ;;
	8589934592) d8=$d ;;
	esac
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
P=/sys/module/poolmem/parameters/zero_reserve_pct
undo_daxctl() {
	local n=$(dax_node $1) b
	for b in $(node_blocks $n); do echo offline > $MEMSYS/$b/state; done
	daxctl reconfigure-device --mode=devdax $1 >/dev/null 2>&1 || fail "$1: back to devdax"
}
run_way() {
	local n=$(dax_node $2)
	[ $1 = whole0 ] && echo 0 > $P
	case $1 in
	daxctl) pmtest elapsed sh -c "daxctl reconfigure-device --mode=system-ram $2 >/dev/null 2>&1" ;;
	whole|whole0) pmtest elapsed sh -c "poolctl pool online $2 --name all >/dev/null 2>&1" ;;
	daxadd) pmtest elapsed sh -c "daxctl reconfigure-device --mode=system-ram $2 >/dev/null 2>&1 && poolctl pool add all --node $n >/dev/null 2>&1" ;;
	shell) pmtest elapsed sh -c "daxctl reconfigure-device --mode=system-ram --no-online $2 >/dev/null 2>&1 && for b in \$(ls -d /sys/devices/system/node/node$n/memory[0-9]*); do echo online_movable > \$b/state; done" ;;
	esac | sed -n 's/^elapsed: //p'
	[ "$(node_blocks $n | wc -w)" = "$(for b in $(node_blocks $n); do cat $MEMSYS/$b/state; done | grep -cx online)" ] ||
		fail "$1 $2: not every block online"
	sleep 0.3
	case $1 in
	whole|whole0) poolctl pool remove all >/dev/null ;;
	daxadd) poolctl pool remove all >/dev/null; undo_daxctl $2 ;;
	daxctl|shell) undo_daxctl $2 ;;
	esac
	echo 1 > $P
}
ways="daxctl whole whole0 daxadd shell"
for w in $ways; do eval "t2_$w= t8_$w="; done
for round in $(seq 11); do
	order=$(echo $ways | awk -v k=$round '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }')
	for w in $order; do
		eval "t2_$w=\"\$t2_$w $(run_way $w $d2)\""
		eval "t8_$w=\"\$t8_$w $(run_way $w $d8)\""
	done
done
for w in $ways; do
	eval "a=\$t2_$w b=\$t8_$w"
	m2=$(echo $a | median) m8=$(echo $b | median)
	awk -v w=$w -v a=$m2 -v b=$m8 -v n=$(echo $a | wc -w) 'BEGIN { printf "bench: %-7s n=%d 2 GiB %.3f s, 8 GiB %.3f s, delta %.3f s: %.1f GiB/s\n", w, n, a, b, b - a, 6 / (b - a) }'
done
