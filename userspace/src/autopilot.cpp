// The DRAM autopilot's measures and plan around the shared decision
// (pm_autopilot.c): see autopilot.hpp.
#include <poolmem/autopilot.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <policy/pm_autopilot.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace poolmem::autopilot {

namespace {

std::string where_in(const std::string &file, const toml::source_region &r)
{
	return file + ":" + std::to_string(r.begin.line);
}

/// A bound "PCT%" of SIZE_BYTES or a SIZE; nullopt if malformed or above the size.
std::optional<uint64_t> bound_bytes(const std::string &text, uint64_t size_bytes)
{
	if (!text.empty() && text.back() == '%') {
		char *end = nullptr;
		errno = 0;
		const unsigned long pct = std::strtoul(text.c_str(), &end, 10);
		if (text.size() < 2 || errno || end != text.c_str() + text.size() - 1 || pct > 100)
			return std::nullopt;
		/* 128-bit: a 64 TiB VM times 100 still fits */
		return static_cast<uint64_t>(static_cast<unsigned __int128>(size_bytes) * pct / 100);
	}
	auto b = parse_size(text);
	if (!b || *b > size_bytes)
		return std::nullopt;
	return b;
}

bool bound_ok(const std::string &text)
{
	return text.empty() || bound_bytes(text, UINT64_MAX).has_value();
}

/// KEY (min, max or slo) at AT set to S into B; Error naming AT if bad.
void check_bound(const std::string &at, const std::string &key, const std::optional<std::string> &s, Bounds &b)
{
	if (key != "min" && key != "max" && key != "slo")
		throw Error::plain(at, "unknown key (min, max, slo)", EINVAL);
	if (!s)
		throw Error::plain(at, "not a string (\"25%\", \"2G\")", EINVAL);
	if (key == "slo") {
		if (!parse_permille(*s))
			throw Error::plain(at, "'" + *s + "' is no share of accesses (0%..100%)", EINVAL);
		b.slo = *s;
	} else {
		if (!bound_ok(*s))
			throw Error::plain(at, "'" + *s + "' is no size or percentage of the VM's size", EINVAL);
		(key == "min" ? b.min : b.max) = *s;
	}
}

void read_bounds(const std::string &file, const toml::table &t, const std::string &where, Bounds &b)
{
	for (auto &&[k, v] : t) {
		const std::string key(k.str());
		check_bound(where_in(file, v.source()) + ": " + where + "." + key, key, v.value<std::string>(), b);
	}
}

/// The tables [PREFIX]KEY.NAME of node V (at AT) into C's vms or profiles
/// (KEY), each key over what the map holds; Error naming the table.
void read_bound_tables(const std::string &file, const toml::node &v, const std::string &at, const std::string &prefix,
		       const std::string &key, Config &c)
{
	const toml::table *t = v.as_table();
	if (!t)
		throw Error::plain(at, "not a table", EINVAL);
	for (auto &&[name, bt] : *t) {
		const toml::table *b = bt.as_table();
		const std::string n(name.str());
		if (!b)
			throw Error::plain(at + "." + n, "not a table", EINVAL);
		read_bounds(file, *b, prefix + key + "." + n, (key == "vms" ? c.vms : c.profiles)[n]);
	}
}

uint64_t round_up(uint64_t v, uint64_t c) { return (v + c - 1) / c * c; }
uint64_t round_down(uint64_t v, uint64_t c) { return v / c * c; }

} // namespace

std::optional<uint32_t> parse_permille(std::string_view text)
{
	std::string s(text);
	if (s.empty() || s.back() != '%')
		return std::nullopt;
	s.pop_back();
	char *end = nullptr;
	errno = 0;
	const double v = std::strtod(s.c_str(), &end);
	if (s.empty() || errno || *end || !std::isfinite(v) || v < 0 || v > 100)
		return std::nullopt;
	return static_cast<uint32_t>(std::lround(v * 10));
}

