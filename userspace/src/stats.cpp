#include "poolmem/stats.hpp"
#include "poolmem/kmod.hpp"

#include "sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <cstdio>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

/// A file vanished mid-read: the object went away.
/// A file of a pool or domain could not be read (the object may be gone).
struct Gone {
	std::string file;
	int err = 0;
};

uint64_t to_u64(std::string_view s, std::string_view whole)
{
	uint64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size())
		throw std::invalid_argument("malformed number in '" + std::string(whole) + "'");
	return v;
}

/// An object's directory, @name in the opened directory @parent: readers of
/// many objects open their parent once and every file relative to it.
struct At {
	const sysfs::Dir &parent;
	std::string prefix; ///< "<name>/"
	At(const sysfs::Dir &p, const std::string &name) : parent(p), prefix(name + "/") {}
	std::optional<std::string> read(const char *file) const { return parent.read(prefix + file); }
};

uint64_t u64(const At &at, const char *file)
{
	auto s = at.read(file);
	if (!s)
		throw Gone{at.prefix + file, errno};
	return to_u64(*s, at.prefix + file + ": " + *s);
}

std::string str(const At &at, const char *file)
{
	auto v = at.read(file);
	if (!v)
		throw Gone{at.prefix + file, errno};
	return *v;
}

/// Set @obj's @fields, in the stat file's documented order, from @dir's
/// stat (later kernels may append fields; fewer is an error).
template <class T>
std::vector<uint64_t> stat_into(const At &dir, T &obj, std::initializer_list<uint64_t T::*> fields)
{
	auto v = parse_u64_list(str(dir, "stat"));
	if (v.size() < fields.size())
		throw std::invalid_argument(dir.prefix + "stat has " + std::to_string(v.size()) +
					    " fields, expected " + std::to_string(fields.size()));
	size_t i = 0;
	for (auto f : fields)
		obj.*f = v[i++];
	return v;
}

PoolStats pool_from(const At &dir, const std::string &name)
{
	PoolStats p;
	p.name = name;
	p.id = static_cast<unsigned>(u64(dir, "id"));
	p.node = static_cast<int>(u64(dir, "node"));
	p.tier = str(dir, "tier");
	p.overcommit_pct = u64(dir, "overcommit_pct");
	p.pinnable_bytes = u64(dir, "pinnable_bytes");
	/* Documentation/ABI/testing/sysfs-kernel-poolmem, pools/<pool>/stat */
	stat_into(dir, p,
		  {&PoolStats::capacity_bytes, &PoolStats::free_bytes, &PoolStats::allocated_bytes,
		   &PoolStats::committed_bytes, &PoolStats::chunks, &PoolStats::allocations,
		   &PoolStats::faults, &PoolStats::failures, &PoolStats::access_factor,
		   &PoolStats::moved_in, &PoolStats::moved_out, &PoolStats::accesses,
		   &PoolStats::moved_bytes, &PoolStats::move_retries, &PoolStats::move_pins,
		   &PoolStats::samples, &PoolStats::promotions, &PoolStats::demotions,
		   &PoolStats::zero_reserve_bytes, &PoolStats::zero_reserve_refills, &PoolStats::zero_reserve_hits,
		   &PoolStats::zero_reserve_misses, &PoolStats::memory_errors, &PoolStats::soft_offlines});
	p.zero_reserve_target_bytes = u64(dir, "zero_reserve_target_bytes");
	/* discarded_bytes: ABI 8; absent before */
	if (auto s = dir.read("discarded_bytes"))
		p.discarded_bytes = to_u64(*s, dir.prefix + "discarded_bytes: " + *s);
	/* rebalanced_chunks, contended: ABI 15; absent before */
	if (auto s = dir.read("rebalanced_chunks"))
		p.rebalanced_chunks = to_u64(*s, dir.prefix + "rebalanced_chunks: " + *s);
	if (auto s = dir.read("contended"))
		p.contended = to_u64(*s, dir.prefix + "contended: " + *s) != 0;
	p.zero_reserve = str(dir, "zero_reserve");
	while (!p.zero_reserve.empty() && p.zero_reserve.back() == '\n')
		p.zero_reserve.pop_back();
	/* error_policy, degraded: ABI 7 (memory errors); absent before */
	p.error_policy = dir.read("error_policy").value_or("report\n");
	while (!p.error_policy.empty() && p.error_policy.back() == '\n')
		p.error_policy.pop_back();
	p.degraded = dir.read("degraded").value_or("0").rfind("1", 0) == 0;
	p.state = str(dir, "state");
	while (!p.state.empty() && p.state.back() == '\n')
		p.state.pop_back();
	p.window_counts = parse_u64_list(str(dir, "window_counts"));
	return p;
}

