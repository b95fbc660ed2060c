#include <poolmem/stats.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace poolmem;

TEST(PoolChunksParse, reads_name_count_lines)
{
	auto m = parse_pool_chunks("cxl0 24\ncxl1 0\n");
	EXPECT_EQ(m.size(), 2u);
	EXPECT_EQ(m["cxl0"], 24u);
	EXPECT_TRUE(parse_pool_chunks("").empty());
}

TEST(PoolChunksParse, rejects_malformed)
{
	EXPECT_THROW(parse_pool_chunks("cxl0\n"), std::invalid_argument);
	EXPECT_THROW(parse_pool_chunks("cxl0 x\n"), std::invalid_argument);
	EXPECT_THROW(parse_pool_chunks(" 3\n"), std::invalid_argument);
}

TEST(U64ListParse, reads_and_rejects)
{
	EXPECT_EQ(parse_u64_list("1 2  3\n"), (std::vector<uint64_t>{1, 2, 3}));
	EXPECT_THROW(parse_u64_list("1 -2"), std::invalid_argument);
}

TEST(Stats, reads_fixture_pools_sorted_by_id)
{
	auto pools = read_pools(FIXTURES "/sysfs-poolmem");
	ASSERT_EQ(pools.size(), 2u);
	EXPECT_EQ(pools[0].name, "cxl0");
	EXPECT_EQ(pools[0].node, 1);
	EXPECT_EQ(pools[0].allocated_bytes, 50331648u);
	EXPECT_EQ(pools[0].access_factor, 176u);
	EXPECT_EQ(pools[0].window_counts, (std::vector<uint64_t>{0, 22, 0, 0}));
	EXPECT_EQ(pools[1].overcommit_pct, 150u);
	EXPECT_TRUE(module_sysfs_present(FIXTURES "/sysfs-poolmem"));
}

TEST(Stats, reads_fixture_domain)
{
	auto doms = read_domains(FIXTURES "/sysfs-poolmem");
	ASSERT_EQ(doms.size(), 1u);
	const auto &d = doms[0];
	EXPECT_EQ(d.name, "web1");
	EXPECT_EQ(d.local_bytes + d.pool_bytes, d.size_bytes);
	EXPECT_EQ(d.tier_policy, "interleave");
	EXPECT_EQ(d.pool_chunks.at("cxl0"), 24u);
	ASSERT_EQ(d.fault_latency_histogram.size(), 40u);
	EXPECT_EQ(d.fault_latency_histogram[21], 27u);
	EXPECT_EQ(d.sigbus, 1u);
}

TEST(Stats, vanished_objects_are_skipped_not_errors)
{
	EXPECT_FALSE(read_pool(FIXTURES "/sysfs-poolmem", "gone"));
	EXPECT_FALSE(read_domain(FIXTURES "/sysfs-poolmem", "gone"));
	EXPECT_TRUE(read_pools("/nonexistent").empty());
	EXPECT_FALSE(module_sysfs_present("/nonexistent"));
}