Config parse_config(std::string_view text, const std::string &file)
{
	Config c;
	toml::table root;
	try {
		root = toml::parse(text, file);
	} catch (const toml::parse_error &e) {
		throw Error::plain(where_in(file, e.source()), std::string(e.description()), EINVAL);
	}
	const toml::table *ap = root["autopilot"].as_table();
	if (!ap)
		return c;
	Bounds defaults = c.defaults;
	for (auto &&[k, v] : *ap) {
		const std::string key(k.str());
		const std::string at = where_in(file, v.source()) + ": autopilot." + key;
		if (key == "vms" || key == "profiles") {
			read_bound_tables(file, v, at, "autopilot.", key, c);
			continue;
		}
		const auto s = v.value<std::string>();
		const auto i = v.value<int64_t>();
		if (key == "budget" || key == "headroom" || key == "rate") {
			const auto b = s ? parse_size(*s) : std::nullopt;
			if (!b || (key == "rate" && !*b))
				throw Error::plain(at, "'" + (s ? *s : std::string("?")) + "' is no size (\"6G\")", EINVAL);
			(key == "budget" ? c.budget : key == "headroom" ? c.headroom : c.rate) = *b;
		} else if (key == "interval") {
			const auto secs = s ? parse_duration(*s) : std::nullopt;
			if (!secs || *secs <= 0)
				throw Error::plain(at, "'" + (s ? *s : std::string("?")) + "' is no duration (\"5s\")", EINVAL);
			c.interval_s = *secs;
		} else if (key == "windows" || key == "margin" || key == "hysteresis") {
			if (!i || *i < (key == "windows" ? 1 : 0) || *i > (key == "windows" ? 1000 : 100))
				throw Error::plain(at, "not an integer in range (windows 1..1000, margin and hysteresis "
						       "0..100 percent)",
						   EINVAL);
			(key == "windows" ? c.windows : key == "margin" ? c.margin_pct : c.hysteresis_pct) =
				static_cast<uint32_t>(*i);
		} else if (key == "reclaim") {
			if (!s || (*s != "lazy" && *s != "eager"))
				throw Error::plain(at, "'" + (s ? *s : std::string("?")) + "' is neither lazy nor eager",
						   EINVAL);
			c.eager = *s == "eager";
		} else if (key == "min" || key == "max" || key == "slo") {
			check_bound(at, key, s, defaults);
		} else {
			throw Error::plain(at, "unknown key (budget, headroom, rate, interval, windows, margin, hysteresis, "
					       "reclaim, min, max, slo, vms, profiles)",
					   EINVAL);
		}
	}
	c.defaults = defaults;
	return c;
}

Config read_config(const std::filesystem::path &path)
{
	std::ifstream in(path);
	if (!in) {
		if (errno == ENOENT)
			return Config{};
		throw Error(path.string(), "open", errno);
	}
	std::stringstream ss;
	ss << in.rdbuf();
	return parse_config(ss.str(), path.string());
}

namespace {

const char *kind_key(Kind k) { return k == Kind::vm ? "vms" : "profiles"; }

/// STORE's text parsed (absent: an empty table). Error naming the file.
toml::table read_store(const std::filesystem::path &store)
{
	std::ifstream in(store);
	if (!in) {
		if (errno == ENOENT)
			return {};
		throw Error(store.string(), "open", errno);
	}
	std::stringstream ss;
	ss << in.rdbuf();
	try {
		return toml::parse(ss.str(), store.string());
	} catch (const toml::parse_error &e) {
		throw Error::plain(where_in(store.string(), e.source()), std::string(e.description()), EINVAL);
	}
}

/// The store's tables into C's maps, key by key over C's, each bound checked.
void read_store_into(const std::filesystem::path &store, Config &c)
{
	const toml::table root = read_store(store);
	const std::string file = store.string();
	for (auto &&[k, v] : root) {
		const std::string key(k.str());
		const std::string at = where_in(file, v.source()) + ": " + key;
		if (key != "vms" && key != "profiles")
			throw Error::plain(at, "unknown table (vms, profiles)", EINVAL);
		read_bound_tables(file, v, at, "", key, c);
	}
}

/// An exclusive lock on STORE's ".lock" sibling, released by the destructor.
class StoreLock {
      public:
	explicit StoreLock(const std::filesystem::path &store)
	{
		std::error_code ec;
		std::filesystem::create_directories(store.parent_path(), ec);
		const std::string lock = store.string() + ".lock";
		fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd_ < 0)
			throw Error(lock, "cannot open", errno);
		if (::flock(fd_, LOCK_EX) < 0) {
			const int e = errno;
			::close(fd_);
			throw Error(lock, "cannot lock", e);
		}
	}
	~StoreLock() { ::close(fd_); }
	StoreLock(const StoreLock &) = delete;
	StoreLock &operator=(const StoreLock &) = delete;

