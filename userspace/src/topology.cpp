#include "poolmem/topology.hpp"
#include "poolmem/chain.hpp"
#include "poolmem/dax.hpp"
#include "poolmem/error.hpp"

#include "sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

int to_int(std::string_view s, std::string_view whole)
{
	int v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size() || v < 0)
		throw std::invalid_argument("malformed list '" + std::string(whole) + "'");
	return v;
}

/// "node12" with prefix "node" -> 12; nullopt for other names.
std::optional<unsigned> numbered(const std::string &name, std::string_view prefix)
{
	if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
		return std::nullopt;
	unsigned v = 0;
	const char *b = name.data() + prefix.size(), *e = name.data() + name.size();
	auto [p, ec] = std::from_chars(b, e, v);
	if (ec != std::errc() || p != e)
		return std::nullopt;
	return v;
}

} // namespace

std::map<int, int> memory_tiers(const std::filesystem::path &sysfs)
{
	std::map<int, int> out;
	std::error_code ec;
	for (const auto &e : std::filesystem::directory_iterator(sysfs / "devices/virtual/memory_tiering", ec)) {
		const std::string name = e.path().filename().string();
		const std::string_view prefix = "memory_tier";
		if (name.compare(0, prefix.size(), prefix) != 0)
			continue;
		int id = 0;
		auto [p, err] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), id);
		if (err != std::errc() || p != name.data() + name.size())
			continue;
		std::ifstream f(e.path() / "nodelist");
		std::string text;
		std::getline(f, text);
		try {
			for (int n : parse_list(text))
				out[n] = id;
		} catch (const std::invalid_argument &) {
			/* a tier being torn down reads empty or odd: skip it */
		}
	}
	return out;
}

std::map<int, NodeMemmap> kmem_memmap(const std::filesystem::path &sysfs)
{
	std::map<int, NodeMemmap> out;
	std::error_code ec;
	const bool booted = memmap_on_memory_booted(sysfs);
	uint64_t block = 0;
	try {
		block = memory_block_size(sysfs);
	} catch (const Error &) {
		return out;
	}
	for (const auto &e : std::filesystem::directory_iterator(sysfs / "bus/dax/devices", ec)) {
		const auto drv = std::filesystem::read_symlink(e.path() / "driver", ec);
		if (ec || drv.filename() != "kmem") {
			ec.clear();
			continue;
		}
		const auto node = sysfs::read_u64(e.path() / "target_node");
		const auto size = sysfs::read_u64(e.path() / "size");
		if (!node || !size || !block)
			continue;
		/* kmem adds the device's whole blocks; each gets its memmap */
		const uint64_t bytes = memmap_bytes(*size / block * block);
		NodeMemmap &m = out[static_cast<int>(*node)];
		m.devices++;
		/* the attribute asks; only the boot parameter lets kmem do it */
		if (booted && sysfs::read(e.path() / "memmap_on_memory").value_or("0") == "1")
			m.device_bytes += bytes;
		else
			m.local_bytes += bytes;
	}
	return out;
}

std::vector<int> parse_list(std::string_view text)
{
	std::vector<int> out;
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.remove_suffix(1);
	std::string_view rest = text;
	while (!rest.empty()) {
		size_t comma = rest.find(',');
		std::string_view item = rest.substr(0, comma);
		size_t dash = item.find('-');
		if (dash == std::string_view::npos) {
			out.push_back(to_int(item, text));
		} else {
			int a = to_int(item.substr(0, dash), text);
			int b = to_int(item.substr(dash + 1), text);
			if (b < a)
				throw std::invalid_argument("malformed list '" + std::string(text) + "'");
			for (int i = a; i <= b; i++)
				out.push_back(i);
		}
		if (comma == std::string_view::npos)
			break;
		rest.remove_prefix(comma + 1);
		if (rest.empty())
			throw std::invalid_argument("malformed list '" + std::string(text) + "'");
	}
	return out;
}

std::map<std::string, uint64_t> parse_meminfo(std::string_view text)
{
	std::map<std::string, uint64_t> out;
	std::istringstream in{std::string(text)};
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream ls(line);
		std::vector<std::string> w;
		std::string t;
		while (ls >> t)
			w.push_back(t);
		/* "Node 1 MemTotal: 123 kB" or "MemTotal: 123 kB" */
		size_t k = (w.size() >= 2 && w[0] == "Node") ? 2 : 0;
		if (w.size() < k + 2 || w[k].empty() || w[k].back() != ':')
			continue;
		uint64_t v = 0;
		auto [p, ec] = std::from_chars(w[k + 1].data(), w[k + 1].data() + w[k + 1].size(), v);
		if (ec != std::errc())
			continue;
		if (w.size() > k + 2 && w[k + 2] == "kB")
			v *= 1024;
		out[w[k].substr(0, w[k].size() - 1)] = v;
	}
	return out;
}

