#include "collector.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

TEST(Buddyinfo, counts_free_2mib_units_per_node)
{
	// orders 0..10; order 9 = 2 MiB, order 10 = 4 MiB (counts 2)
	auto m = exporter::parse_buddyinfo_2mib("Node 0, zone      DMA      1 1 1 0 2 1 1 0 1 1 3\n"
						"Node 0, zone    DMA32    5 4 3 2 1 0 0 0 0 2 1\n"
						"Node 1, zone  Movable    0 0 0 0 0 0 0 0 0 7 0\n");
	EXPECT_EQ(m.at(0), (1 + 3 * 2) + (2 + 1 * 2));
	EXPECT_EQ(m.at(1), 7u);
}

TEST(Buddyinfo, rejects_malformed_lines)
{
	EXPECT_THROW(exporter::parse_buddyinfo_2mib("Nodes 0 zone x 1 2\n"), std::invalid_argument);
	EXPECT_TRUE(exporter::parse_buddyinfo_2mib("").empty());
}
