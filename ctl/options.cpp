// poolctl's option groups (options.hpp).
#include "options.hpp"

#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <cerrno>
#include <tuple>

#include <grp.h>
#include <pwd.h>

namespace poolctl {

uint64_t size_value(const std::string &option, const std::string &text)
{
	auto v = poolmem::parse_size(text);
	if (!v)
		throw UsageError(option + ": invalid size '" + text + "' (use e.g. 512M, 16G)");
	return *v;
}

void add_tiering_options(CLI::App *cmd, TieringOptions &o)
{
	cmd->add_option("--tiering", o.mode,
			"on: sample accesses and move hot chunks local, cold ones to pools; sample: only "
			"sample (hot/cold, pool accesses for smart-idle); off")
		->check(CLI::IsMember({"on", "sample", "off"}));
	cmd->add_option("--scan-rate", o.scan_rate, "SIZE per second sampled, and moved at most (default 64M)");
	cmd->add_option("--hot-threshold", o.hot, "a sampled chunk touched again within this is hot (default 500ms)");
}

/// "500ms", "2s", "500" (ms) -> ms, or UsageError.
uint32_t ms_value(const std::string &option, const std::string &text)
{
	const auto s = duration_seconds(text, 1e-3);
	if (!s || *s <= 0 || *s > 3600)
		throw UsageError(option + ": invalid time '" + text + "' (e.g. 500ms, 2s; at most 1h)");
	return static_cast<uint32_t>(*s * 1000 + 0.5);
}

/// The tiering part of a change, if any option of it was given.
void parse_tiering(const TieringOptions &o, poolmem::DomainChange &c)
{
	if (o.mode.empty() && (!o.scan_rate.empty() || !o.hot.empty()))
		throw UsageError("--scan-rate and --hot-threshold need --tiering on or sample");
	if (o.mode.empty())
		return;
	c.tiering = o.mode == "on" ? 2 : o.mode == "sample" ? 1 : 0;
	if (!o.scan_rate.empty()) {
		c.scan_rate = size_value("--scan-rate", o.scan_rate);
		if (!c.scan_rate)
			throw UsageError("--scan-rate: must be above 0");
		if (c.scan_rate > (1ULL << 40))	// POOLMEM_SCAN_RATE_MAX
			throw UsageError("--scan-rate: at most 1T a second");
	}
	if (!o.hot.empty())
		c.hot_ms = ms_value("--hot-threshold", o.hot);
}

/// "user[:group]" -> uid, gid (the user's primary group by default).
std::pair<uint32_t, uint32_t> parse_owner(const std::string &owner)
{
	std::string user = owner.substr(0, owner.find(':'));
	std::string group = owner.find(':') == std::string::npos ? "" : owner.substr(owner.find(':') + 1);
	const passwd *pw = getpwnam(user.c_str());
	if (!pw)
		throw poolmem::Error::plain(user, "no such user", ENOENT);
	uint32_t gid = pw->pw_gid;
	if (!group.empty()) {
		const struct group *gr = getgrnam(group.c_str());
		if (!gr)
			throw poolmem::Error::plain(group, "no such group", ENOENT);
		gid = gr->gr_gid;
	}
	return {pw->pw_uid, gid};
}

void add_placement_options(CLI::App *cmd, PlacementOptions &o, const std::string &owned,
			   const std::string &default_mode)
{
	o.mode = default_mode;
	cmd->add_option("--tier-policy", o.tier_policy, "local-first (default), interleave, pool-first");
	cmd->add_option("--pool-select", o.pool_select, "smart-idle (default), round-robin, random, nearest");
	cmd->add_option("--pools", o.pools, "allowed pools (default: all)")->delimiter(',');
	cmd->add_option("--home-node", o.home_node, "node whose DRAM is the local tier (default: first with CPUs)");
	cmd->add_option("--chunk", o.chunk, "chunk size, power of two 2M..1G (default 2M)");
	cmd->add_option("--owner", o.owner, "USER[:GROUP] owning " + owned + " (e.g. libvirt-qemu)");
	cmd->add_option("--mode", o.mode, "permission bits of " + owned + " (default " + default_mode + ")");
	cmd->add_flag("--pinnable", o.pinnable,
		      "chunks only from memory outside ZONE_MOVABLE (local DRAM, pools onlined --zone normal), "
		      "so VFIO passthrough and RDMA can pin the guest RAM");
}

Placement parse_placement(const PlacementOptions &o)
{
	Placement p;
	p.chunk_bytes = size_value("--chunk", o.chunk);
	auto tp = poolmem::parse_tier_policy(o.tier_policy);
	auto ps = poolmem::parse_pool_select(o.pool_select);
	if (!tp)
		throw UsageError("--tier-policy: unknown policy '" + o.tier_policy + "'");
	if (!ps)
		throw UsageError("--pool-select: unknown policy '" + o.pool_select + "'");
	p.tier_policy = static_cast<int>(*tp);
	p.pool_select = static_cast<int>(*ps);
	if (!o.owner.empty())
		std::tie(p.uid, p.gid) = parse_owner(o.owner);
	p.mode = parse_mode("--mode", o.mode);
	return p;
}

/// An octal permission string ("0660") or UsageError naming OPTION.
uint32_t parse_mode(const std::string &option, const std::string &text)
{
	size_t pos = 0;
	unsigned long m = 0;
	try {
		m = std::stoul(text, &pos, 8);
	} catch (const std::exception &) {
		pos = 0;
	}
	if (pos != text.size() || m > 0777)
		throw UsageError(option + ": invalid mode '" + text + "' (octal, e.g. 0660)");
	return static_cast<uint32_t>(m);
}

void add_autopilot_bound_options(CLI::App *cmd, AutopilotBoundOptions &o, const std::string &whose)
{
	cmd->add_option("--autopilot-min", o.min,
			"the autopilot never sets " + whose + " local quota below this: PCT% of the VM's size or SIZE")
		->type_name("SIZE|PCT%");
	cmd->add_option("--autopilot-max", o.max, "nor above this: PCT% or SIZE (default 100%)")->type_name("SIZE|PCT%");
	cmd->add_option("--autopilot-slo", o.slo,
			"at most PCT% of the VM's sampled accesses from the pool before the autopilot grows its quota")
		->type_name("PCT%");
}

nlohmann::json autopilot_bounds_json(const AutopilotBoundOptions &o)
{
	nlohmann::json j = nlohmann::json::object();
	for (auto [k, v] : {std::pair{"min", &o.min}, {"max", &o.max}, {"slo", &o.slo}})
		if (!v->empty())
			j[k] = *v;
	return j;
}

void add_move_options(CLI::App *verb, MoveOptions &o)
{
	verb->add_option("--rate", o.rate, "move at most SIZE per second (e.g. 512M)");
	verb->add_option("--timeout", o.timeout,
			 "give up after this long without progress on referenced chunks (default 60 s)");
}

std::optional<double> duration_seconds(const std::string &text, double unit_s)
{
	return poolmem::parse_duration(text, unit_s);
}

double seconds_value(const std::string &option, const std::string &text)
{
	const auto s = duration_seconds(text, 1);
	if (!s)
		throw UsageError(option + ": invalid duration '" + text + "' (e.g. 90, 90s, 5m)");
	return *s;
}

} // namespace poolctl
