// poolmem::probe_qemu against the QEMU scripts/deps.sh installs (Debian's
// backported 10.0): it only asks for help texts, nothing starts.
#include <poolmem/qemu.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// The major and minor version of the installed QEMU, or {0, 0}.
std::pair<int, int> installed_version()
{
	int major = 0, minor = 0;
	FILE *f = popen("qemu-system-x86_64 --version 2>/dev/null", "r");
	if (!f)
		return {0, 0};
	if (std::fscanf(f, "QEMU emulator version %d.%d", &major, &minor) != 2)
		major = minor = 0;
	pclose(f);
	return {major, minor};
}

bool at_least(std::pair<int, int> v, int major, int minor)
{
	return v.first > major || (v.first == major && v.second >= minor);
}

} // namespace

// Each property is read from QEMU's answers; the versions that added them
// (7.2 thread-context, 8.1 offset=, 8.2 dynamic-memslots) are the check.
TEST(QemuProbe, finds_what_the_installed_qemu_takes)
{
	const auto v = installed_version();
	if (!v.first)
		GTEST_SKIP() << "no qemu-system-x86_64 (scripts/deps.sh installs it)";
	const auto c = poolmem::probe_qemu("qemu-system-x86_64");
	ASSERT_TRUE(c.found);
	EXPECT_EQ(c.version.rfind(std::to_string(v.first) + "." + std::to_string(v.second), 0), 0u) << c.version;
	EXPECT_EQ(c.prealloc_context, at_least(v, 7, 2));
	EXPECT_EQ(c.file_offset, at_least(v, 8, 1));
	EXPECT_EQ(c.dynamic_memslots, at_least(v, 8, 2));
	EXPECT_EQ(c.describe(), "QEMU " + c.version + " (qemu-system-x86_64)");
}

TEST(QemuProbe, a_missing_binary_offers_nothing)
{
	const auto c = poolmem::probe_qemu("/nonexistent/qemu-system-x86_64");
	EXPECT_FALSE(c.found);
	EXPECT_FALSE(c.file_offset || c.prealloc_context || c.dynamic_memslots);
	EXPECT_EQ(c.describe(), "no /nonexistent/qemu-system-x86_64 found");
}

// A binary that answers --version but no help (not QEMU): nothing claimed.
TEST(QemuProbe, a_binary_that_is_not_qemu_offers_nothing)
{
	const auto c = poolmem::probe_qemu("true");
	EXPECT_FALSE(c.found);
	EXPECT_FALSE(c.file_offset || c.prealloc_context || c.dynamic_memslots);
}

// QEMU 7.2's help (Debian 12) has prealloc-context but no offset=; a
// property named only in another's description does not count.
TEST(QemuParse, reads_property_lines_only)
{
	const auto c = poolmem::parse_qemu_caps(
		"QEMU emulator version 7.2.19 (Debian 1:7.2+dfsg-7+deb12u18)\n",
		"memory-backend-file options:\n  align=<int>\n  prealloc-context=<link<thread-context>> - Context\n"
		"  reserve=<bool>         - Reserve swap space; see offset=<int> in 8.1\n",
		"List of user creatable objects:\n  iothread\n  thread-context\n", "");
	EXPECT_TRUE(c.found);
	EXPECT_EQ(c.version, "7.2.19");
	EXPECT_TRUE(c.prealloc_context);
	EXPECT_FALSE(c.file_offset);
	EXPECT_FALSE(c.dynamic_memslots);
}
