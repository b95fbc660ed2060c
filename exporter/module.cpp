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
		Family info("poolmem_module_info", "poolmem module metadata (value 1), from /sys/module/poolmem.", MetricType::Gauge);
		info.add({{"srcversion", read_line(mod / "srcversion")}}, 1);
		out.push_back(info.take());
		Family win("poolmem_module_window_seconds", "Length of one access-factor window, from the window_ms parameter.", MetricType::Gauge);
		std::string ms = read_line(mod / "parameters/window_ms");
		if (!ms.empty()) {
			win.add({}, std::stod(ms) / 1000.0);
			out.push_back(win.take());
		}
	}
};

} // namespace

std::unique_ptr<Collector> make_module_collector() { return std::make_unique<ModuleCollector>(); }

} // namespace exporter
