// The per-host side of the cluster ledger: what poolmem-agent runs. It
// joins with a lease, offlines whatever its past lives held before
// anything else, claims the extents it is configured to use and onlines
// exactly those, renews its lease, and fences itself (offlines every
// extent) when it can't renew before the lease could have run out.
//
// Memory is reached through an interface, so that the same logic drives
// sysfs memory blocks on a host and can be tested against a real etcd.
// Not thread-safe: one thread calls start() and step().
#pragma once

#include <poolmem/cluster.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace poolmem::cluster {

/// Onlining and offlining one extent of a shared device on this host.
class ExtentMemory {
public:
	virtual ~ExtentMemory() = default;
	virtual void online(const std::string &dev, unsigned index) = 0;
	/// Must not return before the memory is offline (or throw). The memory
	/// is still this host's: what tenants hold there may be moved away.
	virtual void offline(const std::string &dev, unsigned index) = 0;
	/// This host's claim on DEV may be gone (its lease ran out, or nearly
	/// so without a renewal): the next offline of DEV's memory must not
	/// read it, and drops what tenants hold there. Default: nothing.
	virtual void revoke(const std::string & /*dev*/) {}
	/// Whether any of extent INDEX's memory is online here (a past life
	/// left it so). Default: no.
	virtual bool is_online(const std::string & /*dev*/, unsigned /*index*/) { return false; }
};

struct AgentConfig {
	std::string host;
	int64_t ttl_s = 10;
	/// Fence ourselves when the last renewal is this close to the TTL.
	double fence_margin_s = 3;
	/// Extents wanted per registered device.
	std::map<std::string, unsigned> want;
	/// The lease of this host's last life (its state file), 0 if none: a
	/// restart takes it over while it holds the ledger.
	int64_t previous_lease = 0;
	/// on_outage = "keep": past the self-fence deadline with etcd out of
	/// reach, keep the memory online instead of offlining it; once etcd
	/// answers, a lease that ran out is replaced and the extents reclaimed
	/// where unfenced (start()'s rules). Safe as long as a fence cuts the
	/// host off, which the ledger requires of it (Documentation/cluster.md).
	bool keep_through_outage = false;
};

class Agent {
public:
	using Clock = std::chrono::steady_clock;
	Agent(Etcd &etcd, Ledger &ledger, ExtentMemory &mem, AgentConfig cfg);

	/// Take over the last life's lease if it still holds the ledger, or
	/// join (the ledger must be reachable); keep what a past life held
	/// where the ledger still records it for this host (reclaim), offline
	/// and drop what was fenced or changed since; then claim and online.
	void start();
	/// One round, every ttl/3 or so: renew; if the ledger is unreachable,
	/// keep what we hold and claim nothing; fence ourselves before the
	/// lease could run out; otherwise reconcile and top up the claims.
	void step();
	/// Give everything back: offline, release, leave.
	void stop();
	/// What start() found of the last life: extents taken over with its
	/// lease or reclaimed under a new one (kept online), and extents that
	/// were gone (offlined, their chunks revoked).
	unsigned kept() const { return kept_; }
	unsigned dropped() const { return dropped_; }
	bool took_over_lease() const { return took_over_; }
	/// No network: fence ourselves if the last renewal is too old. Call it
	/// often (every 100 ms) between steps: a step can't fence while it waits.
	void watchdog();
	/// Until the self-fence deadline (0 when past it, or fenced).
	std::chrono::milliseconds time_left() const;
	/// New targets (a reloaded configuration): the next step claims up
	/// to them, or gives back the surplus (offline first, then release).
	void set_want(std::map<std::string, unsigned> want) { cfg_.want = std::move(want); }
	const std::map<std::string, unsigned> &want() const { return cfg_.want; }
	/// Steps that reached the ledger and ended with every device at its
	/// target, or short of it only because nothing was free.
	unsigned settled_steps() const { return settled_; }

	const std::set<std::pair<std::string, unsigned>> &online() const { return online_; }
	bool fenced() const { return fenced_; }
	/// Fenced because the lease was found gone (a pause past the TTL): the
	/// claims it held are stale, possibly fenced and given to others.
	bool lease_lost() const { return lease_lost_; }
	int64_t lease() const { return lease_; }
	/// Rounds in which the ledger could not be reached.
	unsigned unreachable_rounds() const { return unreachable_; }

private:
	Etcd &etcd_;
	Ledger &ledger_;
	ExtentMemory &mem_;
	AgentConfig cfg_;
	int64_t lease_ = 0;
	Clock::time_point renewed_;
	unsigned kept_ = 0, dropped_ = 0;
	bool took_over_ = false;
	std::set<std::pair<std::string, unsigned>> online_;
	bool fenced_ = false;
	bool lease_lost_ = false;
	unsigned unreachable_ = 0;
	unsigned settled_ = 0;
	long timeout_ms_; ///< the Etcd's own, restored after each step

	Clock::time_point deadline() const;
	void fence_self(bool lease_may_be_gone = false);

	void offline_all();
	void top_up();
	void trim(const std::vector<Extent> &held);
	void reconcile_and_top_up();
	void rejoin();
};

} // namespace poolmem::cluster