/// What a domain keeps for life: read once per domain by DomainReader.
void domain_fixed_from(const At &dir, DomainStats &d)
{
	d.size_bytes = u64(dir, "size_bytes");
	d.chunk_bytes = u64(dir, "chunk_bytes");
	/* id: ABI 12; absent before */
	if (const auto id = dir.read("id"))
		d.id = static_cast<uint32_t>(std::strtoul(id->c_str(), nullptr, 10));
	d.home_node = static_cast<int>(u64(dir, "home_node"));
	d.pinnable = u64(dir, "pinnable") != 0;
	/* profile, file, creator: ABI 2 (the poolmem file system); absent before */
	d.profile = dir.read("profile").value_or("");
	d.file = dir.read("file").value_or("/" + d.name);
	d.creator = dir.read("creator").value_or("");
	/* windows: znuma (2026-12); absent before, empty for other domains */
	{
		std::istringstream in(dir.read("windows").value_or(""));
		DomainStats::Window w;
		while (in >> w.name >> w.base >> w.size)
			d.windows.push_back(w);
	}
	for (auto *s : {&d.profile, &d.file, &d.creator})
		while (!s->empty() && s->back() == '\n')
			s->pop_back();
}

/// What changes: stat, pool_chunks, fault_latency_histogram, and the
/// quotas and policies (POOLMEM_DOMAIN_SET changes them while a VM runs).
void domain_counters_from(const At &dir, DomainStats &d, bool histograms)
{
	d.local_quota_bytes = u64(dir, "local_quota_bytes");
	d.pool_quota_bytes = u64(dir, "pool_quota_bytes");
	d.tier_policy = str(dir, "tier_policy");
	d.pool_select = str(dir, "pool_select");
	for (auto *s : {&d.tier_policy, &d.pool_select})
		while (!s->empty() && s->back() == '\n')
			s->pop_back();
	/* Documentation/ABI/testing/sysfs-class-poolmem, <domain>/stat */
	const auto v = stat_into(dir, d,
		  {&DomainStats::local_bytes, &DomainStats::pool_bytes, &DomainStats::chunks,
		   &DomainStats::faults, &DomainStats::sigbus, &DomainStats::discards,
		   &DomainStats::fault_latency_sum_ns, &DomainStats::retired_chunks,
		   &DomainStats::moves, &DomainStats::move_retries, &DomainStats::move_pins,
		   &DomainStats::samples, &DomainStats::sample_hits, &DomainStats::promotions,
		   &DomainStats::demotions, &DomainStats::tiering_scan_ns, &DomainStats::revoked_chunks,
		   &DomainStats::memory_errors});
	/* sample_hits_pool: ABI 14, appended; absent before */
	if (v.size() > 18)
		d.sample_hits_pool = v[18];
	/* rebalanced_chunks: ABI 15, appended */
	if (v.size() > 19)
		d.rebalanced_chunks = v[19];
	/* moves_pending_bytes: ABI 15; absent before */
	if (const auto m = dir.read("moves_pending_bytes"))
		d.moves_pending_bytes = std::strtoull(m->c_str(), nullptr, 10);
	{
		std::istringstream t(str(dir, "tiering"));
		if (!(t >> d.tiering >> d.scan_rate >> d.hot_ms))
			throw std::invalid_argument(dir.prefix + "tiering: malformed");
		const auto heat = parse_u64_list(str(dir, "heat"));
		if (heat.size() < 2)
			throw std::invalid_argument(dir.prefix + "heat: malformed");
		d.hot_chunks = heat[0];
		d.cold_chunks = heat[1];
	}
	d.pool_chunks = parse_pool_chunks(dir.read("pool_chunks").value_or(""));
	if (histograms)
		d.fault_latency_histogram = parse_u64_list(str(dir, "fault_latency_histogram"));
}

/*
 * A file that could not be read while its object's directory is still
 * there: a partial read, not an object that went away. Recorded in
 * @errors (when given) as one line naming the file and the cause.
 */
