# Helpers for the libvirt guest tests (sourced after lib/common.sh inside the rig
# guest of the libvirt topology). The topology's second disk, /dev/vda, is a
# Debian root file system with the real libvirt daemon and QEMU
# (scripts/rig/libvirt-root). lv_up mounts it on /lv with what a host
# gives its daemons (proc, sysfs, cgroup2, devtmpfs, devpts, /run, /tmp),
# bind-mounts the poolmem file system at the same path, /run/poolmem, and
# starts virtlogd and libvirtd there, chrooted, with their default
# configuration but for the qemu.conf line poolctl printed. VMs are driven
# only through virsh; their XML is tests/guest/libvirt/*.xml with the
# poolmem parts pasted from poolctl's output (lv_xml).
LV=/lv
LVXML=/rig/tests/libvirt
LVLOG=/var/log/libvirt/libvirtd.log

lv() { chroot $LV "$@"; }
virsh() { chroot $LV /usr/bin/virsh -c qemu:///system "$@"; }

lv_mounted() { grep -q " $LV ext4 " /proc/mounts; }

# Mount the root and what its daemons need, once per boot.
lv_mount() {
	lv_mounted && return 0
	[ -b /dev/vda ] || skip "no /dev/vda: not the libvirt topology"
	mkdir -p $LV
	mount -t ext4 /dev/vda $LV || fail "mounting the libvirt root (/dev/vda)"
	mount -t proc proc $LV/proc
	mount -t sysfs sysfs $LV/sys
	mount -t cgroup2 cgroup2 $LV/sys/fs/cgroup
	mount -t devtmpfs devtmpfs $LV/dev
	mkdir -p $LV/dev/pts $LV/dev/shm $LV/dev/mqueue
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $LV/dev/pts
	mount -t tmpfs -o mode=1777 tmpfs $LV/dev/shm
	mount -t mqueue mqueue $LV/dev/mqueue 2>/dev/null || true
	mount -t tmpfs -o mode=755 tmpfs $LV/run
	mount -t tmpfs -o mode=1777 tmpfs $LV/tmp
	mkdir -p $LV/run/poolmem $LV/run/lock
	mount --bind $PMFS $LV/run/poolmem
	# libvirt gives each QEMU a private mount namespace that is a slave of
	# the host's: the host's mounts must be shared (systemd makes them so)
	mount --make-rshared $LV
	# libvirt's users in the rig's /etc (poolctl --owner libvirt-qemu),
	# the rig's tenant in the root's
	grep '^libvirt-qemu:' $LV/etc/passwd >> /etc/passwd
	grep '^kvm:\|^libvirt-qemu:' $LV/etc/group >> /etc/group
	grep '^tenant:' /etc/passwd >> $LV/etc/passwd
	grep '^tenant:' /etc/group >> $LV/etc/group
	# the inner guests' kernel and initramfs, where libvirt's DAC driver
	# labels them for the VM's user and back (a copy per user: libvirt
	# refuses to relabel a kernel another VM's user is using)
	mkdir -p $LV/var/lib/libvirt/boot/tenant
	cp /rig/inner/kernel /rig/inner/initrd.cpio $LV/var/lib/libvirt/boot/
	cp /rig/inner/kernel /rig/inner/initrd.cpio $LV/var/lib/libvirt/boot/tenant/
}

# lv_up [QEMU.CONF-LINE]: the daemons running, with that line (poolctl's
# "memory_backing_dir = ...") as qemu.conf's only change; libvirtd is
# restarted when the line changes (running VMs keep running). With
# LV_LISTEN=1 libvirtd also listens on TCP (libvirtd.conf's listen_tcp, as
# the caller set it): another host's libvirtd migrates to it.
# the libvirt and QEMU majors the libvirt tests require (Debian 12's
# backports and Debian 13 carry libvirt 11.3 and QEMU 10.0)
LV_MIN_LIBVIRT=11
LV_MIN_QEMU=10

lv_up() {
	local line=${1:-} conf=$LV/etc/libvirt/qemu.conf
	lv_mount
	[ -f $conf.orig ] || cp $conf $conf.orig
	if ! { cat $conf.orig; [ -z "$line" ] || echo "$line"; } | cmp -s - $conf; then
		{ cat $conf.orig; [ -z "$line" ] || echo "$line"; } > $conf
		lv_stop_daemon
	fi
	if ! lv_daemon_pid >/dev/null; then
		[ -S $LV/run/libvirt/virtlogd-sock ] || lv virtlogd -d || fail "virtlogd did not start"
		mkdir -p $LV/var/log/libvirt
		LIBVIRT_LOG_OUTPUTS="2:file:$LVLOG" lv libvirtd -d ${LV_LISTEN:+--listen} || fail "libvirtd did not start"
		wait_for 60 virsh version || fail "libvirtd does not answer: $(tail -n 20 $LV$LVLOG)"
	fi
	local v lver qver
	v=$(virsh version --daemon)
	lver=$(echo "$v" | sed -n 's/^Running against daemon: *//p')
	qver=$(echo "$v" | sed -n 's/^Running hypervisor: *QEMU *//p')
	info "libvirtd $(lv_daemon_pid) up: libvirt $lver, QEMU $qver${line:+ ($line)}"
	# the stack these tests are about (scripts/rig/libvirt-root installs it
	# from bookworm-backports): an older one proves nothing about it
	[ "${lver%%.*}" -ge $LV_MIN_LIBVIRT ] 2>/dev/null ||
		fail "libvirtd is libvirt '$lver': these tests need libvirt $LV_MIN_LIBVIRT or later"
	[ "${qver%%.*}" -ge $LV_MIN_QEMU ] 2>/dev/null ||
		fail "libvirt runs QEMU '$qver': these tests need QEMU $LV_MIN_QEMU or later"
}

lv_daemon_pid() {
	local p
	p=$(cat $LV/run/libvirtd.pid 2>/dev/null) || return 1
	[ -n "$p" ] && [ -d /proc/$p ] && echo "$p"
}

lv_stop_daemon() {
	local p
	p=$(lv_daemon_pid) || return 0
	kill "$p"
	wait_for 30 sh -c "[ ! -d /proc/$p ]" || fail "libvirtd $p did not exit"
}

# lv_xml TEMPLATE NAME [@KEY@<FILE | @KEY@=VALUE ...]: print
# tests/guest/libvirt/TEMPLATE with @NAME@ replaced by NAME, each line that
# holds @KEY@<FILE's key replaced by FILE's lines (the XML poolctl
# printed), and @KEY@=VALUE's key replaced by VALUE where it stands.
lv_xml() {
	local tpl=$LVXML/$1 name=$2 kv t=/tmp/lv_xml.$$
	shift 2
	sed "s/@NAME@/$name/g" "$tpl" > $t
	for kv in "$@"; do
		case "$kv" in
		*"<"*)
			awk -v key="${kv%%<*}" -v file="${kv#*<}" '
				index($0, key) { while ((getline l < file) > 0) print l; close(file); next }
				{ print }' $t > $t.n ;;
		*) sed "s|${kv%%=*}|${kv#*=}|g" $t > $t.n ;;
		esac
		mv $t.n $t
	done
	if grep -q '@[A-Z_]*@' $t; then
		fail "$1: placeholders left: $(grep -o '@[A-Z_]*@' $t | sort -u | xargs)"
	fi
	cat $t
	rm -f $t
}

