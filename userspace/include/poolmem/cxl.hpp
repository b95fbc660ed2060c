// CXL memory devices as pool memory: a raw CXL memdev (or several,
// interleaved) becomes a pmem region with libcxl, a devdax namespace on it
// with libndctl, and so a dax device for poolmem::Dax. What
// "cxl create-region" + "ndctl create-namespace -m devdax" do, without
// running either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace poolmem {

struct CxlDevdax {
	std::string region;     ///< CXL region, e.g. "region0"
	std::string nd_region;  ///< its nvdimm region
	uint64_t resource = 0;  ///< host physical start of the region
	uint64_t size = 0;
};

/// Create a pmem region interleaved over MEMDEVS (in order) under the root
/// decoder that reaches them, of REGION_SIZE bytes (0: all the devices'
/// persistent capacity; else a multiple of 256 MiB x the devices), and a
/// devdax namespace filling it. On failure everything created is torn
/// down again and Error names the memdev, decoder or region with the
/// cause. A memdev with volatile capacity only is refused (ENOTSUP):
/// Linux 6.1 can't create ram regions.
CxlDevdax cxl_make_devdax(const std::vector<std::string> &memdevs, uint64_t region_size = 0);

/// Undo cxl_make_devdax: delete the namespace (and its labels) and the
/// region, returning the memdevs' capacity. The dax device must not be in
/// system-ram mode. Best effort: errors are ignored (used for rollback).
void cxl_destroy_devdax(const CxlDevdax &d);

} // namespace poolmem