void note_partial(const sysfs::Dir &parent, const std::string &name, const Gone &g,
		  std::vector<std::string> *errors)
{
	/*
	 * ENOENT: the file went away, so its object is going: device_del()
	 * removes a device's attribute files before its directory, so the
	 * directory may still be there for a moment (exporter-live's churn
	 * scraped one such domain).
	 */
	if (errors && g.err != ENOENT && parent.identity(name))
		errors->push_back(g.file + ": cannot read: " + std::strerror(g.err ? g.err : EIO));
}

std::optional<PoolStats> read_pool_in(const sysfs::Dir &pools, const std::string &name,
				      std::vector<std::string> *errors = nullptr)
{
	try {
		return pool_from(At(pools, name), name);
	} catch (const Gone &g) {
		note_partial(pools, name, g, errors);
		return std::nullopt;
	}
}

} // namespace

std::map<std::string, uint64_t> parse_pool_chunks(std::string_view text)
{
	std::map<std::string, uint64_t> out;
	std::istringstream in{std::string(text)};
	std::string line;
	while (std::getline(in, line)) {
		if (line.empty())
			continue;
		auto sp = line.find(' ');
		if (sp == std::string::npos || sp == 0)
			throw std::invalid_argument("malformed pool_chunks line '" + line + "'");
		out[line.substr(0, sp)] = to_u64(std::string_view(line).substr(sp + 1), line);
	}
	return out;
}

std::vector<uint64_t> parse_u64_list(std::string_view text)
{
	/* words split by any white space, as istream's >> did; no stream: a
	 * table of 10,000 domains' histograms is this loop's 300,000 numbers */
	std::vector<uint64_t> out;
	auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
	size_t at = 0;
	while (at < text.size()) {
		while (at < text.size() && space(text[at]))
			at++;
		size_t end = at;
		while (end < text.size() && !space(text[end]))
			end++;
		if (end > at)
			out.push_back(to_u64(text.substr(at, end - at), text));
		at = end;
	}
	return out;
}

std::vector<NodeZeroReserve> parse_zero_reserves(std::string_view text)
{
	std::vector<NodeZeroReserve> out;
	std::istringstream in{std::string(text)};
	std::string line;
	while (std::getline(in, line)) {
		if (line.find_first_not_of(" \t") == std::string::npos)
			continue;
		const auto v = parse_u64_list(line);
		if (v.size() < 6 || v[0] > static_cast<uint64_t>(INT32_MAX))
			throw std::invalid_argument("malformed zero_reserve line '" + line + "'");
		out.push_back({static_cast<int>(v[0]), v[1], v[2], v[3], v[4], v[5]});
	}
	std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.node < b.node; });
	return out;
}

std::vector<NodeZeroReserve> read_zero_reserves(const fs::path &sysfs)
{
	const auto text = sysfs::read(sysfs / "kernel/poolmem/zero_reserve");
	return text ? parse_zero_reserves(*text) : std::vector<NodeZeroReserve>{};
}

bool module_sysfs_present(const fs::path &sysfs) { return fs::is_directory(sysfs / "kernel/poolmem/pools"); }

std::optional<uint32_t> read_module_abi(const fs::path &sysfs)
{
	const auto text = sysfs::read(sysfs / "kernel/poolmem/abi_version");
	if (!text)
		return std::nullopt;
	try {
		return static_cast<uint32_t>(std::stoul(*text));
	} catch (const std::exception &) {
		return std::nullopt;
	}
}

std::string abi_mismatch(uint32_t module_abi, uint32_t ours)
{
	const std::string m = std::to_string(module_abi), o = std::to_string(ours);
	if (module_abi < ours)
		return "the loaded poolmem module speaks kernel ABI " + m + ", older than this poolctl's " + o +
		       ": what it lacks fails; load the module installed with this poolctl (modprobe -r poolmem; "
		       "modprobe poolmem)";
	if (module_abi > ours)
		return "the loaded poolmem module speaks kernel ABI " + m + ", newer than this poolctl's " + o +
		       ": use the poolctl installed with that module";
	return "";
}

