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

/// A memory device's Get Health Info (CXL 2.0 8.2.9.8.3.1), through libcxl.
struct CxlHealth {
	bool supported = false;   ///< false: the device refused the command (QEMU 10's emulation does)
	bool maintenance_needed = false, performance_degraded = false, hw_replacement_needed = false;
	std::string media;        ///< "normal", "not-ready", "persistence-lost", "data-lost", ...
	int temperature_c = -1;   ///< -1: not reported
	int life_used_pct = -1;   ///< -1: not reported
	uint64_t dirty_shutdowns = 0;
	uint64_t volatile_errors = 0, pmem_errors = 0; ///< corrected errors the device counted
};

/// Health of CXL memdev NAME ("mem0"); Error when there is no such memdev.
CxlHealth cxl_health(const std::string &memdev);

/// Undo cxl_make_devdax: delete the namespace (and its labels) and the
/// region, returning the memdevs' capacity. The dax device must not be in
/// system-ram mode. Best effort: errors are ignored (used for rollback).
void cxl_destroy_devdax(const CxlDevdax &d);

} // namespace poolmem
