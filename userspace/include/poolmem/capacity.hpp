// How many more VMs of a shape admission control lets this host take: the
// kernel's rules (pm_admit()) applied to what the domains commit now.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace poolmem {

/// A VM as admission sees it: its size and local quota (the rest is its
/// pool quota), the pools it may use (empty: every pool) and its home node
/// (-1: the first node with CPUs, as the module picks).
struct Shape {
	uint64_t bytes = 0, local_bytes = 0, chunk_bytes = 2ULL << 20;
	std::vector<std::string> pools;
	int home_node = -1;
	uint64_t pool_bytes() const { return bytes - local_bytes; }
};

/// "16G/25%" (local quota 25% of the size, rounded up to a chunk as a
/// profile's), "16G/4G" (a local quota), "16G" (all pool); nullopt if
/// malformed or the local quota is above the size.
std::optional<Shape> parse_shape(const std::string &text);

/// One admission limit and what the live domains commit against it.
struct Headroom {
	uint64_t limit_bytes = 0, committed_bytes = 0;
	uint64_t headroom_bytes() const { return limit_bytes > committed_bytes ? limit_bytes - committed_bytes : 0; }
	/// How many quotas of QUOTA bytes fit in the headroom (UINT64_MAX for 0).
	uint64_t fits(uint64_t quota) const;
};

struct PoolHeadroom {
	std::string name;
	int node = -1;
	Headroom pool; ///< the pool alone: capacity x overcommit, the quotas of the domains allowed on it
};

struct Capacity {
	Shape shape;	  ///< home node and pools filled in
	Headroom local;	  ///< the home node's local tier: its memory x local_overcommit_pct
	Headroom pool;	  ///< the shape's pools together (pm_admit()'s pool set)
	std::vector<PoolHeadroom> pools; ///< every pool
	uint64_t fit_local = 0, fit_pool = 0; ///< VMs of the shape each tier admits (UINT64_MAX: any)
	uint64_t fit() const { return fit_local < fit_pool ? fit_local : fit_pool; }
};

/// The host's admission headroom for SHAPE, from the module's sysfs, its
/// domain table (procfs_for(SYSFS) unless PROCFS is given) and the nodes'
/// present memory (/proc/zoneinfo). Throws Error (ENOENT: no module, an
/// unknown pool or node).
Capacity capacity(const Shape &shape, const std::filesystem::path &sysfs = "/sys",
		  const std::filesystem::path &procfs = {});

} // namespace poolmem
