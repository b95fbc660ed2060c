// poolctl pool poison-scan: read the poison lists of the CXL memory devices
// behind pools (the kernel's trigger_poison_list, whose records come as
// cxl:cxl_poison trace events, as for cxl list --media-errors), name the
// pool, domain and offset of each poisoned address through poolmem's
// reverse map, and take those pages out of use before anything consumes
// them (hard_offline_page: memory_failure(), which poolmem then handles).
// The result also goes to /run/poolctl/media-errors.json for the exporter.
// The scan and its state file are libpoolmem's (poolmem/media.hpp).
#include "pool.hpp"
#include "table.hpp"
#include <poolmem/media.hpp>
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>
#include <nlohmann/json.hpp>
#include <ctime>
#include <cstdio>

namespace poolctl::pool_cmd {

namespace {

std::string hex(uint64_t v)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(v));
	return buf;
}

void warn(const std::string &line) { std::fprintf(stderr, "poolctl: %s\n", line.c_str()); }
void file_warn(const std::string &line) { std::fprintf(stderr, "poolctl: warning: %s\n", line.c_str()); }

} // namespace

void run_poison_scan(const GlobalOptions &g, const PoisonScanOptions &o)
{
	std::vector<poolmem::PoolStats> pools;
	if (o.name.empty())
		pools = pools_or_throw(g);
	else
		pools.push_back(pool_or_throw(g, o.name));
	const auto memdevs = poolmem::cxl_memdevs(pools);
	if (memdevs.empty()) {
		/*
		 * Nothing to scan is still a scan (the timer ran): its time
		 * tells the exporter, and PoolmemPoisonScanMissing, that the
		 * scan runs on this host.
		 */
		if (o.name.empty()) {
			poolmem::MediaScan none;
			none.time = static_cast<uint64_t>(std::time(nullptr));
			poolmem::write_media_state(none, poolmem::media_state_file, file_warn);
		}
		throw poolmem::Error::plain(o.name.empty() ? "poolmem" : o.name, "no pool on CXL memory devices", ENOENT);
	}
	poolmem::Control ctl = open_control(g);
	const auto scan = poolmem::scan_media(ctl, g.sysfs, memdevs, o.offline, poolmem::read_media_state(), warn);
	poolmem::write_media_state(scan, poolmem::media_state_file, file_warn);
	if (o.json) {
		print_json(g, poolmem::to_json(scan)["records"]);
		return;
	}
	Table t({"MEMDEV", "DPA", ">LENGTH", "HOST-PHYS", "POOL", "DOMAIN", "OFFSET", "SOURCE", "ACTION"});
	for (const auto &r : scan.records)
		t.row({r.memdev, hex(r.dpa), std::to_string(r.length), r.hpa == poolmem::cxl_no_hpa ? "-" : hex(r.hpa),
		       r.pool.empty() ? "-" : r.pool, r.domain.empty() ? "-" : r.domain,
		       r.domain.empty() ? "-" : hex(r.offset), r.source, r.action.empty() ? "-" : r.action});
	if (scan.records.empty())
		std::printf("no poison on %s\n", poolmem::plural(memdevs.size(), "memory device").c_str());
	else
		t.print();
}

} // namespace poolctl::pool_cmd
