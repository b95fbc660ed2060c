# libvirt: nvdimm-numa (node 0 with the CPUs and 2 GiB of DRAM, two
# CPU-less NVDIMM nodes of 2 GiB) plus a second disk, /dev/vda: the Debian
# root file system of scripts/rig/libvirt-root (libvirtd, virtlogd and
# virsh from libvirt 11, with the QEMU 10 it is built for), opened with
# snapshot=on so the cached image is never written. The guest tests
# (tests/guest/libvirt-*.sh, tests/guest/lib/libvirt.sh) mount it, chroot
# into it and run the real daemon there; it runs the VMs under poolmem.
# Sourced by scripts/rig/run with $work set; fills QEMU_ARGS and GUEST_MODULES.
. "$RIG_DIR/topologies/nvdimm-numa.sh"
# Its three tests boot nested guests under libvirt in one boot: 684 s in
# CI, 903 s on a busier machine where 900 s cut libvirt-znuma off. The
# limit is for a hang, not a budget.
TOPO_TIMEOUT=1800
lvroot=$("$RIG_DIR/libvirt-root" | tail -n 1) || rig_die "building the libvirt root file system failed"
GUEST_MODULES+=(virtio_pci virtio_blk)
QEMU_ARGS+=(-drive "file=$lvroot,if=virtio,format=raw,snapshot=on,cache=unsafe")