      private:
	int fd_ = -1;
};

/// ROOT written to STORE whole: a temporary file, then rename().
void write_store(const std::filesystem::path &store, const toml::table &root)
{
	const std::string tmp = store.string() + ".tmp";
	{
		std::ofstream out(tmp, std::ios::trunc);
		out << "# Written by poolctl (vm create, vm set, profile create --autopilot-*).\n"
		       "# Read by poolctl autopilot over [autopilot] of /etc/poolmem/poolmem.toml.\n"
		    << root << "\n";
		out.flush();
		if (!out)
			throw Error(tmp, "cannot write", errno ? errno : EIO);
	}
	std::error_code ec;
	std::filesystem::rename(tmp, store, ec);
	if (ec)
		throw Error(store.string(), "cannot replace", ec.value());
}

} // namespace

Config with_store(const Config &cfg, const std::filesystem::path &store)
{
	Config c = cfg;
	read_store_into(store, c);
	return c;
}

void check_bounds(const std::string &who, const Bounds &b, uint64_t size)
{
	Bounds scratch;
	if (!b.min.empty())
		check_bound(who + ": autopilot min", "min", b.min, scratch);
	if (!b.max.empty())
		check_bound(who + ": autopilot max", "max", b.max, scratch);
	if (!b.slo.empty())
		check_bound(who + ": autopilot SLO", "slo", b.slo, scratch);
	if (size) {
		for (auto [what, v] : {std::pair{"min", &b.min}, {"max", &b.max}})
			if (!v->empty() && !bound_bytes(*v, size))
				throw Error::plain(who,
						   std::string("autopilot ") + what + " '" + *v + "' is above the VM's size " +
							   format_size(size),
						   EINVAL);
		const uint64_t mn = b.min.empty() ? 0 : *bound_bytes(b.min, size);
		const uint64_t mx = b.max.empty() ? size : *bound_bytes(b.max, size);
		if (mn > mx)
			throw Error::plain(who, "autopilot min " + b.min + " is above max " + (b.max.empty() ? "100%" : b.max),
					   EINVAL);
		return;
	}
	/* a profile: its VMs' sizes come later; compare like with like */
	if (b.min.empty() || b.max.empty() || (b.min.back() == '%') != (b.max.back() == '%'))
		return;
	const uint64_t scale = b.min.back() == '%' ? 100 : UINT64_MAX;
	if (*bound_bytes(b.min, scale) > *bound_bytes(b.max, scale))
		throw Error::plain(who, "autopilot min " + b.min + " is above max " + b.max, EINVAL);
}

Bounds store_bounds(const std::filesystem::path &store, Kind kind, const std::string &name, const Bounds &b,
		    uint64_t size, bool replace)
{
	StoreLock lock(store);
	toml::table root = read_store(store);
	Config now;
	/* a store that does not read is not rewritten: the error names it */
	read_store_into(store, now);
	Bounds merged = b;
	if (!replace)
		if (const auto &m = kind == Kind::vm ? now.vms : now.profiles; m.count(name)) {
			const Bounds &old = m.at(name);
			if (merged.min.empty())
				merged.min = old.min;
			if (merged.max.empty())
				merged.max = old.max;
			if (merged.slo.empty())
				merged.slo = old.slo;
		}
	check_bounds(name, merged, size);
	if (!root.contains(kind_key(kind)))
		root.insert(kind_key(kind), toml::table{});
	toml::table &t = *root[kind_key(kind)].as_table();
	t.erase(name);
	toml::table entry;
	for (auto [key, v] : {std::pair{"min", &merged.min}, {"max", &merged.max}, {"slo", &merged.slo}})
		if (!v->empty())
			entry.insert(key, *v);
	if (!entry.empty())
		t.insert(name, std::move(entry));
	write_store(store, root);
	return merged;
}

void forget_bounds(const std::filesystem::path &store, Kind kind, const std::string &name)
{
	if (!std::filesystem::exists(store))
		return;
	StoreLock lock(store);
	toml::table root = read_store(store);
	toml::table *t = root[kind_key(kind)].as_table();
	if (!t || !t->contains(name))
		return;
	t->erase(name);
	write_store(store, root);
}

