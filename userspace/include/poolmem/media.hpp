// The poison scan of the CXL memory devices behind pools: each device's
// poison list read, each poisoned address named (pool, domain, offset)
// through poolmem's reverse map and taken out of use before anything
// consumes it (hard_offline_page: memory_failure(), which poolmem then
// handles), the devices' health and event records read; and the state
// file the scan leaves for the exporter (/run/poolctl/media-errors.json,
// written whole, root and group poolmem).
#pragma once

#include <poolmem/control.hpp>
#include <poolmem/online.hpp>
#include <poolmem/poison.hpp>
#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace poolmem {

inline const std::filesystem::path media_state_file = online_state_dir / "media-errors.json";

/// One poisoned range, and what the scan made of it.
struct PoisonFinding : CxlPoisonRecord {
	PoisonFinding(const CxlPoisonRecord &r) : CxlPoisonRecord(r) {}
	std::string pool;   ///< the pool whose memdev listed it
	std::string domain; ///< "" when no domain holds it
	uint64_t offset = 0;
	std::string action; ///< what became of its pages: isolated, unused, ... or "" (not offlined)
};

/// What one scan found: the state file's content.
struct MediaScan {
	uint64_t time = 0;			   ///< seconds since the epoch
	std::map<std::string, std::string> memdevs; ///< memdev -> pool, every one scanned
	std::vector<PoisonFinding> records;
	nlohmann::json health = nlohmann::json::object(); ///< memdev -> Get Health Info, or null
	nlohmann::json events = nlohmann::json::object(); ///< memdev -> kind -> count since the first scan
};

/// The CXL memdevs behind POOLS, each with its pool.
std::map<std::string, std::string> cxl_memdevs(const std::vector<PoolStats> &pools);

/// Scan MEMDEVS (memdev -> pool): their poison lists, their pages taken
/// out of use with OFFLINE, their health (a device that reports trouble:
/// a line to WARN) and their event records, counted on from PREVIOUS's.
MediaScan scan_media(Control &ctl, const std::filesystem::path &sysfs, const std::map<std::string, std::string> &memdevs,
		     bool offline, const std::optional<MediaScan> &previous,
		     const std::function<void(const std::string &)> &warn = {});

nlohmann::json to_json(const PoisonFinding &r);
nlohmann::json to_json(const MediaScan &s);

/// The last scan's state, or nullopt when there is none (or it does not
/// parse: the next scan starts its counts again).
std::optional<MediaScan> read_media_state(const std::filesystem::path &file = media_state_file);
/// Write S whole into FILE, root and group poolmem; a group that can't be
/// given: a line to WARN (the exporter will not read it).
void write_media_state(const MediaScan &s, const std::filesystem::path &file = media_state_file,
		       const std::function<void(const std::string &)> &warn = {});

} // namespace poolmem
