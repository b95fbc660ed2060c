// The host's memory topology as sysfs shows it: NUMA nodes with their CPUs,
// memory, distances and HMAT access attributes, and memory blocks with their
// state and zone. The sysfs root is a parameter so fixture trees can stand in
// for /sys in tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace poolmem {

/// HMAT performance from the node's nearest initiators
/// (node/nodeN/access0/initiators, Linux 5.6+; absent without ACPI HMAT).
struct AccessAttrs {
	std::optional<uint64_t> read_latency_ns;
	std::optional<uint64_t> write_latency_ns;
	std::optional<uint64_t> read_bandwidth_mbps;
	std::optional<uint64_t> write_bandwidth_mbps;
	std::vector<int> initiators; ///< initiator node numbers
};

struct MemoryBlock {
	unsigned index = 0;     ///< memoryN
	int node = -1;          ///< owning node, -1 if unknown
	std::string state;      ///< "online", "offline", "going-offline"
	std::string zone;       ///< zone when online ("Normal", "Movable"), else ""
};

struct Node {
	int id = 0;
	std::vector<int> cpus;
	uint64_t mem_total = 0; ///< bytes
	uint64_t mem_free = 0;  ///< bytes
	std::vector<int> distance; ///< indexed by position in the online node list
	AccessAttrs access0;
	std::vector<unsigned> blocks; ///< memory block indexes
	bool has_cpus() const { return !cpus.empty(); }
};

struct Topology {
	uint64_t block_size = 0; ///< bytes
	std::vector<Node> nodes;
	std::vector<MemoryBlock> blocks;

	const Node *node(int id) const;
};

/// The kernel's memory tiers (Linux 6.1+, /sys/devices/virtual/memory_tiering):
/// node -> tier id (memory_tierN). A lower id is a faster tier; demotion
/// moves cold pages to higher ids, NUMA balancing's tiering mode promotes
/// hot ones to lower. Empty where the kernel has none.
std::map<int, int> memory_tiers(const std::filesystem::path &sysfs);

/// The memmap (struct pages) of memory that kmem added to a node: where it
/// lives and how much. local_bytes is DRAM of the node kmem took it from
/// (the nearest node with memory), device_bytes the pool memory itself
/// holds (Linux 6.8+ with memory_hotplug.memmap_on_memory and the dax
/// device's memmap_on_memory set). kmem makes it when it binds the device,
/// for every block, online or not.
struct NodeMemmap {
	uint64_t local_bytes = 0, device_bytes = 0;
	unsigned devices = 0; ///< dax devices bound to kmem for the node
};

/// Per node, from sysfs alone (bus/dax/devices/*: driver, target_node,
/// size, memmap_on_memory; the boot parameter): nodes with no device bound
/// to kmem (boot or firmware memory) are absent.
std::map<int, NodeMemmap> kmem_memmap(const std::filesystem::path &sysfs);

/// Parse a kernel cpulist/nodelist ("0-3,8,10-11"); throws
/// std::invalid_argument naming the text on malformed input.
std::vector<int> parse_list(std::string_view text);

/// Parse a node meminfo file ("Node 1 MemTotal: 1966080 kB") or
/// /proc/meminfo into field -> bytes.
std::map<std::string, uint64_t> parse_meminfo(std::string_view text);

/// Read the whole topology below SYSFS (normally "/sys"). Throws
/// std::runtime_error naming the file that could not be read.
Topology read_topology(const std::filesystem::path &sysfs = "/sys");

} // namespace poolmem