namespace {

/// The five count files of one directory (host-wide or a profile's).
Counts counts_from(const At &dir, const std::string &profile)
{
	Counts c;
	c.profile = profile;
	c.sigbus = u64(dir, "sigbus");
	c.admission_refusals = u64(dir, "admission_refusals");
	c.domains_created = u64(dir, "domains_created");
	c.domains_destroyed = u64(dir, "domains_destroyed");
	c.discarded_bytes = u64(dir, "discarded_bytes");
	return c;
}

} // namespace

std::optional<Counts> read_counts(const fs::path &sysfs)
{
	const sysfs::Dir kernel(sysfs / "kernel");
	const At dir(kernel, "poolmem");
	if (!dir.read("sigbus"))
		return std::nullopt;
	try {
		return counts_from(dir, "");
	} catch (const Gone &) {
		return std::nullopt; /* unloaded while read */
	}
}

std::vector<Counts> read_profile_counts(const fs::path &sysfs)
{
	const fs::path base = sysfs / "kernel/poolmem/profiles";
	const sysfs::Dir profiles(base);
	std::vector<Counts> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(base, ec)) {
		const std::string name = e.path().filename().string();
		try {
			out.push_back(counts_from(At(profiles, name), name));
		} catch (const Gone &) {
			/* removed while read */
		}
	}
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.profile < b.profile; });
	return out;
}

std::optional<PoolStats> read_pool(const fs::path &sysfs, const std::string &name)
{
	return read_pool_in(sysfs::Dir(sysfs / "kernel/poolmem/pools"), name);
}

std::vector<PoolStats> read_pools(const fs::path &sysfs, std::vector<std::string> *errors)
{
	const fs::path base = sysfs / "kernel/poolmem/pools";
	const sysfs::Dir pools(base);
	std::vector<PoolStats> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(base, ec))
		if (auto p = read_pool_in(pools, e.path().filename().string(), errors))
			out.push_back(std::move(*p));
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.id < b.id; });
	return out;
}

bool module_loaded(const std::string &name)
{
	struct ::stat st;
	return ::stat(("/sys/module/" + name).c_str(), &st) == 0;
}

namespace {

/* VALUE to pool POOL's attribute ATTR, whole, in one write(). */
int write_pool_attr(const fs::path &sysfs, const std::string &pool, const char *attr, const std::string &value)
{
	const fs::path path = sysfs / "kernel/poolmem/pools" / pool / attr;
	const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	const ssize_t n = ::write(fd, value.data(), value.size());
	const int err = n < 0 ? errno : n != static_cast<ssize_t>(value.size()) ? EIO : 0;
	::close(fd);
	return err;
}

} // namespace

int set_pool_overcommit(const fs::path &sysfs, const std::string &pool, uint32_t pct)
{
	return write_pool_attr(sysfs, pool, "overcommit_pct", std::to_string(pct));
}

int set_pool_error_policy(const fs::path &sysfs, const std::string &pool, bool drain, unsigned threshold,
			  uint32_t period_s)
{
	if (!drain)
		return write_pool_attr(sysfs, pool, "error_policy", "report");
	return write_pool_attr(sysfs, pool, "error_policy",
			       "drain " + std::to_string(threshold) + (period_s ? "/" + std::to_string(period_s) : ""));
}

int set_pool_zero_reserve(const fs::path &sysfs, const std::string &pool, uint64_t value, bool percent)
{
	return write_pool_attr(sysfs, pool, "zero_reserve", std::to_string(value) + (percent ? "%" : ""));
}

int restore_pool_zero_reserve(const fs::path &sysfs, const std::string &pool, const std::string &as_read)
{
	return write_pool_attr(sysfs, pool, "zero_reserve", as_read);
}

int set_pool_remote_load(const fs::path &sysfs, const std::string &pool, uint64_t access_factor, uint64_t bytes)
{
	return write_pool_attr(sysfs, pool, "remote_load",
			       std::to_string(access_factor) + " " + std::to_string(bytes) + "\n");
}

fs::path procfs_for(const fs::path &sysfs)
{
	fs::path p = sysfs.lexically_normal();
	if (!p.has_filename())
		p = p.parent_path(); /* "DIR/sys/" */
	if (p == "/sys")
		return "/proc";
	return p.parent_path() / "proc";
}

