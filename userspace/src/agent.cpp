// The per-host side of the cluster ledger (see agent.hpp).
#include <poolmem/agent.hpp>
#include <poolmem/error.hpp>

#include <cerrno>

namespace poolmem::cluster {

Agent::Agent(Etcd &etcd, Ledger &ledger, ExtentMemory &mem, AgentConfig cfg)
	: etcd_(etcd), ledger_(ledger), mem_(mem), cfg_(std::move(cfg)), timeout_ms_(etcd.timeout_ms())
{
	if (cfg_.fence_margin_s <= 0 || cfg_.fence_margin_s >= static_cast<double>(cfg_.ttl_s))
		throw Error::plain(cfg_.host, "the self-fence margin must be between 0 and the lease TTL", EINVAL);
}

void Agent::start()
{
	fenced_ = false;
	lease_lost_ = false;
	kept_ = dropped_ = 0;
	took_over_ = false;
	online_.clear(); /* rebuilt below from the ledger and the memory */
	/*
	 * A restart (systemctl restart, an upgrade) within the lease: the last
	 * life's lease still holds hosts/<host>, and so every extent it
	 * claimed is still ours. Take the lease over, renewing it at once
	 * (renewed_ is taken before the request, as in step()), and keep the
	 * memory online.
	 */
	const int64_t prev = cfg_.previous_lease;
	if (prev) {
		renewed_ = Clock::now();
		if (ledger_.host_lease(cfg_.host) == prev && etcd_.lease_keepalive(prev) > 0) {
			lease_ = prev;
			took_over_ = true;
		}
	}
	if (!took_over_) {
		lease_ = ledger_.join(cfg_.host, cfg_.ttl_s);
		renewed_ = Clock::now();
	}
	/*
	 * Claims on a device no longer configured: its memory may still be
	 * online here, and this agent can't reach it to offline it; giving
	 * the claims back would free it for another host. Refuse: the lease
	 * runs out, the claims turn fencing (never free without a fence).
	 */
	/*
	 * One read of every extent key, once a life: what a past life holds
	 * need not be in the owner index (an agent older than it), and
	 * scan() indexes what it finds under our lease.
	 */
	std::vector<Extent> stale;
	const auto live = ledger_.scan(cfg_.host, lease_, &stale);
	const std::vector<Extent> *lists[] = {&live, &stale};
	for (const auto *list : lists)
		for (const auto &e : *list)
			if (!cfg_.want.count(e.device))
				throw Error::plain(cfg_.host, "holds extent " + std::to_string(e.index) + " of " + e.device +
								      ", which the configuration no longer names: run "
								      "poolmem-agent release with the configuration that named it first",
						   EBUSY);
	/*
	 * Per device, what the last life left: extents the ledger still
	 * records for this host under our lease (taken over), or under an
	 * older one that ran out (a restart that took longer, a crash: they
	 * turned fencing, which no other host can claim without a fence).
	 * Those we take over with our lease (reclaim, guarded by each being
	 * as read): the memory stays online and no tenant loses a byte.
	 *
	 * If anything of the device was fenced or changed meanwhile (a
	 * reclaim refused, or memory online here that the ledger no longer
	 * records for us), that memory may be another host's by now: the
	 * whole device's memory goes offline unread (revoke: its chunks are
	 * dropped, their tenants get memory errors) and its claims are given
	 * back. A revoked pool can't take chunks again while any of its memory
	 * is online, so the device is dropped whole, not extent by extent.
	 */
	for (const auto &[dev, want] : cfg_.want) {
		(void)want;
		std::set<unsigned> recorded;
		bool tainted = false;
		for (const auto &e : live)
			if (e.device == dev)
				recorded.insert(e.index);
		for (const auto &e : stale) {
			if (e.device != dev)
				continue;
			try {
				ledger_.reclaim(e, cfg_.host, lease_);
				recorded.insert(e.index);
			} catch (const Error &err) {
				if (err.code() != ESTALE)
					throw;
				tainted = true;
			}
		}
		const unsigned n = ledger_.device(dev).extents();
		for (unsigned i = 0; i < n; i++)
			if (!recorded.count(i) && mem_.is_online(dev, i))
				tainted = true;
		if (!tainted) {
			for (unsigned i : recorded) {
				mem_.online(dev, i); /* online already: blocks are left as they are */
				online_.insert({dev, i});
				kept_++;
			}
			continue;
		}
		mem_.revoke(dev);
		for (unsigned i = 0; i < n; i++)
			if (mem_.is_online(dev, i)) {
				mem_.offline(dev, i);
				dropped_++;
			}
		for (const auto &e : ledger_.held(cfg_.host, lease_, false))
			if (e.device == dev)
				try {
					ledger_.release(e);
				} catch (const Error &) {
				}
	}
	top_up();
}

/*
 * The moment we must have stopped using the memory: the last renewal we
 * know of (taken before its request was sent, so on our clock it can only
 * be early) plus the TTL, less the margin for the two clocks' rates and
 * for offlining itself.
 */
Agent::Clock::time_point Agent::deadline() const
{
	return renewed_ + std::chrono::duration_cast<Clock::duration>(
				  std::chrono::duration<double>(static_cast<double>(cfg_.ttl_s) - cfg_.fence_margin_s));
}

/*
 * Stop using every extent. While the lease certainly holds (the watchdog
 * on time), the memory is still ours and tenants' chunks may move away as
 * the memory goes offline. Past the point where the lease may have run
 * out (a pause: the watchdog late, or the lease found gone), the extents
 * may already be fenced and another host's: revoke first, so that
 * offlining drops the chunks unread instead of copying another host's
 * bytes to our tenants. If moving fails (no room, a pin), revoke too: the
 * deadline is not the tenants' to extend.
 */
void Agent::fence_self(bool lease_may_be_gone)
{
	if (!lease_may_be_gone)
		lease_may_be_gone = Clock::now() >= renewed_ + std::chrono::seconds(cfg_.ttl_s);
	std::set<std::string> devs;
	for (const auto &o : online_)
		devs.insert(o.first);
	if (lease_may_be_gone)
		for (const auto &dev : devs)
			mem_.revoke(dev);
	try {
		offline_all();
	} catch (const Error &) {
		if (lease_may_be_gone)
			throw;
		for (const auto &dev : devs)
			mem_.revoke(dev);
		offline_all();
	}
	fenced_ = true;
}

std::chrono::milliseconds Agent::time_left() const
{
	if (fenced_ || !lease_)
		return std::chrono::milliseconds(0);
	return std::max(std::chrono::milliseconds(0),
			std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - Clock::now()));
}

