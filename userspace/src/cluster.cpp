// The cluster ledger on etcd (see cluster.hpp for the key layout).
#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>
#include <poolmem/library.hpp>

#include <curl/curl.h>

#include "policy/pm_policy.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <set>

namespace poolmem::cluster {

namespace {

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64(const std::string &in)
{
	std::string out;
	size_t i = 0;
	for (; i + 2 < in.size(); i += 3) {
		const uint32_t v = static_cast<uint8_t>(in[i]) << 16 | static_cast<uint8_t>(in[i + 1]) << 8 |
				   static_cast<uint8_t>(in[i + 2]);
		out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], kB64[v & 63]};
	}
	if (i + 1 == in.size()) {
		const uint32_t v = static_cast<uint8_t>(in[i]) << 16;
		out += {kB64[v >> 18], kB64[(v >> 12) & 63], '=', '='};
	} else if (i + 2 == in.size()) {
		const uint32_t v = static_cast<uint8_t>(in[i]) << 16 | static_cast<uint8_t>(in[i + 1]) << 8;
		out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], '='};
	}
	return out;
}

std::string unb64(const std::string &in)
{
	std::string out;
	uint32_t v = 0;
	int bits = 0;
	for (char c : in) {
		const char *p = std::strchr(kB64, c);
		if (c == '=' || !c || !p)
			break;
		v = v << 6 | static_cast<uint32_t>(p - kB64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out += static_cast<char>((v >> bits) & 0xff);
		}
	}
	return out;
}

/* etcd's gateway sends int64 as strings, and leaves out zero values */
int64_t i64(const nlohmann::json &j, const char *key)
{
	if (!j.is_object() || !j.contains(key))
		return 0;
	const auto &v = j.at(key);
	return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
}

std::string prefix_end(const std::string &p)
{
	std::string e = p;
	while (!e.empty() && static_cast<unsigned char>(e.back()) == 0xff)
		e.pop_back();
	if (!e.empty())
		e.back() = static_cast<char>(e.back() + 1);
	return e;
}

size_t collect(char *data, size_t size, size_t n, void *out)
{
	static_cast<std::string *>(out)->append(data, size * n);
	return size * n;
}

/*
 * libcurl, loaded when the first Etcd is made. Linking it would map it
 * and its 27 libraries (TLS, HTTP/2, LDAP, SSH...) into every poolctl
 * process: 6.6 MiB of resident memory for commands that never speak to
 * etcd, counted on the node a drain must not grow.
 */
struct Curl {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)();
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
};

const Curl &curl()
{
	static const Curl c = [] {
		const Library lib("libcurl.so.4", "libcurl4");
		Curl x;
		x.global_init = lib.sym<decltype(x.global_init)>("curl_global_init");
		x.easy_init = lib.sym<decltype(x.easy_init)>("curl_easy_init");
		x.easy_cleanup = lib.sym<decltype(x.easy_cleanup)>("curl_easy_cleanup");
		x.easy_reset = lib.sym<decltype(x.easy_reset)>("curl_easy_reset");
		x.easy_setopt = lib.sym<decltype(x.easy_setopt)>("curl_easy_setopt");
		x.easy_perform = lib.sym<decltype(x.easy_perform)>("curl_easy_perform");
		x.easy_getinfo = lib.sym<decltype(x.easy_getinfo)>("curl_easy_getinfo");
		x.easy_strerror = lib.sym<decltype(x.easy_strerror)>("curl_easy_strerror");
		x.global_init(CURL_GLOBAL_DEFAULT); /* once: this initializer runs once */
		return x; /* the library stays loaded for the process's life */
	}();
	return c;
}

} // namespace

Etcd::Etcd(std::string endpoints, long timeout_ms) : timeout_ms_(timeout_ms)
{
	size_t at = 0;
	while (at <= endpoints.size()) {
		const size_t comma = std::min(endpoints.find(',', at), endpoints.size());
		std::string e = endpoints.substr(at, comma - at);
		while (!e.empty() && (e.back() == ' ' || e.back() == '/'))
			e.pop_back();
		while (!e.empty() && e.front() == ' ')
			e.erase(0, 1);
		if (!e.empty())
			endpoints_.push_back(e);
		at = comma + 1;
	}
	if (endpoints_.empty())
		throw Error::plain("etcd", "no endpoint given", EINVAL);
	curl_ = curl().easy_init();
	if (!curl_)
		throw Error("etcd " + endpoints_.front(), "cannot set up libcurl", ENOMEM);
}

