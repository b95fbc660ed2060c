// The DRAM autopilot's decision (kmod/policy/pm_autopilot.c, issue 50):
// its rules on chosen cases, and its invariants on random ones.
#include "policy/pm_autopilot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace {

constexpr u64 MiB = 1ULL << 20;

pm_ap_vm vm(u64 size, u64 min, u64 max, u64 quota, u64 hot)
{
	pm_ap_vm v{};
	v.size = size;
	v.min = min;
	v.max = max;
	v.local_quota = quota;
	v.local_used = quota; /* full */
	v.chunk = 2 * MiB;
	v.hot = hot;
	return v;
}

pm_ap_host host(u64 budget, u64 step = 0)
{
	pm_ap_host h{};
	h.budget = budget;
	h.step = step;
	h.margin_pct = 10;
	h.hysteresis_pct = 5;
	h.eager = 1; /* the rules below are those of eager reclaim; AutopilotLazy.* the lazy one's */
	return h;
}

u64 sum_targets(const std::vector<pm_ap_vm> &v)
{
	u64 s = 0;
	for (const auto &x : v)
		s += x.target;
	return s;
}

pm_ap_error decide(const pm_ap_host &h, std::vector<pm_ap_vm> &v)
{
	unsigned bad = 0;
	return pm_ap_decide(&h, v.data(), static_cast<unsigned>(v.size()), &bad);
}

TEST(Autopilot, EveryHotSetLocalWhenTheyFit)
{
	/* the rig test's four VMs: hot sets of 16, 32, 64 and 128 MiB */
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(512 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	for (size_t i = 0; i < v.size(); i++) {
		EXPECT_GE(v[i].target, v[i].hot) << i;
		EXPECT_LE(v[i].target, v[i].hot + v[i].hot / 10 + v[i].chunk) << i;
		EXPECT_EQ(v[i].reason, PM_AP_HOT) << i;
	}
	EXPECT_LE(sum_targets(v), h.budget);
}

TEST(Autopilot, ShortBudgetSharedBeyondTheMins)
{
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(160 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_LE(sum_targets(v), h.budget);
	for (size_t i = 0; i < v.size(); i++) {
		EXPECT_GE(v[i].target, v[i].min) << i;
		EXPECT_LE(v[i].target, v[i].want) << i;
	}
	/* more hot memory, more DRAM */
	for (size_t i = 1; i < v.size(); i++)
		EXPECT_GT(v[i].target, v[i - 1].target) << i;
	EXPECT_EQ(v[3].reason, PM_AP_BUDGET);
}

TEST(Autopilot, MinAndMaxBound)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 32 * MiB, 64 * MiB, 32 * MiB, 2 * MiB),
				   vm(256 * MiB, 8 * MiB, 64 * MiB, 32 * MiB, 200 * MiB)};
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 32 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_MIN);
	EXPECT_EQ(v[1].target, 64 * MiB);
	EXPECT_EQ(v[1].reason, PM_AP_MAX);
}

TEST(Autopilot, UntouchedMemoryNeedsNoDram)
{
	/* a hot set larger than what was ever faulted is bounded by the latter */
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 8 * MiB, 200 * MiB)};
	v[0].untouched = 192 * MiB;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_LE(v[0].target, 64 * MiB + 64 * MiB / 10 + 2 * MiB);
}

TEST(Autopilot, SloBrokenGrowsPastTheHotSet)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, 32 * MiB)};
	v[0].slo_permille = 50;
	v[0].pool_permille = 200;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_GT(v[0].target, 64 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_SLO);
	/* within its SLO, the hot set decides */
	v[0].pool_permille = 10;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_LT(v[0].target, 64 * MiB);
	/* above it with room left in the quota: tiering is still moving the hot set in */
	v[0].pool_permille = 200;
	v[0].local_used = 40 * MiB;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_EQ(v[0].reason, PM_AP_HOT);
	EXPECT_LT(v[0].target, 64 * MiB);
}

