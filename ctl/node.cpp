// poolctl node: NUMA nodes as the kernel sees them (CPUs, memory, online
// blocks, distances, HMAT), the raw material pools are made of.
#include "commands.hpp"
#include "table.hpp"

#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace poolctl {

namespace {

struct NodeListOptions {
	bool json = false;
};

std::string cpus_text(const std::vector<int> &cpus)
{
	if (cpus.empty())
		return "-";
	std::ostringstream s;
	for (size_t i = 0; i < cpus.size();) {
		size_t j = i;
		while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (i)
			s << ',';
		s << cpus[i];
		if (j > i)
			s << '-' << cpus[j];
		i = j + 1;
	}
	return s.str();
}

unsigned online_blocks(const poolmem::Topology &t, int node)
{
	unsigned n = 0;
	for (const auto &mb : t.blocks)
		if (mb.node == node && mb.state == "online")
			n++;
	return n;
}

void run_node_list(const GlobalOptions &g, const NodeListOptions &o)
{
	const poolmem::Topology t = poolmem::read_topology(g.sysfs);
	/* the zero reserve of each node that keeps one (module loaded): memory
	 * the kernel counts as used, held zeroed for new chunks */
	std::map<int, poolmem::NodeZeroReserve> zero;
	for (const auto &z : poolmem::read_zero_reserves(g.sysfs))
		zero[z.node] = z;

	if (o.json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &n : t.nodes) {
			nlohmann::json j = {
				{"node", n.id},
				{"cpus", n.cpus},
				{"total_bytes", n.mem_total},
				{"free_bytes", n.mem_free},
				{"blocks", n.blocks.size()},
				{"blocks_online", online_blocks(t, n.id)},
				{"distance", n.distance},
				/* null: the node keeps no reserve, or the module is not loaded */
				{"zero_reserve", nullptr},
				/* HMAT from the nearest initiators; null without HMAT */
				{"access0", nullptr},
			};
			if (auto z = zero.find(n.id); z != zero.end())
				j["zero_reserve"] = {{"target_bytes", z->second.target_bytes},
						     {"held_bytes", z->second.bytes},
						     {"refills", z->second.refills},
						     {"hits", z->second.hits},
						     {"misses", z->second.misses}};
			if (n.access0.read_latency_ns) {
				j["access0"] = {
					{"initiators", n.access0.initiators},
					{"read_latency_ns", *n.access0.read_latency_ns},
					{"read_bandwidth_mbps", n.access0.read_bandwidth_mbps ?
						nlohmann::json(*n.access0.read_bandwidth_mbps) : nlohmann::json(nullptr)},
				};
			}
			out.push_back(j);
		}
		print_json(g, out);
		return;
	}

	/* columns as wide as their widest cell: CPU lists of real hosts are long */
	/* ZEROED: the zero reserve held (its target), counted as used, not FREE */
	Table tab({">NODE", "CPUS", ">TOTAL", ">FREE", ">ZEROED(TARGET)", ">BLOCKS(ONL)", ">LATENCY", ">BANDWIDTH",
		   "DISTANCES"});
	for (const auto &n : t.nodes) {
		const unsigned online = online_blocks(t, n.id);
		std::ostringstream dist;
		for (size_t i = 0; i < n.distance.size(); i++)
			dist << (i ? " " : "") << n.distance[i];
		/* HMAT units as the kernel gives them (sysfs-devices-node): ns, MB/s */
		std::string lat = n.access0.read_latency_ns ? std::to_string(*n.access0.read_latency_ns) + " ns" : "-";
		std::string bw = n.access0.read_bandwidth_mbps
					 ? std::to_string(*n.access0.read_bandwidth_mbps) + " MB/s"
					 : "-";
		std::string zeroed = "-";
		if (auto z = zero.find(n.id); z != zero.end())
			zeroed = poolmem::format_size(z->second.bytes) + "(" + poolmem::format_size(z->second.target_bytes) +
				 ")";
		tab.row({std::to_string(n.id), cpus_text(n.cpus), poolmem::format_size(n.mem_total),
			 poolmem::format_size(n.mem_free), zeroed,
			 std::to_string(n.blocks.size()) + "(" + std::to_string(online) + ")", lat, bw, dist.str()});
	}
	tab.print();
	std::printf("memory block size %s, %zu blocks\n", poolmem::format_size(t.block_size).c_str(),
		    t.blocks.size());
}

} // namespace

void setup_node(CLI::App &app, const GlobalOptions &g)
{
	auto *node = app.add_subcommand("node", "NUMA nodes: CPUs, memory, blocks, distances, HMAT");
	node->require_subcommand(1);
	auto opts = std::make_shared<NodeListOptions>();
	auto *list = node->add_subcommand("list", "list NUMA nodes");
	list->add_flag("--json", opts->json, "print JSON");
	list->callback([&g, opts] { run_node_list(g, *opts); });
}

} // namespace poolctl