Etcd::~Etcd() { curl().easy_cleanup(static_cast<CURL *>(curl_)); }

nlohmann::json Etcd::call_one(const std::string &endpoint, const std::string &path, const std::string &data,
			      long budget_ms, bool &sent, int &http)
{
	const Curl &cu = curl();
	CURL *c = static_cast<CURL *>(curl_);
	const std::string url = endpoint + "/v3/" + path;
	std::string reply;
	sent = false;
	http = 0;
	cu.easy_reset(c);
	cu.easy_setopt(c, CURLOPT_URL, url.c_str());
	cu.easy_setopt(c, CURLOPT_POSTFIELDS, data.c_str());
	cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(data.size()));
	cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	cu.easy_setopt(c, CURLOPT_WRITEDATA, &reply);
	cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, budget_ms);
	/* a member that does not answer a connect is given up on quickly: there are others */
	cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
		       std::min(budget_ms, endpoints_.size() > 1 ? 1000L : 2000L));
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c, CURLOPT_NOPROXY, "*"); /* loopback or the operator's etcd: never a proxy */
	if (!tls_.cacert.empty())
		cu.easy_setopt(c, CURLOPT_CAINFO, tls_.cacert.c_str());
	if (!tls_.cert.empty())
		cu.easy_setopt(c, CURLOPT_SSLCERT, tls_.cert.c_str());
	if (!tls_.key.empty())
		cu.easy_setopt(c, CURLOPT_SSLKEY, tls_.key.c_str());
	const CURLcode rc = cu.easy_perform(c);
	long request_bytes = 0;
	cu.easy_getinfo(c, CURLINFO_REQUEST_SIZE, &request_bytes);
	sent = request_bytes > 0;
	/* what this client costs the cluster: requests, and bytes both ways (HTTP bodies and headers) */
	calls_++;
	const uint64_t moved = static_cast<uint64_t>(request_bytes) + data.size() + reply.size();
	bytes_ += moved;
	auto &[n, b] = by_path_[path];
	n++;
	b += moved;
	if (rc != CURLE_OK) {
		const int e = rc == CURLE_COULDNT_CONNECT ? ECONNREFUSED
			      : rc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT
							       : EIO;
		/* a TLS failure is not an outage: say it is TLS, and which file */
		const bool https = endpoint.rfind("https:", 0) == 0;
		const bool tls = https && (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
				 rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CACERT_BADFILE ||
				 rc == CURLE_SSL_CIPHER || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR);
		throw Error::plain("etcd " + endpoint,
				   std::string(tls ? "TLS failed (" : "unreachable (") + cu.easy_strerror(rc) + ") on " +
					   path +
					   (tls && tls_.cert.empty()
						    ? " (no client certificate given: --cert/--key)"
						    : ""),
				   e);
	}
	long status = 0;
	cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	http = static_cast<int>(status);
	nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
	if (status != 200 || j.is_discarded()) {
		std::string msg = j.is_object() && j.contains("message") ? j["message"].get<std::string>() : reply;
		throw Error::plain("etcd " + endpoint, path + ": HTTP " + std::to_string(status) + ": " + msg, EPROTO);
	}
	return j;
}

