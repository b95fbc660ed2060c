// The module's placement policy (kmod/policy/pm_policy.c), compiled for the host.
#include "policy/pm_policy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

/// Run the tier policy for N chunks from empty and return the tier sequence.
std::vector<u32> tier_sequence(u32 policy, u64 local_quota, u64 pool_quota, int n)
{
	pm_tier_view t{{0, 0}, {local_quota, pool_quota}};
	std::vector<u32> seq;
	for (int i = 0; i < n; i++) {
		u32 order[PM_NR_TIERS];
		if (pm_tier_order(policy, &t, order) == 0)
			break;
		seq.push_back(order[0]);
		t.used[order[0]]++;
	}
	return seq;
}

constexpr u32 L = PM_TIER_LOCAL, P = PM_TIER_POOL;

} // namespace

TEST(TierPolicy, local_first_fills_local_then_pool)
{
	EXPECT_EQ(tier_sequence(PM_TIER_LOCAL_FIRST, 2, 3, 10), (std::vector<u32>{L, L, P, P, P}));
}

TEST(TierPolicy, pool_first_fills_pool_then_local)
{
	EXPECT_EQ(tier_sequence(PM_TIER_POOL_FIRST, 2, 3, 10), (std::vector<u32>{P, P, P, L, L}));
}

TEST(TierPolicy, interleave_follows_quota_ratio)
{
	EXPECT_EQ(tier_sequence(PM_TIER_INTERLEAVE, 1, 3, 8), (std::vector<u32>{L, P, P, P}));
	EXPECT_EQ(tier_sequence(PM_TIER_INTERLEAVE, 2, 2, 4), (std::vector<u32>{L, P, L, P}));
	EXPECT_EQ(tier_sequence(PM_TIER_INTERLEAVE, 4, 12, 8), (std::vector<u32>{L, P, P, P, L, P, P, P}));
}

TEST(TierPolicy, quotas_are_hard)
{
	pm_tier_view t{{4, 12}, {4, 12}};
	u32 order[PM_NR_TIERS];
	for (u32 p : {PM_TIER_LOCAL_FIRST, PM_TIER_INTERLEAVE, PM_TIER_POOL_FIRST})
		EXPECT_EQ(pm_tier_order(p, &t, order), 0u);
	t.used[P] = 11; // one pool chunk left: only the pool is offered
	ASSERT_EQ(pm_tier_order(PM_TIER_LOCAL_FIRST, &t, order), 1u);
	EXPECT_EQ(order[0], P);
}

TEST(TierPolicy, falls_back_to_the_other_tier)
{
	pm_tier_view t{{0, 0}, {4, 12}};
	u32 order[PM_NR_TIERS];
	ASSERT_EQ(pm_tier_order(PM_TIER_LOCAL_FIRST, &t, order), 2u);
	EXPECT_EQ(order[1], P);
}

TEST(TierPolicy, rejects_unknown_policy)
{
	pm_tier_view t{{0, 0}, {4, 4}};
	u32 order[PM_NR_TIERS];
	EXPECT_EQ(pm_tier_order(7, &t, order), 0u);
}

TEST(AccessFactor, weighs_recent_windows_more)
{
	pm_af a{};
	pm_af_add(&a, 10, 1); // epoch 10: one event
	EXPECT_EQ(pm_af_value(&a, 10), 8u);
	EXPECT_EQ(pm_af_value(&a, 11), 4u);
	EXPECT_EQ(pm_af_value(&a, 13), 1u);
	EXPECT_EQ(pm_af_value(&a, 14), 0u); // decayed after PM_AF_WINDOWS windows
}

TEST(AccessFactor, advance_shifts_and_drops_old_windows)
{
	pm_af a{};
	pm_af_add(&a, 5, 3);
	pm_af_add(&a, 6, 2);
	pm_af_advance(&a, 7);
	EXPECT_EQ(a.win[0], 0u);
	EXPECT_EQ(a.win[1], 2u);
	EXPECT_EQ(a.win[2], 3u);
	pm_af_advance(&a, 100);
	for (u64 w : a.win)
		EXPECT_EQ(w, 0u);
	pm_af_advance(&a, 98); // a little behind: never backwards
	EXPECT_EQ(a.epoch, 100u);
}

TEST(AccessFactor, restarts_when_the_window_length_changes)
{
	pm_af a{};
	pm_af_add(&a, 100000, 5); // window 100000 of 1 ms windows ...
	pm_af_add(&a, 1, 3);      // ... now window 1 of 60 s windows
	EXPECT_EQ(a.epoch, 1u);
	EXPECT_EQ(a.win[0], 3u);
	EXPECT_EQ(pm_af_value(&a, 1), 3u * 8);
}

