// Shared devices' extents as memory blocks of this host (extents.hpp).
#include <poolmem/extents.hpp>

#include <poolmem/error.hpp>
#include <poolmem/moves.hpp>
#include <poolmem/stats.hpp>

#include <csignal>
#include <cstring>

namespace fs = std::filesystem;

namespace poolmem::cluster {

namespace {

/*
 * A shared device's pool keeps no zero reserve: the reserve's thread
 * writes zeros into free memory of the pool ahead of need, and a host that
 * was stopped past its lease and resumes still has the fenced extents
 * online until it offlines them; zeroing then would write into memory
 * another host now holds (seen in the cluster rig: one 2 MiB unit of the
 * other host's stamps gone to zeros). Memory under a lease is written only
 * by the tenants this host gave it to.
 */
void no_zero_reserve(const fs::path &sysfs, const std::string &pool,
		     const std::function<void(const std::string &)> &warn)
{
	if (const int err = set_pool_zero_reserve(sysfs, pool, 0); err && warn)
		warn("pool " + pool + ": cannot turn the zero reserve off: " + std::strerror(err));
}

/*
 * A signal would cancel an offline in progress, and a cancelled offline
 * of revoked memory puts its freed units back in the page allocator:
 * SIGTERM, SIGINT and SIGHUP wait while one of these lives.
 */
struct SignalsHeld {
	sigset_t old;
	SignalsHeld()
	{
		sigset_t s;
		sigemptyset(&s);
		for (int sig : {SIGTERM, SIGINT, SIGHUP})
			sigaddset(&s, sig);
		sigprocmask(SIG_BLOCK, &s, &old);
	}
	~SignalsHeld() { sigprocmask(SIG_SETMASK, &old, nullptr); }
};

} // namespace

DaxExtentMemory::DaxExtentMemory(const fs::path &sysfs, const std::string &control,
				 const std::vector<ExtentDevice> &devices, Ledger &ledger,
				 std::function<void(const std::string &)> warn)
	: sysfs_(sysfs), warn_(std::move(warn)), dax_(sysfs), ctl_(control)
{
	const uint64_t block = memory_block_size(sysfs);
	for (const auto &d : devices) {
		const auto dev = ledger.device(d.name);
		if (dev.extent_bytes % block)
			throw Error::plain(d.name, "extent size is not a whole number of memory blocks", EINVAL);
		dax_.to_system_ram(d.dax);
		Dev x;
		x.conf = d;
		x.per_extent = static_cast<unsigned>(dev.extent_bytes / block);
		x.blocks = dax_.blocks(d.dax);
		x.node = dax_.device(d.dax).target_node;
		if (x.blocks.size() < static_cast<size_t>(dev.extents()) * x.per_extent)
			throw Error::plain(d.dax, "smaller than ledger device " + d.name, EINVAL);
		devs_[d.name] = x;
	}
}

void DaxExtentMemory::online(const std::string &dev, unsigned i)
{
	Dev &d = devs_.at(dev);
	if (d.revoked) {
		/* every extent of it went offline since: the pool may take chunks again */
		undrain(d);
		d.revoked = false;
	}
	online_blocks(sysfs_, range(d, i), d.conf.zone, nullptr);
	if (!d.pool_added) {
		try {
			ctl_.pool_add(d.conf.pool, d.node);
		} catch (const Error &e) {
			if (e.code() != EEXIST)
				throw;
		}
		no_zero_reserve(sysfs_, d.conf.pool, warn_);
		d.pool_added = true;
	}
}

/*
 * Offline extent I. Tenants' chunks there refuse it: move them off (other
 * pools, or their local tier), then offline again. The kernel drains a
 * whole pool, so chunks on this device's other extents move too; the pool
 * takes chunks again after. Revoked: the kernel drops the chunks as the
 * blocks go (POOLMEM_DRAIN_REVOKE), nothing moves.
 */
void DaxExtentMemory::offline(const std::string &dev, unsigned i)
{
	Dev &d = devs_.at(dev);
	SignalsHeld held;
	auto refused = offline_blocks(sysfs_, range(d, i));
	if (!refused.empty() && !d.revoked) {
		/*
		 * The drain every poolmem tool runs, told not to wait: a pin or
		 * a reference that outlasts a second keeps the extent online,
		 * and the agent's next step tries again.
		 */
		MovePolicy policy;
		policy.timeout = 1;
		policy.pinned_tries = 1;
		const auto run = drain(ctl_, d.conf.pool, true, policy);
		const auto &r = run.result;
		std::string why;
		if (r.err && r.err != EINTR)
			why = r.err == ENOSPC  ? "no room elsewhere for domain " + r.blocker
			      : r.err == EBUSY ? "domain " + r.blocker + " has a long-term pinned chunk there"
					       : "domain " + r.blocker + " has a memory error there";
		refused = offline_blocks(sysfs_, range(d, i));
		undrain(d);
		if (!refused.empty() && !why.empty())
			throw Error::plain(dev + " extent " + std::to_string(i),
					   "memory block " + std::to_string(refused[0]) +
						   " refused to go offline: its chunks could not move: " + why,
					   EBUSY);
	}
	if (!refused.empty())
		throw Error::plain(dev + " extent " + std::to_string(i),
				   "memory block " + std::to_string(refused[0]) + " refused to go offline" +
					   (d.revoked ? " (revoked: a chunk there is pinned or referenced)" : ""),
				   EBUSY);
}

bool DaxExtentMemory::is_online(const std::string &dev, unsigned i)
{
	for (unsigned b : range(devs_.at(dev), i))
		if (block_state(sysfs_, b) != "offline")
			return true;
	return false;
}

void DaxExtentMemory::revoke(const std::string &dev)
{
	Dev &d = devs_.at(dev);
	try {
		ctl_.pool_revoke(d.conf.pool);
	} catch (const Error &e) {
		if (e.code() != ENOENT)
			throw; /* no pool: no chunk to drop */
	}
	d.revoked = true;
}

void DaxExtentMemory::undrain(Dev &d)
{
	try {
		ctl_.pool_undrain(d.conf.pool);
	} catch (const Error &e) {
		if (e.code() != ENOENT)
			throw;
	}
}

std::vector<unsigned> DaxExtentMemory::range(const Dev &d, unsigned i)
{
	return {d.blocks.begin() + static_cast<long>(i) * d.per_extent,
		d.blocks.begin() + static_cast<long>(i + 1) * d.per_extent};
}

} // namespace poolmem::cluster