TEST(Autopilot, FixedKeepsItsQuotaAndCountsAgainstTheBudget)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 200 * MiB, 8 * MiB),
				   vm(256 * MiB, 8 * MiB, 256 * MiB, 8 * MiB, 128 * MiB)};
	v[0].flags = PM_AP_F_FIXED;
	auto h = host(256 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 200 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_FIXED);
	EXPECT_LE(v[1].target, 56 * MiB);
	EXPECT_LE(sum_targets(v), h.budget);
}

TEST(Autopilot, SmallChangesWaitUnlessTheBudgetNeedsThem)
{
	std::vector<pm_ap_vm> v = {vm(1024 * MiB, 8 * MiB, 1024 * MiB, 500 * MiB, 470 * MiB)};
	/* wants 518 MiB (+18, under 5% of 500): held */
	ASSERT_EQ(decide(host(2048 * MiB), v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 500 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_HOLD);
	/* a small shrink the budget needs goes through */
	v[0].hot = 420 * MiB; /* wants 462 */
	ASSERT_EQ(decide(host(480 * MiB), v), PM_AP_OK);
	EXPECT_LE(v[0].target, 480 * MiB);
}

TEST(Autopilot, MoveBudgetStepsTowardTheTarget)
{
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(512 * MiB, 32 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	u64 moved = 0;
	for (const auto &x : v)
		moved += x.target > x.local_quota ? x.target - x.local_quota : x.local_quota - x.target;
	EXPECT_LE(moved, h.step + v.size() * 2 * MiB);
	EXPECT_GT(moved, 0u);
	/* applied round after round, the quotas reach the unlimited decision */
	for (int round = 0; round < 40; round++) {
		for (auto &x : v)
			x.local_quota = x.target;
		ASSERT_EQ(decide(h, v), PM_AP_OK);
		EXPECT_LE(sum_targets(v), h.budget);
	}
	auto free = v;
	ASSERT_EQ(decide(host(512 * MiB), free), PM_AP_OK);
	for (size_t i = 0; i < v.size(); i++)
		EXPECT_EQ(v[i].target, free[i].target) << i;
}

TEST(Autopilot, BadInputNamesTheVm)
{
	unsigned bad = 99;
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 64 * MiB, 8 * MiB, 0),
				   vm(256 * MiB, 128 * MiB, 64 * MiB, 8 * MiB, 0)};
	auto h = host(1024 * MiB);
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BOUNDS);
	EXPECT_EQ(bad, 1u);
	v[1].min = 8 * MiB;
	v[1].slo_permille = 1001;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_SLO);
	EXPECT_EQ(bad, 1u);
	v[1].slo_permille = 0;
	v[0].min = v[1].min = 64 * MiB;
	h.budget = 100 * MiB;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BUDGET);
	EXPECT_EQ(bad, 2u);
	v[0].chunk = 3 * MiB;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BOUNDS);
	EXPECT_EQ(bad, 0u);
}

