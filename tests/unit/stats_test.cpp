#include <poolmem/stats.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include <unistd.h>

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

TEST(ZeroReserveParse, reads_lines_sorted_by_node)
{
	auto v = parse_zero_reserves("2 4194304 2097152 5 6 7\n0 0 0 1 2 3\n\n");
	ASSERT_EQ(v.size(), 2u);
	EXPECT_EQ(v[0].node, 0);
	EXPECT_EQ(v[0].misses, 3u);
	EXPECT_EQ(v[1].node, 2);
	EXPECT_EQ(v[1].target_bytes, 4194304u);
	EXPECT_EQ(v[1].bytes, 2097152u);
	EXPECT_EQ(v[1].refills, 5u);
	EXPECT_EQ(v[1].hits, 6u);
	EXPECT_TRUE(parse_zero_reserves("").empty());
}

TEST(ZeroReserveParse, rejects_malformed)
{
	EXPECT_THROW(parse_zero_reserves("0 1 2 3 4\n"), std::invalid_argument);
	EXPECT_THROW(parse_zero_reserves("0 1 2 3 4 x\n"), std::invalid_argument);
	EXPECT_THROW(parse_zero_reserves("4294967296 1 2 3 4 5\n"), std::invalid_argument);
}

TEST(ZeroReserve, reads_fixture_and_nothing_without_module)
{
	auto v = read_zero_reserves(FIXTURES "/sysfs-poolmem");
	ASSERT_EQ(v.size(), 2u);
	EXPECT_EQ(v[1].node, 1);
	EXPECT_EQ(v[1].bytes, 16777216u);
	EXPECT_TRUE(read_zero_reserves(FIXTURES "/sysfs-2node").empty());
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
	EXPECT_EQ(pools[0].pinnable_bytes, 0u);                         // onlined movable
	EXPECT_EQ(pools[1].pinnable_bytes, pools[1].capacity_bytes); // onlined normal
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
	EXPECT_FALSE(d.pinnable);
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

namespace {

/// A private copy of the fixture tree, removed at the end of the test.
struct TreeCopy {
	std::filesystem::path root;
	TreeCopy()
	{
		root = std::filesystem::temp_directory_path() /
		       ("poolmem-stats-" + std::to_string(::getpid()) + "-" +
			::testing::UnitTest::GetInstance()->current_test_info()->name());
		std::filesystem::remove_all(root);
		std::filesystem::copy(FIXTURES "/sysfs-poolmem", root, std::filesystem::copy_options::recursive);
	}
	~TreeCopy() { std::filesystem::remove_all(root); }
	std::filesystem::path dom(const char *file) const { return root / "class/poolmem/web1" / file; }
	void write(const std::filesystem::path &p, const std::string &text) const { std::ofstream(p) << text << "\n"; }
};

} // namespace

TEST(DomainReader, rereads_counters_and_keeps_what_never_changes)
{
	TreeCopy t;
	DomainReader r;
	auto a = r.read(t.root);
	ASSERT_EQ(a.size(), 1u);
	EXPECT_EQ(a[0].faults, 32u);
	EXPECT_EQ(a[0].size_bytes, 67108864u);
	/* counters come from stat on every read */
	t.write(t.dom("stat"), "16777216 50331648 32 99 1 3 41000000 0 7 1 0 100 60 4 2 1500000 5 4");
	/* size_bytes can't change for a live domain: the reader doesn't look */
	t.write(t.dom("size_bytes"), "1");
	/* quotas and policies can (POOLMEM_DOMAIN_SET): read every time */
	t.write(t.dom("local_quota_bytes"), "2097152");
	t.write(t.dom("tier_policy"), "interleave");
	auto b = r.read(t.root);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0].faults, 99u);
	EXPECT_EQ(b[0].moves, 7u);
	EXPECT_EQ(b[0].revoked_chunks, 5u);
	EXPECT_EQ(b[0].memory_errors, 4u);
	EXPECT_EQ(b[0].size_bytes, 67108864u);
	EXPECT_EQ(b[0].local_quota_bytes, 2097152u);
	EXPECT_EQ(b[0].tier_policy, "interleave");
	/* a stateless read sees the file as it is */
	EXPECT_EQ(read_domains(t.root)[0].size_bytes, 1u);
}

