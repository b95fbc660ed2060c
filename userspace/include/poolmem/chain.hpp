// The hardware behind a pool: for each dax device whose memory joins the
// pool's node, the region it lies in and the memory devices (with serial
// numbers) that region is made of: what an operator names to return a
// failing expander. Read with libdaxctl, libcxl and libndctl.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace poolmem {

struct MemDevice {
	std::string name;   ///< CXL memdev ("mem0") or NVDIMM ("nmem0")
	std::string serial; ///< as the device reports it ("0x..."); "" if none
	std::string host;   ///< the memdev's parent (PCI address) or bus, "" if unknown
};

struct DeviceChain {
	std::string dax;         ///< "dax0.0"
	uint64_t resource = 0, size = 0;
	std::string bus;         ///< "cxl", "nvdimm" or "" (e.g. soft-reserved hmem)
	std::string region;      ///< CXL region ("region0") or nvdimm region ("region1")
	std::vector<MemDevice> memdevs;
};

/// Every dax device whose memory joins NODE (system-ram mode) with its region and
/// memory devices. A device whose region can't be found is listed with
/// an empty bus and region.
std::vector<DeviceChain> device_chain(int node);

/// Online memory blocks of NODE per zone ("Movable" -> 7), from sysfs.
std::map<std::string, unsigned> node_zones(const std::filesystem::path &sysfs, int node);

} // namespace poolmem