TEST(Autopilot, InvariantsOnRandomHosts)
{
	std::mt19937_64 rng(50);
	for (int t = 0; t < 2000; t++) {
		std::vector<pm_ap_vm> v;
		const unsigned n = 1 + rng() % 12;
		u64 mins = 0, cur = 0;
		for (unsigned i = 0; i < n; i++) {
			const u64 size = (1 + rng() % 512) * 2 * MiB;
			const u64 max = (1 + rng() % (size / (2 * MiB))) * 2 * MiB;
			const u64 min = (rng() % (max / (2 * MiB) + 1)) * 2 * MiB;
			auto x = vm(size, min, max, min + (rng() % ((max - min) / (2 * MiB) + 1)) * 2 * MiB,
				    (rng() % (size / MiB + 1)) * MiB);
			x.untouched = (rng() % 4 == 0) ? (rng() % (size / MiB + 1)) * MiB : 0;
			if (rng() % 3 == 0) {
				x.slo_permille = 1 + rng() % 100;
				x.pool_permille = rng() % 300;
			}
			if (rng() % 10 == 0)
				x.flags = PM_AP_F_FIXED;
			mins += x.flags ? x.local_quota : x.min;
			cur += x.local_quota;
			v.push_back(x);
		}
		const u64 budget = std::max(mins, cur) + (rng() % 256) * 2 * MiB;
		const u64 step = rng() % 2 ? 0 : (1 + rng() % 64) * 2 * MiB;
		auto h = host(budget, step);
		h.eager = rng() % 2;
		ASSERT_EQ(decide(h, v), PM_AP_OK) << t;
		EXPECT_LE(sum_targets(v), budget) << t;
		for (const auto &x : v) {
			if (x.flags) {
				EXPECT_EQ(x.target, x.local_quota) << t;
				continue;
			}
			EXPECT_LE(x.target, x.max) << t;
			/* below min only on the way up to it, a step at a time */
			EXPECT_TRUE(x.target >= x.min || x.reason == PM_AP_RATE) << t;
		}
	}
}

} // namespace

TEST(Autopilot, RateStepsKeepTheSumWithinTheBudget)
{
	/*
	 * The budget full today; three VMs shrink by a chunk each and one
	 * grows by three: each scaled share is rounded on its own, and the
	 * shrinks' must pay for the grow's (simulate autopilot found the sum
	 * 2-6 MiB above the budget before the grows gave the excess back).
	 */
	std::vector<pm_ap_vm> v;
	for (int i = 0; i < 3; i++)
		v.push_back(vm(256 * MiB, 0, 256 * MiB, 64 * MiB, 56 * MiB)); /* wants 62 MiB */
	v.push_back(vm(256 * MiB, 0, 256 * MiB, 64 * MiB, 63 * MiB));	 /* wants 70 MiB */
	for (u64 step = 2 * MiB; step <= 12 * MiB; step += 2 * MiB) {
		auto w = v;
		auto h = host(256 * MiB, step);
		h.hysteresis_pct = 0;
		ASSERT_EQ(decide(h, w), PM_AP_OK);
		EXPECT_LE(sum_targets(w), 256 * MiB) << step;
	}
}

TEST(AutopilotLazy, ShrinksOnlyWhatTheGrowsNeed)
{
	/* a idle (hot 8 MiB) on 128 MiB; b's hot set grows to 100 MiB */
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 0, 256 * MiB, 128 * MiB, 8 * MiB),
				   vm(256 * MiB, 0, 256 * MiB, 64 * MiB, 100 * MiB)};
	auto h = host(256 * MiB);
	h.eager = 0;
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	/* b gets what it wants (110 MiB with the margin), a keeps its 128 MiB: the budget has room */
	EXPECT_EQ(v[1].target, 110 * MiB);
	EXPECT_EQ(v[0].target, 128 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_KEEP);
	EXPECT_LE(sum_targets(v), 256 * MiB);
	/* with a smaller budget a gives up what b needs, no more */
	v = {vm(256 * MiB, 0, 256 * MiB, 128 * MiB, 8 * MiB), vm(256 * MiB, 0, 256 * MiB, 64 * MiB, 100 * MiB)};
	h.budget = 192 * MiB;
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_EQ(v[1].target, 110 * MiB);
	EXPECT_EQ(v[0].target, 82 * MiB);
	EXPECT_EQ(sum_targets(v), 192 * MiB);
	/* eager: a down to its hot set and margin at once */
	v = {vm(256 * MiB, 0, 256 * MiB, 128 * MiB, 8 * MiB), vm(256 * MiB, 0, 256 * MiB, 64 * MiB, 100 * MiB)};
	h.eager = 1;
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 10 * MiB);
}

/* ---- libpoolmem's autopilot: the file, the measures, the plan ---- */

#include <poolmem/autopilot.hpp>
#include <poolmem/error.hpp>

