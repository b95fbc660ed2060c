#!/bin/sh
# The installed hook (ctl/libvirt-hook.in, as CMake renders it) with its
# poolctl gone, as after "apt remove poolmem-tools" without purge: libvirt
# must still start VMs, so the hook exits 0 for every operation, reads no
# XML it needs, and notes poolctl's absence once (POOLMEM_HOOK_NOTE).
# With poolctl there, it runs it with libvirt's arguments.
# usage: libvirt-hook-missing.sh HOOK.in
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
no() { echo "FAIL: $*"; fails=$((fails + 1)); }
sed "s|@CMAKE_INSTALL_FULL_SBINDIR@|$tmp/sbin|" "$1" > "$tmp/hook"
chmod +x "$tmp/hook"
export POOLMEM_HOOK_NOTE=$tmp/note
xml="<domain id='1'><name>vm1</name><memoryBacking><source type='file'/></memoryBacking><metadata><poolmem:profile xmlns:poolmem='http://poolmem.org/xmlns/libvirt/1.0' name='gold'/></metadata></domain>"
for op in "prepare begin" "start begin" "started begin" "stopped end" "release end"; do
	# shellcheck disable=SC2086
	echo "$xml" | "$tmp/hook" vm1 $op - > "$tmp/out" 2>&1 || no "$op: exit $? with poolctl missing: $(cat "$tmp/out")"
done
grep -q "poolctl is missing (poolmem-tools removed?)" "$tmp/note" 2>/dev/null || no "no note of poolctl's absence"
n=$(cat "$tmp/out" "$tmp/note" | wc -l)
# the note is written once: the later calls find it there
echo "$xml" | "$tmp/hook" vm1 prepare begin - > "$tmp/out2" 2>&1
[ ! -s "$tmp/out2" ] || no "the note came again: $(cat "$tmp/out2")"
# with poolctl back, the hook is poolctl's
mkdir -p "$tmp/sbin"
printf '#!/bin/sh\necho "poolctl $*"; exit 3\n' > "$tmp/sbin/poolctl"
chmod +x "$tmp/sbin/poolctl"
out=$(echo "$xml" | "$tmp/hook" vm1 prepare begin - 2>&1)
rc=$?
[ $rc -eq 3 ] && [ "$out" = "poolctl libvirt hook vm1 prepare begin -" ] ||
	no "with poolctl there: rc $rc, '$out' (want poolctl's exit 3 and its arguments)"
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed ($n lines of note)"
