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