nlohmann::json Etcd::call(const std::string &path, const nlohmann::json &body)
{
	const std::string data = body.dump();
	/* what may be sent twice: it changes nothing, or only what it renews */
	bool idempotent = path == "kv/range" || path == "lease/keepalive" || path == "lease/timetolive" ||
			  path == "lease/leases" || path == "maintenance/status";
	if (path == "kv/txn" && (!body.contains("compare") || body["compare"].empty()) &&
	    (!body.contains("failure") || body["failure"].empty()) && body.contains("success")) {
		/* a transaction of reads only (held()'s): a read, sent twice or not */
		idempotent = true;
		for (const auto &op : body["success"])
			idempotent &= op.contains("request_range") && op.size() == 1;
	}
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
	const size_t n = endpoints_.size();
	std::string why;
	int code = ETIMEDOUT;
	for (size_t k = 0; k < n; k++) {
		const size_t idx = (current_ + k) % n;
		const long left = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
							    deadline - std::chrono::steady_clock::now())
							    .count());
		if (left <= 0)
			break;
		bool sent = false;
		int http = 0;
		/*
		 * A member that takes a request and never answers (stopped, cut
		 * off) must not eat the whole budget: with others left, a try
		 * gets its share of what is left (at least 300 ms).
		 */
		const long rest = static_cast<long>(n - k);
		const long budget = rest > 1 ? std::max(left / rest, std::min(left, 300L)) : left;
		try {
			nlohmann::json j = call_one(endpoints_[idx], path, data, budget, sent, http);
			if (idx != current_) {
				current_ = idx;
				failovers_++;
			}
			return j;
		} catch (const Error &e) {
			/*
			 * Go on to the next member when this one surely did not
			 * act on the request (never sent: no connection), or
			 * when acting twice is harmless; a gateway error of 5xx
			 * is a member without a leader (a TLS failure is tried
			 * on the next member too). An answer etcd gave (4xx) is
			 * the same on every member.
			 */
			const bool down = e.code() == ECONNREFUSED || e.code() == ETIMEDOUT || e.code() == EIO ||
					  (e.code() == EPROTO && http >= 500);
			if (n == 1 || !down || (sent && !idempotent))
				throw;
			why += (why.empty() ? "" : "; ") + std::string(e.what());
			code = e.code() == EPROTO ? EIO : e.code();
		}
	}
	std::string all;
	for (const auto &e : endpoints_)
		all += (all.empty() ? "" : ",") + e;
	throw Error::plain("etcd " + all, "no member answered on " + path + " in " + std::to_string(timeout_ms_) +
						 " ms" + (why.empty() ? "" : " (" + why + ")"),
			   code);
}

std::vector<Etcd::Kv> Etcd::range(const std::string &key, bool prefix, int64_t *revision, bool keys_only)
{
	nlohmann::json body = {{"key", b64(key)}};
	if (prefix)
		body["range_end"] = b64(prefix_end(key));
	if (keys_only)
		body["keys_only"] = true;
	if (revision && *revision > 0)
		body["revision"] = std::to_string(*revision);
	const auto j = call("kv/range", body);
	if (revision)
		*revision = i64(j["header"], "revision");
	std::vector<Kv> out;
	if (j.contains("kvs"))
		for (const auto &kv : j["kvs"])
			out.push_back({unb64(kv.value("key", "")), unb64(kv.value("value", "")), i64(kv, "create_revision"),
				       i64(kv, "mod_revision"), i64(kv, "version"), i64(kv, "lease")});
	return out;
}

int64_t Etcd::lease_grant(int64_t ttl_s)
{
	const auto j = call("lease/grant", {{"TTL", std::to_string(ttl_s)}});
	const int64_t id = i64(j, "ID");
	if (!id)
		throw Error::plain("etcd " + endpoint(), "no lease granted: " + j.dump(), EPROTO);
	return id;
}

int64_t Etcd::lease_keepalive(int64_t id)
{
	const auto j = call("lease/keepalive", {{"ID", std::to_string(id)}});
	return i64(j.contains("result") ? j["result"] : j, "TTL");
}

int64_t Etcd::lease_ttl(int64_t id)
{
	const auto j = call("lease/timetolive", {{"ID", std::to_string(id)}});
	return j.contains("TTL") ? i64(j, "TTL") : -1;
}

void Etcd::lease_revoke(int64_t id) { call("lease/revoke", {{"ID", std::to_string(id)}}); }

Txn &Txn::absent(const std::string &key)
{
	compare.push_back({{"key", b64(key)}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}});
	return *this;
}