TEST(DomainReader, a_recreated_domain_is_read_afresh)
{
	TreeCopy t;
	DomainReader r;
	ASSERT_EQ(r.read(t.root).at(0).size_bytes, 67108864u);
	/* destroy and create again under the same name: a new directory */
	const auto dir = t.root / "class/poolmem/web1", tmp = t.root / "web1.new";
	std::filesystem::copy(dir, tmp, std::filesystem::copy_options::recursive);
	std::filesystem::remove_all(dir);
	t.write(tmp / "size_bytes", "134217728");
	t.write(tmp / "local_quota_bytes", "0");
	t.write(tmp / "pinnable", "1");
	std::filesystem::rename(tmp, dir);
	auto d = r.read(t.root);
	ASSERT_EQ(d.size(), 1u);
	EXPECT_EQ(d[0].size_bytes, 134217728u);
	EXPECT_EQ(d[0].local_quota_bytes, 0u);
	EXPECT_TRUE(d[0].pinnable);
}

TEST(DomainReader, vanished_domains_are_skipped)
{
	TreeCopy t;
	DomainReader r;
	ASSERT_EQ(r.read(t.root).size(), 1u);
	std::filesystem::remove(t.dom("stat"));
	EXPECT_TRUE(r.read(t.root).empty());
	std::filesystem::remove_all(t.root / "class/poolmem/web1");
	EXPECT_TRUE(r.read(t.root).empty());
}

TEST(Stats, short_stat_files_are_errors)
{
	TreeCopy t;
	t.write(t.root / "kernel/poolmem/pools/cxl0/stat", "1 2 3");
	EXPECT_THROW(read_pools(t.root), std::invalid_argument);
	t.write(t.dom("stat"), "1 2 3 4 5 6 7 8 9 10 11");	/* no tiering counters */
	EXPECT_THROW(DomainReader().read(t.root), std::invalid_argument);
	t.write(t.dom("stat"), "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16");	/* ABI 5: no revoked_chunks */
	EXPECT_THROW(DomainReader().read(t.root), std::invalid_argument);
	t.write(t.dom("stat"), "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17");	/* ABI 6: no memory_errors */
	EXPECT_THROW(DomainReader().read(t.root), std::invalid_argument);
}

TEST(Stats, stat_fields_match_the_single_value_files)
{
	/* the fixture's stat files were written from its single-value files;
	 * the kernel prints both from the same fields */
	auto p = read_pools(FIXTURES "/sysfs-poolmem");
	ASSERT_EQ(p.size(), 2u);
	EXPECT_EQ(p[0].free_bytes, 1900000000u);
	EXPECT_EQ(p[0].failures, 2u);
	auto d = read_domains(FIXTURES "/sysfs-poolmem");
	ASSERT_EQ(d.size(), 1u);
	EXPECT_EQ(d[0].fault_latency_sum_ns, 41000000u);
	EXPECT_EQ(d[0].discards, 3u);
	EXPECT_EQ(d[0].moves, 5u);
	EXPECT_EQ(d[0].move_retries, 1u);
	EXPECT_EQ(d[0].revoked_chunks, 2u);
	EXPECT_EQ(d[0].memory_errors, 1u);
	EXPECT_EQ(p[0].memory_errors, 2u);
	EXPECT_EQ(p[0].soft_offlines, 1u);
	EXPECT_EQ(p[0].moved_in, 5u);
	EXPECT_EQ(p[1].moved_out, 5u);
	EXPECT_EQ(p[0].state, "online");
	EXPECT_EQ(p[0].accesses, 120u);
	EXPECT_EQ(p[0].move_retries, 1u);
	EXPECT_EQ(p[0].samples, 40u);
	EXPECT_EQ(p[0].demotions, 2u);
	EXPECT_EQ(p[0].zero_reserve_bytes, 8388608u);
	EXPECT_EQ(p[0].zero_reserve_refills, 40u);
	EXPECT_EQ(p[0].zero_reserve_hits, 12u);
	EXPECT_EQ(p[0].zero_reserve_misses, 3u);
	EXPECT_EQ(p[0].zero_reserve_target_bytes, 20971520u);
	EXPECT_EQ(p[0].zero_reserve, "1%");
	EXPECT_EQ(p[1].zero_reserve, "0");
	EXPECT_EQ(p[1].moved_bytes, 10485760u);
	EXPECT_EQ(d[0].sample_hits, 60u);
	EXPECT_EQ(d[0].demotions, 2u);
	EXPECT_EQ(d[0].tiering, "sample");
	EXPECT_EQ(d[0].scan_rate, 67108864u);
	EXPECT_EQ(d[0].cold_chunks, 7u);
}