namespace {

namespace ap = poolmem::autopilot;

constexpr uint64_t M = 1ULL << 20;

poolmem::DomainStats dom(const std::string &name, uint64_t size, uint64_t quota, uint64_t hot_chunks)
{
	poolmem::DomainStats d;
	d.name = name;
	d.size_bytes = size;
	d.chunk_bytes = 2 * M;
	d.local_quota_bytes = quota;
	d.pool_quota_bytes = size;
	d.local_bytes = quota;
	d.chunks = size / (2 * M);
	d.hot_chunks = hot_chunks;
	d.tiering = "on";
	return d;
}

std::string error_of(const std::function<void()> &f)
{
	try {
		f();
	} catch (const poolmem::Error &e) {
		return e.what();
	}
	return "";
}

TEST(AutopilotConfig, ReadsTheTableAndRefusesBadValues)
{
	const auto c = ap::parse_config(R"(
[autopilot]
budget = "6G"
headroom = "512M"
rate = "32M"
interval = "2s"
slo = "5%"
[autopilot.vms.web1]
min = "1G"
max = "50%"
[autopilot.profiles.gold]
min = "25%"
)",
					"t.toml");
	EXPECT_EQ(c.budget, 6ULL << 30);
	EXPECT_EQ(c.headroom, 512 * M);
	EXPECT_EQ(c.rate, 32 * M);
	EXPECT_DOUBLE_EQ(c.interval_s, 2);
	EXPECT_EQ(c.defaults.slo, "5%");
	EXPECT_FALSE(c.eager);
	EXPECT_TRUE(ap::parse_config("[autopilot]\nreclaim = \"eager\"\n", "t.toml").eager);
	EXPECT_EQ(error_of([] { ap::parse_config("[autopilot]\nreclaim = \"now\"\n", "t.toml"); }),
		  "t.toml:2: autopilot.reclaim: 'now' is neither lazy nor eager");
	EXPECT_EQ(c.vms.at("web1").min, "1G");
	EXPECT_EQ(c.vms.at("web1").max, "50%");
	EXPECT_EQ(c.profiles.at("gold").min, "25%");
	/* no table: the defaults */
	EXPECT_EQ(ap::parse_config("[pools]\n", "t.toml").budget, 0U);

	EXPECT_EQ(error_of([] { ap::parse_config("[autopilot]\nbudget = \"lots\"\n", "t.toml"); }),
		  "t.toml:2: autopilot.budget: 'lots' is no size (\"6G\")");
	EXPECT_EQ(error_of([] { ap::parse_config("[autopilot]\nslo = \"120%\"\n", "t.toml"); }),
		  "t.toml:2: autopilot.slo: '120%' is no share of accesses (0%..100%)");
	EXPECT_EQ(error_of([] { ap::parse_config("[autopilot.vms.a]\nmin = \"x\"\n", "t.toml"); }),
		  "t.toml:2: autopilot.vms.a.min: 'x' is no size or percentage of the VM's size");
	EXPECT_EQ(error_of([] { ap::parse_config("[autopilot]\nbudgets = \"1G\"\n", "t.toml"); }).substr(0, 42),
		  "t.toml:2: autopilot.budgets: unknown key (");
}

