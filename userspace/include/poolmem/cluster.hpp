// The cluster ledger: which host may online which extent of a shared
// device, kept in etcd (v3, through its JSON gateway) so that no two hosts
// ever use the same memory. See Documentation/cluster.md.
//
// Keys, under a prefix (default "/poolmem"):
//   devices/<dev>            {"size_bytes","extent_bytes"}: registered once
//   hosts/<host>             {"lease"}: put with the host's lease, so it
//                            disappears when the host stops renewing it
//   extents/<dev>/<NNNNNN>   {"host","lease"}: absent = free. Never
//                            attached to a lease: an extent whose owner's
//                            lease is gone is "fencing", never free, until
//                            a confirmed fence deletes it
//   fences/<host>            the last confirmed fence of a host
//   load/<host>/<dev>        {"af","allocated_bytes"} with the host's lease
//
// A claim is one transaction: every extent absent, and hosts/<host> held
// by the claimer's lease; then all of them are written. Its epoch is the
// extent key's create revision.
//
// Not thread-safe per object (one Etcd per thread); the ledger itself is
// safe against any number of hosts, which is the point.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace poolmem::cluster {

/// An etcd cluster through its members' gRPC gateways (JSON over HTTP),
/// libcurl. ENDPOINTS is one member's URL or several, comma-separated, as
/// etcdctl's --endpoints. A call goes to the member that answered last;
/// when that one can't be reached it goes on to the next, within the same
/// time budget (timeout_ms: what is left of the caller's deadline). A
/// request that may have reached a member is sent again elsewhere only if
/// it changes nothing (reads, lease renewals and lookups); a transaction
/// or put that may have been applied fails instead, as with one member.
/// A member without a leader (HTTP 5xx from its gateway) counts as
/// unreachable for those. So with a quorum standing, the loss of any one
/// member costs a failover, not an outage.
class Etcd {
public:
	explicit Etcd(std::string endpoints = "http://127.0.0.1:2379", long timeout_ms = 5000);
	~Etcd();
	Etcd(const Etcd &) = delete;
	Etcd &operator=(const Etcd &) = delete;

	/// POST BODY to /v3/PATH; throws poolmem::Error naming the endpoint
	/// (ECONNREFUSED, ETIMEDOUT: etcd unreachable; EPROTO: a gateway error).
	nlohmann::json call(const std::string &path, const nlohmann::json &body);

	struct Kv {
		std::string key, value;
		int64_t create_revision = 0, mod_revision = 0, version = 0, lease = 0;
	};
	/// KEY, or every key under it with PREFIX; REVISION gets the store's.
	/// KEYS_ONLY: no values (a read of names and revisions is smaller).
	std::vector<Kv> range(const std::string &key, bool prefix = false, int64_t *revision = nullptr,
			      bool keys_only = false);
	int64_t lease_grant(int64_t ttl_s);
	/// Renew; returns the TTL left, 0 when the lease is gone.
	int64_t lease_keepalive(int64_t id);
	/// TTL left, -1 when the lease is gone.
	int64_t lease_ttl(int64_t id);
	void lease_revoke(int64_t id);

	/// The member in use: the one that answered last.
	const std::string &endpoint() const { return endpoints_[current_]; }
	const std::vector<std::string> &endpoints() const { return endpoints_; }
	/// Calls that went on to another member than the one in use.
	uint64_t failovers() const { return failovers_; }
	/// Requests made (each try of a call counts) and the bytes they moved,
	/// sent and received: what this client costs the cluster.
	uint64_t calls() const { return calls_; }
	uint64_t bytes() const { return bytes_; }
	/// The same by API path ("kv/range", "lease/keepalive", ...): calls, bytes.
	const std::map<std::string, std::pair<uint64_t, uint64_t>> &by_path() const { return by_path_; }
	/// Start with member ENDPOINT (one that answered before); no-op for
	/// one not among the endpoints.
	void prefer(const std::string &endpoint)
	{
		for (size_t i = 0; i < endpoints_.size(); i++)
			if (endpoints_[i] == endpoint)
				current_ = i;
	}
	long timeout_ms() const { return timeout_ms_; }
	/// The time any one call may take from now on (a deadline's budget).
	void set_timeout_ms(long ms) { timeout_ms_ = ms; }

	/// TLS to an https:// endpoint, as etcdctl's --cacert, --cert, --key:
	/// the CA that signed etcd's certificate (empty: the system's), and
	/// this client's certificate and key for an etcd that requires one
	/// (--client-cert-auth). Files are read at each connection.
	struct Tls {
		std::string cacert, cert, key;
	};
	void set_tls(Tls tls) { tls_ = std::move(tls); }

private:
	std::vector<std::string> endpoints_;
	size_t current_ = 0;
	uint64_t failovers_ = 0;
	uint64_t calls_ = 0, bytes_ = 0;
	std::map<std::string, std::pair<uint64_t, uint64_t>> by_path_;
	long timeout_ms_;
	void *curl_;
	Tls tls_;
	/// One try at member ENDPOINT within BUDGET_MS; SENT: whether the
	/// request may have reached it (it was sent, or the answer was lost).
	nlohmann::json call_one(const std::string &endpoint, const std::string &path, const std::string &data,
				long budget_ms, bool &sent, int &http);
};

/// A transaction: compares, then the ops on success (or on failure).
struct Txn {
	nlohmann::json compare = nlohmann::json::array(), success = nlohmann::json::array(),
		       failure = nlohmann::json::array();
	Txn &absent(const std::string &key);			 ///< create_revision == 0
	Txn &mod_is(const std::string &key, int64_t rev);	 ///< mod_revision == REV
	Txn &lease_is(const std::string &key, int64_t lease);	 ///< held with LEASE
	Txn &put(const std::string &key, const std::string &value, int64_t lease = 0);
	Txn &del(const std::string &key);
	Txn &del_prefix(const std::string &prefix); ///< every key under PREFIX
	Txn &get(const std::string &key);	     ///< read KEY on success
	Txn &get_on_failure(const std::string &key);
};

