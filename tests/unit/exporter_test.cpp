#include "collector.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <unistd.h>
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

TEST(Resctrl, groups_map_to_domains)
{
	const std::set<std::string> doms = {"web1", "db"};
	EXPECT_EQ(exporter::resctrl_domain("/mon_groups/web1", doms), "web1");
	EXPECT_EQ(exporter::resctrl_domain("/qemu-3-db-vcpus_0-3", doms), "db");
	EXPECT_EQ(exporter::resctrl_domain("/qemu-3-db-vcpus_0-3/mon_groups/vcpus_0-3", doms), "db");
	EXPECT_EQ(exporter::resctrl_domain("/qemu-12-web1", doms), "web1");
	EXPECT_EQ(exporter::resctrl_domain("/mon_groups/other", doms), "");
	EXPECT_EQ(exporter::resctrl_domain("/", doms), "");
}

TEST(Resctrl, sums_l3_domains_per_group_from_a_fixture_tree)
{
	namespace fs = std::filesystem;
	const fs::path root = fs::temp_directory_path() / ("resctrl-test-" + std::to_string(getpid()));
	auto put = [&](const fs::path &p, const std::string &v) {
		fs::create_directories(p.parent_path());
		std::ofstream(p) << v << '\n';
	};
	put(root / "mon_data/mon_L3_00/mbm_total_bytes", "1000");
	put(root / "mon_data/mon_L3_01/mbm_total_bytes", "500");
	put(root / "mon_groups/web1/mon_data/mon_L3_00/mbm_total_bytes", "300");
	put(root / "mon_groups/web1/mon_data/mon_L3_01/mbm_total_bytes", "200");
	put(root / "mon_groups/web1/mon_data/mon_L3_00/mbm_local_bytes", "100");
	put(root / "qemu-3-db-vcpus_0-1/mon_data/mon_L3_00/mbm_total_bytes", "Unavailable");
	put(root / "qemu-3-db-vcpus_0-1/mon_data/mon_L3_01/mbm_total_bytes", "70");
	fs::create_directories(root / "info");
	exporter::Roots r;
	r.sysfs = "/nonexistent"; /* no module: no domain names */
	r.resctrl = root;
	std::vector<prometheus::MetricFamily> out;
	exporter::make_resctrl_collector()->collect(r, out);
	fs::remove_all(root);
	ASSERT_EQ(out.size(), 2u);
	std::map<std::string, double> total;
	for (const auto &m : out[0].metric)
		total[m.label[0].value] = m.counter.value;
	EXPECT_EQ(total["/"], 1500);
	EXPECT_EQ(total["/mon_groups/web1"], 500);
	EXPECT_EQ(total["/qemu-3-db-vcpus_0-1"], 70) << "Unavailable is skipped, the other L3 domain counts";
	EXPECT_EQ(total.count("/info"), 0u);
	ASSERT_EQ(out[1].metric.size(), 1u);
	EXPECT_EQ(out[1].metric[0].counter.value, 100);

	/* no resctrl: nothing, and no failure */
	r.resctrl = "/nonexistent";
	out.clear();
	EXPECT_NO_THROW(exporter::make_resctrl_collector()->collect(r, out));
	EXPECT_TRUE(out.empty());
}
