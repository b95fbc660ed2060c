// poolctl: what vm create and profile create print for QEMU and libvirt:
// a domain's QEMU arguments (one file, or zNUMA's two windows with their
// distance and HMAT), its libvirt NVDIMM element, and preallocation.
#pragma once

#include "commands.hpp"

#include <poolmem/control.hpp>
#include <poolmem/qemu.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace poolctl {

/// The QEMU argument for domain NAME's file PATH (see qemu_args.cpp); EXTRA is
/// appended to the backend's properties (",prealloc=on,...").
std::string qemu_argument(const std::string &name, const std::string &path, uint64_t bytes, uint64_t align,
			  const std::string &extra = "");
void print_libvirt_nvdimm(const std::string &path, uint64_t bytes, uint64_t align);

/// What a zNUMA guest is told of the distance between its nodes: the
/// host's, from the home node to the nearest allowed pool's node, and
/// HMAT's access latency and bandwidth of both where the host has them.
struct ZnumaLink {
	int distance = 20;
	bool hmat = false;
	uint64_t latency_ns[2] = {}, bandwidth_mbps[2] = {}; ///< [0] home node, [1] the pool's
};
ZnumaLink znuma_link(const GlobalOptions &g, int home_node, const std::vector<std::string> &pools);

/// What vm create prints for: the QEMU found, --prealloc's threads, the home node.
struct PreallocPlan {
	poolmem::QemuCaps caps;
	unsigned threads = 0;
	int home_node = -1;
};

/// The backend's extra properties for PLAN (empty without --prealloc); a
/// thread-context object, where QEMU has them, goes to OBJECTS.
std::string prealloc_properties(const PreallocPlan &plan, const std::string &id, std::string &objects);

/// A zNUMA domain's QEMU arguments: two backends, two guest nodes, their
/// distance and, where the host has it, HMAT.
std::string znuma_arguments(const GlobalOptions &g, const poolmem::DomainSpec &s, const std::string &path,
			    unsigned vcpus, const PreallocPlan &pre);

} // namespace poolctl
