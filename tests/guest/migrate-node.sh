# rig-topologies: migrate2
# THEORY OF OPERATION: one of the two hosts of scripts/rig/migrate2 (issue
# 31): live migration of running Linux guests whose RAM is poolmem, from
# host A to host B, with Debian's QEMU on both (nested TCG). The migration
# stream leaves A's nested QEMU for 10.0.2.101:4444, which A's QEMU user
# network hands to "socat - TCP:127.0.0.1:PORT" on the machine; B's
# hostfwd brings 127.0.0.1:PORT to its port 4444. Nothing leaves the
# loopback. The hosts keep step through keys in an etcd on the loopback
# (pmcluster, as the cluster rig does).
#
# The guests are tests/guest/inner/ with inner=migrate: writer.c keeps a
# position-weighted checksum of 48 MiB it writes at random (500 words a
# second) and checks it against the memory every round. On A:
#  G  256 MiB from profile gold (mem-path=/run/poolmem/gold: a temporary
#     file, unlinked at once), 25% local, 75% pool, interleaved;
#  W  256 MiB from the named domain "web" (the argument poolctl printed).
# On B the same profile (G), and "web" made by poolctl vm create with other
# quotas than A's: all of it on pool p1, none local (W).
#
#  refused   B's pools are committed to a hog domain: G's QEMU on B is
#            refused at start by the profile's admission (ENOSPC, named in
#            the kernel log), before a byte moves; a migrate to B's closed
#            port fails on A, and G keeps running there, its domain
#            unchanged.
#  postcopy  B's QEMU refuses the postcopy-ram capability on a poolmem
#            backend (QEMU checks the backend file's file system); with
#            postcopy on A alone, the migration fails at its start and G
#            keeps running on A.
#  precopy   G, then W, move with multifd (QEMU 10's multifd receiver leaves
#            pages it never received alone, where the legacy stream reads
#            each zero page to compare it). B's QEMU runs with -S, so both
#            ends hold the guest paused after the switchover:
#            - its memory is the same on both: a hash of the whole domain
#              on A and on B, compared through etcd; and once B resumes it,
#              the guest's own checksum rounds pass on B;
#            - B's domain keeps B's quotas and pools, and B's per-node
#              meminfo grew where they say;
#            - pages the guest never touched took nothing on B: B's domain
#              holds no more than A's held before the move (plus 16 MiB of
#              what the guest touched during it);
#            - A's memory is back in full once A's QEMU has quit (and the
#              named domain is destroyed).
#  libvirt   A's libvirtd starts a VM on profile lvgold. First B's pools
#            are committed to a hog: virsh migrate fails with poolmem's
#            ENOSPC from B's incoming QEMU, B's kernel log names the
#            profile's admission, and the VM keeps running on A. Then,
#            with room on B, virsh migrate
#            --live --parallel moves it to B's libvirtd (qemu+tcp) with
#            the same profile: the VM runs on B and its writer passes
#            there, B's domain holds no more than A's did, and A's domain
#            and memory are gone once the VM left.
# Figures (migration time, downtime, what each end held) are printed.
. /rig/tests/lib/common.sh
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
role=$(arg rigrole)
E=$(arg rigetcd)
[ -n "$role" ] && [ -n "$E" ] || fail "rigrole= and rigetcd= are the host's to give"
k() { pmcluster "$E" "$@"; }
say() { k put "/rig/$role/$1" "$2" >/dev/null || fail "etcd: put $1"; }
other=A; [ "$role" = A ] && other=B
hear() { k wait "/rig/$other/$1" "${2:-600}" || fail "$role: no '$1' from $other"; }
await() { hear "$@" >/dev/null; }

ip link set lo up
have_eth0() { [ -e /sys/class/net/eth0 ]; }
wait_for 20 have_eth0 || fail "no eth0 (virtio_pci, virtio_net)"
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
wait_for 60 k get /rig/start >/dev/null || fail "etcd at $E unreachable"
pm_pools_up
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
allocated() { echo $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))); }
dom_mib() { echo $((($(dom_attr "$1" local_bytes) + $(dom_attr "$1" pool_bytes)) / MiB)); }
used_mib() { echo $((($(node_used_kb 0) + $(node_used_kb $n1) + $(node_used_kb $n2)) / 1024)); }
base_used=$(used_mib)
poolctl profile create gold --local 25% --pool 75% --tier-policy interleave >/dev/null

