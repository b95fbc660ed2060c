// Admission headroom: pm_admit()'s rules (kmod/domain.c) over what the
// live domains commit now, for "poolctl capacity" and the exporter.
#include <poolmem/capacity.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include "sysfs.hpp"

#include "policy/pm_policy.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

std::optional<Shape> parse_shape(const std::string &text)
{
	Shape s;
	const auto slash = text.find('/');
	const auto size = parse_size(text.substr(0, slash));
	if (!size || !*size || *size % s.chunk_bytes)
		return std::nullopt;
	s.bytes = *size;
	if (slash == std::string::npos)
		return s;
	const std::string local = text.substr(slash + 1);
	if (!local.empty() && local.back() == '%') {
		unsigned long pct = 0;
		size_t pos = 0;
		try {
			pct = std::stoul(local.substr(0, local.size() - 1), &pos);
		} catch (const std::exception &) {
			return std::nullopt;
		}
		if (pos != local.size() - 1 || pct > 100)
			return std::nullopt;
		/* a profile's rounding: up to a whole chunk, at most the size */
		s.local_bytes = pm_profile_quota(s.bytes, s.chunk_bytes, static_cast<uint32_t>(pct), 0);
	} else {
		const auto b = parse_size(local);
		if (!b || *b % s.chunk_bytes)
			return std::nullopt;
		s.local_bytes = *b;
	}
	if (s.local_bytes > s.bytes)
		return std::nullopt;
	return s;
}

uint64_t Headroom::fits(uint64_t quota) const
{
	return quota ? headroom_bytes() / quota : std::numeric_limits<uint64_t>::max();
}

namespace {

/* node_present_pages() of NODE in bytes: the sum of its zones' "present" in /proc/zoneinfo. */
uint64_t node_present_bytes(const fs::path &procfs, int node)
{
	std::ifstream f(procfs / "zoneinfo");
	if (!f)
		throw Error((procfs / "zoneinfo").string(), "cannot read", errno ? errno : ENOENT);
	std::string line;
	int at = -1;
	uint64_t pages = 0;
	while (std::getline(f, line)) {
		int n = -1;
		if (std::sscanf(line.c_str(), "Node %d, zone", &n) == 1) {
			at = n;
			continue;
		}
		std::istringstream w(line);
		std::string key;
		uint64_t v = 0;
		/* "        present  262144" (not "present_early_pages") */
		if (at == node && (w >> key >> v) && key == "present")
			pages += v;
	}
	return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

} // namespace

Capacity capacity(const Shape &shape, const fs::path &sysfs, const fs::path &procfs_arg)
{
	if (!module_sysfs_present(sysfs))
		throw Error::plain("poolmem", "module not loaded", ENOENT);
	const fs::path procfs = procfs_arg.empty() ? procfs_for(sysfs) : procfs_arg;
	Capacity c;
	c.shape = shape;
	const auto pools = read_pools(sysfs);
	const auto domains = read_domains(sysfs, procfs);

	if (c.shape.home_node < 0) {
		/* pm_first_cpu_node(): the first node with CPUs and memory */
		for (const auto &n : read_topology(sysfs).nodes)
			if (n.has_cpus() && n.mem_total) {
				c.shape.home_node = n.id;
				break;
			}
	}
	const Topology topo = read_topology(sysfs);
	if (const Node *n = topo.node(c.shape.home_node); !n || !n->mem_total)
		throw Error::plain("node " + std::to_string(c.shape.home_node), "no such node with memory", ENOENT);

	std::set<std::string> set;
	if (c.shape.pools.empty())
		for (const auto &p : pools)
			c.shape.pools.push_back(p.name);
	for (const auto &name : c.shape.pools) {
		if (std::none_of(pools.begin(), pools.end(), [&](const PoolStats &p) { return p.name == name; }))
			throw Error::plain(name, "no such pool", ENOENT);
		set.insert(name);
	}

	/* local: the quotas of the domains homed on the node, against its memory x local_overcommit_pct */
	const auto pct = sysfs::read_u64(sysfs / "module/poolmem/parameters/local_overcommit_pct").value_or(100);
	c.local.limit_bytes = pm_pct_of(node_present_bytes(procfs, c.shape.home_node), static_cast<uint32_t>(pct));
	/* pools: every domain allowed on a pool of the set counts its whole pool quota */
	for (const auto &d : domains) {
		if (d.home_node == c.shape.home_node)
			c.local.committed_bytes += d.local_quota_bytes;
		if (std::any_of(d.pool_chunks.begin(), d.pool_chunks.end(),
				[&](const auto &pc) { return set.count(pc.first); }))
			c.pool.committed_bytes += d.pool_quota_bytes;
	}
	for (const auto &p : pools) {
		const uint64_t limit = pm_pct_of(p.capacity_bytes, static_cast<uint32_t>(p.overcommit_pct));
		c.pools.push_back({p.name, p.node, {limit, p.committed_bytes}});
		if (set.count(p.name))
			c.pool.limit_bytes += limit;
	}
	c.fit_local = c.local.fits(c.shape.local_bytes);
	c.fit_pool = c.shape.pool_bytes() ? c.pool.fits(c.shape.pool_bytes()) : std::numeric_limits<uint64_t>::max();
	if (c.shape.pool_bytes() && set.empty())
		c.fit_pool = 0; /* pool quota and no pool: the kernel refuses (ENOSPC) */
	return c;
}

} // namespace poolmem