# lv_define NAME: define VM NAME from the XML on stdin.
lv_define() {
	cat > $LV/tmp/$1.xml
	virsh define /tmp/$1.xml >/dev/null || fail "virsh define $1: $(cat $LV/tmp/$1.xml)"
}

# Remove every VM a failed test left.
lv_clean() {
	local d
	for d in $(virsh list --all --name 2>/dev/null); do
		virsh destroy "$d" >/dev/null 2>&1 || true
		virsh undefine "$d" >/dev/null 2>&1 || true
		info "removed VM $d left by an earlier test"
	done
}

# The console file of VM $1 (its <serial type='file'>).
lv_console() { echo $LV/var/log/libvirt/qemu/$1.console; }

# The pid of VM $1's QEMU (libvirt's pid file).
lv_qemu_pid() { cat $LV/run/libvirt/qemu/$1.pid; }

# The domain made of poolmem file $1 (a path under $PMFS): its sysfs name.
dom_of_file() {
	local f want=${1#$PMFS}
	for f in $DOMSYS/*/file; do
		[ -f "$f" ] && [ "$(cat "$f")" = "$want" ] && { basename "$(dirname "$f")"; return; }
	done
	return 0
}

# What went wrong with VM $1: its state, the end of its QEMU log and console.
lv_vm_diag() {
	echo "state: $(virsh domstate $1 --reason 2>&1)"
	echo "qemu log: $(tail -n 8 $LV/var/log/libvirt/qemu/$1.log 2>&1)"
	echo "console: $(tail -n 15 $(lv_console $1) 2>&1)"
}

# lv_hook_install / lv_hook_remove: poolmem's qemu hook in the root's
# /etc/libvirt/hooks/qemu.d/, running the rig's poolctl (copied to where the
# hook looks for it; the root has its libraries). libvirtd looks for hooks
# when it starts, so both stop it: the next lv_up starts it again.
lv_hook_install() {
	lv_mount
	mkdir -p $LV/usr/local/sbin $LV/etc/libvirt/hooks/qemu.d
	cp "$(command -v poolctl)" $LV/usr/local/sbin/poolctl
	cp /rig/bin/poolmem-libvirt-hook $LV/etc/libvirt/hooks/qemu.d/poolmem
	lv_stop_daemon
}

lv_hook_remove() {
	rm -f $LV/etc/libvirt/hooks/qemu.d/poolmem
	lv_stop_daemon
}