TEST(AccessFactor, late_events_count_in_their_window)
{
	pm_af a{};
	pm_af_add(&a, 9, 1);
	pm_af_add(&a, 8, 1); // late, one window old
	EXPECT_EQ(a.win[0], 1u);
	EXPECT_EQ(a.win[1], 1u);
	pm_af_add(&a, 6, 1); // three windows late: still the oldest window
	EXPECT_EQ(a.win[3], 1u);
	EXPECT_EQ(pm_af_value(&a, 9), 8u + 4u + 1u);
}

TEST(SmartIdle, m_is_ceil_log2_n)
{
	EXPECT_EQ(pm_smart_idle_m(1), 1u);
	EXPECT_EQ(pm_smart_idle_m(2), 1u);
	EXPECT_EQ(pm_smart_idle_m(3), 2u);
	EXPECT_EQ(pm_smart_idle_m(4), 2u);
	EXPECT_EQ(pm_smart_idle_m(6), 3u);
	EXPECT_EQ(pm_smart_idle_m(64), 6u);
}

TEST(PoolOrder, round_robin_rotates_from_cursor)
{
	pm_pool_view v[3]{{0, 10, 0, 0}, {1, 10, 0, 0}, {2, 10, 0, 0}};
	u32 order[3];
	ASSERT_EQ(pm_pool_order(PM_SELECT_ROUND_ROBIN, v, 3, 4, 0, order), 3u);
	EXPECT_EQ(std::vector<u32>(order, order + 3), (std::vector<u32>{1, 2, 0}));
}

TEST(PoolOrder, cursor_starts_spread_domains_and_hosts)
{
	/* the module's start: consecutive domains on consecutive pools, the host's salt on top */
	EXPECT_EQ(PM_RR_START_MODULE, PM_RR_START_SALTED);
	for (u32 seq = 0; seq < 12; seq++)
		EXPECT_EQ(pm_rr_cursor_start(PM_RR_START_MODULE, seq, 7, 99) % 6, (seq + 7) % 6);
	EXPECT_EQ(pm_rr_cursor_start(PM_RR_START_SALTED, 0xffffffffu, 2, 0), 1u); /* wraps */
	EXPECT_EQ(pm_rr_cursor_start(PM_RR_START_ZERO, 5, 7, 99), 0u);
	EXPECT_EQ(pm_rr_cursor_start(PM_RR_START_RANDOM, 5, 7, 99), 99u);
	EXPECT_EQ(pm_rr_cursor_start(PM_RR_START_SEQUENCE, 5, 7, 99), 5u);
	EXPECT_EQ(pm_name_index(pm_rr_start_names, PM_NR_RR_STARTS, "salted"), PM_RR_START_SALTED);
}

TEST(PoolOrder, random_starts_at_draw)
{
	pm_pool_view v[3]{{0, 10, 0, 0}, {1, 10, 0, 0}, {2, 10, 0, 0}};
	u32 order[3];
	pm_pool_order(PM_SELECT_RANDOM, v, 3, 0, 5, order);
	EXPECT_EQ(std::vector<u32>(order, order + 3), (std::vector<u32>{2, 0, 1}));
}

TEST(PoolOrder, nearest_sorts_by_distance_then_id)
{
	pm_pool_view v[4]{{0, 31, 0, 0}, {1, 21, 0, 0}, {2, 21, 0, 0}, {3, 12, 0, 0}};
	u32 order[4];
	pm_pool_order(PM_SELECT_NEAREST, v, 4, 0, 0, order);
	EXPECT_EQ(std::vector<u32>(order, order + 4), (std::vector<u32>{3, 1, 2, 0}));
}

TEST(PoolOrder, smart_idle_picks_least_allocated_of_idlest)
{
	// 6 pools -> m = 3 idlest by Af: ids 1 (af 0), 4 (af 1), 5 (af 2);
	// of those the least allocated is 5, then 1, then 4; the rest by Af.
	pm_pool_view v[6]{{0, 10, 100, 50}, {1, 10, 300, 0}, {2, 10, 0, 90},
			  {3, 10, 0, 40},   {4, 10, 900, 1}, {5, 10, 10, 2}};
	u32 order[6];
	ASSERT_EQ(pm_pool_order(PM_SELECT_SMART_IDLE, v, 6, 0, 0, order), 6u);
	EXPECT_EQ(std::vector<u32>(order, order + 6), (std::vector<u32>{5, 1, 4, 3, 0, 2}));
}