Decision decide(const Config &cfg, const std::vector<DomainStats> &domains, History &hist)
{
	Decision out;
	if (!cfg.budget)
		throw Error::plain("autopilot", "no budget: set budget in [autopilot] of poolmem.toml, or --budget",
				   EINVAL);
	if (cfg.headroom >= cfg.budget)
		throw Error::plain("autopilot", "headroom " + format_size(cfg.headroom) + " leaves nothing of budget " +
							format_size(cfg.budget),
				   EINVAL);
	out.budget = cfg.budget - cfg.headroom;
	out.step = static_cast<uint64_t>(static_cast<double>(cfg.rate) * cfg.interval_s);

	std::map<std::string, History::Seen> seen;
	for (const auto &d : domains) {
		Vm v;
		v.name = d.name;
		v.profile = d.profile;
		v.size = d.size_bytes;
		v.chunk = d.chunk_bytes ? d.chunk_bytes : 2ULL << 20;
		v.local_quota = d.local_quota_bytes;
		v.pool_quota = d.pool_quota_bytes;
		v.local_bytes = d.local_bytes;
		v.untouched = v.size - std::min(v.size, d.chunks * v.chunk);
		v.hot_now = d.hot_chunks * v.chunk;

		/* bounds: the VM's own, else its profile's, else the defaults; each key alone */
		Bounds b = cfg.defaults;
		auto over = [&](const Bounds &o) {
			if (!o.min.empty())
				b.min = o.min;
			if (!o.max.empty())
				b.max = o.max;
			if (!o.slo.empty())
				b.slo = o.slo;
		};
		if (auto p = cfg.profiles.find(d.profile); !d.profile.empty() && p != cfg.profiles.end())
			over(p->second);
		if (auto p = cfg.vms.find(d.name); p != cfg.vms.end())
			over(p->second);
		const auto mn = bound_bytes(b.min, v.size), mx = bound_bytes(b.max, v.size);
		if (!mn)
			throw Error::plain(d.name, "autopilot min '" + b.min + "' is above the VM's size " + format_size(v.size),
					   EINVAL);
		if (!mx)
			throw Error::plain(d.name, "autopilot max '" + b.max + "' is above the VM's size " + format_size(v.size),
					   EINVAL);
		v.min = round_up(*mn, v.chunk);
		v.max = std::max(round_down(*mx, v.chunk), std::min(v.min, v.size));
		if (v.min > v.size)
			v.min = v.size;
		if (*mn > *mx)
			throw Error::plain(d.name, "autopilot min " + format_size(*mn) + " is above max " + format_size(*mx),
					   EINVAL);
		if (!b.slo.empty())
			v.slo_permille = *parse_permille(b.slo);

		/* measures: this window's against the last reading's counters */
		auto &s = seen[d.name];
		if (auto h = hist.vms.find(d.name); h != hist.vms.end())
			s = h->second;
		const uint64_t dh = d.sample_hits >= s.hits ? d.sample_hits - s.hits : 0;
		const uint64_t dp = d.sample_hits_pool >= s.pool_hits ? d.sample_hits_pool - s.pool_hits : 0;
		v.pool_permille = dh ? static_cast<uint32_t>(std::min<uint64_t>(1000, dp * 1000 / dh)) : 0;
		s.hits = d.sample_hits;
		s.pool_hits = d.sample_hits_pool;
		s.hot.push_back(v.hot_now);
		while (s.hot.size() > cfg.windows)
			s.hot.pop_front();
		v.hot = *std::max_element(s.hot.begin(), s.hot.end());

		if (d.pinnable)
			v.fixed = "pinnable";
		else if (!d.windows.empty())
			v.fixed = "znuma";
		else if (d.tiering == "off")
			v.fixed = "tiering off";
		out.vms.push_back(std::move(v));
	}
	hist.vms = std::move(seen); /* domains gone are forgotten */

	std::vector<pm_ap_vm> in(out.vms.size());
	for (size_t i = 0; i < in.size(); i++) {
		const Vm &v = out.vms[i];
		in[i] = pm_ap_vm{};
		in[i].size = v.size;
		in[i].min = v.min;
		in[i].max = v.max;
		in[i].local_quota = v.local_quota;
		in[i].chunk = v.chunk;
		in[i].hot = v.hot;
		in[i].untouched = v.untouched;
		in[i].local_used = v.local_bytes;
		in[i].pool_permille = v.pool_permille;
		in[i].slo_permille = v.slo_permille;
		in[i].flags = v.fixed.empty() ? 0 : PM_AP_F_FIXED;
	}
	pm_ap_host h{};
	h.budget = out.budget;
	h.step = out.step;
	h.margin_pct = cfg.margin_pct;
	h.hysteresis_pct = cfg.hysteresis_pct;
	h.eager = cfg.eager;
	unsigned int bad = 0;
	switch (pm_ap_decide(&h, in.data(), static_cast<unsigned int>(in.size()), &bad)) {
	case PM_AP_OK:
		break;
	case PM_AP_ERR_BUDGET: {
		uint64_t floor = 0;
		for (const auto &v : out.vms)
			floor += v.fixed.empty() ? v.min : v.local_quota;
		throw Error::plain("autopilot", "budget " + format_size(out.budget) + " (less headroom) is below the " +
							"sum of the VMs' mins and fixed quotas, " + format_size(floor),
				   ENOSPC);
	}
	case PM_AP_ERR_SLO:
		throw Error::plain(out.vms[bad].name, "autopilot SLO above 100%", EINVAL);
	case PM_AP_ERR_BOUNDS:
		throw Error::plain(out.vms[bad].name, "autopilot bounds: min " + format_size(out.vms[bad].min) +
							      ", max " + format_size(out.vms[bad].max) + ", size " +
							      format_size(out.vms[bad].size),
				   EINVAL);
	}
	for (size_t i = 0; i < in.size(); i++) {
		Vm &v = out.vms[i];
		v.want = in[i].want;
		v.target = in[i].target;
		v.reason = v.fixed.empty() ? pm_ap_reason_name(in[i].reason) : v.fixed;
		out.quota_sum += v.local_quota;
		out.target_sum += v.target;
	}
	return out;
}

