// cluster: the shared-device ledger as this exporter's etcd sees it
// (--cluster.etcd; Documentation/cluster.md): devices and their extents by
// state, each host's extents and lease, and the cluster-wide load that
// smart idle places by. Every host's exporter shows the same view; a
// dashboard takes it from any one. Off unless --cluster.etcd is given.
#include "collector.hpp"

#include <mutex>

#include <poolmem/cluster.hpp>

#include <map>

using prometheus::MetricType;

namespace exporter {

namespace {

class ClusterCollector : public Collector {
public:
	std::string name() const override { return "cluster"; }

private:
	/* across scrapes: the member that answered last, failovers so far */
	mutable std::mutex mu_;
	mutable std::string member_;
	mutable uint64_t failovers_ = 0;

public:

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		if (r.cluster_etcd.empty())
			return;
		/* a scrape must not hang on a stopped etcd: 2 s per call, for all the members tried */
		poolmem::cluster::Etcd etcd(r.cluster_etcd, 2000);
		etcd.set_tls({r.cluster_cacert, r.cluster_cert, r.cluster_key});
		{
			std::lock_guard lock(mu_);
			if (!member_.empty())
				etcd.prefer(member_); /* the one that answered the last scrape */
		}
		poolmem::cluster::Ledger ledger(etcd, r.cluster_prefix);
		auto note = [&] {
			std::lock_guard lock(mu_);
			failovers_ += etcd.failovers();
			member_ = etcd.endpoint();
		};
		poolmem::cluster::Status s;
		std::vector<poolmem::cluster::Ledger::Load> load;
		try {
			s = ledger.status();
			load = ledger.load();
		} catch (...) {
			note();
			throw;
		}
		note();
		Family member("poolmem_cluster_etcd_member_info", "The etcd member (of --cluster.etcd's endpoints) that answered this scrape (value 1).", MetricType::Gauge);
		Family failover("poolmem_cluster_etcd_failovers_total", "Calls that went on to another etcd member because the one in use did not answer (all of --cluster.etcd's endpoints).", MetricType::Counter);
		{
			std::lock_guard lock(mu_);
			member.add({{"member", member_}}, 1);
			failover.add({}, static_cast<double>(failovers_));
		}
		out.push_back(member.take());
		out.push_back(failover.take());
		Family ext_bytes("poolmem_cluster_device_extent_bytes", "Extent size of a shared device registered in the ledger (a whole number of memory blocks).", MetricType::Gauge);
		Family extents("poolmem_cluster_extents", "Extents of a shared device by state: free, claimed (its host's lease holds) or fencing (its host's lease is gone; free only after a confirmed fence).", MetricType::Gauge);
		Family host_ext("poolmem_cluster_host_extents", "Extents of a shared device a host holds in the ledger, by state (claimed, fencing).", MetricType::Gauge);
		Family ttl("poolmem_cluster_host_lease_ttl_seconds", "Time left on a live host's lease in the ledger; the host fences itself before it runs out.", MetricType::Gauge);
		Family af("poolmem_cluster_device_access_factor", "Sum over live hosts of the access factor each publishes for its pool on a shared device (what cluster-wide smart idle orders by).", MetricType::Gauge);
		Family alloc("poolmem_cluster_device_allocated_bytes", "Sum over live hosts of the bytes their domains hold on a shared device.", MetricType::Gauge);
		Family rev("poolmem_cluster_ledger_revision", "The etcd revision the ledger was read at (rises with every claim, release, fence and renewal of a published load).", MetricType::Gauge);
		std::map<std::string, std::map<std::string, unsigned>> by_dev; // device -> state -> n
		std::map<std::pair<std::string, std::string>, std::map<std::string, unsigned>> by_host;
		for (const auto &e : s.extents) {
			const std::string st = e.live ? "claimed" : "fencing";
			by_dev[e.device][st]++;
			by_host[{e.host, e.device}][st]++;
		}
		for (const auto &d : s.devices) {
			ext_bytes.add({{"device", d.name}}, static_cast<double>(d.extent_bytes));
			auto &n = by_dev[d.name];
			const unsigned used = n["claimed"] + n["fencing"];
			extents.add({{"device", d.name}, {"state", "free"}}, d.extents() > used ? d.extents() - used : 0);
			extents.add({{"device", d.name}, {"state", "claimed"}}, n["claimed"]);
			extents.add({{"device", d.name}, {"state", "fencing"}}, n["fencing"]);
		}
		for (const auto &[hd, states] : by_host)
			for (const auto &[st, n] : states)
				host_ext.add({{"host", hd.first}, {"device", hd.second}, {"state", st}}, n);
		for (const auto &h : s.hosts)
			if (h.ttl >= 0)
				ttl.add({{"host", h.name}}, static_cast<double>(h.ttl));
		for (const auto &l : load) {
			af.add({{"device", l.device}}, static_cast<double>(l.af));
			alloc.add({{"device", l.device}}, static_cast<double>(l.allocated_bytes));
		}
		rev.add({}, static_cast<double>(s.revision));
		for (Family *f : {&ext_bytes, &extents, &host_ext, &ttl, &af, &alloc, &rev})
			if (!f->empty())
				out.push_back(f->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_cluster_collector() { return std::make_unique<ClusterCollector>(); }

} // namespace exporter