TEST(PoolOrder, smart_idle_steers_away_from_busy_pool)
{
	pm_pool_view v[2]{{0, 10, 0, 500}, {1, 10, 1000, 3}};
	u32 order[2];
	pm_pool_order(PM_SELECT_SMART_IDLE, v, 2, 0, 0, order);
	EXPECT_EQ(order[0], 1u); // idle, although it holds more
}

TEST(PoolOrder, rejects_bad_input)
{
	pm_pool_view v[1]{{0, 10, 0, 0}};
	u32 order[1];
	EXPECT_EQ(pm_pool_order(PM_SELECT_NEAREST, v, 0, 0, 0, order), 0u);
	EXPECT_EQ(pm_pool_order(99, v, 1, 0, 0, order), 0u);
	EXPECT_EQ(pm_pool_order(PM_SELECT_NEAREST, v, PM_MAX_POOLS + 1, 0, 0, order), 0u);
}

TEST(PolicyNames, valid_names_are_ascii_only)
{
	char buf[PM_NAME_MAX] = {};
	auto valid = [&](const char *n) {
		std::memset(buf, 0, sizeof(buf));
		std::strncpy(buf, n, sizeof(buf) - 1);
		return pm_name_valid(buf, sizeof(buf));
	};
	EXPECT_TRUE(valid("web1"));
	EXPECT_TRUE(valid("gold.1485"));
	EXPECT_TRUE(valid("a_b-c.d"));
	EXPECT_FALSE(valid(""));
	EXPECT_FALSE(valid(".hidden"));
	EXPECT_FALSE(valid("-x"));
	EXPECT_FALSE(valid("control"));
	EXPECT_FALSE(valid("a/b"));
	EXPECT_FALSE(valid("caf\xe9"));	/* Latin-1 letter: isalnum() in the kernel said yes */
	EXPECT_FALSE(valid("\xc3\xa9t\xc3\xa9"));
}

TEST(PolicyNames, hidden_bytes_after_the_name_are_refused)
{
	char buf[PM_NAME_MAX] = "web1";
	buf[10] = 'x';
	EXPECT_FALSE(pm_name_valid(buf, sizeof(buf)));
	char full[PM_NAME_MAX];
	std::memset(full, 'a', sizeof(full));	/* no NUL */
	EXPECT_FALSE(pm_name_valid(full, sizeof(full)));
}

TEST(PolicyNames, index_of_each_policy_name)
{
	EXPECT_EQ(pm_name_index(pm_tier_policy_names, PM_NR_TIER_POLICIES, "interleave"), PM_TIER_INTERLEAVE);
	EXPECT_EQ(pm_name_index(pm_pool_select_names, PM_NR_POOL_SELECTS, "smart-idle"), PM_SELECT_SMART_IDLE);
	EXPECT_EQ(pm_name_index(pm_pool_select_names, PM_NR_POOL_SELECTS, "smart"), -1);
}

TEST(ProfileQuota, percentages_round_up_to_whole_chunks)
{
	const uint64_t M = 1 << 20;
	/* 25% of 64 MiB: 16 MiB exactly; 25% of 10 MiB: 2.5 MiB -> 4 MiB */
	EXPECT_EQ(pm_profile_quota(64 * M, 2 * M, 25, 0), 16 * M);
	EXPECT_EQ(pm_profile_quota(10 * M, 2 * M, 25, 0), 4 * M);
	/* 25% + 75% always cover the size */
	for (uint64_t size = 2 * M; size <= 64 * M; size += 2 * M)
		EXPECT_GE(pm_profile_quota(size, 2 * M, 25, 0) + pm_profile_quota(size, 2 * M, 75, 0), size);
}

TEST(ProfileQuota, byte_caps_stop_at_the_size)
{
	const uint64_t M = 1 << 20, G = 1ULL << 30;
	EXPECT_EQ(pm_profile_quota(64 * M, 2 * M, 0, 4 * G), 64 * M);
	EXPECT_EQ(pm_profile_quota(16 * G, 2 * M, 0, 4 * G), 4 * G);
	EXPECT_EQ(pm_profile_quota(16 * G, 2 * M, 0, 0), 0u);
}

TEST(ProfileQuota, percent_of_huge_sizes_does_not_overflow)
{
	const uint64_t big = 1ULL << 62;
	EXPECT_EQ(pm_pct_of(big, 100), big);
	EXPECT_EQ(pm_pct_of(big, 50), big / 2);
	EXPECT_EQ(pm_pct_of(199, 50), 99u);
}