/* vm create / vm set / profile create --autopilot-*: the store */
TEST(AutopilotStore, SetMergeForgetAndRefuse)
{
	char tmpl[] = "/tmp/ap-store-XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	const std::filesystem::path store = std::filesystem::path(tmpl) / "sub" / "autopilot.toml";
	/* absent: the config unchanged */
	ap::Config base;
	base.vms["a"].min = "10M";
	base.vms["a"].max = "90%";
	EXPECT_EQ(ap::with_store(base, store).vms.at("a").min, "10M");

	ap::store_bounds(store, ap::Kind::vm, "a", {"64M", "", ""}, 256 * M, true);
	ap::store_bounds(store, ap::Kind::profile, "gold", {"25%", "75%", "2%"}, 0, true);
	auto c = ap::with_store(base, store);
	EXPECT_EQ(c.vms.at("a").min, "64M"); /* the store over poolmem.toml */
	EXPECT_EQ(c.vms.at("a").max, "90%"); /* key by key */
	EXPECT_EQ(c.profiles.at("gold").slo, "2%");

	/* vm set: the keys given over those stored, checked together */
	EXPECT_EQ(ap::store_bounds(store, ap::Kind::vm, "a", {"", "128M", ""}, 256 * M, false).min, "64M");
	EXPECT_EQ(error_of([&] { ap::store_bounds(store, ap::Kind::vm, "a", {"", "32M", ""}, 256 * M, false); }),
		  "a: autopilot min 64M is above max 32M");
	EXPECT_EQ(ap::with_store(ap::Config{}, store).vms.at("a").max, "128M"); /* nothing written */
	EXPECT_EQ(error_of([&] { ap::store_bounds(store, ap::Kind::vm, "b", {"300M", "", ""}, 256 * M, true); }),
		  "b: autopilot min '300M' is above the VM's size 256.0 MiB");
	EXPECT_EQ(error_of([&] { ap::store_bounds(store, ap::Kind::vm, "b", {"", "", "101%"}, 256 * M, true); }),
		  "b: autopilot SLO: '101%' is no share of accesses (0%..100%)");
	EXPECT_EQ(error_of([&] { ap::store_bounds(store, ap::Kind::profile, "p", {"60%", "50%", ""}, 0, true); }),
		  "p: autopilot min 60% is above max 50%");
	/* a profile's size and percentage can't be compared before its VMs exist */
	ap::store_bounds(store, ap::Kind::profile, "p", {"1G", "50%", ""}, 0, true);
	EXPECT_EQ(ap::with_store(ap::Config{}, store).vms.count("b"), 0U);

	ap::forget_bounds(store, ap::Kind::vm, "a");
	ap::forget_bounds(store, ap::Kind::vm, "never");
	c = ap::with_store(ap::Config{}, store);
	EXPECT_EQ(c.vms.count("a"), 0U);
	EXPECT_EQ(c.profiles.count("gold"), 1U);

	/* a hand-broken store is named, never rewritten */
	{
		std::ofstream(store) << "[vms.x]\nmin = \"lots\"\n";
	}
	EXPECT_EQ(error_of([&] { ap::with_store(ap::Config{}, store); }),
		  store.string() + ":2: vms.x.min: 'lots' is no size or percentage of the VM's size");
	EXPECT_NE(error_of([&] { ap::store_bounds(store, ap::Kind::vm, "y", {"1M", "", ""}, 256 * M, true); }), "");
	std::filesystem::remove_all(tmpl);
}

TEST(AutopilotDecide, HotSetsFromTheKernelsHeat)
{
	ap::Config c;
	c.budget = 300 * M;
	c.rate = 1ULL << 30; /* no rate limit within the test */
	c.eager = true;	     /* down to the hot sets at once */
	ap::History h;
	/* 4 VMs of 256 MiB at 64 MiB local each, hot sets of 16, 32, 64 and 128 MiB */
	std::vector<poolmem::DomainStats> d{dom("a", 256 * M, 64 * M, 8), dom("b", 256 * M, 64 * M, 16),
					    dom("c", 256 * M, 64 * M, 32), dom("d", 256 * M, 64 * M, 64)};
	const auto dec = ap::decide(c, d, h);
	ASSERT_EQ(dec.vms.size(), 4U);
	/* the hot set and 10%, in whole chunks */
	EXPECT_EQ(dec.vms[0].target, 18 * M);
	EXPECT_EQ(dec.vms[1].target, 36 * M);
	EXPECT_EQ(dec.vms[2].target, 72 * M);
	EXPECT_EQ(dec.vms[3].target, 142 * M);
	EXPECT_LE(dec.target_sum, c.budget);
	for (const auto &v : dec.vms)
		EXPECT_EQ(v.reason, "hot-set") << v.name;

	/* the plan: shrinks (a, b) before grows (c, d); a shrink's pool quota covers the size */
	const auto p = ap::plan(dec);
	ASSERT_EQ(p.size(), 4U);
	EXPECT_EQ(p[0].name, "a");
	EXPECT_EQ(p[1].name, "b");
	EXPECT_EQ(p[2].name, "c");
	EXPECT_EQ(p[3].name, "d");
	for (const auto &ch : p)
		EXPECT_GE(ch.local + ch.pool, 256 * M) << ch.name;

	/* a hot set that shrank counts at its largest over the recent windows */
	d[3].hot_chunks = 8;
	EXPECT_EQ(ap::decide(c, d, h).vms[3].hot, 128 * M);
	c.windows = 1;
	EXPECT_EQ(ap::decide(c, d, h).vms[3].hot, 16 * M);
}