namespace {

/// A whole procfs file: a seq_file gives a buffer's worth per read(), so
/// unlike sysfs::read() a short read is not the end. nullopt (errno set)
/// if it can't be opened or read.
std::optional<std::string> read_all(const fs::path &p)
{
	const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return std::nullopt;
	std::string s;
	std::vector<char> buf(256 << 10);
	ssize_t n;
	while ((n = ::read(fd, buf.data(), buf.size())) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			const int e = errno;
			::close(fd);
			errno = e;
			return std::nullopt;
		}
		s.append(buf.data(), static_cast<size_t>(n));
	}
	::close(fd);
	return s;
}

/// The words of @line, split at single spaces (the tables' separator).
std::vector<std::string_view> words(std::string_view line)
{
	std::vector<std::string_view> out;
	size_t at = 0;
	while (at <= line.size()) {
		const size_t sp = std::min(line.find(' ', at), line.size());
		out.push_back(line.substr(at, sp - at));
		at = sp + 1;
	}
	return out;
}

/// The lines of @text that are not empty, without their '\n'.
std::vector<std::string_view> lines(std::string_view text)
{
	std::vector<std::string_view> out;
	size_t at = 0;
	while (at < text.size()) {
		const size_t nl = std::min(text.find('\n', at), text.size());
		if (nl > at)
			out.push_back(text.substr(at, nl - at));
		at = nl + 1;
	}
	return out;
}

/// A table's string: "-" is empty, "\ooo" an escaped byte (/proc/mounts).
std::string unescape(std::string_view s)
{
	if (s == "-")
		return "";
	std::string out;
	out.reserve(s.size());
	auto octal = [](char c) { return c >= '0' && c <= '7'; };
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
			out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			out += s[i];
		}
	}
	return out;
}

/// The column names of a table's header line "# name ...", by position.
std::map<std::string, size_t, std::less<>> header(std::string_view line, std::string_view what)
{
	auto w = words(line);
	if (w.size() < 2 || w[0] != "#" || w[1] != "name")
		throw std::invalid_argument(std::string(what) + ": no header line");
	std::map<std::string, size_t, std::less<>> col;
	for (size_t i = 1; i < w.size(); i++)
		col.emplace(std::string(w[i]), i - 1);
	return col;
}

struct U64Column {
	const char *name;
	uint64_t DomainStats::*field;
};

/* the numbers of /proc/poolmem/domains (Documentation/ABI/testing/procfs-poolmem) */
const U64Column domain_u64_columns[] = {
	{"size_bytes", &DomainStats::size_bytes},
	{"chunk_bytes", &DomainStats::chunk_bytes},
	{"local_quota_bytes", &DomainStats::local_quota_bytes},
	{"pool_quota_bytes", &DomainStats::pool_quota_bytes},
	{"scan_rate", &DomainStats::scan_rate},
	{"hot_ms", &DomainStats::hot_ms},
	{"hot_chunks", &DomainStats::hot_chunks},
	{"cold_chunks", &DomainStats::cold_chunks},
	{"local_bytes", &DomainStats::local_bytes},
	{"pool_bytes", &DomainStats::pool_bytes},
	{"chunks", &DomainStats::chunks},
	{"faults", &DomainStats::faults},
	{"sigbus", &DomainStats::sigbus},
	{"discards", &DomainStats::discards},
	{"fault_latency_sum_ns", &DomainStats::fault_latency_sum_ns},
	{"retired_chunks", &DomainStats::retired_chunks},
	{"moves", &DomainStats::moves},
	{"move_retries", &DomainStats::move_retries},
	{"move_pins", &DomainStats::move_pins},
	{"samples", &DomainStats::samples},
	{"sample_hits", &DomainStats::sample_hits},
	{"promotions", &DomainStats::promotions},
	{"demotions", &DomainStats::demotions},
	{"tiering_scan_ns", &DomainStats::tiering_scan_ns},
	{"revoked_chunks", &DomainStats::revoked_chunks},
	{"memory_errors", &DomainStats::memory_errors},
};

const char *const domain_other_columns[] = {"home_node", "pinnable", "tier_policy", "pool_select", "tiering",
					    "pool_chunks", "windows", "profile", "file", "creator_pid", "creator_comm"};