TEST(DomainGeometry, each_rule_in_order)
{
	const u64 M = 1ULL << 20;
	const u64 ok[2] = {8 * M, 8 * M};
	EXPECT_EQ(pm_domain_geometry(16 * M, 2 * M, ok), PM_GEO_OK);
	EXPECT_EQ(pm_domain_geometry(16 * M, 3 * M, ok), PM_GEO_CHUNK);
	EXPECT_EQ(pm_domain_geometry(16 * M, 1 * M, ok), PM_GEO_CHUNK);
	EXPECT_EQ(pm_domain_geometry(16 * M, 2048 * M, ok), PM_GEO_CHUNK);
	EXPECT_EQ(pm_domain_geometry(0, 2 * M, ok), PM_GEO_SIZE);
	EXPECT_EQ(pm_domain_geometry((1ULL << 46) + 2 * M, 2 * M, ok), PM_GEO_SIZE);
	EXPECT_EQ(pm_domain_geometry(15 * M, 2 * M, ok), PM_GEO_SIZE_ALIGN);
	const u64 above[2] = {32 * M, 0};
	EXPECT_EQ(pm_domain_geometry(16 * M, 2 * M, above), PM_GEO_QUOTA_ABOVE);
	const u64 short_[2] = {4 * M, 4 * M};
	EXPECT_EQ(pm_domain_geometry(16 * M, 2 * M, short_), PM_GEO_QUOTA_COVER);
	const u64 odd[2] = {9 * M, 8 * M};
	EXPECT_EQ(pm_domain_geometry(16 * M, 2 * M, odd), PM_GEO_QUOTA_ALIGN);
	for (int g = 0; g < PM_NR_GEO; g++)
		EXPECT_NE(pm_geometry_names[g], nullptr);
}

/* A profile's rules, shared by the kernel (fs.c) and poolctl (profile.cpp) */
TEST(ProfileGeometry, each_rule_in_order)
{
	const u64 M = 1ULL << 20;
	const u32 pct[2] = {25, 75}, none[2] = {0, 0};
	const u64 nob[2] = {0, 0};
	u32 tier = 9;
	EXPECT_EQ(pm_profile_geometry(0, pct, nob, 0, nullptr), PM_PGEO_OK);
	EXPECT_EQ(pm_profile_geometry(1024 * M, pct, nob, 1, nullptr), PM_PGEO_OK);
	EXPECT_EQ(pm_profile_geometry(3 * M, pct, nob, 0, nullptr), PM_PGEO_CHUNK);
	EXPECT_EQ(pm_profile_geometry(2048 * M, pct, nob, 0, nullptr), PM_PGEO_CHUNK);
	const u32 over[2] = {25, 101};
	EXPECT_EQ(pm_profile_geometry(0, over, nob, 0, &tier), PM_PGEO_PCT_ABOVE);
	EXPECT_EQ(tier, 1u);
	const u64 b8[2] = {8 * M, 0};
	EXPECT_EQ(pm_profile_geometry(0, pct, b8, 0, &tier), PM_PGEO_PCT_AND_BYTES);
	EXPECT_EQ(tier, 0u);
	const u64 odd[2] = {0, 3 * M};
	EXPECT_EQ(pm_profile_geometry(0, none, odd, 0, &tier), PM_PGEO_QUOTA_ALIGN);
	EXPECT_EQ(tier, 1u);
	const u64 huge[2] = {(1ULL << 46) + 2 * M, 0};
	EXPECT_EQ(pm_profile_geometry(0, none, huge, 0, &tier), PM_PGEO_QUOTA_MAX);
	const u32 short_[2] = {25, 50};
	EXPECT_EQ(pm_profile_geometry(0, short_, nob, 0, nullptr), PM_PGEO_COVER);
	/* bytes in either tier: a cap, which needs no cover */
	const u64 cap[2] = {8 * M, 0};
	const u32 pool_only[2] = {0, 50};
	EXPECT_EQ(pm_profile_geometry(0, pool_only, cap, 0, nullptr), PM_PGEO_OK);
	EXPECT_EQ(pm_profile_geometry(0, pool_only, cap, 1, nullptr), PM_PGEO_ZNUMA);
	const u32 zero_local[2] = {0, 100};
	EXPECT_EQ(pm_profile_geometry(0, zero_local, nob, 1, nullptr), PM_PGEO_ZNUMA);
	const u32 more[2] = {50, 60};
	EXPECT_EQ(pm_profile_geometry(0, more, nob, 1, nullptr), PM_PGEO_ZNUMA);
	EXPECT_EQ(pm_profile_geometry(0, more, nob, 0, nullptr), PM_PGEO_OK);
	for (int g = 0; g < PM_NR_PGEO; g++)
		EXPECT_NE(pm_profile_geometry_names[g], nullptr);
}
