#include <poolmem/size.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

using poolmem::format_overcommit;
using poolmem::format_size;
using poolmem::parse_overcommit;
using poolmem::parse_size;

TEST(SizeParse, accepts_plain_bytes) { EXPECT_EQ(parse_size("4096"), 4096u); }

TEST(SizeParse, accepts_binary_suffixes)
{
	EXPECT_EQ(parse_size("2M"), 2ull << 20);
	EXPECT_EQ(parse_size("16G"), 16ull << 30);
	EXPECT_EQ(parse_size("1T"), 1ull << 40);
	EXPECT_EQ(parse_size("512k"), 512ull << 10);
	EXPECT_EQ(parse_size("8GiB"), 8ull << 30);
	EXPECT_EQ(parse_size("8GB"), 8ull << 30);
}

TEST(SizeParse, accepts_fractions)
{
	EXPECT_EQ(parse_size("1.5G"), 3ull << 29);
	EXPECT_EQ(parse_size("0.5K"), 512u);
}

TEST(SizeParse, rejects_trailing_garbage)
{
	EXPECT_FALSE(parse_size("12Gx"));
	EXPECT_FALSE(parse_size("12 G"));
	EXPECT_FALSE(parse_size("G"));
	EXPECT_FALSE(parse_size(""));
	EXPECT_FALSE(parse_size("-1G"));
	EXPECT_FALSE(parse_size("1.2.3"));
}

TEST(SizeParse, rejects_fraction_of_a_byte) { EXPECT_FALSE(parse_size("0.5")); }

TEST(SizeParse, rejects_overflow)
{
	EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
	EXPECT_FALSE(parse_size("18446744073709551616"));
	EXPECT_FALSE(parse_size("16777216T"));
	EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);
}

TEST(SizeFormat, picks_largest_unit)
{
	EXPECT_EQ(format_size(0), "0 B");
	EXPECT_EQ(format_size(1023), "1023 B");
	EXPECT_EQ(format_size(1536), "1.5 KiB");
	EXPECT_EQ(format_size(2ull << 30), "2.0 GiB");
	EXPECT_EQ(format_size(15ull * (128 << 20)), "1.9 GiB");
}

/* format_size() formats in integers what printf("%.1f") printed: the same
 * text for every size, ties (x.x5 exactly) to even, and a unit's edge */
TEST(SizeFormat, prints_what_printf_printed)
{
	auto printf_size = [](uint64_t bytes) {
		static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
		unsigned u = 0;
		double v = static_cast<double>(bytes);
		while (v >= 1024.0 && u < 6) {
			v /= 1024.0;
			u++;
		}
		char buf[32];
		if (u == 0)
			std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
		else
			std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
		return std::string(buf);
	};
	std::vector<uint64_t> sizes = {1024, 1075, 1076, 1126, 1127, 1177, 1178, 1228, 1229, 1280,
				       1024 * 1024 - 1, 1024 * 1024, 1048524, 1048525, 1048576 + 52428,
				       (1ull << 53) - 1, 1ull << 53, ~0ull};
	/* every tie below 100 KiB: x.x5 exactly is k * 1024 / 20 bytes when 20 divides it */
	for (uint64_t k = 1; k < 2000; k++)
		if (k * 1024 % 20 == 0)
			sizes.push_back(k * 1024 / 20);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sizes.push_back(x >> (x % 64));
	}
	for (uint64_t b : sizes)
		ASSERT_EQ(format_size(b), printf_size(b)) << b << " bytes";
}

TEST(SizeFormat, round_trips_through_parse)
{
	for (uint64_t v : {1ull << 20, 3ull << 29, 12ull << 30})
		EXPECT_EQ(parse_size(format_size(v).substr(0, format_size(v).find(' ')) +
				     format_size(v).substr(format_size(v).find(' ') + 1, 1)),
			  v);
}

TEST(Overcommit, ratios_and_percents)
{
	EXPECT_EQ(parse_overcommit("1"), 100u);
	EXPECT_EQ(parse_overcommit("1.5"), 150u);
	EXPECT_EQ(parse_overcommit("1.25"), 125u);
	EXPECT_EQ(parse_overcommit("10"), 1000u);
	EXPECT_EQ(parse_overcommit("150%"), 150u);
	EXPECT_EQ(parse_overcommit("100%"), 100u);
	EXPECT_EQ(parse_overcommit("1000%"), 1000u);
}

TEST(Overcommit, refuses_what_the_kernel_would)
{
	for (const char *bad : {"", "0.5", "0.99", "10.01", "11", "150", "99%", "1001%", "1.5%", "1.255", "1.",
				".5", "-1", "+2", "1e1", " 1", "1 ", "1..5", "%", "abc", "100000000%"})
		EXPECT_EQ(parse_overcommit(bad), std::nullopt) << bad;
}

TEST(Overcommit, formats_as_a_ratio)
{
	EXPECT_EQ(format_overcommit(100), "1");
	EXPECT_EQ(format_overcommit(150), "1.5");
	EXPECT_EQ(format_overcommit(125), "1.25");
	EXPECT_EQ(format_overcommit(1000), "10");
	EXPECT_EQ(format_overcommit(105), "1.05");
	for (uint32_t pct = 100; pct <= 1000; pct++)
		EXPECT_EQ(parse_overcommit(format_overcommit(pct)), pct) << pct;
}
