# hmem: memory the firmware reserves for a driver (EFI_MEMORY_SP, "Soft
# Reserved"), as a BIOS reports a CXL volatile memory expander it has
# mapped. Node 0 has the CPUs and 2 GiB of DRAM; CPU-less nodes 1, 2, ...
# hold RIG_HMEM_SIZES (default "1G,1G"), host RAM (memfd), which the
# kernel's memmap= option turns into Soft Reserved (QEMU 7.2 can't mark
# memory specific-purpose and Debian's kernel has no efi_fake_mem). With
# HMAT present, dax_hmem makes one dax device per node (dax0.0, dax1.0,
# ...), each on a dynamic dax region: a device can be resized and more
# made in its region, which is what progressive onlining splits it with.
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS, GUEST_MODULES
# and TOPO_APPEND.
GUEST_MODULES=(dax_hmem device_dax kmem)
IFS=", " read -r -a hmem_sizes <<< "${RIG_HMEM_SIZES:-1G,1G}"
gib() { case $1 in *G) echo "${1%G}" ;; *) rig_die "RIG_HMEM_SIZES: sizes in whole G, not '$1'" ;; esac; }
total=0
for s in "${hmem_sizes[@]}"; do total=$((total + $(gib "$s"))); done
# q35 puts 2 GiB below 4 GiB when the guest has more than 2.75 GiB: node 0
# is [0, 2G), the hmem nodes follow one another from 4G.
QEMU_ARGS=(
	-machine q35,hmat=on -smp 2 -m $((2 + total))G
	-object memory-backend-ram,id=ram0,size=2G
	-numa node,nodeid=0,memdev=ram0,cpus=0-1,initiator=0
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=10
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G
)
n=1
for s in "${hmem_sizes[@]}"; do
	QEMU_ARGS+=(-object memory-backend-memfd,id=sp$n,size=$s
		    -numa node,nodeid=$n,memdev=sp$n,initiator=0
		    -numa dist,src=0,dst=$n,val=21
		    -numa hmat-lb,initiator=0,target=$n,hierarchy=memory,data-type=access-latency,latency=150
		    -numa hmat-lb,initiator=0,target=$n,hierarchy=memory,data-type=access-bandwidth,bandwidth=4G)
	n=$((n + 1))
done
# QEMU wants a distance for every pair of nodes
for ((a = 1; a < n; a++)); do
	for ((b = a + 1; b < n; b++)); do QEMU_ARGS+=(-numa dist,src=$a,dst=$b,val=31); done
done
# nokaslr: the decompressor's KASLR does not know memmap='s type changes
# (it avoids only the "!", "$" and "#" forms) and can put the kernel inside
# the range, splitting a node's Soft Reserved memory in two (seen: a 52 MiB
# hole, and that node without a dax device). Firmware's EFI_MEMORY_SP is
# avoided by the EFI stub, so nokaslr is what real hardware gets.
TOPO_APPEND="memmap=${total}G%4G-1+0xefffffff nokaslr"