MEM=256M
APPEND="console=ttyS0 quiet panic=-1 cryptomgr.notests=1 init_on_alloc=0 mitigations=off init_on_free=0 inner=migrate writer=48,500"
# inner NAME [QEMU ARGS...]: a guest with QMP on /tmp/NAME.qmp and its
# console in /tmp/NAME.log; the same devices on both hosts
inner() {
	local n=$1
	shift
	rm -f /tmp/$n.qmp /tmp/$n.log
	exec qemu-system-x86_64 -accel tcg,tb-size=64 -nodefaults -display none -L /rig/qemu-data -smp 1 \
		"$@" -kernel /rig/inner/kernel -initrd /rig/inner/initrd.cpio -append "$APPEND" \
		-serial file:/tmp/$n.log -qmp unix:/tmp/$n.qmp,server=on,wait=off -no-reboot
}
GOLD="-object memory-backend-file,id=mem0,mem-path=/run/poolmem/gold,size=268435456,share=on,align=2097152 -machine memory-backend=mem0 -m $MEM"
qmp() { local n=$1; shift; pmtest qmp /tmp/$n.qmp "$@"; }
has_qmp() { [ -S /tmp/$1.qmp ] && qmp "$1" '{"execute":"query-status"}'; }
# the last round the guest's writer passed, from its console here
last_ok() { sed -n 's/^INNER ROUND \([0-9]*\) OK.*/\1/p' /tmp/$1.log 2>/dev/null | tail -n 1; }
ok_after() { [ "$(last_ok "$1")" -gt "$2" ] 2>/dev/null; }
no_bad() { ! grep -q 'ROUND .* BAD' /tmp/$1.log || fail "$1: $(grep -m1 BAD /tmp/$1.log)"; }
status_of() { qmp "$1" '{"execute":"query-status"}' | sed -n 's/.*"status": "\([a-z-]*\)".*/\1/p'; }
mig_field() { echo "$1" | sed -n "s/.*\"$2\": \\([0-9]*\\).*/\\1/p"; }
# the file QEMU $1 maps from directory $2 (a profile's unlinked file)
qemu_fd() {
	local f
	for f in /proc/$1/fd/*; do
		case $(readlink "$f") in "$2"/*) echo "$f"; return ;; esac
	done
}
# caps MULTIFD POSTCOPY: the capabilities command
caps() {
	echo '{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"multifd","state":'"$1"'},{"capability":"postcopy-ram","state":'"$2"'}]}}'
}
CAPS=$(caps true false)
incoming() { # NAME [CAPS]: listen on port 4444 (multifd by default)
	local out
	out=$(qmp "$1" "${2:-$CAPS}" '{"execute":"migrate-incoming","arguments":{"uri":"tcp:0.0.0.0:4444"}}') ||
		fail "$1: migrate-incoming: $out"
}
# migrate NAME [CAPS]: A's side of a move to B; waits for its end and
# prints query-migrate's answer
migrate() {
	local n=$1 caps=${2:-$CAPS} out i
	out=$(qmp "$n" "$caps" '{"execute":"migrate-set-parameters","arguments":{"downtime-limit":3000}}' \
		'{"execute":"migrate","arguments":{"uri":"tcp:10.0.2.101:4444"}}') || fail "$n: migrate refused: $out"
	for i in $(seq 1200); do
		out=$(qmp "$n" '{"execute":"query-migrate"}')
		case $out in *'"status": "completed"'* | *'"status": "failed"'* | *'"status": "cancelled"'*) break ;; esac
		sleep 0.5
	done
	echo "$out"
}

# ---- libvirt: the hosts' own daemons move a VM (virsh migrate --live) ----
# Both run libvirtd 11 (tests/guest/lib/libvirt.sh) with the qemu.conf line
# of a profile made with --libvirt; B's also listens on TCP (A's virsh
# reaches it at 10.0.2.102:16509 through the loopback, as the stream goes
# to 10.0.2.101:49152). Each daemon gets a host UUID of its own (the rig
# guests' SMBIOS has none): libvirt refuses a move to its own host.
lv_setup() {
	. /rig/tests/lib/libvirt.sh
	lv_mount
	echo "host_uuid = \"$(cat /proc/sys/kernel/random/uuid)\"" >> $LV/etc/libvirt/libvirtd.conf
	if [ "$role" = B ]; then
		printf 'listen_tls = 0\nlisten_tcp = 1\nauth_tcp = "none"\n' >> $LV/etc/libvirt/libvirtd.conf
		export LV_LISTEN=1
	fi
	poolctl profile create lvgold --local 25% --pool 75% --owner libvirt-qemu --libvirt > /tmp/lv.out
	conf=$(grep '^memory_backing_dir = ' /tmp/lv.out) || fail "no qemu.conf line in poolctl's output"
	sed -n '/<memoryBacking>/,/<\/memoryBacking>/p' /tmp/lv.out > /tmp/lv.mb
	lv_up "$conf"
}

if [ "$role" = A ]; then
	# ---- A: two guests, G on the profile, W on a named domain ----
	warg=$(poolctl vm create web --size $MEM --local 64M --pool 192M --tier-policy interleave | sed -n 2p)
	# shellcheck disable=SC2086 # the printed argument is words
	inner G $GOLD > /tmp/qemu-G.err 2>&1 &
	gpid=$!
	# shellcheck disable=SC2086
	inner W $warg > /tmp/qemu-W.err 2>&1 &
	wpid=$!
	running() { ok_after "$1" 0 || ! kill -0 "$2" 2>/dev/null; }
	wait_for 900 running G $gpid
	wait_for 300 running W $wpid
	ok_after G 0 || fail "G did not run: $(cat /tmp/qemu-G.err) $(tail -n 5 /tmp/G.log)"
	ok_after W 0 || fail "W did not run: $(cat /tmp/qemu-W.err) $(tail -n 5 /tmp/W.log)"
	gdom=$(profile_domain gold)
	info "A: both guests run their writers (G on $gdom, W on web): $(grep -h 'INNER BOOTED' /tmp/G.log /tmp/W.log | tr '\n' ' ')"

	# ---- refused: B can't hold G ----
	say ready 1
	await refused
	info "A: B said: $(k get /rig/B/refused)"
	g0=$(dom_mib "$gdom") r0=$(last_ok G)
	out=$(migrate G)
	case $out in *'"status": "failed"'*) ;; *) fail "G's migrate to a B without its QEMU: $out" ;; esac
	wait_for 60 ok_after G $((r0 + 2)) || fail "G stopped after the refused move: $(tail -n 3 /tmp/G.log)"
	check_eq "G's state after the refused move" running "$(status_of G)"
	# The failed move neither frees nor charges twice: the domain keeps
	# every page it had (G's own kernel may still touch new ones while
	# the move is tried, so it may grow) and stays within G's RAM.
	g1=$(dom_mib "$gdom")
	[ "$g1" -ge "$g0" ] && [ "$g1" -le "${MEM%M}" ] ||
		fail "G's domain after the refused move: $g1 MiB, expected $g0 to ${MEM%M} MiB"
	info "A: G's domain $g0 -> $g1 MiB across the refused move"
	info "A: the move failed at connect ($(echo "$out" | sed -n 's/.*"error-desc": "\([^"]*\)".*/\1/p')); G kept running: round $r0 -> $(last_ok G)"

	# ---- postcopy ----
	say refused-seen 1
	await postcopy-listening
	r0=$(last_ok G)
	out=$(migrate G "$(caps false true)")
	case $out in *'"status": "failed"'*) ;; *) fail "G's postcopy move did not fail: $out" ;; esac
	wait_for 60 ok_after G $((r0 + 2)) || fail "G stopped after the postcopy attempt: $(tail -n 3 /tmp/G.log)"
	check_eq "G's state after the postcopy attempt" running "$(status_of G)"
	info "A: postcopy on A alone: $(echo "$out" | sed -n 's/.*"error-desc": "\([^"]*\)".*/\1/p'); G kept running: round $r0 -> $(last_ok G)"

	# ---- precopy: G, then W ----
	say postcopy-done 1
	for g in G W; do
		d=$gdom
		[ $g = W ] && d=web
		await "$g-listening"
		before=$(dom_mib $d) r0=$(last_ok $g)
		say "$g-before" "$before $r0"
		out=$(migrate $g)
		case $out in *'"status": "completed"'*) ;; *) fail "$g: migration did not complete: $out" ;; esac
		after=$(dom_mib $d)
		info "A: $g moved in $(mig_field "$out" total-time) ms, downtime $(mig_field "$out" downtime) ms, $(($(mig_field "$out" transferred) / MiB)) MiB sent; A's domain held $before MiB before, $after MiB after (QEMU reads every page it sends)"
		say "$g-done" "$(mig_field "$out" total-time) $(mig_field "$out" downtime)"
		check_eq "$g on A after the move" postmigrate "$(status_of $g)"
		fd=/run/poolmem/web
		[ $g = G ] && fd=$(qemu_fd $gpid /run/poolmem/gold)
		say "$g-hash" "$(pmtest hash "$fd")"
		await "$g-compared"
		qmp $g '{"execute":"quit"}' >/dev/null || true
		if [ $g = G ]; then
			wait $gpid || true
			wait_for 10 sh -c "[ ! -d $DOMSYS/$gdom ]" || fail "$gdom still there after its QEMU quit"
		else
			wait $wpid || true
			poolctl vm destroy web >/dev/null
		fi
	done
	check_eq "A's pools after both guests left" 0 "$(allocated)"
	back=$(($(used_mib) - base_used))
	[ $back -le 8 ] && [ $back -ge -8 ] || fail "A's nodes use $back MiB more than before the guests"
	info "A: every byte back: the pools hold 0, the nodes use $back MiB more than before the guests"

	# ---- libvirt ----
	lv_setup
	lv_xml migrate.xml web1 "@MEMORY_BACKING@</tmp/lv.mb" | lv_define web1
	virsh start web1 >/dev/null || fail "virsh start web1: $(tail -n 20 $LV$LVLOG)"
	ln -sf "$(lv_console web1)" /tmp/L.log
	wait_for 900 ok_after L 0 || fail "web1 did not run under libvirt: $(lv_vm_diag web1)"
	d=$(profile_domain lvgold)
	# refused by admission on B: a hog there leaves no room for lvgold's
	# pool quota; libvirt on B starts the incoming QEMU, whose domain file
	# poolmem refuses (ENOSPC), and the VM stays here, running
	await lv-full 1500
	r0=$(last_ok L)
	out=$(virsh migrate --live --parallel web1 qemu+tcp://10.0.2.102/system tcp://10.0.2.101:49152 2>&1) &&
		fail "virsh migrate into a B without room succeeded: $out"
	echo "$out" | grep -q "No space left on device" ||
		fail "virsh migrate into a B without room failed, but not for want of room: $out"
	check_eq "web1 on A after the refused virsh migrate" running "$(virsh domstate web1)"
	wait_for 60 ok_after L $((r0 + 1)) || fail "web1's writer stopped after the refused move: $(lv_vm_diag web1)"
	info "A: virsh migrate into a full B refused: $(echo "$out" | tr '\n' ' ' | cut -c 1-300); web1 kept running: round $r0 -> $(last_ok L)"
	say lv-refused 1
	before=$(dom_mib "$d")
	await lv-listening
	t0=$(uptime_s)
	out=$(virsh migrate --live --parallel --verbose web1 qemu+tcp://10.0.2.102/system tcp://10.0.2.101:49152 2>&1) ||
		fail "virsh migrate: $out; $(tail -n 20 $LV$LVLOG)"
	secs=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
	check_eq "web1 on A after virsh migrate" "shut off" "$(virsh domstate web1)"
	wait_for 30 sh -c "[ ! -d $DOMSYS/$d ]" || fail "$d still there after web1 left"
	check_eq "A's pools after web1 left" 0 "$(allocated)"
	info "A: virsh migrate --live --parallel moved web1 (libvirt, profile lvgold) in $secs s; its domain $d held $before MiB, every byte back"
	say lv-done "$before"
	await lv-finished
	virsh undefine web1 >/dev/null
	say finished 1
	await finished
	exit 0
fi

# ---- B ----
await ready 1200
# refused: a hog commits all but 128 MiB of the pools, so G's profile
# domain (192 MiB of pool) does not fit
cap=$((($(pool_attr p0 capacity_bytes) + $(pool_attr p1 capacity_bytes)) / MiB))
poolctl vm create hog --size $((cap - 128))M --pool $((cap - 128))M >/dev/null
dmesg -c >/dev/null
# shellcheck disable=SC2086
inner G $GOLD -incoming defer > /tmp/qemu-G.err 2>&1 &
gpid=$!
gone() { ! kill -0 "$1" 2>/dev/null; }
wait_for 60 gone $gpid || { kill $gpid; fail "G's QEMU on B started with the pools full"; }
grep -q "No space left on device" /tmp/qemu-G.err || fail "G's QEMU on B did not say why: $(cat /tmp/qemu-G.err)"
line=$(dmesg | grep -m1 'profile gold: .*refused') || fail "no admission line naming the profile: $(dmesg | tail -n 5)"
check_eq "B's pools after the refusal" 0 "$(allocated)"
info "B: G refused at QEMU's start: $(tr '\n' ' ' < /tmp/qemu-G.err); kernel: $line"
say refused "$(head -n 1 /tmp/qemu-G.err)"
poolctl vm destroy hog >/dev/null
await refused-seen

# ---- postcopy ----
# shellcheck disable=SC2086
inner G $GOLD -S -incoming defer > /tmp/qemu-G.err 2>&1 &
gpid=$!
wait_for 60 has_qmp G || fail "G's QEMU on B: $(cat /tmp/qemu-G.err)"
out=$(qmp G '{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"postcopy-ram","state":true}]}}') &&
	fail "B's QEMU took postcopy-ram on a poolmem backend: $out"
echo "$out" | grep -q "Postcopy is not supported: Host backend files need to be TMPFS or HUGETLBFS only" ||
	fail "B's QEMU refused postcopy with another reason: $out"
info "B: postcopy-ram refused: $(echo "$out" | sed -n 's/.*"desc": "\([^"]*\)".*/\1/p')"
# A tries postcopy alone: B listens for a plain stream
incoming G "$(caps false false)"
say postcopy-listening 1
wait $gpid && fail "G's QEMU on B took a postcopy stream it had not agreed to"
info "B: the postcopy stream from A ended G's QEMU here: $(tr '\n' ' ' < /tmp/qemu-G.err)"
check_eq "B's pools after the postcopy attempt" 0 "$(allocated)"
await postcopy-done

# ---- precopy ----
warg=$(poolctl vm create web --size $MEM --pool $MEM --pools p1 | sed -n 2p)
for g in G W; do
	u0=$(node_used_kb 0) u1=$(node_used_kb $n1) u2=$(node_used_kb $n2)
	if [ $g = G ]; then
		# shellcheck disable=SC2086
		inner G $GOLD -S -incoming defer > /tmp/qemu-G.err 2>&1 &
	else
		# shellcheck disable=SC2086
		inner W $warg -S -incoming defer > /tmp/qemu-W.err 2>&1 &
	fi
	qpid=$!
	wait_for 60 has_qmp $g || fail "$g's QEMU on B: $(cat /tmp/qemu-$g.err)"
	d=web
	[ $g = G ] && d=$(profile_domain gold)
	check_eq "$g's domain on B before the move (MiB)" 0 "$(dom_mib "$d")"
	incoming $g
	say "$g-listening" 1
	v=$(hear "$g-done" 1200)
	total=${v% *} down=${v#* }
	v=$(k get /rig/A/$g-before)
	abefore=${v% *} r0=${v#* }
	wait_for 60 sh -c "[ \"\$(pmtest qmp /tmp/$g.qmp '{\"execute\":\"query-migrate\"}' | grep -c completed)\" = 1 ]" ||
		fail "$g: B never saw the migration complete: $(qmp $g '{"execute":"query-migrate"}')"
	check_eq "$g on B after the move (-S)" paused "$(status_of $g)"
	held=$(dom_mib "$d")
	d0=$((($(node_used_kb 0) - u0) / 1024)) d1=$((($(node_used_kb $n1) - u1) / 1024))
	d2=$((($(node_used_kb $n2) - u2) / 1024))
	info "B: $g arrived (A: $total ms, downtime $down ms): B's domain $d holds $held MiB ($(dom_attr "$d" local_bytes) local, pools: $(tr '\n' ' ' < $DOMSYS/$d/pool_chunks)); A's held $abefore MiB before the move; nodes 0/$n1/$n2 grew by $d0/$d1/$d2 MiB"
	# untouched pages take nothing here
	[ "$held" -le $((abefore + 16)) ] ||
		fail "$g: B's domain holds $held MiB, A's held $abefore MiB before the move: pages the guest never touched were allocated on B"
	[ "$held" -lt 192 ] || fail "$g: B's domain holds $held of 256 MiB"
	if [ $g = W ]; then
		# B's quotas: all of it from p1 (node $n2), none local
		check_eq "W on B: local bytes" 0 "$(dom_attr web local_bytes)"
		check_eq "W on B: chunks on p0" "" "$(dom_pool_chunks web p0)"
		[ $d2 -ge $((held - 4)) ] && [ $d2 -le $((held + 4)) ] ||
			fail "node $n2 (p1) grew by $d2 MiB, W's domain holds $held MiB"
		[ $d1 -le 4 ] && [ $d1 -ge -4 ] || fail "node $n1 (p0) grew by $d1 MiB: W's quota there is 0"
	else
		# the profile's split: at most 25% local, 75% pool
		[ "$(dom_attr "$d" local_bytes)" -le $((64 * MiB)) ] || fail "G's local bytes $(dom_attr "$d" local_bytes) over 25%"
		[ "$(dom_attr "$d" pool_bytes)" -le $((192 * MiB)) ] || fail "G's pool bytes $(dom_attr "$d" pool_bytes) over 75%"
		[ $((d1 + d2)) -ge $(($(dom_attr "$d" pool_bytes) / MiB - 4)) ] ||
			fail "pool nodes grew by $((d1 + d2)) MiB, G's pool bytes are $(($(dom_attr "$d" pool_bytes) / MiB)) MiB"
	fi
	# the same memory on both ends (read last: it touches every page here)
	fd=/run/poolmem/web
	[ $g = G ] && fd=$(qemu_fd $qpid /run/poolmem/gold)
	ahash=$(hear "$g-hash")
	bhash=$(pmtest hash "$fd")
	check_eq "$g: the guest's memory on B (hash, nonzero pages) is A's" "$ahash" "$bhash"
	say "$g-compared" 1
	qmp $g '{"execute":"cont"}' >/dev/null
	wait_for 120 ok_after $g 0 || fail "$g did not run on B: $(tail -n 5 /tmp/$g.log)"
	no_bad $g
	info "B: $g's writer passed round $(last_ok $g) here (A's last before the move: $r0)"
	qmp $g '{"execute":"quit"}' >/dev/null || true
	wait $qpid || true
done
poolctl vm destroy web >/dev/null
check_eq "B's pools after both guests" 0 "$(allocated)"

# ---- libvirt ----
lv_setup
# first, no room: the hog commits all but 128 MiB of the pools
cap=$((($(pool_attr p0 capacity_bytes) + $(pool_attr p1 capacity_bytes)) / MiB))
poolctl vm create hog --size $((cap - 128))M --pool $((cap - 128))M >/dev/null
dmesg -c >/dev/null
say lv-full 1
await lv-refused 1500
line=$(dmesg | grep -m1 'profile lvgold: .*refused') ||
	fail "B: no admission line naming profile lvgold after the refused virsh migrate: $(dmesg | tail -n 5)"
check_eq "B's pools after the refused virsh migrate" 0 "$(allocated)"
info "B: libvirt's incoming QEMU refused by admission: $line"
poolctl vm destroy hog >/dev/null
say lv-listening 1
before=$(hear lv-done 1500)
check_eq "web1 on B after virsh migrate" running "$(virsh domstate web1)"
d=$(profile_domain lvgold)
held=$(dom_mib "$d")
ln -sf "$(lv_console web1)" /tmp/L.log
r0=$(last_ok L)
wait_for 120 ok_after L "${r0:-0}" || fail "web1's writer did not pass a round on B: $(lv_vm_diag web1)"
no_bad L
info "B: web1 arrived through libvirt: its domain $d (profile lvgold) holds $held MiB ($(dom_attr "$d" local_bytes) local), A's held $before MiB; its writer passed round $(last_ok L) here"
[ "$held" -le $((before + 16)) ] || fail "web1: B's domain holds $held MiB, A's held $before MiB"
[ "$(dom_attr "$d" local_bytes)" -le $((64 * MiB)) ] || fail "web1's local bytes over the profile's 25%"
virsh destroy web1 >/dev/null
wait_for 30 sh -c "[ ! -d $DOMSYS/$d ]" || fail "$d still there after virsh destroy"
check_eq "B's pools after web1" 0 "$(allocated)"
say lv-finished 1
say finished 1
await finished
