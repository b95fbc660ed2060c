// module: whether poolmem.ko is loaded, its source version and parameters.
#include "collector.hpp"

#include <poolmem/stats.hpp>

#include <fstream>

using prometheus::MetricType;

namespace exporter {

namespace {

std::string read_line(const std::filesystem::path &p)
{
	std::ifstream f(p);
	std::string s;
	std::getline(f, s);
	return s;
}

class ModuleCollector : public Collector {
public:
	std::string name() const override { return "module"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		const bool loaded = poolmem::module_sysfs_present(r.sysfs);
		Family up("poolmem_module_loaded", "1 when the poolmem kernel module is loaded (/sys/kernel/poolmem exists), else 0.", MetricType::Gauge);
		up.add({}, loaded ? 1 : 0);
		out.push_back(up.take());
		if (!loaded)
			return;
		const auto mod = r.sysfs / "module/poolmem";
		Family info("poolmem_module_info", "poolmem module metadata (value 1), from /sys/module/poolmem: its release (version), source (srcversion) and kernel ABI (abi, /sys/kernel/poolmem/abi_version). poolmem_exporter_build_info names the release and ABI of the installed tools: a differing pair is a module upgrade pending a reload.", MetricType::Gauge);
		info.add({{"srcversion", read_line(mod / "srcversion")},
			  {"version", read_line(mod / "version")},
			  {"abi", read_line(r.sysfs / "kernel/poolmem/abi_version")}},
			 1);
		out.push_back(info.take());
		Family win("poolmem_module_window_seconds", "Length of one access-factor window, from the window_ms parameter.", MetricType::Gauge);
		std::string ms = read_line(mod / "parameters/window_ms");
		if (!ms.empty()) {
			win.add({}, std::stod(ms) / 1000.0);
			out.push_back(win.take());
		}
		/* every node's zero reserve, the local tier's included */
		const auto reserves = poolmem::read_zero_reserves(r.sysfs);
		if (!reserves.empty()) {
			Family held("poolmem_node_zero_reserve_bytes", "Memory each node keeps zeroed ahead for new chunks, pools' nodes and the local tier's (nodes with CPUs), from /sys/kernel/poolmem/zero_reserve.", MetricType::Gauge);
			Family target("poolmem_node_zero_reserve_target_bytes", "What each node's zero reserve is to hold, from /sys/kernel/poolmem/zero_reserve.", MetricType::Gauge);
			Family units("poolmem_node_zero_reserve_units_total", "New chunk units per node by where their zeroes came from: result=hit (the reserve) or miss (zeroed on the fault path), from /sys/kernel/poolmem/zero_reserve.", MetricType::Counter);
			for (const auto &z : reserves) {
				const std::string node = std::to_string(z.node);
				held.add({{"node", node}}, static_cast<double>(z.bytes));
				target.add({{"node", node}}, static_cast<double>(z.target_bytes));
				units.add({{"node", node}, {"result", "hit"}}, static_cast<double>(z.hits));
				units.add({{"node", node}, {"result", "miss"}}, static_cast<double>(z.misses));
			}
			out.push_back(held.take());
			out.push_back(target.take());
			out.push_back(units.take());
		}
		counts(r, out);
	}

private:
	/*
	 * Counts that outlive domains (ABI 8): a domain's own series go with
	 * its sysfs directory when its VM ends, often before a scrape saw
	 * them; these stay, host-wide and per profile (while it exists).
	 */
	static void counts(const Roots &r, std::vector<prometheus::MetricFamily> &out)
	{
		const auto host = poolmem::read_counts(r.sysfs);
		if (!host)
			return; /* a module before ABI 8 */
		struct Def {
			const char *name, *help;
			uint64_t poolmem::Counts::*field;
		};
		static const Def defs[] = {
			{"sigbus_total", "Faults denied because no memory was left within the domain's quota (QEMU dies of the SIGBUS), from sigbus.", &poolmem::Counts::sigbus},
			{"admission_refusals_total", "Domains admission control refused at creation (ENOSPC: a named domain, or a profile file's ftruncate at QEMU's start), from admission_refusals.", &poolmem::Counts::admission_refusals},
			{"domains_created_total", "Domains admitted, from domains_created.", &poolmem::Counts::domains_created},
			{"domains_destroyed_total", "Admitted domains whose memory went back (file removed or closed for good), from domains_destroyed.", &poolmem::Counts::domains_destroyed},
			{"discarded_bytes_total", "Bytes of chunks domains gave back by discards (balloon, free page reporting, virtio-mem), from discarded_bytes.", &poolmem::Counts::discarded_bytes},
		};
		const auto profiles = poolmem::read_profile_counts(r.sysfs);
		for (const auto &d : defs) {
			Family h(std::string("poolmem_") + d.name, std::string(d.help) + " Host-wide since the module was loaded, /sys/kernel/poolmem/.", MetricType::Counter);
			h.add({}, static_cast<double>((*host).*d.field));
			out.push_back(h.take());
			Family p(std::string("poolmem_profile_") + d.name, std::string(d.help) + " Per profile since it was created, /sys/kernel/poolmem/profiles/<profile>/.", MetricType::Counter);
			for (const auto &c : profiles)
				p.add({{"profile", c.profile}}, static_cast<double>(c.*d.field));
			out.push_back(p.take());
		}
	}
};

} // namespace

std::unique_ptr<Collector> make_module_collector() { return std::make_unique<ModuleCollector>(); }

} // namespace exporter
