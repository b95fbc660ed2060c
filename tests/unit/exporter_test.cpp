#include "collector.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

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

TEST(Probe, chase_is_one_cycle_through_every_line)
{
	const size_t n = 4096, stride = 8;
	std::vector<void *> buf(n * stride);
	exporter::chase_init(buf.data(), n, stride, 42);
	std::vector<bool> seen(n);
	void **p = buf.data();
	for (size_t i = 0; i < n; i++) {
		const size_t line = static_cast<size_t>(p - buf.data()) / stride;
		ASSERT_LT(line, n);
		EXPECT_FALSE(seen[line]) << "line " << line << " visited twice after " << i << " steps";
		seen[line] = true;
		p = exporter::chase(p, 1);
	}
	EXPECT_EQ(p, buf.data()) << "n steps must come back to the start";
	/* not the trivial order: consecutive lines rarely follow each other */
	size_t sequential = 0;
	for (size_t i = 0; i < n; i++)
		sequential += buf[i * stride] == &buf[((i + 1) % n) * stride];
	EXPECT_LT(sequential, n / 100);
}

TEST(Probe, buckets_ascend)
{
	ASSERT_FALSE(exporter::probe_buckets.empty());
	EXPECT_TRUE(std::is_sorted(exporter::probe_buckets.begin(), exporter::probe_buckets.end()));
}
