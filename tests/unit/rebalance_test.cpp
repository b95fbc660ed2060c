// Rebalancing between pools (kmod/policy/pm_rebalance.c, issue 51): when
// a pool counts as contended, where a hot chunk goes, and that a chunk
// never bounces back.
#include "policy/pm_rebalance.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

constexpr u64 kChunk = 2ULL << 20;

std::vector<pm_rb_pool> pools(std::initializer_list<u64> af)
{
	std::vector<pm_rb_pool> v;
	for (u64 a : af)
		v.push_back({a, 1ULL << 30, 0, 0});
	return v;
}

} // namespace

TEST(Rebalance, EvenPoolsAreNeverContended)
{
	const pm_rb_params p{25, 1, 0};
	auto v = pools({1000, 1100, 900, 1200}); /* 1200 is 20% above the others' mean */
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(pm_rb_check(&p, v.data(), static_cast<unsigned>(v.size())), 0u);
	auto one = pools({5000});
	EXPECT_EQ(pm_rb_check(&p, one.data(), 1), 0u);
}

TEST(Rebalance, ContendedOnlyAfterPeriodsInARow)
{
	const pm_rb_params p{25, 3, 0};
	auto v = pools({2000, 1000, 1000});
	EXPECT_EQ(pm_rb_check(&p, v.data(), 3), 0u);
	EXPECT_EQ(pm_rb_check(&p, v.data(), 3), 0u);
	EXPECT_EQ(pm_rb_check(&p, v.data(), 3), 1u); /* the third check in a row */
	v[0].af = 1100;				      /* a dip: the count starts again */
	EXPECT_EQ(pm_rb_check(&p, v.data(), 3), 0u);
	v[0].af = 2000;
	EXPECT_EQ(pm_rb_check(&p, v.data(), 3), 0u);
	EXPECT_EQ(v[0].over, 1u);
	/* below the floor, an idle rack's noise: never */
	const pm_rb_params floor{25, 1, 5000};
	auto w = pools({2000, 10, 10});
	EXPECT_EQ(pm_rb_check(&floor, w.data(), 3), 0u);
}

TEST(Rebalance, DestinationIsTheCoolestAllowedPoolWithRoom)
{
	auto v = pools({4000, 500, 300, 100});
	const u64 all = 0xf;
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1, 100, kChunk), 3);
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all & ~8ULL, 1, 100, kChunk), 2); /* not allowed */
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1 | 8, 100, kChunk), 2);	    /* contended itself */
	v[3].free = kChunk - 1;
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1, 100, kChunk), 2); /* no room */
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1, 0, kChunk), -1);	/* a cold chunk stays */
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, 1, 1, 100, kChunk), -1);	/* nowhere allowed */
	/* a move must narrow the gap: 4000 - h >= 300 + h, so h up to 1850 */
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1, 1850, kChunk), 2);
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 0, all, 1, 1851, kChunk), -1);
	EXPECT_EQ(pm_rb_dest(v.data(), 4, 7, all, 1, 100, kChunk), -1); /* no such source */
}

/* The moves of one check stay counted until the Af shows them: the next
 * check does not move the same load again (and no other domain does). */
TEST(Rebalance, MovesAreRememberedUntilTheAfShowsThem)
{
	const pm_rb_params p{25, 1, 0};
	auto v = pools({3000, 1000});
	ASSERT_EQ(pm_rb_check(&p, v.data(), 2), 1u);
	/* one check moves until the gap closes: 1000 of heat */
	unsigned moved = 0;
	while (pm_rb_dest(v.data(), 2, 0, 3, 1, 100, kChunk) == 1) {
		pm_rb_moved(v.data(), 0, 1, 100, kChunk);
		moved++;
	}
	EXPECT_EQ(moved, 10u);
	EXPECT_EQ(v[0].shift, -1000);
	/* the measure has not moved yet: the shift stands in for it */
	v[0].af = 3000;
	v[1].af = 1000;
	EXPECT_EQ(pm_rb_check(&p, v.data(), 2), 0u);
	EXPECT_EQ(v[0].af, 2000u);
	EXPECT_EQ(v[1].af, 2000u);
	EXPECT_EQ(v[0].shift, -500); /* halved: the windows hand the load over */
	/* the Af caught up: the shift fades, still nothing moves */
	v[0].af = 2000 + 500;
	v[1].af = 2000 - 500;
	EXPECT_EQ(pm_rb_check(&p, v.data(), 2), 0u);
	EXPECT_EQ(v[0].af, 2000u);
	/* a huge Af is taken at PM_RB_AF_MAX: no overflow */
	auto big = pools({~0ULL, ~0ULL, 1});
	EXPECT_EQ(pm_rb_check(&p, big.data(), 3), 3u); /* the two big ones, as without the cap */
	EXPECT_EQ(big[0].af, PM_RB_AF_MAX);
}

/* On random racks: a move never leaves the destination hotter than the
 * source, so the reverse move is never chosen; moving the hottest first
 * stops by itself, and the spread between the two pools only narrows. */
TEST(Rebalance, NoBouncingOnRandomRacks)
{
	std::mt19937_64 rng(51);
	unsigned moves = 0;
	for (int trial = 0; trial < 2000; trial++) {
		const unsigned n = 2 + rng() % 7;
		std::vector<pm_rb_pool> v(n);
		for (auto &p : v)
			p = {rng() % 100000, (rng() % 64) * kChunk, 0, 0};
		const pm_rb_params prm{static_cast<u32>(rng() % 50), 1, 0};
		const u64 contended = pm_rb_check(&prm, v.data(), n);
		const u64 all = (1ULL << n) - 1;
		for (unsigned src = 0; src < n; src++) {
			if (!(contended >> src & 1))
				continue;
			for (int k = 0; k < 50; k++) {
				const u64 heat = 1 + rng() % 5000;
				const int dst = pm_rb_dest(v.data(), n, src, all, contended, heat, kChunk);
				if (dst < 0)
					continue;
				const u64 gap = v[src].af - v[dst].af;
				pm_rb_moved(v.data(), src, static_cast<u32>(dst), heat, kChunk);
				moves++;
				ASSERT_GE(v[src].af, v[dst].af);
				ASSERT_LE(v[src].af - v[dst].af, gap);
				/* the same chunk from where it went back to where it was: never */
				ASSERT_EQ(pm_rb_dest(v.data(), n, static_cast<u32>(dst), 1ULL << src, 0, heat, kChunk), -1);
			}
		}
	}
	EXPECT_GT(moves, 1000u); /* the property was tried */
}