TEST(AutopilotDecide, PoolShareIsMeasuredBetweenReadings)
{
	ap::Config c;
	c.budget = 1ULL << 30;
	c.defaults.slo = "5%";
	ap::History h;
	std::vector<poolmem::DomainStats> d{dom("a", 256 * M, 64 * M, 8)};
	d[0].sample_hits = 1000;
	d[0].sample_hits_pool = 900; /* long ago */
	ap::decide(c, d, h);
	d[0].sample_hits = 1100;
	d[0].sample_hits_pool = 920; /* 20 of the last 100 */
	const auto dec = ap::decide(c, d, h);
	EXPECT_EQ(dec.vms[0].pool_permille, 200U);
	EXPECT_TRUE(dec.vms[0].slo_broken());
	EXPECT_EQ(dec.vms[0].reason, "slo");
	EXPECT_GT(dec.vms[0].target, 64 * M);
}

TEST(AutopilotDecide, BoundsFixedDomainsAndErrors)
{
	ap::Config c;
	c.budget = 1ULL << 30;
	c.vms["a"].min = "100M";
	c.profiles["gold"].max = "25%";
	ap::History h;
	std::vector<poolmem::DomainStats> d{dom("a", 256 * M, 64 * M, 0), dom("b", 256 * M, 64 * M, 100),
					    dom("z", 256 * M, 64 * M, 100)};
	d[1].profile = "gold";
	d[2].windows = {{"local", 0, 64 * M}, {"pool", 64 * M, 192 * M}};
	auto dec = ap::decide(c, d, h);
	EXPECT_EQ(dec.vms[0].target, 100 * M);
	EXPECT_EQ(dec.vms[0].reason, "min");
	EXPECT_EQ(dec.vms[1].target, 64 * M);
	EXPECT_EQ(dec.vms[1].reason, "max");
	EXPECT_EQ(dec.vms[2].target, 64 * M);
	EXPECT_EQ(dec.vms[2].reason, "znuma");
	d[2].windows.clear();
	d[2].tiering = "off";
	EXPECT_EQ(ap::decide(c, d, h).vms[2].reason, "tiering off");

	c.vms["a"].max = "50M";
	EXPECT_EQ(error_of([&] { ap::decide(c, d, h); }), "a: autopilot min 100.0 MiB is above max 50.0 MiB");
	c.vms["a"].max = "";
	c.vms["a"].min = "1G";
	EXPECT_EQ(error_of([&] { ap::decide(c, d, h); }), "a: autopilot min '1G' is above the VM's size 256.0 MiB");
	c.vms["a"].min = "100M";
	c.budget = 150 * M; /* a's min 100 MiB, b's 0, z's fixed 64 MiB */
	EXPECT_EQ(error_of([&] { ap::decide(c, d, h); }),
		  "autopilot: budget 150.0 MiB (less headroom) is below the sum of the VMs' mins and fixed quotas, "
		  "164.0 MiB");
	c.budget = 0;
	EXPECT_EQ(error_of([&] { ap::decide(c, d, h); }).substr(0, 21), "autopilot: no budget:");
}

} // namespace
