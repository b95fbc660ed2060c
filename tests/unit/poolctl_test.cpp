// poolctl's option parsers (ctl/options.cpp), as the verbs call them: the
// values they take, and the one-line usage error naming the option for
// the ones they refuse. The verbs' own behaviour is tested against
// fixtures (tests/poolctl) and in the rig.
#include "options.hpp"

#include <poolmem/error.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace poolctl;

namespace {

/// The UsageError's text F throws, or "" if none.
template <class F> std::string usage_error(F f)
{
	try {
		f();
	} catch (const UsageError &e) {
		return e.what();
	}
	return "";
}

} // namespace

TEST(PoolctlOptions, SizesAndTimes)
{
	EXPECT_EQ(size_value("--size", "16G"), 16ULL << 30);
	EXPECT_EQ(size_value("--local", "0"), 0u);
	EXPECT_EQ(usage_error([] { size_value("--size", "lots"); }), "--size: invalid size 'lots' (use e.g. 512M, 16G)");
	EXPECT_DOUBLE_EQ(seconds_value("--timeout", "90"), 90);
	EXPECT_DOUBLE_EQ(seconds_value("--timeout", "5m"), 300);
	EXPECT_EQ(usage_error([] { seconds_value("--timeout", "soon"); }),
		  "--timeout: invalid duration 'soon' (e.g. 90, 90s, 5m)");
	EXPECT_EQ(ms_value("--hot-threshold", "500ms"), 500u);
	EXPECT_EQ(ms_value("--hot-threshold", "2s"), 2000u);
	EXPECT_EQ(ms_value("--hot-threshold", "250"), 250u); /* a bare number: ms */
	EXPECT_EQ(usage_error([] { ms_value("--hot-threshold", "2h"); }),
		  "--hot-threshold: invalid time '2h' (e.g. 500ms, 2s; at most 1h)");
	EXPECT_NE(usage_error([] { ms_value("--hot-threshold", "0"); }), "");
}

TEST(PoolctlOptions, ModesAndOwners)
{
	EXPECT_EQ(parse_mode("--mode", "0660"), 0660u);
	EXPECT_EQ(parse_mode("--mode", "600"), 0600u);
	EXPECT_EQ(usage_error([] { parse_mode("--mode", "0888"); }), "--mode: invalid mode '0888' (octal, e.g. 0660)");
	EXPECT_NE(usage_error([] { parse_mode("--mode", "01777"); }), ""); /* no set-id or sticky bits */
	EXPECT_EQ(parse_owner("root"), std::make_pair(0u, 0u));
	EXPECT_EQ(parse_owner("root:root"), std::make_pair(0u, 0u));
	try {
		parse_owner("no-such-user-here");
		FAIL() << "an unknown user was taken";
	} catch (const poolmem::Error &e) {
		EXPECT_EQ(std::string(e.what()), "no-such-user-here: no such user");
	}
}

TEST(PoolctlOptions, Placement)
{
	PlacementOptions o;
	o.mode = "0600";
	Placement p = parse_placement(o);
	EXPECT_EQ(p.chunk_bytes, 2ULL << 20);
	EXPECT_EQ(p.mode, 0600u);
	o.chunk = "1G";
	o.tier_policy = "interleave";
	o.pool_select = "round-robin";
	p = parse_placement(o);
	EXPECT_EQ(p.chunk_bytes, 1ULL << 30);
	EXPECT_EQ(p.tier_policy, 1); /* the kernel's PM_TIER_INTERLEAVE */
	EXPECT_EQ(p.pool_select, 0); /* PM_SELECT_ROUND_ROBIN */
	o.tier_policy = "fastest";
	EXPECT_EQ(usage_error([&] { parse_placement(o); }), "--tier-policy: unknown policy 'fastest'");
	o.tier_policy = "local-first";
	o.pool_select = "best";
	EXPECT_EQ(usage_error([&] { parse_placement(o); }), "--pool-select: unknown policy 'best'");
}

TEST(PoolctlOptions, Tiering)
{
	TieringOptions o;
	poolmem::DomainChange c;
	parse_tiering(o, c); /* nothing given: nothing changes */
	EXPECT_FALSE(c.tiering);
	o.scan_rate = "64M";
	EXPECT_EQ(usage_error([&] { parse_tiering(o, c); }), "--scan-rate and --hot-threshold need --tiering on or sample");
	o.mode = "on";
	o.hot = "8s";
	parse_tiering(o, c);
	EXPECT_EQ(c.tiering, 2u);
	EXPECT_EQ(c.scan_rate, 64ULL << 20);
	EXPECT_EQ(c.hot_ms, 8000u);
	o.scan_rate = "2T";
	EXPECT_EQ(usage_error([&] { parse_tiering(o, c); }), "--scan-rate: at most 1T a second");
	o.scan_rate = "0";
	EXPECT_EQ(usage_error([&] { parse_tiering(o, c); }), "--scan-rate: must be above 0");
}

TEST(PoolctlOptions, OneVerbOneSpelling)
{
	/* the groups add the same options, with the same help, wherever they go */
	CLI::App a, b;
	PlacementOptions pa, pb;
	add_placement_options(&a, pa, "the file", "0600");
	add_placement_options(&b, pb, "the file", "0600");
	AutopilotBoundOptions ba, bb;
	add_autopilot_bound_options(&a, ba, "the VM's");
	add_autopilot_bound_options(&b, bb, "the VM's");
	EXPECT_EQ(a.help(), b.help());
	for (const char *opt : {"--tier-policy", "--pool-select", "--pools", "--home-node", "--chunk", "--owner",
				"--mode", "--pinnable", "--autopilot-min", "--autopilot-max", "--autopilot-slo"})
		EXPECT_NE(a.get_option_no_throw(opt), nullptr) << opt;
	ba.min = "1G";
	EXPECT_TRUE(ba.any());
	EXPECT_EQ(autopilot_bounds_json(ba).dump(), R"({"min":"1G"})");
	EXPECT_EQ(autopilot_bounds_json(bb).dump(), "{}");
}
