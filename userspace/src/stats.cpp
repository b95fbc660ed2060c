#include "poolmem/stats.hpp"

#include "sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

/// A file vanished mid-read: the object went away.
struct Gone {};

uint64_t u64(const fs::path &dir, const char *file)
{
	auto v = sysfs::read_u64(dir / file);
	if (!v)
		throw Gone{};
	return *v;
}

std::string str(const fs::path &dir, const char *file)
{
	auto v = sysfs::read(dir / file);
	if (!v)
		throw Gone{};
	return *v;
}

uint64_t to_u64(std::string_view s, std::string_view whole)
{
	uint64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size())
		throw std::invalid_argument("malformed number in '" + std::string(whole) + "'");
	return v;
}

PoolStats pool_from(const fs::path &dir)
{
	PoolStats p;
	p.name = dir.filename().string();
	p.id = static_cast<unsigned>(u64(dir, "id"));
	p.node = static_cast<int>(u64(dir, "node"));
	p.tier = str(dir, "tier");
	p.overcommit_pct = u64(dir, "overcommit_pct");
	p.capacity_bytes = u64(dir, "capacity_bytes");
	p.free_bytes = u64(dir, "free_bytes");
	p.allocated_bytes = u64(dir, "allocated_bytes");
	p.committed_bytes = u64(dir, "committed_bytes");
	p.chunks = u64(dir, "chunks");
	p.allocations = u64(dir, "allocations");
	p.faults = u64(dir, "faults");
	p.failures = u64(dir, "failures");
	p.access_factor = u64(dir, "access_factor");
	p.window_counts = parse_u64_list(str(dir, "window_counts"));
	return p;
}

DomainStats domain_from(const fs::path &dir)
{
	DomainStats d;
	d.name = dir.filename().string();
	d.size_bytes = u64(dir, "size_bytes");
	d.chunk_bytes = u64(dir, "chunk_bytes");
	d.local_quota_bytes = u64(dir, "local_quota_bytes");
	d.pool_quota_bytes = u64(dir, "pool_quota_bytes");
	d.local_bytes = u64(dir, "local_bytes");
	d.pool_bytes = u64(dir, "pool_bytes");
	d.chunks = u64(dir, "chunks");
	d.faults = u64(dir, "faults");
	d.sigbus = u64(dir, "sigbus");
	d.discards = u64(dir, "discards");
	d.home_node = static_cast<int>(u64(dir, "home_node"));
	d.tier_policy = str(dir, "tier_policy");
	d.pool_select = str(dir, "pool_select");
	d.pool_chunks = parse_pool_chunks(sysfs::read(dir / "pool_chunks").value_or(""));
	d.fault_latency_histogram = parse_u64_list(str(dir, "fault_latency_histogram"));
	d.fault_latency_sum_ns = u64(dir, "fault_latency_sum_ns");
	return d;
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
	std::vector<uint64_t> out;
	std::istringstream in{std::string(text)};
	std::string w;
	while (in >> w)
		out.push_back(to_u64(w, text));
	return out;
}

bool module_sysfs_present(const fs::path &sysfs) { return fs::is_directory(sysfs / "kernel/poolmem/pools"); }

std::optional<PoolStats> read_pool(const fs::path &sysfs, const std::string &name)
{
	try {
		return pool_from(sysfs / "kernel/poolmem/pools" / name);
	} catch (const Gone &) {
		return std::nullopt;
	}
}

std::vector<PoolStats> read_pools(const fs::path &sysfs)
{
	std::vector<PoolStats> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(sysfs / "kernel/poolmem/pools", ec))
		if (auto p = read_pool(sysfs, e.path().filename().string()))
			out.push_back(std::move(*p));
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.id < b.id; });
	return out;
}

std::optional<DomainStats> read_domain(const fs::path &sysfs, const std::string &name)
{
	try {
		return domain_from(sysfs / "class/poolmem" / name);
	} catch (const Gone &) {
		return std::nullopt;
	}
}

std::vector<DomainStats> read_domains(const fs::path &sysfs)
{
	std::vector<DomainStats> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(sysfs / "class/poolmem", ec))
		if (auto d = read_domain(sysfs, e.path().filename().string()))
			out.push_back(std::move(*d));
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.name < b.name; });
	return out;
}

} // namespace poolmem