struct Device {
	std::string name;
	uint64_t size_bytes = 0, extent_bytes = 0;
	unsigned extents() const { return extent_bytes ? static_cast<unsigned>(size_bytes / extent_bytes) : 0; }
};

struct Extent {
	std::string device;
	unsigned index = 0;
	std::string host;
	int64_t lease = 0;
	int64_t epoch = 0;	  ///< the claim's create revision
	int64_t mod_revision = 0; ///< guards release and fence
	bool live = false;	  ///< its owner's lease still holds it ("claimed"); else "fencing"
};

struct Host {
	std::string name;
	int64_t lease = 0, ttl = -1;
};

struct Status {
	int64_t revision = 0;
	std::vector<Device> devices;
	std::vector<Extent> extents; ///< claimed or fencing; the rest are free
	std::vector<Host> hosts;
};

class Ledger {
public:
	explicit Ledger(Etcd &etcd, std::string prefix = "/poolmem");

	/// Register DEV (extents of whole memory blocks). The same definition
	/// again is a no-op; a different one throws EEXIST. Returns whether
	/// DEV is new. CHECK: every check, nothing written.
	bool register_device(const Device &dev, bool check = false);
	Device device(const std::string &name);

	/// Start a host's life: a lease of TTL seconds and hosts/<host> on it.
	/// Throws EBUSY while another live instance holds the name.
	int64_t join(const std::string &host, int64_t ttl_s);
	void leave(const std::string &host, int64_t lease);

	/// Claim INDEXES of DEV (1 to 63) for HOST, all or none: returns their epochs;
	/// throws EBUSY naming an extent already held (and its holder), or
	/// ESTALE when HOST's lease no longer holds hosts/<host>.
	std::vector<int64_t> claim(const std::string &host, int64_t lease, const std::string &dev,
				   const std::vector<unsigned> &indexes);
	static constexpr size_t max_claim = 63;
	/// Claim COUNT free extents of DEV (from a place in the free list that
	/// depends on HOST, so racing hosts rarely collide), retrying lost races.
	std::vector<unsigned> claim_free(const std::string &host, int64_t lease, const std::string &dev, unsigned count);
	/// Give back an extent HOST holds (guarded by its owner and revision).
	void release(const Extent &e);
	/// Take over extent E, recorded for HOST under an older lease (a past
	/// life's, claimed or fencing), with LEASE: guarded by E being as read
	/// (not fenced, released or claimed since) and by LEASE holding
	/// hosts/<host>. Nobody else could have had it meanwhile: a fencing
	/// extent is never free without a fence. ESTALE when it changed.
	void reclaim(const Extent &e, const std::string &host, int64_t lease);
	/// The lease that holds hosts/<host> now, 0 when none (the host is down).
	int64_t host_lease(const std::string &host);

	/// Extents recorded for HOST: with LEASE (its own, e.g. after etcd came
	/// back: reconcile) or, with stale = true, any other lease: a past
	/// life's, whose memory the host must offline before anything else.
	///
	/// The live read goes through HOST's owner index (owners/<host>/...),
	/// written in the same transaction as each claim: its cost is what
	/// HOST holds, not what the ledger holds. The index only says where
	/// to look: every extent it names is read and kept only if it still
	/// records HOST and LEASE. The stale read, and scan(), read every
	/// extent key (a host's start, once).
	std::vector<Extent> held(const std::string &host, int64_t lease, bool stale = false);
	/// Every extent recorded for HOST under LEASE, by reading every extent
	/// key (not the index); then indexes those the index lacks (claims
	/// by an agent older than the index), and drops entries whose extent
	/// is free or another host's. Returns them; STALE, if given, gets
	/// HOST's extents under any other lease (as held(..., true)), from
	/// the same read.
	std::vector<Extent> scan(const std::string &host, int64_t lease, std::vector<Extent> *stale = nullptr);

	/// A confirmed fence of HOST (operator, BMC, fabric manager): its
	/// extents become free. Refused (EBUSY) while HOST's lease is live.
	std::vector<Extent> fence(const std::string &host, const std::string &by);

	Status status();

	/// Publish HOST's figures for one shared device (its pool's access
	/// factor and bytes allocated), under its lease: they go with it.
	void publish_load(const std::string &host, int64_t lease, const std::string &dev, uint64_t af,
			  uint64_t allocated_bytes);
	/// Cluster-wide figures per device: the sums over live hosts.
	struct Load {
		std::string device;
		uint64_t af = 0, allocated_bytes = 0;
		unsigned hosts = 0;
	};
	std::vector<Load> load();
	/// Where the next extents should come from, most preferred first, by
	/// the module's own smart idle (pm_pool_order over the cluster-wide
	/// figures: the m = ceil(log2 n) devices with the lowest Af, least
	/// allocated first, then the rest by Af). CANDIDATES: device names.
	std::vector<std::string> smart_idle(const std::vector<std::string> &candidates);

	std::string key(const std::string &rest) const { return prefix_ + "/" + rest; }
	static std::string extent_key_suffix(const std::string &dev, unsigned index);
	/// owners/<host>/<dev>/<NNNNNN>: HOST's index entry for an extent.
	std::string owner_key(const std::string &host, const std::string &dev, unsigned index) const;

private:
	Etcd &etcd_;
	std::string prefix_;
	/// Devices read once: a definition never changes once registered.
	std::map<std::string, Device> devices_;
	Extent parse_extent(const Etcd::Kv &kv) const;
};

} // namespace poolmem::cluster