/// "a:1,b:2" -> {{a, 1}, {b, 2}} (split at ',' then ':'); "-" is none.
std::vector<std::vector<std::string_view>> items(std::string_view s)
{
	std::vector<std::vector<std::string_view>> out;
	if (s == "-")
		return out;
	size_t at = 0;
	while (at <= s.size()) {
		const size_t comma = std::min(s.find(',', at), s.size());
		auto item = s.substr(at, comma - at);
		std::vector<std::string_view> parts;
		size_t p = 0;
		while (p <= item.size()) {
			const size_t colon = std::min(item.find(':', p), item.size());
			parts.push_back(item.substr(p, colon - p));
			p = colon + 1;
		}
		out.push_back(std::move(parts));
		at = comma + 1;
	}
	return out;
}

} // namespace

std::optional<std::vector<DomainStats>> parse_domain_table(std::string_view table,
							   std::optional<std::string_view> histograms)
{
	const auto tl = lines(table);
	if (tl.empty())
		throw std::invalid_argument("/proc/poolmem/domains: no header line");
	const auto col = header(tl[0], "/proc/poolmem/domains");
	for (const auto &c : domain_u64_columns)
		if (!col.count(c.name))
			return std::nullopt;
	for (const char *c : domain_other_columns)
		if (!col.count(c))
			return std::nullopt;
	const size_t ncols = col.size();

	std::map<std::string, std::vector<uint64_t>, std::less<>> hist;
	size_t buckets = 0;
	if (histograms) {
		const auto hl = lines(*histograms);
		if (hl.empty())
			throw std::invalid_argument("/proc/poolmem/domain_histograms: no header line");
		header(hl[0], "/proc/poolmem/domain_histograms");
		for (size_t i = 1; i < hl.size(); i++) {
			const auto sp = hl[i].find(' ');
			if (sp == std::string_view::npos || sp == 0)
				throw std::invalid_argument("malformed domain_histograms line '" + std::string(hl[i]) + "'");
			auto v = parse_u64_list(hl[i].substr(sp + 1));
			buckets = v.size();
			hist.emplace(std::string(hl[i].substr(0, sp)), std::move(v));
		}
	}

	/* each column's position, found once: a table has thousands of lines */
	std::vector<size_t> u64_at;
	for (const auto &c : domain_u64_columns)
		u64_at.push_back(col.find(c.name)->second);
	std::map<std::string_view, size_t> other_at;
	for (const char *c : domain_other_columns)
		other_at[c] = col.find(c)->second;
	/* id: ABI 12; sample_hits_pool: ABI 14; columns an older module does not have */
	const auto id_col = col.find("id"), pool_hits_col = col.find("sample_hits_pool");
	const size_t id_at = id_col == col.end() ? 0 : id_col->second;
	const size_t pool_hits_at = pool_hits_col == col.end() ? 0 : pool_hits_col->second;
	/* rebalanced_chunks: ABI 15 */
	const auto rb_col = col.find("rebalanced_chunks");
	const size_t rb_at = rb_col == col.end() ? 0 : rb_col->second;

	std::vector<DomainStats> out;
	out.reserve(tl.size() - 1);
	std::vector<std::string_view> w;
	for (size_t i = 1; i < tl.size(); i++) {
		const std::string_view line = tl[i];
		w = words(line);
		if (w.size() < ncols || w[0].empty())
			throw std::invalid_argument("malformed /proc/poolmem/domains line '" + std::string(line) + "'");
		auto at = [&](const char *name) { return w[other_at.find(name)->second]; };
		auto num = [&](const char *name) { return to_u64(at(name), line); };
		DomainStats d;
		d.name = std::string(w[0]);
		for (size_t k = 0; k < std::size(domain_u64_columns); k++)
			d.*domain_u64_columns[k].field = to_u64(w[u64_at[k]], line);
		{
			int node = 0;
			const auto s = at("home_node");
			auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), node);
			if (ec != std::errc() || p != s.data() + s.size())
				throw std::invalid_argument("malformed home_node in '" + std::string(line) + "'");
			d.home_node = node;
		}
		d.pinnable = num("pinnable") != 0;
		d.tier_policy = std::string(at("tier_policy"));
		d.pool_select = std::string(at("pool_select"));
		d.tiering = std::string(at("tiering"));
		for (const auto &it : items(at("pool_chunks"))) {
			if (it.size() != 2 || it[0].empty())
				throw std::invalid_argument("malformed pool_chunks in '" + std::string(line) + "'");
			d.pool_chunks[std::string(it[0])] = to_u64(it[1], line);
		}
		for (const auto &it : items(at("windows"))) {
			if (it.size() != 3 || it[0].empty())
				throw std::invalid_argument("malformed windows in '" + std::string(line) + "'");
			d.windows.push_back({std::string(it[0]), to_u64(it[1], line), to_u64(it[2], line)});
		}
		d.profile = unescape(at("profile"));
		d.file = unescape(at("file"));
		d.creator = std::string(at("creator_pid")) + " " + unescape(at("creator_comm"));
		if (id_at)
			d.id = static_cast<uint32_t>(to_u64(w[id_at], line));
		if (pool_hits_at)
			d.sample_hits_pool = to_u64(w[pool_hits_at], line);
		if (rb_at)
			d.rebalanced_chunks = to_u64(w[rb_at], line);
		if (histograms) {
			if (auto h = hist.find(d.name); h != hist.end())
				d.fault_latency_histogram = std::move(h->second);
			else
				d.fault_latency_histogram.assign(buckets, 0); /* made between the two reads */
		}
		out.push_back(std::move(d));
	}
	return out;
}

