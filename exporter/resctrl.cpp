// resctrl: memory bandwidth per VM from Intel RDT / AMD PQoS monitoring
// (MBM), where the host has it: /sys/fs/resctrl, each monitoring group's
// mon_data/mon_L3_*/mbm_total_bytes summed over the L3 domains. A group
// belongs to a VM when its name is the domain's name, or carries it the way
// libvirt names its groups for a domain's vCPUs ("qemu-<id>-<name>-vcpus_*",
// "vcpus_*" monitors under it). Hosts without resctrl export nothing, and
// that is no failure.
#include "collector.hpp"

#include <poolmem/stats.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using prometheus::MetricType;

namespace exporter {

namespace fs = std::filesystem;

namespace {

struct GroupBytes {
	uint64_t total = 0, local = 0;
	bool have_total = false, have_local = false;
};

/* sum the L3 domains of one group's mon_data; "Unavailable" is skipped */
GroupBytes read_group(const fs::path &group)
{
	GroupBytes g;
	std::error_code ec;
	for (const auto &d : fs::directory_iterator(group / "mon_data", ec)) {
		if (d.path().filename().string().rfind("mon_L3_", 0) != 0)
			continue;
		for (auto [file, sum, have] : {std::tuple{"mbm_total_bytes", &g.total, &g.have_total},
					       std::tuple{"mbm_local_bytes", &g.local, &g.have_local}}) {
			std::ifstream f(d.path() / file);
			uint64_t v;
			if (f >> v) {
				*sum += v;
				*have = true;
			}
		}
	}
	return g;
}

} // namespace

std::string resctrl_domain(const std::string &group, const std::set<std::string> &domains)
{
	/* "web1", ".../web1", "qemu-3-web1-vcpus_0-3", ".../qemu-3-web1-vcpus_0-3/mon_groups/vcpus_0-3" */
	std::string best;
	size_t start = 0;
	while (start <= group.size()) {
		size_t slash = group.find('/', start);
		const std::string part = group.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
		if (domains.count(part))
			best = part;
		if (part.rfind("qemu-", 0) == 0) {
			/* qemu-<id>-<name>[-vcpus_...] */
			size_t a = part.find('-', 5);
			if (a != std::string::npos) {
				std::string rest = part.substr(a + 1);
				size_t v = rest.rfind("-vcpus");
				const std::string name = v == std::string::npos ? rest : rest.substr(0, v);
				if (domains.count(name))
					best = name;
			}
		}
		if (slash == std::string::npos)
			break;
		start = slash + 1;
	}
	return best;
}

namespace {

class ResctrlCollector : public Collector {
public:
	std::string name() const override { return "resctrl"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		Family total("poolmem_resctrl_mbm_total_bytes_total", "Memory bandwidth counted by resctrl MBM for a monitoring group (mbm_total_bytes, summed over L3 domains); domain names the VM the group belongs to, if any.", MetricType::Counter);
		Family local("poolmem_resctrl_mbm_local_bytes_total", "Local-socket memory bandwidth counted by resctrl MBM for a monitoring group (mbm_local_bytes, summed over L3 domains).", MetricType::Counter);
		std::error_code ec;
		if (!fs::is_directory(r.resctrl / "mon_data", ec))
			return; /* no resctrl, or no monitoring: nothing to say */
		std::set<std::string> domains;
		if (poolmem::module_sysfs_present(r.sysfs))
			for (const auto &d : poolmem::read_domains(r.sysfs, r.procfs))
				domains.insert(d.name);
		/* the root group, control groups, and the monitor groups of each */
		std::vector<std::pair<std::string, fs::path>> groups{{"/", r.resctrl}};
		auto add_mon = [&](const std::string &prefix, const fs::path &ctrl) {
			for (const auto &m : fs::directory_iterator(ctrl / "mon_groups", ec))
				if (m.is_directory())
					groups.push_back({prefix + "mon_groups/" + m.path().filename().string(), m.path()});
		};
		add_mon("/", r.resctrl);
		for (const auto &c : fs::directory_iterator(r.resctrl, ec)) {
			const std::string n = c.path().filename().string();
			if (!c.is_directory() || n == "info" || n == "mon_groups" || n == "mon_data" ||
			    !fs::exists(c.path() / "mon_data"))
				continue;
			groups.push_back({"/" + n, c.path()});
			add_mon("/" + n + "/", c.path());
		}
		for (const auto &[name, path] : groups) {
			const GroupBytes g = read_group(path);
			const Labels l{{"group", name}, {"domain", resctrl_domain(name, domains)}};
			if (g.have_total)
				total.add(l, static_cast<double>(g.total));
			if (g.have_local)
				local.add(l, static_cast<double>(g.local));
		}
		out.push_back(total.take());
		out.push_back(local.take());
	}
};

} // namespace

std::unique_ptr<Collector> make_resctrl_collector() { return std::make_unique<ResctrlCollector>(); }

} // namespace exporter
