#!/bin/sh
# poolctl libvirt hook without a module (--control names nothing): what it
# does with the domain XML libvirt gives it before it binds anything.
#  - operations other than prepare begin and release end: exit 0, stdin unread;
#  - a VM whose RAM is not a file and that names no profile: not ours, 0;
#  - a file-backed VM without a profile and no module: 0 (nothing to bind);
#  - a VM that names a profile with no module: 3 at prepare, naming the VM
#    and the profile; 0 at release (nothing waits);
#  - a profile without file-backed RAM: 2, naming the element it needs;
#  - XML that does not parse, or has no <name>: 2;
#  - an invalid profile name: 2; another namespace's <profile>: not ours.
# usage: libvirt-hook.sh POOLCTL
set -u
pc=$1
NS=http://poolmem.org/xmlns/libvirt/1.0
fails=0
# expect RC GREP XML OP SUBOP
expect() {
	out=$(printf '%s' "$3" | "$pc" --control /nonexistent/control libvirt hook vm1 "$4" "$5" - 2>&1)
	rc=$?
	if [ "$rc" -ne "$1" ] || { [ -n "$2" ] && ! echo "$out" | grep -q -- "$2"; }; then
		echo "FAIL: $4 $5 on $3: rc $rc (want $1), output: $out (want '$2')"
		fails=$((fails + 1))
	else
		echo "ok: $4 $5: rc $rc${out:+: $out}"
	fi
}
file="<memoryBacking><source type='file'/></memoryBacking>"
md() { echo "<metadata><poolmem:profile xmlns:poolmem='$NS' name='$1'/></metadata>"; }
expect 0 "" "not xml at all" started begin
expect 0 "" "<domain id='1'><name>vm1</name></domain>" prepare begin
expect 0 "" "<domain id='1'><name>vm1</name>$file</domain>" prepare begin
expect 3 "VM vm1: profile gold: the poolmem module is not loaded" "<domain id='1'><name>vm1</name>$file$(md gold)</domain>" prepare begin
expect 0 "" "<domain><name>vm1</name>$file$(md gold)</domain>" release end
expect 2 "needs <memoryBacking><source type='file'/>" "<domain id='1'><name>vm1</name>$(md gold)</domain>" prepare begin
expect 2 "does not parse" "<domain id='1'><name>vm1" prepare begin
expect 2 "has no <name>" "<domain id='1'>$file</domain>" prepare begin
expect 2 "invalid" "<domain id='1'><name>vm1</name>$file$(md 'a b')</domain>" prepare begin
# another namespace's element of the same name is not ours
expect 0 "" "<domain id='1'><name>vm1</name>$file<metadata><x:profile xmlns:x='urn:other' name='gold'/></metadata></domain>" prepare begin
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