std::vector<DomainStats> read_domains(const fs::path &sysfs, const fs::path &procfs)
{
	return DomainReader().read(sysfs, nullptr, true, procfs);
}

std::optional<DomainStats> read_domain(const fs::path &sysfs, const std::string &name)
{
	try {
		const sysfs::Dir domains(sysfs / "class/poolmem");
		const At dir(domains, name);
		DomainStats d;
		d.name = name;
		domain_fixed_from(dir, d);
		domain_counters_from(dir, d, true);
		return d;
	} catch (const Gone &) {
		return std::nullopt;
	}
}

/* a reader with nothing cached reads everything */
std::vector<DomainStats> read_domains(const fs::path &sysfs) { return DomainReader().read(sysfs); }

struct DomainReader::Entry {
	std::array<uint64_t, 4> identity;
	DomainStats fixed; ///< only the fields domain_fixed_from() sets
};

std::vector<DomainStats> DomainReader::read(const fs::path &sysfs, std::vector<std::string> *errors,
					    bool histograms, const std::optional<fs::path> &procfs)
{
	/*
	 * One read of the module's table where it has one and the caller may
	 * read it; otherwise (an older module, EACCES, a fixture without it)
	 * sysfs, whose errors name each domain. Histograms are read first: a
	 * domain made between the two reads has none yet (all zero).
	 */
	const fs::path proc = procfs ? *procfs : procfs_for(sysfs);
	if (!proc.empty()) {
		std::optional<std::string> hist;
		if (histograms)
			hist = read_all(proc / "poolmem/domain_histograms");
		if (!histograms || hist)
			if (const auto table = read_all(proc / "poolmem/domains"))
				if (auto doms = parse_domain_table(*table, hist ? std::optional<std::string_view>(*hist)
									      : std::nullopt)) {
				{
					/* by name: an order of indexes, then one move each
					 * (sorting the records themselves moved each
					 * about log2(n) times: a sixth of vm list's time
					 * at 10,000 domains) */
					std::vector<size_t> order(doms->size());
					for (size_t i = 0; i < order.size(); i++)
						order[i] = i;
					std::sort(order.begin(), order.end(),
						  [&](size_t a, size_t b) { return (*doms)[a].name < (*doms)[b].name; });
					std::vector<DomainStats> sorted;
					sorted.reserve(order.size());
					for (size_t i : order)
						sorted.push_back(std::move((*doms)[i]));
					return sorted;
				}
				}
	}
	return read_sysfs(sysfs, errors, histograms);
}