const Node *Topology::node(int id) const
{
	for (const auto &n : nodes)
		if (n.id == id)
			return &n;
	return nullptr;
}

Topology read_topology(const fs::path &sysfs)
{
	Topology t;
	const fs::path nodedir = sysfs / "devices/system/node";
	const fs::path memdir = sysfs / "devices/system/memory";

	/* block_size_bytes is hex without a 0x prefix */
	if (auto s = sysfs::read(memdir / "block_size_bytes"); s && !s->empty())
		t.block_size = std::stoull(*s, nullptr, 16);

	/* files are opened relative to these: one path walk of the prefix for
	 * thousands of files */
	const sysfs::Dir nodes(nodedir), blocks(memdir);
	std::map<unsigned, int> block_node;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(nodedir, ec)) {
		auto id = numbered(e.path().filename().string(), "node");
		if (!id)
			continue;
		Node n;
		n.id = static_cast<int>(*id);
		const std::string nn = e.path().filename().string() + "/";
		n.cpus = parse_list(nodes.read(nn + "cpulist").value_or(""));
		auto mi = parse_meminfo(sysfs::read_required(e.path() / "meminfo"));
		n.mem_total = mi["MemTotal"];
		n.mem_free = mi["MemFree"];
		if (auto d = nodes.read(nn + "distance")) {
			std::istringstream ds(*d);
			int v;
			while (ds >> v)
				n.distance.push_back(v);
		}
		const fs::path acc = e.path() / "access0/initiators";
		const std::string an = nn + "access0/initiators/";
		n.access0.read_latency_ns = nodes.read_u64(an + "read_latency");
		n.access0.write_latency_ns = nodes.read_u64(an + "write_latency");
		n.access0.read_bandwidth_mbps = nodes.read_u64(an + "read_bandwidth");
		n.access0.write_bandwidth_mbps = nodes.read_u64(an + "write_bandwidth");
		std::error_code ec2;
		for (const auto &a : fs::directory_iterator(acc, ec2))
			if (auto i = numbered(a.path().filename().string(), "node"))
				n.access0.initiators.push_back(static_cast<int>(*i));
		std::sort(n.access0.initiators.begin(), n.access0.initiators.end());
		for (const auto &m : fs::directory_iterator(e.path())) {
			if (auto b = numbered(m.path().filename().string(), "memory")) {
				n.blocks.push_back(*b);
				block_node[*b] = n.id;
			}
		}
		std::sort(n.blocks.begin(), n.blocks.end());
		t.nodes.push_back(std::move(n));
	}
	if (ec)
		throw std::runtime_error(nodedir.string() + ": cannot read: " + ec.message());
	std::sort(t.nodes.begin(), t.nodes.end(), [](auto &a, auto &b) { return a.id < b.id; });

	for (const auto &e : fs::directory_iterator(memdir, ec)) {
		auto idx = numbered(e.path().filename().string(), "memory");
		if (!idx)
			continue;
		MemoryBlock b;
		b.index = *idx;
		const std::string bn = e.path().filename().string() + "/";
		b.state = blocks.read(bn + "state").value_or("");
		if (b.state == "online")
			b.zone = blocks.read(bn + "valid_zones").value_or("");
		auto it = block_node.find(b.index);
		b.node = it == block_node.end() ? -1 : it->second;
		t.blocks.push_back(std::move(b));
	}
	std::sort(t.blocks.begin(), t.blocks.end(), [](auto &a, auto &b) { return a.index < b.index; });
	return t;
}

std::map<std::string, unsigned> node_zones(const std::filesystem::path &sysfs, int node)
{
	std::map<std::string, unsigned> out;
	Topology t;
	try {
		t = read_topology(sysfs);
	} catch (const std::exception &) {
		return out; /* no node tree (fixtures): no zones */
	}
	for (const auto &b : t.blocks)
		if (b.node == node && b.state == "online")
			out[b.zone.empty() ? "unknown" : b.zone]++;
	return out;
}

} // namespace poolmem