void Agent::watchdog()
{
	if (!fenced_ && lease_ && !cfg_.keep_through_outage && Clock::now() >= deadline())
		fence_self();
}

void Agent::offline_all()
{
	/* one by one: what went offline stays out of online_ if a later one throws */
	for (auto it = online_.begin(); it != online_.end();) {
		mem_.offline(it->first, it->second);
		it = online_.erase(it);
	}
}

void Agent::rejoin()
{
	/*
	 * A new life: our own lease first, if it still holds the ledger (etcd
	 * back within the TTL); else a new lease, and the old one's claims are
	 * reclaimed or dropped by start()'s rules.
	 */
	cfg_.previous_lease = lease_;
	start();
}

/*
 * Claim up to the targets, in batches of up to 16 extents a transaction
 * (claim_free() reads the device's extents once per try, so one extent a
 * transaction cost a host O(extents) reads per extent: minutes for a
 * host that starts with hundreds, past its self-fence deadline, as the
 * 64-host bench showed). A step stops topping up once half the time to
 * the self-fence deadline is gone: the next step renews first and goes
 * on, so a large start or a slow ledger never holds the lease past it.
 */
void Agent::top_up()
{
	const auto half = std::chrono::duration_cast<std::chrono::milliseconds>(
				  std::chrono::duration<double>(cfg_.ttl_s - cfg_.fence_margin_s)) /
			  2;
	for (const auto &[dev, n] : cfg_.want) {
		unsigned have = 0;
		for (const auto &o : online_)
			have += o.first == dev;
		unsigned batch = 16;
		while (have < n) {
			if (time_left() < half)
				return; /* the next step renews, then goes on */
			std::vector<unsigned> got;
			try {
				got = ledger_.claim_free(cfg_.host, lease_, dev, std::min(n - have, batch));
			} catch (const Error &e) {
				if (e.code() == ENOSPC && batch > 1) {
					batch = 1; /* fewer free than asked: take them one by one */
					continue;
				}
				if (e.code() == ENOSPC)
					break; /* nothing free: try again next round */
				throw;
			}
			for (unsigned i : got) {
				try {
					mem_.online(dev, i);
				} catch (...) {
					for (const auto &x : ledger_.held(cfg_.host, lease_))
						if (x.device == dev && x.index == i)
							ledger_.release(x);
					throw;
				}
				online_.insert({dev, i});
				have++;
			}
		}
	}
}

