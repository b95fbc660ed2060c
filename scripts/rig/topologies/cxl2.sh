# cxl2: two CXL type-3 memory devices (persistent-memory capable, as QEMU 7.2
# emulates them), each behind its own CXL host bridge and root port with its
# own fixed memory window, so each becomes its own CPU-less NUMA node: two
# pools. Guest: cxl create-region -> ndctl create-namespace (devdax) ->
# daxctl reconfigure-device --mode=system-ram. Device memory and label areas
# are host RAM (memfd), fresh every boot.
# The CPU hides the hypervisor bit: since 6.x the kernel commits a CXL
# region only where it can flush CPU caches by memory region
# (cpu_cache_has_invalidate_memregion(), false under any hypervisor: "cxl
# regionN: Failed to synchronize CPU cache state", ENXIO); TCG's caches
# are coherent, and wbinvd is what the kernel then runs.
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS and GUEST_MODULES.
GUEST_MODULES=(cxl_acpi cxl_pci cxl_mem cxl_pmem nd_pmem dax_pmem device_dax kmem)
QEMU_ARGS=(
	-machine q35,cxl=on -cpu qemu64,hypervisor=off -smp 2 -m 2G,slots=4,maxmem=12G
	-object memory-backend-memfd,id=cm0,share=on,size=2G
	-object memory-backend-memfd,id=cl0,share=on,size=1M
	-object memory-backend-memfd,id=cm1,share=on,size=2G
	-object memory-backend-memfd,id=cl1,share=on,size=1M
	-device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1
	-device cxl-rp,port=0,bus=cxl.1,id=rp0,chassis=0,slot=2
	-device cxl-type3,bus=rp0,memdev=cm0,lsa=cl0,id=cxl-pmem0,sn=0xc0ffee01
	-device pxb-cxl,bus_nr=222,bus=pcie.0,id=cxl.2
	-device cxl-rp,port=0,bus=cxl.2,id=rp1,chassis=0,slot=3
	-device cxl-type3,bus=rp1,memdev=cm1,lsa=cl1,id=cxl-pmem1,sn=0xc0ffee02
	-M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G,cxl-fmw.1.targets.0=cxl.2,cxl-fmw.1.size=4G
)
