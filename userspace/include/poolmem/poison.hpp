// What the kernel knows of bad memory on CXL devices, read through tracefs:
// a memdev's poison list (trigger_poison_list, whose records come as
// cxl:cxl_poison trace events, as for cxl list --media-errors) and the
// devices' event records; and a page taken out of use before anything
// consumes it (hard_offline_page). What poolctl pool poison-scan asks of
// the kernel; the one place it writes to tracefs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace poolmem {

constexpr uint64_t cxl_no_hpa = ~0ULL; ///< a record the kernel could not map to a host address

/// One poisoned range of a memdev, as its poison list gives it.
struct CxlPoisonRecord {
	std::string memdev, region, source;
	uint64_t hpa = cxl_no_hpa; ///< host physical address, where a region maps it
	uint64_t dpa = 0, length = 0;
};

/// The poison lists of MEMDEVS ("mem0", ...): each one's list is read
/// (trigger_poison_list under SYSFS) into a trace instance of our own,
/// removed afterwards. Error names the memdev or the trace event when the
/// kernel can't read poison lists (Linux 6.3+, cxl_core loaded).
std::vector<CxlPoisonRecord> cxl_read_poison(const std::filesystem::path &sysfs,
					     const std::vector<std::string> &memdevs);

/// The devices' event records (general media, DRAM, memory module) since
/// the last call, counted per memdev and kind ("general_media", "dram",
/// "memory_module"): a trace instance that stays, so that the events
/// between two calls wait in its buffer, and each call consumes them.
std::map<std::string, std::map<std::string, uint64_t>> cxl_read_events();

/// Take the page at host physical address PHYS out of use
/// (/sys/devices/system/memory/hard_offline_page: memory_failure(), which
/// poolmem handles for its own pages). 0, or the errno (EBUSY for poolmem's
/// pages, where the kernel gives up and poolmem takes over; EHWPOISON for a
/// page poisoned already).
int hard_offline_page(uint64_t phys);

} // namespace poolmem