Txn &Txn::mod_is(const std::string &key, int64_t rev)
{
	compare.push_back(
		{{"key", b64(key)}, {"target", "MOD"}, {"result", "EQUAL"}, {"mod_revision", std::to_string(rev)}});
	return *this;
}

Txn &Txn::lease_is(const std::string &key, int64_t lease)
{
	compare.push_back({{"key", b64(key)}, {"target", "LEASE"}, {"result", "EQUAL"}, {"lease", std::to_string(lease)}});
	return *this;
}

Txn &Txn::put(const std::string &key, const std::string &value, int64_t lease)
{
	nlohmann::json p = {{"key", b64(key)}, {"value", b64(value)}};
	if (lease)
		p["lease"] = std::to_string(lease);
	success.push_back({{"request_put", p}});
	return *this;
}

Txn &Txn::del(const std::string &key)
{
	success.push_back({{"request_delete_range", {{"key", b64(key)}}}});
	return *this;
}

Txn &Txn::del_prefix(const std::string &prefix)
{
	success.push_back({{"request_delete_range", {{"key", b64(prefix)}, {"range_end", b64(prefix_end(prefix))}}}});
	return *this;
}

Txn &Txn::get(const std::string &key)
{
	success.push_back({{"request_range", {{"key", b64(key)}}}});
	return *this;
}

Txn &Txn::get_on_failure(const std::string &key)
{
	failure.push_back({{"request_range", {{"key", b64(key)}}}});
	return *this;
}

namespace {

struct TxnResult {
	bool ok = false;
	int64_t revision = 0;
	std::vector<std::vector<Etcd::Kv>> ranges; ///< per op of the branch taken
};

TxnResult run(Etcd &etcd, const Txn &t)
{
	const auto j = etcd.call("kv/txn", {{"compare", t.compare}, {"success", t.success}, {"failure", t.failure}});
	TxnResult r;
	r.ok = j.value("succeeded", false);
	r.revision = i64(j["header"], "revision");
	if (j.contains("responses"))
		for (const auto &resp : j["responses"]) {
			std::vector<Etcd::Kv> kvs;
			if (resp.contains("response_range") && resp["response_range"].contains("kvs"))
				for (const auto &kv : resp["response_range"]["kvs"])
					kvs.push_back({unb64(kv.value("key", "")), unb64(kv.value("value", "")),
						       i64(kv, "create_revision"), i64(kv, "mod_revision"), i64(kv, "version"),
						       i64(kv, "lease")});
			r.ranges.push_back(kvs);
		}
	return r;
}

} // namespace

Ledger::Ledger(Etcd &etcd, std::string prefix) : etcd_(etcd), prefix_(std::move(prefix))
{
	while (prefix_.size() > 1 && prefix_.back() == '/')
		prefix_.pop_back();
}

std::string Ledger::extent_key_suffix(const std::string &dev, unsigned index)
{
	char b[16];
	std::snprintf(b, sizeof(b), "%06u", index);
	return "extents/" + dev + "/" + b;
}

std::string Ledger::owner_key(const std::string &host, const std::string &dev, unsigned index) const
{
	return key("owners/" + host + "/" + extent_key_suffix(dev, index).substr(std::string("extents/").size()));
}

bool Ledger::register_device(const Device &dev, bool check)
{
	if (dev.name.empty() || dev.name.find('/') != std::string::npos)
		throw Error::plain(dev.name, "invalid device name (no '/')", EINVAL);
	if (!dev.extent_bytes || dev.size_bytes % dev.extent_bytes || !dev.size_bytes || dev.extents() > 999999)
		throw Error::plain(dev.name, "the size must be a whole number of extents (at most 999999)", EINVAL);
	const std::string k = key("devices/" + dev.name);
	const nlohmann::json v = {{"size_bytes", dev.size_bytes}, {"extent_bytes", dev.extent_bytes}};
	std::vector<Etcd::Kv> kvs;
	if (check) {
		kvs = etcd_.range(k);
		if (kvs.empty())
			return true;
	} else {
		Txn t;
		t.absent(k).put(k, v.dump()).get_on_failure(k);
		const auto r = run(etcd_, t);
		if (r.ok)
			return true;
		kvs = r.ranges.at(0);
	}
	if (!kvs.empty() && nlohmann::json::parse(kvs[0].value, nullptr, false) == v)
		return false; /* the same definition: registered once, already */
	throw Error::plain(dev.name, "registered already with another size or extent size", EEXIST);
}