/*
 * Give back what is held beyond the targets: offline first, then release,
 * so that the ledger never shows an extent free while it is online here.
 * The highest indexes go first (any order would do; this one is stable).
 */
void Agent::trim(const std::vector<Extent> &held)
{
	std::map<std::string, unsigned> have;
	for (const auto &o : online_)
		have[o.first]++;
	for (auto it = online_.end(); it != online_.begin();) {
		--it;
		const auto w = cfg_.want.find(it->first);
		const unsigned want = w == cfg_.want.end() ? 0 : w->second;
		if (have[it->first] <= want)
			continue;
		const auto key = *it;
		mem_.offline(key.first, key.second);
		it = online_.erase(it);
		have[key.first]--;
		/* the step's read of our records: only this agent changes them */
		for (const auto &x : held)
			if (x.device == key.first && x.index == key.second)
				ledger_.release(x);
	}
}

void Agent::step()
{
	if (fenced_) {
		try {
			rejoin();
		} catch (const Error &) {
			/* still cut off from the ledger, or our name is still held */
		}
		return;
	}
	auto now = Clock::now();
	const bool past = now >= deadline();
	if (past && !cfg_.keep_through_outage) {
		fence_self();
		return;
	}
	/*
	 * No call of this step may outlast the deadline: a stopped etcd
	 * accepts connections and never answers, and a step stuck in a call
	 * can't fence. Each call gets what is left of the budget.
	 */
	struct Restore {
		Etcd &e;
		long ms;
		~Restore() { e.set_timeout_ms(ms); }
	} restore{etcd_, timeout_ms_};
	auto budget = [&] {
		const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - Clock::now()).count();
		/* keeping through an outage, past the deadline: no deadline to keep */
		etcd_.set_timeout_ms(past ? timeout_ms_
					  : std::max<long>(50, std::min<long>(timeout_ms_, static_cast<long>(left))));
	};
	budget();
	int64_t ttl = 0;
	try {
		ttl = etcd_.lease_keepalive(lease_);
	} catch (const Error &) {
		unreachable_++;
		/* keep what we hold while the lease may still be valid */
		watchdog();
		return;
	}
	if (ttl <= 0) {
		if (cfg_.keep_through_outage) {
			/*
			 * The lease ran out while etcd was away (or we were paused):
			 * our extents turned fencing, never free without a fence.
			 * A new lease, and start() reclaims what is still ours and
			 * drops (revoke, offline) any device that was fenced.
			 */
			budget();
			cfg_.previous_lease = 0;
			start();
			return;
		}
		/* the lease is gone (a pause longer than the TTL): stop using the memory now */
		lease_lost_ = true;
		fence_self(true);
		return;
	}
	renewed_ = now;
	budget();
	try {
		reconcile_and_top_up();
	} catch (const Error &e) {
		if (e.code() != ECONNREFUSED && e.code() != ETIMEDOUT && e.code() != EIO)
			throw;
		unreachable_++; /* etcd went away mid-step: the next step or the watchdog decides */
		watchdog();
	}
}

void Agent::reconcile_and_top_up()
{
	/*
	 * Reconcile with the ledger: a claim whose answer was lost (etcd went
	 * away mid-transaction) may have committed; and nothing may stay
	 * online that the ledger does not give us.
	 */
	const auto held = ledger_.held(cfg_.host, lease_);
	std::set<std::pair<std::string, unsigned>> mine;
	for (const auto &e : held)
		mine.insert({e.device, e.index});
	for (auto it = online_.begin(); it != online_.end();) {
		if (!mine.count(*it)) {
			mem_.offline(it->first, it->second);
			it = online_.erase(it);
		} else {
			++it;
		}
	}
	for (const auto &e : held) {
		if (online_.count({e.device, e.index}))
			continue;
		if (cfg_.want.count(e.device)) {
			mem_.online(e.device, e.index);
			online_.insert({e.device, e.index});
		} else {
			ledger_.release(e); /* not ours to use: give it back */
		}
	}
	trim(held);
	top_up();
	settled_++;
}

void Agent::stop()
{
	offline_all();
	try {
		for (const auto &e : ledger_.held(cfg_.host, lease_))
			ledger_.release(e);
		ledger_.leave(cfg_.host, lease_);
	} catch (const Error &) {
		/* unreachable: the claims turn fencing when the lease runs out */
	}
}

} // namespace poolmem::cluster
