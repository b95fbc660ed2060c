// The order poolctl onlines and offlines a range's memory blocks in, against
// a model of the 6.1 kernel's set_zone_contiguous() walk (see online_order()
// in userspace/src/dax.cpp): after each block, the zone is walked from its
// start until the first block that is not online in it; the block being
// onlined is not online yet during its own walk (move_pfn_range_to_zone()
// runs before online_pages_range() marks its sections), the block being
// offlined is offline already during its walk.
#include <poolmem/dax.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace poolmem;

namespace {

// blocks the zone walk passes over, the zone being the span of ONLINE
size_t walk(const std::set<unsigned> &online)
{
	if (online.empty())
		return 0;
	size_t n = 0;
	for (unsigned b = *online.begin(); b <= *online.rbegin() && online.count(b); b++)
		n++;
	return n;
}

size_t online_cost(const std::vector<unsigned> &order)
{
	std::set<unsigned> online;
	size_t cost = 0;
	for (unsigned b : order) {
		cost += walk(online); // before b's sections are online
		online.insert(b);
	}
	return cost;
}

size_t offline_cost(std::vector<unsigned> all, const std::vector<unsigned> &order)
{
	std::set<unsigned> online(all.begin(), all.end());
	size_t cost = 0;
	for (unsigned b : order) {
		online.erase(b); // after b's sections are offline
		cost += walk(online);
	}
	return cost;
}

std::vector<unsigned> range(unsigned first, unsigned n)
{
	std::vector<unsigned> v(n);
	std::iota(v.begin(), v.end(), first);
	return v;
}

} // namespace

TEST(BlockOrder, same_blocks_second_one_last_online_first_offline)
{
	EXPECT_EQ(online_order({7, 5, 6, 8}), (std::vector<unsigned>{5, 7, 8, 6}));
	EXPECT_EQ(offline_order({7, 5, 6, 8}), (std::vector<unsigned>{6, 7, 8, 5}));
	EXPECT_EQ(online_order({3, 4}), (std::vector<unsigned>{3, 4}));
	EXPECT_EQ(offline_order({9}), (std::vector<unsigned>{9}));
	EXPECT_TRUE(online_order({}).empty());
	for (auto v : {range(64, 64), range(0, 3), range(1000, 257)}) {
		auto on = online_order(v), off = offline_order(v);
		std::sort(on.begin(), on.end());
		std::sort(off.begin(), off.end());
		EXPECT_EQ(on, v);
		EXPECT_EQ(off, v);
	}
}

TEST(BlockOrder, zone_walk_is_linear_not_quadratic)
{
	for (unsigned n : {16u, 64u, 256u}) {
		const auto v = range(64, n);
		// the model is right about address order: every walk covers all before
		EXPECT_EQ(online_cost(v), size_t(n) * (n - 1) / 2) << n;
		// the first block, at most, per walk; the second for the last
		EXPECT_LE(online_cost(online_order(v)), size_t(n)) << n;
		EXPECT_GE(offline_cost(v, v), size_t(n - 1) * (n - 2) / 2) << n;
		EXPECT_LE(offline_cost(v, offline_order(v)), size_t(n)) << n;
	}
}
