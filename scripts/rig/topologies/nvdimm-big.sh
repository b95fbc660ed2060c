# nvdimm-big: for onlining benchmarks. Node 0 has the CPUs and 2 GiB of
# DRAM; CPU-less nodes 1, 2 and 3 hold NVDIMMs of 2 GiB, 2 GiB (identical,
# for side-by-side comparisons) and 8 GiB, all host RAM (memfd).
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS and GUEST_MODULES.
GUEST_MODULES=(nfit nd_pmem dax_pmem device_dax kmem)
QEMU_ARGS=(
	-machine q35,nvdimm=on -smp 2 -m 2G,slots=4,maxmem=16G
	-object memory-backend-ram,id=ram0,size=2G
	-numa node,nodeid=0,memdev=ram0,cpus=0-1
	-numa node,nodeid=1 -numa node,nodeid=2 -numa node,nodeid=3
)
i=1
for size in 2G 2G 8G; do
	QEMU_ARGS+=(-object memory-backend-memfd,id=nvb$i,share=on,size=$size
		    -device nvdimm,id=nvdimm$i,memdev=nvb$i,node=$i)
	i=$((i + 1))
done