Device Ledger::device(const std::string &name)
{
	if (const auto it = devices_.find(name); it != devices_.end())
		return it->second;
	const auto kvs = etcd_.range(key("devices/" + name));
	if (kvs.empty())
		throw Error::plain(name, "no such shared device in the ledger", ENOENT);
	const auto v = nlohmann::json::parse(kvs[0].value);
	const Device d{name, v.value("size_bytes", uint64_t{0}), v.value("extent_bytes", uint64_t{0})};
	devices_[name] = d; /* registered once, never changed or removed */
	return d;
}

int64_t Ledger::join(const std::string &host, int64_t ttl_s)
{
	if (host.empty() || host.find('/') != std::string::npos)
		throw Error::plain(host, "invalid host name (no '/')", EINVAL);
	const int64_t lease = etcd_.lease_grant(ttl_s);
	const std::string k = key("hosts/" + host);
	Txn t;
	t.absent(k).put(k, nlohmann::json({{"lease", std::to_string(lease)}, {"since", std::time(nullptr)}}).dump(), lease)
		.get_on_failure(k);
	const auto r = run(etcd_, t);
	if (!r.ok) {
		etcd_.lease_revoke(lease);
		throw Error::plain(host, "a live instance of this host holds the ledger (lease " +
						 (r.ranges.at(0).empty() ? std::string("?") : std::to_string(r.ranges[0][0].lease)) + ")",
				   EBUSY);
	}
	return lease;
}

void Ledger::leave(const std::string &host, int64_t lease)
{
	(void)host;
	etcd_.lease_revoke(lease); /* hosts/<host> and load/<host>/ go with it */
}

Extent Ledger::parse_extent(const Etcd::Kv &kv) const
{
	Extent e;
	const std::string rest = kv.key.substr(prefix_.size() + std::string("/extents/").size());
	const auto slash = rest.rfind('/');
	e.device = rest.substr(0, slash);
	e.index = static_cast<unsigned>(std::stoul(rest.substr(slash + 1)));
	const auto v = nlohmann::json::parse(kv.value, nullptr, false);
	if (v.is_object()) {
		e.host = v.value("host", "");
		e.lease = v.contains("lease") ? std::stoll(v["lease"].get<std::string>()) : 0;
	}
	e.epoch = kv.create_revision;
	e.mod_revision = kv.mod_revision;
	return e;
}

std::vector<int64_t> Ledger::claim(const std::string &host, int64_t lease, const std::string &dev,
				   const std::vector<unsigned> &indexes)
{
	const Device d = device(dev);
	/*
	 * etcd takes at most 128 operations in each branch of a transaction
	 * (--max-txn-ops): two puts an extent, its key and its owner index.
	 */
	if (indexes.empty() || indexes.size() > max_claim)
		throw Error::plain(dev, "claim 1 to " + std::to_string(max_claim) + " extents at once", EINVAL);
	const std::string hk = key("hosts/" + host);
	const std::string value = nlohmann::json({{"host", host}, {"lease", std::to_string(lease)}}).dump();
	Txn t;
	t.lease_is(hk, lease).get_on_failure(hk);
	for (unsigned i : indexes) {
		if (i >= d.extents())
			throw Error::plain(dev, "no extent " + std::to_string(i) + " (it has " + std::to_string(d.extents()) + ")",
					   EINVAL);
		const std::string k = key(extent_key_suffix(dev, i));
		t.absent(k).put(k, value).put(owner_key(host, dev, i), "").get_on_failure(k);
	}
	const auto r = run(etcd_, t);
	if (r.ok)
		return std::vector<int64_t>(indexes.size(), r.revision);
	if (r.ranges.at(0).empty() || r.ranges[0][0].lease != lease)
		throw Error::plain(host, "stale: its lease no longer holds the ledger; offline its extents and join again",
				   ESTALE);
	for (size_t i = 1; i < r.ranges.size(); i++)
		if (!r.ranges[i].empty()) {
			const Extent e = parse_extent(r.ranges[i][0]);
			throw Error::plain(dev + " extent " + std::to_string(e.index), "held by " + e.host, EBUSY);
		}
	throw Error::plain(dev, "claim failed and nothing explains why", EAGAIN);
}

