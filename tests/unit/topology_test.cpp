#include <poolmem/topology.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

using namespace poolmem;

TEST(ListParse, expands_ranges)
{
	EXPECT_EQ(parse_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
	EXPECT_EQ(parse_list("5\n"), (std::vector<int>{5}));
	EXPECT_TRUE(parse_list("").empty());
}

TEST(ListParse, rejects_malformed)
{
	EXPECT_THROW(parse_list("3-1"), std::invalid_argument);
	EXPECT_THROW(parse_list("1,"), std::invalid_argument);
	EXPECT_THROW(parse_list("a"), std::invalid_argument);
	EXPECT_THROW(parse_list("1--2"), std::invalid_argument);
}

TEST(MeminfoParse, reads_node_and_proc_formats)
{
	auto n = parse_meminfo("Node 1 MemTotal:        1966080 kB\nNode 1 MemFree:  1000 kB\n");
	EXPECT_EQ(n["MemTotal"], 1966080ull * 1024);
	EXPECT_EQ(n["MemFree"], 1000ull * 1024);
	auto p = parse_meminfo("MemTotal:  2048 kB\nHugePages_Total:       3\n");
	EXPECT_EQ(p["MemTotal"], 2048ull * 1024);
	EXPECT_EQ(p["HugePages_Total"], 3u);
}

TEST(Topology, reads_fixture_nodes_blocks_and_hmat)
{
	Topology t = read_topology(FIXTURES "/sysfs-2node");
	EXPECT_EQ(t.block_size, 128ull << 20);
	ASSERT_EQ(t.nodes.size(), 2u);
	EXPECT_EQ(t.nodes[0].cpus, (std::vector<int>{0, 1}));
	EXPECT_FALSE(t.nodes[1].has_cpus());
	EXPECT_EQ(t.nodes[1].mem_total, 256ull << 20);
	EXPECT_EQ(t.nodes[1].distance, (std::vector<int>{21, 10}));
	ASSERT_TRUE(t.nodes[1].access0.read_latency_ns);
	EXPECT_EQ(*t.nodes[1].access0.read_latency_ns, 100u);
	EXPECT_EQ(t.nodes[1].access0.initiators, (std::vector<int>{0}));
	EXPECT_FALSE(t.nodes[0].access0.read_latency_ns);
	EXPECT_EQ(t.nodes[1].blocks, (std::vector<unsigned>{40, 41, 42}));
	ASSERT_EQ(t.blocks.size(), 4u);
	EXPECT_EQ(t.blocks[1].index, 40u);
	EXPECT_EQ(t.blocks[1].node, 1);
	EXPECT_EQ(t.blocks[1].zone, "Movable");
	EXPECT_EQ(t.blocks[3].state, "offline");
	EXPECT_EQ(t.blocks[3].zone, "");
}

TEST(Topology, missing_root_names_the_directory)
{
	try {
		read_topology("/nonexistent-sysfs");
		FAIL() << "no exception";
	} catch (const std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find("/nonexistent-sysfs/devices/system/node"), std::string::npos);
	}
}

TEST(MemoryTiers, maps_each_node_to_its_tier)
{
	namespace fs = std::filesystem;
	const fs::path root = fs::temp_directory_path() / ("pm-tiers-" + std::to_string(::getpid()));
	const fs::path t = root / "devices/virtual/memory_tiering";
	for (auto [dir, list] : {std::pair{"memory_tier4", "0\n"}, {"memory_tier22", "1-2,4\n"}, {"memory_tier9", ""}}) {
		fs::create_directories(t / dir);
		std::ofstream(t / dir / "nodelist") << list;
	}
	fs::create_directories(t / "power"); /* not a tier */
	const auto m = memory_tiers(root);
	EXPECT_EQ(m, (std::map<int, int>{{0, 4}, {1, 22}, {2, 22}, {4, 22}}));
	EXPECT_TRUE(memory_tiers(root / "nothing").empty()); /* a kernel without tiers */
	fs::remove_all(root);
}

// kmem's memmap per node: only devices bound to kmem count, on the device
// only where the device asks and the kernel was booted to allow it.
TEST(KmemMemmap, places_by_attribute_and_boot_parameter)
{
	namespace fs = std::filesystem;
	const fs::path root = fs::temp_directory_path() / ("pm-memmap-" + std::to_string(::getpid()));
	auto put = [](const fs::path &p, const std::string &v) {
		fs::create_directories(p.parent_path());
		std::ofstream(p) << v << "\n";
	};
	put(root / "devices/system/memory/block_size_bytes", "8000000"); /* 128 MiB */
	fs::create_directories(root / "bus/dax/drivers/kmem");
	fs::create_directories(root / "bus/dax/drivers/device_dax");
	struct Dev {
		const char *name;
		int node;
		uint64_t size;
		const char *memmap, *driver;
	};
	/* 8 GiB on node 1 asking for the device; 1 GiB + half a block on node 2
	   (its memmap for whole blocks only); node 3's device is devdax */
	for (const Dev &d : {Dev{"dax0.0", 1, 8ULL << 30, "1", "kmem"}, Dev{"dax1.0", 2, (1ULL << 30) + (64 << 20), "0", "kmem"},
			     Dev{"dax2.0", 3, 1ULL << 30, "1", "device_dax"}}) {
		const fs::path p = root / "bus/dax/devices" / d.name;
		put(p / "target_node", std::to_string(d.node));
		put(p / "size", std::to_string(d.size));
		put(p / "memmap_on_memory", d.memmap);
		fs::create_symlink(fs::path("../../drivers") / d.driver, p / "driver");
	}
	auto m = kmem_memmap(root); /* not booted for it: all in DRAM */
	ASSERT_EQ(m.size(), 2u);
	EXPECT_EQ(m[1].local_bytes, 128ULL << 20);
	EXPECT_EQ(m[1].device_bytes, 0u);
	EXPECT_EQ(m[2].local_bytes, 16ULL << 20);
	EXPECT_EQ(m.count(3), 0u);
	put(root / "module/memory_hotplug/parameters/memmap_on_memory", "Y");
	m = kmem_memmap(root);
	EXPECT_EQ(m[1].local_bytes, 0u);
	EXPECT_EQ(m[1].device_bytes, 128ULL << 20);
	EXPECT_EQ(m[2].local_bytes, 16ULL << 20);
	EXPECT_EQ(m[1].devices, 1u);
	fs::remove_all(root);
}
