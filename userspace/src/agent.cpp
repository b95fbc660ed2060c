// The per-host side of the cluster ledger (see agent.hpp).
#include <poolmem/agent.hpp>
#include <poolmem/error.hpp>

#include <cerrno>

namespace poolmem::cluster {

Agent::Agent(Etcd &etcd, Ledger &ledger, ExtentMemory &mem, AgentConfig cfg)
	: etcd_(etcd), ledger_(ledger), mem_(mem), cfg_(std::move(cfg))
{
	if (cfg_.fence_margin_s <= 0 || cfg_.fence_margin_s >= static_cast<double>(cfg_.ttl_s))
		throw Error::plain(cfg_.host, "the self-fence margin must be between 0 and the lease TTL", EINVAL);
}

void Agent::start()
{
	lease_ = ledger_.join(cfg_.host, cfg_.ttl_s);
	renewed_ = Clock::now();
	fenced_ = false;
	/*
	 * A past life's claims (another lease) are stale: their memory may
	 * still be online here, from before a crash or a pause. Offline it
	 * before anything else, then give the claims back; one that a fence
	 * or another host changed meanwhile is not ours to release.
	 */
	for (const auto &e : ledger_.held(cfg_.host, lease_, true)) {
		mem_.offline(e.device, e.index);
		online_.erase({e.device, e.index});
		try {
			ledger_.release(e);
		} catch (const Error &) {
		}
	}
	top_up();
}

void Agent::offline_all()
{
	for (const auto &[dev, idx] : online_)
		mem_.offline(dev, idx);
	online_.clear();
}

void Agent::rejoin()
{
	/* a new life; the old lease's claims are stale and handled by start() */
	start();
}

void Agent::top_up()
{
	for (const auto &[dev, n] : cfg_.want) {
		unsigned have = 0;
		for (const auto &o : online_)
			have += o.first == dev;
		while (have < n) {
			std::vector<unsigned> got;
			try {
				got = ledger_.claim_free(cfg_.host, lease_, dev, 1);
			} catch (const Error &e) {
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
	const auto now = Clock::now();
	int64_t ttl = 0;
	try {
		ttl = etcd_.lease_keepalive(lease_);
	} catch (const Error &) {
		unreachable_++;
		/*
		 * Keep what we hold while the lease may still be valid; fence
		 * ourselves before it could have run out: nobody may be given
		 * our extents while we still write them.
		 */
		const double since = std::chrono::duration<double>(now - renewed_).count();
		if (since >= static_cast<double>(cfg_.ttl_s) - cfg_.fence_margin_s) {
			offline_all();
			fenced_ = true;
		}
		return;
	}
	if (ttl <= 0) {
		/* the lease is gone (a pause longer than the TTL): stop using the memory now */
		offline_all();
		fenced_ = true;
		return;
	}
	renewed_ = now;
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
	top_up();
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
