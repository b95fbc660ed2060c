# nvdimm-numa: node 0 has the CPUs and 2 GiB of DRAM; nodes 1 and 2 are
# CPU-less, each holding one 2 GiB NVDIMM. Distances 0-1 = 21, 0-2 = 31,
# 1-2 = 41, and HMAT latency/bandwidth from initiator node 0: node 0 10 ns /
# 10 GB/s, node 1 100 ns / 5 GB/s, node 2 200 ns / 2 GB/s. Guest: ndctl
# create-namespace -m devdax -> daxctl reconfigure-device --mode=system-ram.
# The NVDIMMs are host RAM (memfd), fresh every boot: a file on the host
# disk would make guest first touches pay for host page-cache faults and
# writeback, which the local tier (memory-backend-ram) does not.
# RIG_SMP (default 2) sets the guest's CPUs (benchmarks that must not wait
# on a preempted second vCPU use 1); RIG_NVDIMM_SIZE (default 2G, whole
# GiB) each NVDIMM's size; maxmem leaves room for both and 2 GiB of DIMMs.
# The NVDIMMs cost the host only what the guest touches.
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
	-object memory-backend-memfd,id=nv1,share=on,size=${RIG_NVDIMM_SIZE:-2G}
	-device nvdimm,id=nvdimm1,memdev=nv1,node=1
	-object memory-backend-memfd,id=nv2,share=on,size=${RIG_NVDIMM_SIZE:-2G}
	-device nvdimm,id=nvdimm2,memdev=nv2,node=2
)
