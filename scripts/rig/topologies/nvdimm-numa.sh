# nvdimm-numa: node 0 has the CPUs and 2 GiB of DRAM; nodes 1 and 2 are
# CPU-less, each holding one 2 GiB NVDIMM. In QEMU's numbering below:
# distances 0-1 = 21, 0-2 = 31, 1-2 = 41, and HMAT latency/bandwidth from
# initiator node 0: node 0 10 ns / 10 GB/s, node 1 100 ns / 5 GB/s, node
# 2 200 ns / 2 GB/s. The guest numbers QEMU's nodes 1 and 2 the other way
# round (see RIG_NVDIMM2_FILE below): its node 1 (pool p0) is the far one,
# distance 31, and its node 2 (p1) the near one, 21 (read in the guest's
# /sys/devices/system/node/node*/distance, 2026-12-04). Guest: ndctl
# create-namespace -m devdax -> daxctl reconfigure-device --mode=system-ram.
# The NVDIMMs are host RAM (memfd), fresh every boot: a file on the host
# disk would make guest first touches pay for host page-cache faults and
# writeback, which the local tier (memory-backend-ram) does not.
# RIG_SMP (default 2) sets the guest's CPUs (benchmarks that must not wait
# on a preempted second vCPU use 1); RIG_NVDIMM_SIZE (default 2G, whole
# GiB) each NVDIMM's size; maxmem leaves room for both and 2 GiB of DIMMs.
# The NVDIMMs cost the host only what the guest touches.
# RIG_NVDIMM2_FILE=1 backs the guest's node 2 with a file on the host's
# disk instead (an unlinked temporary file in $work/nv2, gone when QEMU
# exits): for benchmarks whose two pools together hold more than the
# host's RAM (bench-large16); its writes then go at the host's writeback
# speed. The guest's node 2 is QEMU's node 1 (nv1), as bench-large16
# found (the file filled as p1 did). Likely reason: QEMU's SRAT gives its
# hotplug range the last node's proximity domain (2), and Linux numbers
# proximity domains in the order it meets them.
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS and GUEST_MODULES.
GUEST_MODULES=(nfit nd_pmem dax_pmem device_dax kmem)
nv_gib=${RIG_NVDIMM_SIZE:-2G}
nv_gib=${nv_gib%G}
QEMU_ARGS=(
	-machine q35,nvdimm=on,hmat=on -smp ${RIG_SMP:-2} -m 2G,slots=4,maxmem=$((4 + 2 * nv_gib))G
	-object memory-backend-ram,id=ram0,size=2G
	-numa node,nodeid=0,memdev=ram0,cpus=0-$((${RIG_SMP:-2} - 1)),initiator=0
	-numa node,nodeid=1,initiator=0
	-numa node,nodeid=2,initiator=0
	-numa dist,src=0,dst=1,val=21 -numa dist,src=0,dst=2,val=31 -numa dist,src=1,dst=2,val=41
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=10
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=100
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=5G
	-numa hmat-lb,initiator=0,target=2,hierarchy=memory,data-type=access-latency,latency=200
	-numa hmat-lb,initiator=0,target=2,hierarchy=memory,data-type=access-bandwidth,bandwidth=2G
	-device nvdimm,id=nvdimm1,memdev=nv1,node=1
	-object memory-backend-memfd,id=nv2,share=on,size=${RIG_NVDIMM_SIZE:-2G}
	-device nvdimm,id=nvdimm2,memdev=nv2,node=2
)
if [ -n "${RIG_NVDIMM2_FILE:-}" ]; then
	# a directory as mem-path: QEMU makes its file there and unlinks it
	mkdir -p "$work/nv2"
	QEMU_ARGS+=(-object memory-backend-file,id=nv1,share=on,mem-path=$work/nv2,size=${RIG_NVDIMM_SIZE:-2G})
else
	QEMU_ARGS+=(-object memory-backend-memfd,id=nv1,share=on,size=${RIG_NVDIMM_SIZE:-2G})
fi
