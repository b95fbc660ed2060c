# rig-topologies: nvdimm-numa
# rig-debug: skip XML validation in userspace; QEMU on domain files runs on the debug kernel in qemu-real
# rig-needs: virt-xml-validate
# THEORY OF OPERATION: the libvirt XML poolctl prints is valid libvirt 9.0
# XML (Debian 12's virt-xml-validate and schemas), checked inside complete
# domain definitions: a named domain as an NVDIMM memory device (its file
# as <source><path>, align as <alignsize>), and a profile as the
# memory_backing_dir line plus <memoryBacking> with a file source; a znuma
# profile adds the VM's <vcpu>, <memory> and <cpu><numa> cells.
. /rig/tests/lib/common.sh
command -v virt-xml-validate >/dev/null || skip "virt-xml-validate not in the image"
pm_pools_up

dev=$(poolctl vm create web1 --size 256M --pool 256M --libvirt)
echo "$dev"
echo "$dev" | grep -q "<path>/run/poolmem/web1</path>" || fail "no file path in: $dev"
echo "$dev" | grep -q "<alignsize unit='KiB'>2048</alignsize>" || fail "no alignsize in: $dev"
cat > /tmp/web1.xml <<XML
<domain type='kvm'>
  <name>web1</name>
  <maxMemory slots='4' unit='KiB'>4194304</maxMemory>
  <memory unit='KiB'>1310720</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <cpu><numa><cell id='0' cpus='0' memory='1048576' unit='KiB'/></numa></cpu>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
$(echo "$dev" | grep -v '^<!--')
  </devices>
</domain>
XML
virt-xml-validate /tmp/web1.xml domain || fail "named-domain XML does not validate"
sed 's/web1/web 1/; s|<size unit|<bogus unit|; s|</size>|</bogus>|' /tmp/web1.xml > /tmp/bad.xml
virt-xml-validate /tmp/bad.xml domain >/dev/null 2>&1 && fail "the validator accepts broken XML: it proves nothing"
info "ok: a broken copy is refused"
poolctl vm destroy web1 >/dev/null

prof=$(poolctl profile create gold --local 25% --pool 75% --owner tenant --libvirt)
echo "$prof"
echo "$prof" | grep -q '^memory_backing_dir = "/run/poolmem/gold"$' || fail "no qemu.conf line in: $prof"
cat > /tmp/gold.xml <<XML
<domain type='kvm'>
  <name>gold-vm</name>
  <memory unit='KiB'>1048576</memory>
$(echo "$prof" | sed -n '/<memoryBacking>/,/<\/memoryBacking>/p')
$(echo "$prof" | sed -n '/<metadata>/,/<\/metadata>/p')
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices>
</domain>
XML
grep -q "<source type='file'/>" /tmp/gold.xml || fail "no file memory source"
grep -q "<poolmem:profile xmlns:poolmem='http://poolmem.org/xmlns/libvirt/1.0' name='gold'/>" /tmp/gold.xml ||
	fail "no <poolmem:profile> for the libvirt hook"
virt-xml-validate /tmp/gold.xml domain || fail "profile XML does not validate"
poolctl profile remove gold >/dev/null

# a znuma profile: the cells libvirt backs with ram-node0 and ram-node1
zx=$(poolctl profile create zgold --znuma --local 25% --pool 75% --libvirt --size 1G --vcpus 2)
echo "$zx"
echo "$zx" | grep -q "<cell id='0' cpus='0-1' memory='262144' unit='KiB' memAccess='shared'>" ||
	fail "no node 0 cell of 256 MiB with the vCPUs in: $zx"
echo "$zx" | grep -q "<cell id='1' memory='786432' unit='KiB' memAccess='shared'>" ||
	fail "no CPU-less node 1 cell of 768 MiB in: $zx"
cat > /tmp/zgold.xml <<XML
<domain type='kvm'>
  <name>zgold-vm</name>
$(echo "$zx" | grep -v '^<!--\|^#\|^memory_backing_dir')
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices>
</domain>
XML
cat /tmp/zgold.xml
virt-xml-validate /tmp/zgold.xml domain || fail "znuma profile XML does not validate"
sed "s/<sibling id='1' value='[0-9]*'/<sibling id='1' value='x'/" /tmp/zgold.xml > /tmp/zbad.xml
virt-xml-validate /tmp/zbad.xml domain >/dev/null 2>&1 && fail "the validator accepts a broken distance"
poolctl profile remove zgold >/dev/null