std::vector<unsigned> Ledger::claim_free(const std::string &host, int64_t lease, const std::string &dev, unsigned count)
{
	const Device d = device(dev);
	for (int attempt = 0; attempt < 50; attempt++) {
		std::set<unsigned> taken;
		/* names only: which are taken, not by whom */
		for (const auto &kv : etcd_.range(key("extents/" + dev + "/"), true, nullptr, true))
			taken.insert(parse_extent(kv).index);
		std::vector<unsigned> free;
		for (unsigned i = 0; i < d.extents(); i++)
			if (!taken.count(i))
				free.push_back(i);
		if (free.size() < count)
			throw Error::plain(dev, std::to_string(free.size()) + " extents free, " + std::to_string(count) +
							" wanted",
					   ENOSPC);
		/*
		 * Hosts racing for the same device would all pick its lowest free
		 * extents and all but one lose; each starts at its own place in
		 * the free list instead (a hash of its name, moved on by every
		 * lost race), so most races are not races at all.
		 */
		const size_t start = (std::hash<std::string>{}(host) + static_cast<size_t>(attempt) * 7919) % free.size();
		std::vector<unsigned> want;
		for (size_t k = 0; k < count; k++)
			want.push_back(free[(start + k) % free.size()]);
		std::sort(want.begin(), want.end());
		try {
			claim(host, lease, dev, want);
			return want;
		} catch (const Error &e) {
			if (e.code() != EBUSY)
				throw;
		}
	}
	throw Error::plain(dev, "claims kept losing races (50 tries)", EAGAIN);
}

void Ledger::release(const Extent &e)
{
	const std::string k = key(extent_key_suffix(e.device, e.index));
	Txn t;
	t.mod_is(k, e.mod_revision).del(k).del(owner_key(e.host, e.device, e.index));
	if (!run(etcd_, t).ok)
		throw Error::plain(e.device + " extent " + std::to_string(e.index),
				   "changed since it was read (fenced, or released already)", ESTALE);
}

void Ledger::reclaim(const Extent &e, const std::string &host, int64_t lease)
{
	const std::string k = key(extent_key_suffix(e.device, e.index));
	const std::string value = nlohmann::json({{"host", host}, {"lease", std::to_string(lease)}}).dump();
	Txn t;
	t.lease_is(key("hosts/" + host), lease).mod_is(k, e.mod_revision).put(k, value).put(owner_key(host, e.device, e.index), "");
	if (!run(etcd_, t).ok)
		throw Error::plain(e.device + " extent " + std::to_string(e.index),
				   "changed since it was read (fenced, released, or this host's lease is gone)", ESTALE);
}

int64_t Ledger::host_lease(const std::string &host)
{
	const auto h = etcd_.range(key("hosts/" + host));
	return h.empty() ? 0 : h[0].lease;
}

std::vector<Extent> Ledger::held(const std::string &host, int64_t lease, bool stale)
{
	std::vector<Extent> out;
	if (stale) {
		for (const auto &kv : etcd_.range(key("extents/"), true)) {
			Extent e = parse_extent(kv);
			if (e.host == host && e.lease != lease)
				out.push_back(e);
		}
		return out;
	}
	/*
	 * The index names the extents to read; the extent keys decide. An
	 * entry whose extent no longer records HOST and LEASE (released by
	 * a client older than the index, fenced, or a past life's) is left
	 * out here; release() and fence() remove entries as they go.
	 */
	const std::string ok = key("owners/" + host + "/");
	const auto idx = etcd_.range(ok, true, nullptr, true);
	for (size_t i = 0; i < idx.size(); i += 100) {
		Txn t;
		for (size_t k = i; k < std::min(idx.size(), i + 100); k++)
			t.get(key("extents/" + idx[k].key.substr(ok.size())));
		for (const auto &r : run(etcd_, t).ranges)
			for (const auto &kv : r) {
				Extent e = parse_extent(kv);
				if (e.host == host && e.lease == lease) {
					e.live = true;
					out.push_back(e);
				}
			}
	}
	return out;
}