/* Over 512 domains the reader splits them among threads (shards): every
 * domain comes back once, sorted, each with its own figures; the cache
 * keeps them all; an error in any shard reaches the caller. */
TEST(DomainReader, many_domains_are_read_in_shards)
{
	TreeCopy t;
	const auto base = t.root / "class/poolmem";
	const int n = 1200;
	for (int i = 0; i < n; i++) {
		const auto dir = base / ("d" + std::to_string(10000 + i));
		std::filesystem::copy(base / "web1", dir, std::filesystem::copy_options::recursive);
		t.write(dir / "stat", "16777216 50331648 32 " + std::to_string(i) +
					      " 1 3 41000000 0 7 1 0 100 60 4 2 1500000 5 4");
	}
	std::filesystem::remove_all(base / "web1");
	DomainReader r;
	for (int round = 0; round < 2; round++) {	/* cold cache, then warm */
		auto d = r.read(t.root);
		ASSERT_EQ(d.size(), static_cast<size_t>(n));
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(d[i].name, "d" + std::to_string(10000 + i));
			ASSERT_EQ(d[i].faults, static_cast<uint64_t>(i));
			ASSERT_EQ(d[i].size_bytes, 67108864u);
		}
	}
	/* without histograms the histogram file is not read */
	EXPECT_TRUE(r.read(t.root, nullptr, false).at(7).fault_latency_histogram.empty());
	EXPECT_FALSE(r.read(t.root, nullptr, true).at(7).fault_latency_histogram.empty());
	t.write(base / "d11111/stat", "1 2 3");
	EXPECT_THROW(r.read(t.root), std::invalid_argument);
}

namespace {

/* the header the module prints (kmod/sysfs.c, pm_table_show) */
const char *const table_header =
	"# name size_bytes chunk_bytes local_quota_bytes pool_quota_bytes home_node pinnable tier_policy pool_select"
	" tiering scan_rate hot_ms hot_chunks cold_chunks local_bytes pool_bytes chunks faults sigbus discards"
	" fault_latency_sum_ns retired_chunks moves move_retries move_pins samples sample_hits promotions demotions"
	" tiering_scan_ns revoked_chunks memory_errors pool_chunks windows profile file creator_pid creator_comm\n";
/* the fixture's web1 (tests/unit/fixtures/sysfs-poolmem/class/poolmem/web1) as a table line */
const char *const web1_line =
	"web1 67108864 2097152 16777216 50331648 0 0 interleave round-robin sample 67108864 500 3 7"
	" 16777216 50331648 32 32 1 3 41000000 0 5 1 0 100 60 4 2 1500000 2 1 cxl0:24,cxl1:0 - - /web1 4242"
	" qemu-system-x86\n";
const char *const web1_hist = "# name fault_latency_histogram\n"
			      "web1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5 27 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

} // namespace

TEST(DomainTable, a_table_line_reads_as_the_sysfs_files_do)
{
	TreeCopy t;
	const auto proc = t.root / "proc";
	std::filesystem::create_directories(proc / "poolmem");
	const auto sysfs = DomainReader().read(t.root, nullptr, true, "");
	ASSERT_EQ(sysfs.size(), 1u);
	t.write(proc / "poolmem/domains", std::string(table_header) + web1_line);
	t.write(proc / "poolmem/domain_histograms", web1_hist);
	/* the sysfs files say otherwise: only the table is read */
	t.write(t.dom("faults"), "1");
	t.write(t.dom("stat"), "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18");
	const auto table = DomainReader().read(t.root, nullptr, true, proc);
	ASSERT_EQ(table.size(), 1u);
	EXPECT_EQ(table[0], sysfs[0]);
	EXPECT_EQ(table[0].faults, 32u);
	EXPECT_EQ(table[0].fault_latency_histogram.at(21), 27u);
	EXPECT_EQ(table[0].pool_chunks.at("cxl0"), 24u);
	EXPECT_EQ(table[0].creator, "4242 qemu-system-x86");
	/* without histograms, domain_histograms is not needed */
	std::filesystem::remove(proc / "poolmem/domain_histograms");
	EXPECT_TRUE(DomainReader().read(t.root, nullptr, false, proc).at(0).fault_latency_histogram.empty());
	/* and with them but no such file (an older module): sysfs */
	EXPECT_EQ(DomainReader().read(t.root, nullptr, true, proc).at(0).faults, 4u);
	/* no table at all: sysfs */
	std::filesystem::remove_all(proc);
	EXPECT_EQ(DomainReader().read(t.root, nullptr, true, proc).at(0).faults, 4u);
}