std::vector<DomainStats> DomainReader::read_sysfs(const fs::path &sysfs, std::vector<std::string> *errors,
						  bool histograms)
{
	const fs::path base = sysfs / "class/poolmem";
	const sysfs::Dir parent(base);
	std::vector<std::string> names;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(base, ec))
		names.push_back(e.path().filename().string());

	/*
	 * Each domain costs about ten sysfs reads, the system calls of which
	 * are most of a scrape on a host with thousands of domains: the
	 * domains are read in shards, one thread each, up to the CPUs (at most
	 * 8, at least 256 domains a shard). Each shard keeps its own results
	 * and errors; the cache is shared under mu_.
	 */
	struct Shard {
		std::vector<DomainStats> out;
		std::vector<std::pair<std::string, std::shared_ptr<const Entry>>> seen;
		std::vector<std::string> errors;
	};
	const size_t cpus = std::max(1u, std::thread::hardware_concurrency());
	const size_t nshards = std::clamp<size_t>(names.size() / 256, 1, std::min<size_t>(cpus, 8));
	std::vector<Shard> shards(nshards);
	auto work = [&](size_t k) {
		Shard &sh = shards[k];
		for (size_t i = k; i < names.size(); i += nshards) {
			const std::string &name = names[i];
			const std::string key = (base / name).string();
			try {
				const auto id = parent.identity(name);
				if (!id)
					continue; /* gone */
				const At dir(parent, name);
				std::shared_ptr<const Entry> entry;
				{
					std::lock_guard lock(mu_);
					if (auto it = cache_.find(key); it != cache_.end() && it->second->identity == *id)
						entry = it->second;
				}
				if (!entry) {
					auto fresh = std::make_shared<Entry>();
					fresh->identity = *id;
					domain_fixed_from(dir, fresh->fixed);
					entry = std::move(fresh);
				}
				DomainStats d = entry->fixed;
				d.name = name;
				domain_counters_from(dir, d, histograms);
				sh.out.push_back(std::move(d));
				sh.seen.emplace_back(key, std::move(entry));
			} catch (const Gone &g) {
				note_partial(parent, name, g, errors ? &sh.errors : nullptr);
			}
		}
	};
	{
		std::vector<std::future<void>> running;
		for (size_t k = 1; k < nshards; k++)
			running.push_back(std::async(std::launch::async, work, k));
		std::exception_ptr failed;
		try {
			work(0);
		} catch (...) {
			failed = std::current_exception();
		}
		for (auto &r : running)
			try {
				r.get();
			} catch (...) {
				if (!failed)
					failed = std::current_exception();
			}
		if (failed)
			std::rethrow_exception(failed);
	}
	std::vector<DomainStats> out;
	out.reserve(names.size());
	for (auto &sh : shards) {
		std::move(sh.out.begin(), sh.out.end(), std::back_inserter(out));
		if (errors)
			errors->insert(errors->end(), sh.errors.begin(), sh.errors.end());
	}
	{
		/* domains that went away leave the cache with this scrape */
		std::lock_guard lock(mu_);
		std::set<std::string> seen;
		for (auto &sh : shards)
			for (auto &[k, v] : sh.seen) {
				seen.insert(k);
				cache_[k] = std::move(v);
			}
		for (auto it = cache_.begin(); it != cache_.end();)
			if (it->first.rfind(base.string(), 0) == 0 && !seen.count(it->first))
				it = cache_.erase(it);
			else
				++it;
	}
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.name < b.name; });
	return out;
}

} // namespace poolmem

namespace poolmem {

std::vector<Mapper> domain_mappers(const fs::path &procfs, const fs::path &mount, const std::string &file)
{
	std::vector<Mapper> out;
	struct stat st;
	if (::stat(mount.c_str(), &st) != 0)
		return out;
	char dev[32];
	std::snprintf(dev, sizeof(dev), "%02x:%02x", major(st.st_dev), minor(st.st_dev));
	const std::string path = (mount / file.substr(file.find_first_not_of('/'))).string();
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(procfs, ec)) {
		const std::string name = e.path().filename().string();
		if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
			continue;
		std::ifstream maps(e.path() / "maps");
		std::string line;
		uint64_t bytes = 0;
		while (std::getline(maps, line)) {
			/* "start-end perms offset dev inode   path[ (deleted)]" */
			unsigned long long start = 0, end = 0;
			char perms[8], devf[32];
			unsigned long long offset = 0, inode = 0;
			int n = 0;
			if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &offset, devf,
					&inode, &n) < 6 ||
			    devf != std::string(dev))
				continue;
			std::string p = line.substr(static_cast<size_t>(n));
			const std::string deleted = " (deleted)";
			if (p.size() > deleted.size() && p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
				p.resize(p.size() - deleted.size());
			if (p == path)
				bytes += end - start;
		}
		if (!bytes)
			continue;
		std::string comm;
		std::ifstream c(e.path() / "comm");
		std::getline(c, comm);
		out.push_back({std::stoi(name), comm, bytes});
	}
	std::sort(out.begin(), out.end(), [](const Mapper &a, const Mapper &b) { return a.pid < b.pid; });
	return out;
}

} // namespace poolmem