std::vector<Extent> Ledger::scan(const std::string &host, int64_t lease, std::vector<Extent> *stale)
{
	std::vector<Extent> out;
	std::map<std::string, const Etcd::Kv *> by_key;
	const auto all = etcd_.range(key("extents/"), true);
	for (const auto &kv : all) {
		by_key[kv.key] = &kv;
		Extent e = parse_extent(kv);
		if (e.host == host && e.lease == lease) {
			e.live = true;
			out.push_back(e);
		} else if (e.host == host && stale) {
			stale->push_back(e);
		}
	}
	std::set<std::string> indexed;
	const std::string ok = key("owners/" + host + "/");
	const auto entries = etcd_.range(ok, true, nullptr, true);
	for (const auto &kv : entries)
		indexed.insert(kv.key);
	/*
	 * Entries whose extent is free or another host's (left by a client
	 * older than the index, or a downgrade): gone, each guarded by its
	 * extent being as read, so that held() stops reading them. A lost
	 * race leaves them for the next start; held() leaves them out anyway.
	 */
	Txn prune;
	for (const auto &kv : entries) {
		const std::string ek = key("extents/" + kv.key.substr(ok.size()));
		const auto it = by_key.find(ek);
		if (it == by_key.end())
			prune.absent(ek).del(kv.key);
		else if (parse_extent(*it->second).host != host)
			prune.mod_is(ek, it->second->mod_revision).del(kv.key);
		if (prune.compare.size() == 100) {
			run(etcd_, prune);
			prune = Txn();
		}
	}
	if (!prune.compare.empty())
		run(etcd_, prune);
	/* each entry guarded by its extent being as read, in batches under 128 */
	std::vector<const Extent *> missing;
	for (const auto &e : out)
		if (!indexed.count(owner_key(host, e.device, e.index)))
			missing.push_back(&e);
	for (size_t i = 0; i < missing.size(); i += 100) {
		Txn t;
		for (size_t k = i; k < std::min(missing.size(), i + 100); k++)
			t.mod_is(key(extent_key_suffix(missing[k]->device, missing[k]->index)), missing[k]->mod_revision)
				.put(owner_key(host, missing[k]->device, missing[k]->index), "");
		if (!run(etcd_, t).ok)
			throw Error::plain(host, "its extents changed while their index was written", ESTALE);
	}
	return out;
}

std::vector<Extent> Ledger::fence(const std::string &host, const std::string &by)
{
	const std::string hk = key("hosts/" + host);
	std::vector<Extent> gone;
	for (int attempt = 0; attempt < 10; attempt++) {
		const auto h = etcd_.range(hk);
		if (!h.empty())
			throw Error::plain(host, "is alive (lease " + std::to_string(h[0].lease) +
							 " holds the ledger): fence only a host that is down and cut off",
					   EBUSY);
		std::vector<std::pair<Etcd::Kv, Extent>> mine;
		for (const auto &kv : etcd_.range(key("extents/"), true)) {
			Extent e = parse_extent(kv);
			if (e.host == host)
				mine.emplace_back(kv, e);
		}
		/*
		 * In batches under etcd's 128 operations a transaction; each is
		 * guarded by the host still being down and every extent being
		 * as read, so a batch that lost a race is read and tried again.
		 */
		bool raced = false;
		for (size_t i = 0; i < mine.size() && !raced; i += 60) {
			Txn t;
			t.absent(hk);
			const size_t end = std::min(mine.size(), i + 60);
			for (size_t k = i; k < end; k++)
				t.mod_is(mine[k].first.key, mine[k].first.mod_revision)
					.del(mine[k].first.key)
					.del(owner_key(host, mine[k].second.device, mine[k].second.index));
			if (run(etcd_, t).ok)
				for (size_t k = i; k < end; k++)
					gone.push_back(mine[k].second);
			else
				raced = true;
		}
		if (raced)
			continue;
		/* entries left by clients older than the index: none may outlive the fence */
		Txn rest;
		rest.absent(hk).del_prefix(key("owners/" + host + "/"));
		if (!run(etcd_, rest).ok)
			continue; /* the host came back meanwhile: the top of the loop says so */
		etcd_.call("kv/put", {{"key", b64(key("fences/" + host))},
				      {"value", b64(nlohmann::json({{"by", by}, {"time", std::time(nullptr)},
								  {"extents", gone.size()}})
							    .dump())}});
		return gone;
	}
	throw Error::plain(host, "its extents kept changing during the fence (10 tries)", EAGAIN);
}