TEST(DomainTable, strings_windows_and_empty_values)
{
	const std::string line = "p.17 1073741824 2097152 536870912 536870912 -1 1 local-first nearest off 0 0 0 0"
				 " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 - local:0:536870912,pool:536870912:536870912"
				 " p /vms/my\\040vm\\134x 77 \\055\n";
	const auto d = parse_domain_table(std::string(table_header) + line);
	ASSERT_TRUE(d);
	ASSERT_EQ(d->size(), 1u);
	const DomainStats &s = d->front();
	EXPECT_EQ(s.name, "p.17");
	EXPECT_EQ(s.home_node, -1);
	EXPECT_TRUE(s.pinnable);
	EXPECT_TRUE(s.pool_chunks.empty());
	ASSERT_EQ(s.windows.size(), 2u);
	EXPECT_EQ(s.windows[1], (DomainStats::Window{"pool", 536870912, 536870912}));
	EXPECT_EQ(s.profile, "p");
	EXPECT_EQ(s.file, "/vms/my vm\\x");
	EXPECT_EQ(s.creator, "77 -");
	EXPECT_TRUE(s.fault_latency_histogram.empty());
}

TEST(DomainTable, columns_are_found_by_name)
{
	/* a later module's extra column, anywhere: ignored */
	std::string header = table_header, line = web1_line;
	header.insert(header.find(" size_bytes"), " future");
	line.insert(line.find(' '), " 99");
	auto d = parse_domain_table(header + line, std::string_view(web1_hist));
	ASSERT_TRUE(d);
	EXPECT_EQ(d->at(0).size_bytes, 67108864u);
	EXPECT_EQ(d->at(0).file, "/web1");
	/* a column this library reads is missing: not this table (read sysfs) */
	std::string old = table_header;
	old.erase(old.find(" memory_errors"), std::string(" memory_errors").size());
	EXPECT_FALSE(parse_domain_table(old));
	/* a domain made between the two reads has an all-zero histogram */
	d = parse_domain_table(std::string(table_header) + web1_line,
			       std::string_view("# name fault_latency_histogram\nother 1 2 3\n"));
	ASSERT_TRUE(d);
	EXPECT_EQ(d->at(0).fault_latency_histogram, (std::vector<uint64_t>{0, 0, 0}));
}

TEST(DomainTable, malformed_tables_are_errors)
{
	EXPECT_THROW(parse_domain_table(""), std::invalid_argument);
	EXPECT_THROW(parse_domain_table("web1 1 2\n"), std::invalid_argument); /* no header */
	std::string line = web1_line;
	EXPECT_THROW(parse_domain_table(std::string(table_header) + "web1 67108864 2097152\n"), std::invalid_argument);
	line.replace(line.find("67108864"), 8, "6710886x");
	EXPECT_THROW(parse_domain_table(std::string(table_header) + line), std::invalid_argument);
	line = web1_line;
	line.replace(line.find("cxl0:24"), 7, "cxl0=24");
	EXPECT_THROW(parse_domain_table(std::string(table_header) + line), std::invalid_argument);
	EXPECT_THROW(parse_domain_table(std::string(table_header) + web1_line, std::string_view("web1 1 2\n")),
		     std::invalid_argument);
}

TEST(DomainTable, procfs_goes_with_its_sysfs)
{
	EXPECT_EQ(procfs_for("/sys"), "/proc");
	EXPECT_EQ(procfs_for("/sys/"), "/proc");
	EXPECT_EQ(procfs_for("/tmp/fixture/sys"), "/tmp/fixture/proc");
	EXPECT_EQ(procfs_for("/tmp/fixture/sys/"), "/tmp/fixture/proc");
}
