// nodes: per-NUMA-node memory, memory blocks by state and zone, free 2 MiB
// blocks (/proc/buddyinfo), HMAT latency/bandwidth and distances. Works
// without the poolmem module.
#include "collector.hpp"

#include <poolmem/topology.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

using prometheus::MetricType;

namespace exporter {

std::map<int, uint64_t> parse_buddyinfo_2mib(const std::string &text, unsigned page_shift)
{
	std::map<int, uint64_t> out;
	const unsigned order_2m = 21 - page_shift;
	std::istringstream in(text);
	std::string line;
	while (std::getline(in, line)) {
		if (line.empty())
			continue;
		/* "Node 0, zone   Normal   1 2 3 ..." */
		std::istringstream ls(line);
		std::string node_kw, node_s, zone_kw, zone;
		if (!(ls >> node_kw >> node_s >> zone_kw >> zone) || node_kw != "Node" || zone_kw != "zone")
			throw std::invalid_argument("malformed buddyinfo line '" + line + "'");
		if (!node_s.empty() && node_s.back() == ',')
			node_s.pop_back();
		int node = std::stoi(node_s);
		uint64_t count, sum = 0;
		for (unsigned order = 0; ls >> count; order++)
			if (order >= order_2m)
				sum += count << (order - order_2m);
		out[node] += sum;
	}
	return out;
}

namespace {

class NodesCollector : public Collector {
public:
	std::string name() const override { return "nodes"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		const poolmem::Topology t = poolmem::read_topology(r.sysfs);
		Family total("poolmem_node_memory_total_bytes", "MemTotal of the NUMA node, from node/nodeN/meminfo.", MetricType::Gauge);
		Family free_("poolmem_node_memory_free_bytes", "MemFree of the NUMA node, from node/nodeN/meminfo.", MetricType::Gauge);
		Family cpus("poolmem_node_cpus", "CPUs of the NUMA node (0 for far memory), from node/nodeN/cpulist.", MetricType::Gauge);
		Family blocks("poolmem_node_memory_blocks", "Memory blocks of the node by state and zone, from devices/system/memory.", MetricType::Gauge);
		Family bs("poolmem_memory_block_size_bytes", "Size of one memory block, from block_size_bytes.", MetricType::Gauge);
		Family lat("poolmem_node_hmat_read_latency_seconds", "HMAT read latency from the node's nearest initiator, from access0/initiators/read_latency.", MetricType::Gauge);
		Family bw("poolmem_node_hmat_read_bandwidth_bytes_per_second", "HMAT read bandwidth from the node's nearest initiator, from access0/initiators/read_bandwidth (MB/s, x 10^6).", MetricType::Gauge);
		Family dist("poolmem_node_distance", "NUMA distance from a node with CPUs to each node (10 = local), from node/nodeN/distance.", MetricType::Gauge);
		Family buddy("poolmem_node_free_2mib_blocks", "Free physically contiguous 2 MiB units on the node (buddy orders >= 2 MiB), from /proc/buddyinfo.", MetricType::Gauge);

		bs.add({}, static_cast<double>(t.block_size));
		std::map<std::pair<int, std::pair<std::string, std::string>>, unsigned> bcount;
		for (const auto &b : t.blocks)
			bcount[{b.node, {b.state, b.zone.empty() ? "none" : b.zone}}]++;
		for (const auto &n : t.nodes) {
			const std::string id = std::to_string(n.id);
			total.add({{"node", id}}, static_cast<double>(n.mem_total));
			free_.add({{"node", id}}, static_cast<double>(n.mem_free));
			cpus.add({{"node", id}}, static_cast<double>(n.cpus.size()));
			if (n.access0.read_latency_ns)
				lat.add({{"node", id}}, static_cast<double>(*n.access0.read_latency_ns) * 1e-9);
			if (n.access0.read_bandwidth_mbps)
				bw.add({{"node", id}}, static_cast<double>(*n.access0.read_bandwidth_mbps) * 1e6);
			/* from nodes with CPUs (where VMs run and "nearest" measures
			 * from) to every node: n x n series would not scale */
			if (n.has_cpus())
				for (size_t i = 0; i < n.distance.size() && i < t.nodes.size(); i++)
					dist.add({{"node", id}, {"to", std::to_string(t.nodes[i].id)}}, n.distance[i]);
		}
		for (const auto &[k, c] : bcount)
			blocks.add({{"node", std::to_string(k.first)}, {"state", k.second.first}, {"zone", k.second.second}}, c);

		std::ifstream bi(r.procfs / "buddyinfo");
		if (!bi)
			throw std::runtime_error((r.procfs / "buddyinfo").string() + ": cannot read");
		std::stringstream ss;
		ss << bi.rdbuf();
		for (const auto &[node, n] : parse_buddyinfo_2mib(ss.str()))
			buddy.add({{"node", std::to_string(node)}}, static_cast<double>(n));

		for (Family *f : {&total, &free_, &cpus, &blocks, &bs, &lat, &bw, &dist, &buddy})
			out.push_back(f->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_nodes_collector() { return std::make_unique<NodesCollector>(); }

} // namespace exporter