Status Ledger::status()
{
	Status s;
	int64_t rev = 0;
	for (const auto &kv : etcd_.range(key("devices/"), true, &rev)) {
		const auto v = nlohmann::json::parse(kv.value, nullptr, false);
		if (v.is_object())
			s.devices.push_back({kv.key.substr(key("devices/").size()), v.value("size_bytes", uint64_t{0}),
					     v.value("extent_bytes", uint64_t{0})});
	}
	s.revision = rev;
	std::map<std::string, int64_t> live;
	for (const auto &kv : etcd_.range(key("hosts/"), true, &rev)) {
		Host h{kv.key.substr(key("hosts/").size()), kv.lease, -1};
		live[h.name] = h.lease;
		s.hosts.push_back(h);
	}
	for (const auto &kv : etcd_.range(key("extents/"), true, &rev)) {
		Extent e = parse_extent(kv);
		auto it = live.find(e.host);
		e.live = it != live.end() && it->second == e.lease;
		s.extents.push_back(e);
	}
	for (auto &h : s.hosts)
		h.ttl = etcd_.lease_ttl(h.lease);
	return s;
}

void Ledger::publish_load(const std::string &host, int64_t lease, const std::string &dev, uint64_t af,
			  uint64_t allocated_bytes)
{
	etcd_.call("kv/put", {{"key", b64(key("load/" + host + "/" + dev))},
			      {"value", b64(nlohmann::json({{"af", af}, {"allocated_bytes", allocated_bytes}}).dump())},
			      {"lease", std::to_string(lease)}});
}

std::vector<Ledger::Load> Ledger::load()
{
	std::map<std::string, Load> by;
	for (const auto &kv : etcd_.range(key("load/"), true)) {
		const std::string rest = kv.key.substr(key("load/").size());
		const auto slash = rest.find('/');
		if (slash == std::string::npos)
			continue;
		const auto v = nlohmann::json::parse(kv.value, nullptr, false);
		if (!v.is_object())
			continue;
		Load &l = by[rest.substr(slash + 1)];
		l.device = rest.substr(slash + 1);
		l.af += v.value("af", uint64_t{0});
		l.allocated_bytes += v.value("allocated_bytes", uint64_t{0});
		l.hosts++;
	}
	std::vector<Load> out;
	for (auto &[k, v] : by)
		out.push_back(v);
	return out;
}

std::vector<std::string> Ledger::smart_idle(const std::vector<std::string> &candidates)
{
	if (candidates.empty() || candidates.size() > PM_MAX_POOLS)
		throw Error::plain("smart idle", "1 to 64 candidate devices", EINVAL);
	std::map<std::string, Load> by;
	for (const auto &l : load())
		by[l.device] = l;
	std::vector<pm_pool_view> views(candidates.size());
	for (size_t i = 0; i < candidates.size(); i++) {
		const Load &l = by[candidates[i]];
		views[i].id = static_cast<u32>(i);
		views[i].distance = 0;
		views[i].allocated = l.allocated_bytes;
		views[i].af = l.af;
	}
	std::vector<u32> order(candidates.size());
	const unsigned n = pm_pool_order(PM_SELECT_SMART_IDLE, views.data(), static_cast<unsigned>(views.size()), 0, 0,
					 order.data());
	std::vector<std::string> out;
	for (unsigned i = 0; i < n; i++)
		out.push_back(candidates[order[i]]);
	return out;
}

} // namespace poolmem::cluster
