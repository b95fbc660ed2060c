# hotplug: node 0 has the CPUs and 2 GiB of DRAM, node 1 is CPU-less and
# empty; free DIMM slots take pc-dimms hot-added through QMP while the guest
# runs. Guest tests ask for a plug with "@@RIG HOST plug-dimm ID SIZE NODE"
# and for an unplug with "@@RIG HOST unplug-dimm ID"; scripts/rig/run carries
# them out with scripts/rig/qmp.py.
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS and GUEST_MODULES.
GUEST_MODULES=()
QEMU_ARGS=(
	-machine q35 -smp 2 -m 2G,slots=4,maxmem=8G
	-object memory-backend-ram,id=ram0,size=2G
	-numa node,nodeid=0,memdev=ram0,cpus=0-1
	-numa node,nodeid=1
	-numa dist,src=0,dst=1,val=21
)