std::vector<Change> plan(const Decision &d)
{
	std::vector<Change> shrinks, grows;
	for (const auto &v : d.vms) {
		if (!v.fixed.empty() || v.target == v.local_quota)
			continue;
		Change c{v.name, v.local_quota, v.target, v.pool_quota};
		if (v.target < v.local_quota) {
			/* what leaves local needs pool quota: local + pool must cover the size */
			c.pool = std::max(v.pool_quota, v.size - v.target);
			shrinks.push_back(c);
		} else {
			grows.push_back(c);
		}
	}
	shrinks.insert(shrinks.end(), grows.begin(), grows.end());
	return shrinks;
}

nlohmann::json to_json(const Vm &v)
{
	return {{"name", v.name},
		{"profile", v.profile},
		{"size_bytes", v.size},
		{"chunk_bytes", v.chunk},
		{"local_quota_bytes", v.local_quota},
		{"pool_quota_bytes", v.pool_quota},
		{"local_bytes", v.local_bytes},
		{"min_bytes", v.min},
		{"max_bytes", v.max},
		{"hot_bytes", v.hot},
		{"hot_now_bytes", v.hot_now},
		{"untouched_bytes", v.untouched},
		{"pool_permille", v.pool_permille},
		{"slo_permille", v.slo_permille},
		{"slo_broken", v.slo_broken()},
		{"fixed", v.fixed.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.fixed)},
		{"want_bytes", v.want},
		{"target_bytes", v.target},
		{"freed_bytes", static_cast<int64_t>(v.local_quota) - static_cast<int64_t>(v.target)},
		{"reason", v.reason}};
}

nlohmann::json to_json(const Decision &d)
{
	nlohmann::json vms = nlohmann::json::array();
	for (const auto &v : d.vms)
		vms.push_back(to_json(v));
	return {{"budget_bytes", d.budget},
		{"step_bytes", d.step},
		{"local_quota_sum_bytes", d.quota_sum},
		{"target_sum_bytes", d.target_sum},
		{"decision_sha256", decision_source_sha256()},
		{"vms", vms}};
}

const char *decision_source_sha256() { return PM_AUTOPILOT_SHA256; }

} // namespace poolmem::autopilot
