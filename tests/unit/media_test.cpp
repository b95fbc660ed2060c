// The poison scan's state file (poolmem/media.hpp): what the scan writes
// reads back the same, and a file that does not parse reads as none.
#include <poolmem/media.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path temp_file(const char *name)
{
	return fs::temp_directory_path() / ("poolmem-media-" + std::to_string(getpid()) + "-" + name);
}

} // namespace

TEST(MediaState, WrittenWholeAndReadBack)
{
	poolmem::MediaScan s;
	s.time = 1765000000;
	s.memdevs = {{"mem0", "cxl0"}, {"mem1", "cxl0"}};
	poolmem::CxlPoisonRecord c;
	c.memdev = "mem0";
	c.region = "region0";
	c.source = "Injected";
	c.dpa = 0x1000;
	c.length = 64;
	c.hpa = 0x2080001000;
	poolmem::PoisonFinding f(c);
	f.pool = "cxl0";
	f.domain = "vm1";
	f.offset = 0x200000;
	f.action = "moved";
	s.records.push_back(f);
	poolmem::CxlPoisonRecord unmapped;
	unmapped.memdev = "mem1";
	s.records.push_back(poolmem::PoisonFinding(unmapped));
	s.health["mem0"] = nullptr;
	s.events["mem1"] = {{"general_media", 3}};

	const fs::path file = temp_file("state.json");
	poolmem::write_media_state(s, file);
	EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
	EXPECT_EQ(fs::status(file).permissions() & fs::perms::others_read, fs::perms::none); /* tenants' names */
	const auto back = poolmem::read_media_state(file);
	ASSERT_TRUE(back);
	EXPECT_EQ(poolmem::to_json(*back), poolmem::to_json(s));
	EXPECT_EQ(back->records[0].domain, "vm1");
	EXPECT_EQ(back->records[1].hpa, poolmem::cxl_no_hpa);
	EXPECT_TRUE(back->records[1].domain.empty());
	fs::remove(file);
}

TEST(MediaState, NoneOrGarbageReadsAsNone)
{
	const fs::path file = temp_file("garbage.json");
	EXPECT_FALSE(poolmem::read_media_state(file));
	std::ofstream(file) << "{\"time\": 1, \"records\": [";
	EXPECT_FALSE(poolmem::read_media_state(file));
	std::ofstream(file) << "{\"time\": 1, \"records\": [{\"memdev\": \"mem0\", \"dpa\": \"0x10\"}]}";
	EXPECT_FALSE(poolmem::read_media_state(file)); /* a field of the wrong type: no exception */
	fs::remove(file);
}
