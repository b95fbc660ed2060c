// poolctl vm: per-VM domains (files <mount>/<name>) with tier quotas.
#include "commands.hpp"
#include "moves.hpp"
#include "qemu_args.hpp"
#include "table.hpp"

#include <poolmem/autopilot.hpp>
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/fs.hpp>
#include <poolmem/qemu.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include <nlohmann/json.hpp>

#include "policy/pm_policy.h"

#include <algorithm>
#include <cstring>

#include <grp.h>
#include <iostream>
#include <pwd.h>

namespace poolctl {

namespace ap = poolmem::autopilot;

namespace {

struct CreateOptions {
	std::string name, size, local = "0", pool = "0";
	PlacementOptions place;
	TieringOptions tiering;
	bool libvirt = false;
	bool znuma = false;
	unsigned vcpus = 1;
	std::string qemu = "qemu-system-x86_64"; ///< the QEMU the arguments are for
	unsigned prealloc = 0;                    ///< --prealloc THREADS (0: fault on touch)
	bool check = false;                       ///< --check: every check, nothing made
	bool json = false;                        ///< --json: the result as one object
	AutopilotBoundOptions autopilot;
};

struct NameOptions {
	std::string name;
	bool json = false;
	bool check = false; ///< vm destroy --check
};

struct SetOptions {
	std::string name, local, pool, tier_policy, pool_select;
	std::vector<std::string> pools;
	TieringOptions tiering;
	bool check = false, json = false;
	bool resume = false; ///< go on with the moves an earlier set left
	MoveOptions moves;   ///< --rate, --timeout
	AutopilotBoundOptions autopilot;
};

} // namespace

void check_name(const std::string &name, const std::string &kind)
{
	char buf[PM_NAME_MAX] = {}; /* zero-padded, as the kernel gets it */
	name.copy(buf, PM_NAME_MAX - 1);
	if (name.empty() || name.size() >= PM_NAME_MAX)
		throw UsageError(name + ": invalid " + kind + " name: 1 to " + std::to_string(PM_NAME_MAX - 1) +
				 " characters");
	if (name.find('\0') != std::string::npos || !pm_name_valid(buf, PM_NAME_MAX))
		throw UsageError(name + ": invalid " + kind + " name: 1 to " + std::to_string(PM_NAME_MAX - 1) +
				 " characters of A-Z a-z 0-9 _ . -, not starting with '.' or '-' (\"control\" is "
				 "reserved)");
}

/*
 * The rules a new domain must meet, each with its own message and exit
 * code 2, checked before anything is asked of the kernel (which checks
 * them again: kmod/policy's pm_domain_geometry is the one rule list).
 * OPT names the options (--size/--local/--pool) as the user gave them.
 */
void check_domain(const GlobalOptions &g, const poolmem::DomainSpec &s, const DomainOptionText &opt)
{
	check_name(s.name, "domain");
	const u64 quota[PM_NR_TIERS] = {s.local_quota, s.pool_quota};
	const u64 chunk = s.chunk_bytes ? s.chunk_bytes : PM_DOMAIN_CHUNK_MIN;
	const std::string cs = poolmem::format_size(chunk);
	auto tier_opt = [&](bool local) { return local ? "--local " + opt.local : "--pool " + opt.pool; };
	switch (pm_domain_geometry(s.bytes, chunk, quota)) {
	case PM_GEO_OK:
		break;
	case PM_GEO_CHUNK:
		throw UsageError("--chunk " + opt.chunk + ": must be a power of two from 2M to 1G");
	case PM_GEO_SIZE:
		throw UsageError("--size " + opt.size + ": must be above 0 and at most 64T");
	case PM_GEO_SIZE_ALIGN: {
		const uint64_t lo = s.bytes / chunk * chunk;
		throw UsageError("--size " + opt.size + ": not a multiple of the chunk size " + cs + " (use " +
				 (lo ? poolmem::format_size(lo) + " or " : "") + poolmem::format_size(lo + chunk) +
				 ")");
	}
	case PM_GEO_QUOTA_ABOVE: {
		const bool local = s.local_quota > s.bytes;
		throw UsageError(tier_opt(local) + ": above --size " + opt.size +
				 " (a tier's quota is at most the size: lower it to " + poolmem::format_size(s.bytes) +
				 " or less)");
	}
	case PM_GEO_QUOTA_COVER:
		throw UsageError("--local + --pool (" + poolmem::format_size(s.local_quota + s.pool_quota) +
				 ") must cover --size " + opt.size + ": raise one of them by " +
				 poolmem::format_size(s.bytes - s.local_quota - s.pool_quota));
	case PM_GEO_QUOTA_ALIGN:
		throw UsageError(tier_opt(s.local_quota % chunk != 0) + ": not a multiple of the chunk size " + cs);
	default:
		throw UsageError(s.name + ": invalid size, chunk or quotas");
	}
	check_placement(g, s.home_node, s.pools);
}

void check_placement(const GlobalOptions &g, int home_node, const std::vector<std::string> &pool_names)
{
	if (home_node >= 0) {
		const auto topo = poolmem::read_topology(g.sysfs);
		const poolmem::Node *n = topo.node(home_node);
		if (!n || !n->mem_total)
			/* no such object: exit 3, as an unknown --pools */
			throw poolmem::Error::plain("--home-node " + std::to_string(home_node),
						    "no such node with memory (see poolctl node list)", ENOENT);
	}
	const auto pools = poolmem::read_pools(g.sysfs);
	const auto &planned = g.planned_pools;
	for (const auto &name : pool_names)
		if (std::none_of(pools.begin(), pools.end(), [&](const auto &p) { return p.name == name; }) &&
		    std::find(planned.begin(), planned.end(), name) == planned.end())
			throw poolmem::Error::plain(name, "no such pool (--pools; see poolctl pool list)", ENOENT);
	for (const auto &p : pools)
		if (home_node >= 0 && p.node == home_node)
			throw UsageError("--home-node " + std::to_string(home_node) + ": it is pool " + p.name +
					 "'s node (a home node's DRAM is the local tier, never a pool)");
}

namespace {

void run_create(const GlobalOptions &g, const CreateOptions &o)
{
	poolmem::DomainSpec s;
	s.name = o.name;
	s.bytes = size_value("--size", o.size);
	s.local_quota = size_value("--local", o.local);
	s.pool_quota = size_value("--pool", o.pool);
	const Placement pl = parse_placement(o.place);
	s.chunk_bytes = pl.chunk_bytes;
	s.tier_policy = static_cast<poolmem::TierPolicy>(pl.tier_policy);
	s.pool_select = static_cast<poolmem::PoolSelect>(pl.pool_select);
	s.pools = o.place.pools;
	s.home_node = o.place.home_node;
	s.pinnable = o.place.pinnable;
	s.znuma = o.znuma;
	s.uid = pl.uid;
	s.gid = pl.gid;
	s.mode = pl.mode;
	check_domain(g, s, {o.size, o.local, o.pool, o.place.chunk});
	if (o.znuma) {
		if (!s.local_quota || !s.pool_quota || s.local_quota + s.pool_quota != s.bytes)
			throw UsageError("--znuma: --local " + o.local + " + --pool " + o.pool + " must equal --size " +
					 o.size + ", neither 0 (they are the guest's two NUMA nodes)");
		if (!o.tiering.mode.empty() && o.tiering.mode != "off")
			throw UsageError("--znuma: no --tiering (a window's chunks stay in its tier)");
		if (o.libvirt)
			throw UsageError("--znuma --libvirt: libvirt 9.0 names a NUMA cell's file itself; use a znuma "
					 "profile (poolctl profile create NAME --znuma --local PCT% --pool PCT% --libvirt "
					 "--size SIZE)");
		if (o.vcpus < 1 || o.vcpus > 4096)
			throw UsageError("--vcpus: 1 to 4096");
	}
	poolmem::DomainChange tiering;
	parse_tiering(o.tiering, tiering);
	const ap::Bounds bounds{o.autopilot.min, o.autopilot.max, o.autopilot.slo};
	if (o.autopilot.any()) {
		if (o.znuma)
			throw UsageError("--znuma: no --autopilot-* (a znuma domain's windows are fixed)");
		ap::check_bounds(s.name, bounds, s.bytes);
	}
	if (o.prealloc > 1024)
		throw UsageError("--prealloc: 1 to 1024 threads");
	if (o.prealloc && o.libvirt)
		throw UsageError("--prealloc --libvirt: libvirt preallocates with <memoryBacking><allocation "
				 "mode='immediate' threads='N'/>");
	/*
	 * Only --znuma and --prealloc print what differs between QEMU versions;
	 * the plain argument works from QEMU 2.x on. Asking QEMU costs four
	 * starts of the binary, dear in a guest under emulation, so only then.
	 */
	if (o.check) {
		/* the kernel's checks too, admission included: nothing is made */
		if (g.planned_pools.empty())
			open_control(g).domain_create(s, true);
		if (o.json) {
			print_json(g, {{"name", s.name}, {"created", false}, {"size_bytes", s.bytes},
				       {"admission_checked", g.planned_pools.empty()}});
			return;
		}
		std::printf("%s: would be created (%s: local %s, pool %s)%s\n", s.name.c_str(), o.size.c_str(),
			    o.local.c_str(), o.pool.c_str(),
			    g.planned_pools.empty() ? "" : "; admission checked once the planned pools exist");
		return;
	}
	const bool ask_qemu = !o.libvirt && (o.znuma || o.prealloc);
	poolmem::QemuCaps qemu;
	if (ask_qemu)
		qemu = poolmem::probe_qemu(o.qemu);

	poolmem::Control ctl = open_control(g);
	poolmem::ensure_mounted(g.mount);
	ctl.domain_create(s);
	if (tiering.tiering) {
		auto r = ctl.domain_set(s.name, tiering);
		if (r.err) {
			ctl.domain_destroy(s.name);
			throw poolmem::Error(s.name, "cannot turn tiering on", r.err);
		}
	}
	/* a new VM: its own bounds, none that an earlier VM of its name left */
	try {
		if (o.autopilot.any())
			ap::store_bounds(ap::store_path, ap::Kind::vm, s.name, bounds, s.bytes, true);
		else
			ap::forget_bounds(ap::store_path, ap::Kind::vm, s.name);
	} catch (...) {
		ctl.domain_destroy(s.name);
		throw;
	}
	const std::string path = g.mount + "/" + s.name;
	if (o.libvirt) {
		print_libvirt_nvdimm(path, s.bytes, std::max<uint64_t>(s.chunk_bytes, 2ULL << 20));
		return;
	}
	PreallocPlan pre{qemu, o.prealloc, ctl.domain_info(s.name).home_node};
	/* on standard error: standard output stays the path and the argument */
	if (ask_qemu)
		std::fprintf(stderr, "poolctl: %s: arguments for %s%s\n", s.name.c_str(), qemu.describe().c_str(),
			     qemu.found ? "" : ": for QEMU 7.2 and later");
	std::string args;
	if (o.znuma) {
		args = znuma_arguments(g, s, path, o.vcpus, pre);
	} else {
		std::string objects;
		const std::string id = poolmem::qemu_object_id(s.name);
		const std::string extra = prealloc_properties(pre, id, objects);
		args = objects + qemu_argument(s.name, path, s.bytes, std::max<uint64_t>(s.chunk_bytes, 2ULL << 20), extra);
	}
	if (o.json) {
		/* what a script needs to start QEMU: Documentation/json.md */
		print_json(g, {{"name", s.name}, {"created", true}, {"path", path}, {"size_bytes", s.bytes},
			       {"chunk_bytes", s.chunk_bytes}, {"qemu_arguments", args}});
		return;
	}
	std::printf("%s\n%s\n", path.c_str(), args.c_str());
}

} // namespace


namespace {

std::string usage(uint64_t used, uint64_t quota)
{
	return poolmem::format_size(used) + "/" + poolmem::format_size(quota);
}

void run_list(const GlobalOptions &g, bool json)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded", ENOENT);
	auto doms = read_domains(g, json); /* the table shows no latency */
	if (json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &d : doms)
			out.push_back(domain_json(d));
		print_json(g, out);
		return;
	}
	Table t({"NAME", ">SIZE", ">LOCAL", ">POOL", ">CHUNKS", "TIER-POLICY", "POOL-SELECT", ">FAULTS", ">SIGBUS",
		 "FILE"});
	for (const auto &d : doms)
		t.row({d.name, poolmem::format_size(d.size_bytes), usage(d.local_bytes, d.local_quota_bytes),
		       usage(d.pool_bytes, d.pool_quota_bytes), std::to_string(d.chunks), d.tier_policy, d.pool_select,
		       std::to_string(d.faults), std::to_string(d.sigbus), d.file});
	t.print();
}

poolmem::DomainStats domain_or_throw(const GlobalOptions &g, const std::string &name)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded", ENOENT);
	auto d = poolmem::read_domain(g.sysfs, name);
	if (!d)
		throw poolmem::Error::plain(name, "no such domain", ENOENT);
	return *d;
}

/// Upper bound in ns of the bucket holding percentile P of histogram H.
uint64_t percentile_ns(const std::vector<uint64_t> &h, double p)
{
	uint64_t n = 0, s = 0;
	for (auto c : h)
		n += c;
	if (!n)
		return 0;
	for (size_t i = 0; i < h.size(); i++) {
		s += h[i];
		if (static_cast<double>(s) >= p / 100.0 * static_cast<double>(n))
			return 2ULL << i;
	}
	return 2ULL << (h.size() - 1);
}

/// Offsets of D lost to memory errors, from the module's error log (root
/// only: nullopt without the control device). The log keeps the host's last
/// 256 errors, so a domain with more shows its newest.
std::optional<std::vector<uint64_t>> lost_offsets(const GlobalOptions &g, const poolmem::DomainStats &d)
{
	std::vector<uint64_t> out;
	if (!d.memory_errors)
		return out;
	try {
		poolmem::Control ctl = open_control(g);
		for (const auto &e : ctl.memory_errors().errors)
			if ((d.id && e.domain_id ? e.domain_id == d.id : e.domain == d.name) && e.kind == "hard" &&
			    (e.action == "isolated" || e.action == "failed"))
				out.push_back(e.offset);
	} catch (const poolmem::Error &) {
		return std::nullopt;
	}
	/* a module before ABI 12 (no ids): a name made again sees its newest */
	if (out.size() > d.memory_errors)
		out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(d.memory_errors));
	return out;
}

/* The processes that map D's file (or a znuma domain's windows), by pid. */
std::vector<poolmem::Mapper> mappers(const GlobalOptions &g, const poolmem::DomainStats &d)
{
	const auto procfs = g.procfs.empty() ? poolmem::procfs_for(g.sysfs) : std::filesystem::path(g.procfs);
	std::map<int, poolmem::Mapper> by_pid;
	std::vector<std::string> files = {d.file};
	for (const auto &w : d.windows)
		files.push_back(d.file + "." + w.name);
	for (const auto &f : files)
		for (const auto &m : poolmem::domain_mappers(procfs, g.mount, f)) {
			auto [it, fresh] = by_pid.try_emplace(m.pid, m);
			if (!fresh)
				it->second.mapped_bytes += m.mapped_bytes;
		}
	std::vector<poolmem::Mapper> out;
	for (const auto &[pid, m] : by_pid)
		out.push_back(m);
	return out;
}

void run_show(const GlobalOptions &g, const NameOptions &o)
{
	auto d = domain_or_throw(g, o.name);
	const auto lost = lost_offsets(g, d);
	const auto mapped_by = mappers(g, d);
	if (o.json) {
		auto j = domain_json(d);
		j["memory_error_offsets"] = lost ? nlohmann::json(*lost) : nlohmann::json(nullptr);
		j["mapped_by"] = nlohmann::json::array();
		for (const auto &m : mapped_by)
			j["mapped_by"].push_back({{"pid", m.pid}, {"comm", m.comm}, {"mapped_bytes", m.mapped_bytes}});
		j["fault_latency_p50_ns_max"] = percentile_ns(d.fault_latency_histogram, 50);
		j["fault_latency_p99_ns_max"] = percentile_ns(d.fault_latency_histogram, 99);
		print_json(g, j);
		return;
	}
	std::printf("domain %s: %s%s, %s in %s chunks\n", d.name.c_str(), g.mount.c_str(), d.file.c_str(),
		    poolmem::format_size(d.size_bytes).c_str(), poolmem::format_size(d.chunk_bytes).c_str());
	if (!d.profile.empty())
		std::printf("  profile %s, made by %s\n", d.profile.c_str(), d.creator.c_str());
	std::printf("  local   %s (home node %d)\n  pool    %s\n", usage(d.local_bytes, d.local_quota_bytes).c_str(),
		    d.home_node, usage(d.pool_bytes, d.pool_quota_bytes).c_str());
	if (d.moves_pending_bytes)
		std::printf("  moving  %s left by a quota change: the tiers stay at their usage until it is done "
			    "(poolctl vm set %s --resume)\n",
			    poolmem::format_size(d.moves_pending_bytes).c_str(), d.name.c_str());
	if (d.windows.empty())
		std::printf("  policy  %s, %s\n", d.tier_policy.c_str(), d.pool_select.c_str());
	else
		std::printf("  policy  znuma windows, %s\n", d.pool_select.c_str());
	for (const auto &w : d.windows)
		std::printf("  window  %s%s.%s: %s at %s, %s touched (guest node %d)\n", g.mount.c_str(), d.file.c_str(),
			    w.name.c_str(), poolmem::format_size(w.size).c_str(), poolmem::format_size(w.base).c_str(),
			    poolmem::format_size(w.name == "local" ? d.local_bytes : d.pool_bytes).c_str(),
			    w.name == "local" ? 0 : 1);
	if (mapped_by.empty())
		std::printf("  mapped  by no process\n");
	for (const auto &m : mapped_by)
		std::printf("  mapped  by %s (pid %d), %s\n", m.comm.c_str(), m.pid, poolmem::format_size(m.mapped_bytes).c_str());
	std::printf("  pinning %s\n", d.pinnable ? "pinnable: chunks only outside ZONE_MOVABLE (VFIO/RDMA can pin)"
					       : "not pinnable: chunks on movable pool memory can't be long-term "
						 "pinned (VFIO/RDMA)");
	std::printf("  faults  %s (p50 under %s, p99 under %s), SIGBUS denials %lu, %s\n",
		    std::to_string(d.faults).c_str(),
		    poolmem::format_duration_ns(percentile_ns(d.fault_latency_histogram, 50)).c_str(),
		    poolmem::format_duration_ns(percentile_ns(d.fault_latency_histogram, 99)).c_str(),
		    static_cast<unsigned long>(d.sigbus), poolmem::plural(d.discards, "discard").c_str());
	if (d.retired_chunks)
		std::printf("  retired %s: discarded while still referenced (pipe, io_uring, O_DIRECT), "
			    "still charged\n",
			    poolmem::plural(d.retired_chunks, "chunk").c_str());
	if (d.revoked_chunks)
		std::printf("  revoked %s: lost with revoked pool memory; touching them is a memory error "
			    "until they are discarded\n",
			    poolmem::plural(d.revoked_chunks, "chunk").c_str());
	if (d.memory_errors) {
		std::string at;
		char buf[24];
		for (auto off : lost.value_or(std::vector<uint64_t>{})) {
			std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(off));
			at += (at.empty() ? " at " : ", ") + std::string(buf);
		}
		std::printf("  errors  %s lost to memory errors%s: touching one is a memory error (SIGBUS) until its "
			    "chunk is discarded\n",
			    poolmem::plural(d.memory_errors, "page").c_str(),
			    lost ? at.c_str() : " (offsets: poolctl pool events, as root)");
	}
	if (d.tiering != "off" || d.samples)
		std::printf("  tiering %s at %s/s, hot within %lu ms: %lu samples, %lu touched again; %lu hot, %lu cold "
			    "chunks; %lu promoted, %lu demoted; %.3f s CPU\n",
			    d.tiering.c_str(), poolmem::format_size(d.scan_rate).c_str(),
			    static_cast<unsigned long>(d.hot_ms), static_cast<unsigned long>(d.samples),
			    static_cast<unsigned long>(d.sample_hits), static_cast<unsigned long>(d.hot_chunks),
			    static_cast<unsigned long>(d.cold_chunks), static_cast<unsigned long>(d.promotions),
			    static_cast<unsigned long>(d.demotions), static_cast<double>(d.tiering_scan_ns) * 1e-9);
	if (d.moves || d.move_retries || d.move_pins)
		std::printf("  moved   %s (%lu put off while referenced, %lu refused: pinned)\n",
			    poolmem::plural(d.moves, "chunk").c_str(), static_cast<unsigned long>(d.move_retries),
			    static_cast<unsigned long>(d.move_pins));
	for (const auto &[pool, chunks] : d.pool_chunks)
		std::printf("  pool %s: %s (%s)\n", pool.c_str(), poolmem::plural(chunks, "chunk").c_str(),
			    poolmem::format_size(chunks * d.chunk_bytes).c_str());
}

void run_map(const GlobalOptions &g, const NameOptions &o)
{
	poolmem::Control ctl = open_control(g);
	auto ranges = ctl.domain_map(o.name);
	std::map<uint32_t, std::string> names;
	for (const auto &p : poolmem::read_pools(g.sysfs))
		names[p.id] = p.name;
	auto pool_name = [&](uint32_t id) {
		return id == poolmem::local_pool ? std::string("local") : names.count(id) ? names[id] : std::to_string(id);
	};
	if (o.json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &r : ranges)
			out.push_back({{"offset", r.offset}, {"length", r.length}, {"phys", r.phys},
				       {"pool", pool_name(r.pool)}, {"node", r.node}});
		print_json(g, out);
		return;
	}
	Table t({"OFFSET", "LENGTH", "HOST-PHYS", "POOL", ">NODE"});
	char a[32], b[32];
	for (const auto &r : ranges) {
		std::snprintf(a, sizeof(a), "0x%012lx", static_cast<unsigned long>(r.offset));
		std::snprintf(b, sizeof(b), "0x%012lx", static_cast<unsigned long>(r.phys));
		t.row({a, poolmem::format_size(r.length), b, pool_name(r.pool), std::to_string(r.node)});
	}
	t.print();
}

/*
 * vm set's refusals before anything changed (exit 4): admission, or no
 * room for what must move. Any other result returns.
 */
void set_refusal(const std::string &name, const poolmem::DomainSetResult &r)
{
	if (r.err != ENOSPC)
		return;
	if (!r.need_bytes) /* admission, not room: pm_admit() logged the figures */
		throw poolmem::Error::plain(name, "cannot change: the new quotas do not fit the pools' admission limits "
						  "(capacity x overcommit; the kernel log has the figures); nothing changed",
					    ENOSPC);
	throw poolmem::Error::plain(name, "cannot change: " + poolmem::format_size(r.need_bytes) +
						  " of chunks must move, but only " + poolmem::format_size(r.room_bytes) +
						  " is free where they may go; nothing changed",
				    ENOSPC);
}

/* The line vm set prints after a change: the domain as it is now. */
void print_set_result(const GlobalOptions &g, poolmem::Control &ctl, const std::string &name, const poolmem::MoveRun &run)
{
	auto d = ctl.domain_info(name);
	auto st = poolmem::read_domain(g.sysfs, name);
	std::printf("%s: local %s, pool %s, %s, %s, tiering %s; moved %s", name.c_str(),
		    usage(d.local_bytes, d.local_quota).c_str(), usage(d.pool_bytes, d.pool_quota).c_str(),
		    poolmem::to_string(d.tier_policy).c_str(), poolmem::to_string(d.pool_select).c_str(),
		    st ? st->tiering.c_str() : "?", poolmem::format_size(run.moved_bytes).c_str());
	if (run.moved_bytes)
		std::printf(" in %.2f s", run.seconds);
	std::printf("\n");
}

ap::Bounds bounds_of(const SetOptions &o) { return {o.autopilot.min, o.autopilot.max, o.autopilot.slo}; }

/*
 * vm set --autopilot-*: the VM's bounds, merged with those stored and
 * checked against its size before anything changes. Alone (no other
 * change), they are stored here and the set is done (true); with other
 * changes, run_set() stores them once the kernel took those.
 */
bool set_bounds(const GlobalOptions &g, poolmem::Control &ctl, const SetOptions &o, bool changes)
{
	const auto info = ctl.domain_info(o.name); /* an unknown VM: ENOENT, naming it */
	if (info.znuma)
		throw UsageError(o.name + ": a znuma domain's windows are fixed: no --autopilot-*");
	ap::Bounds b = bounds_of(o);
	const auto now = ap::with_store(ap::Config{}, ap::store_path);
	if (auto it = now.vms.find(o.name); it != now.vms.end())
		for (auto [from, into] :
		     {std::pair{&it->second.min, &b.min}, {&it->second.max, &b.max}, {&it->second.slo, &b.slo}})
			if (into->empty())
				*into = *from;
	ap::check_bounds(o.name, b, info.bytes);
	if (changes)
		return false;
	if (!o.check)
		b = ap::store_bounds(ap::store_path, ap::Kind::vm, o.name, bounds_of(o), info.bytes, false);
	const auto shown = [](const std::string &v) { return v.empty() ? std::string("the default") : v; };
	report(g, o.json,
	       o.name + ": autopilot bounds " + (o.check ? "would be" : "now") + " min " + shown(b.min) + ", max " +
		       shown(b.max) + ", SLO " + shown(b.slo),
	       {{"name", o.name}, {"changed", !o.check}, {"autopilot", autopilot_bounds_json({b.min, b.max, b.slo})}});
	return true;
}

/*
 * poolctl vm set: change a running VM's quotas, pools and policies. The
 * kernel moves the chunks a shrunk tier or a removed pool no longer holds,
 * or refuses with the figures and changes nothing. The first ioctl
 * applies the change and moves a step's worth; the steps after it only go
 * on moving (POOLMEM_SET_STEP alone), so that the progress bar, --rate,
 * --timeout and Ctrl-C work as in pool drain. A module older than ABI 13
 * moves everything in the one ioctl.
 */
void run_set(const GlobalOptions &g, const SetOptions &o)
{
	poolmem::DomainChange c;
	if (!o.local.empty())
		c.local_quota = size_value("--local", o.local);
	if (!o.pool.empty())
		c.pool_quota = size_value("--pool", o.pool);
	if (!o.pools.empty())
		c.pools = o.pools;
	if (!o.tier_policy.empty()) {
		c.tier_policy = poolmem::parse_tier_policy(o.tier_policy);
		if (!c.tier_policy)
			throw UsageError("--tier-policy: unknown policy '" + o.tier_policy + "'");
	}
	if (!o.pool_select.empty()) {
		c.pool_select = poolmem::parse_pool_select(o.pool_select);
		if (!c.pool_select)
			throw UsageError("--pool-select: unknown policy '" + o.pool_select + "'");
	}
	parse_tiering(o.tiering, c);
	const bool changes = c.local_quota || c.pool_quota || c.pools || c.tier_policy || c.pool_select || c.tiering;
	if (o.resume && (changes || o.check || o.autopilot.any()))
		throw UsageError(o.name + ": --resume goes on with an earlier change's moves: it takes no other change "
					  "and no --check");
	if (!changes && !o.resume && !o.autopilot.any())
		throw UsageError(o.name + ": nothing to change (--local, --pool, --pools, --tier-policy, --pool-select, "
					  "--tiering, --autopilot-min, --autopilot-max, --autopilot-slo, or --resume)");
	poolmem::Control ctl = open_control(g);
	if (o.autopilot.any() && set_bounds(g, ctl, o, changes))
		return;
	const bool stepped = !o.check && ctl.abi_version() >= 13;
	if (o.resume && !stepped)
		throw poolmem::Error::plain(o.name, "--resume needs a module of kernel ABI 13 or later (loaded: " +
							    std::to_string(ctl.abi_version()) + ")",
					    EOPNOTSUPP);
	if (changes) {
		auto before = ctl.domain_info(o.name);
		if (before.znuma && (c.local_quota || c.pool_quota || c.tier_policy || (c.tiering && *c.tiering)))
			throw UsageError(o.name + ": a znuma domain's windows are fixed: no --local, --pool, "
						  "--tier-policy or --tiering (--pools and --pool-select may change)");
		poolmem::DomainSpec spec;
		spec.name = o.name;
		spec.bytes = before.bytes;
		spec.chunk_bytes = before.chunk_bytes;
		spec.local_quota = c.local_quota.value_or(before.local_quota);
		spec.pool_quota = c.pool_quota.value_or(before.pool_quota);
		spec.pools = o.pools;
		const std::string size = poolmem::format_size(before.bytes);
		check_domain(g, spec,
			     {size, o.local.empty() ? poolmem::format_size(spec.local_quota) : o.local,
			      o.pool.empty() ? poolmem::format_size(spec.pool_quota) : o.pool,
			      poolmem::format_size(before.chunk_bytes)});
	}
	if (o.check) {
		const bool planned = !g.planned_pools.empty();
		if (!planned) {
			/* the kernel's checks, admission and room for the moves included */
			c.check = true;
			set_refusal(o.name, ctl.domain_set(o.name, c));
		}
		if (o.json)
			print_json(g, {{"name", o.name}, {"changed", false}, {"admission_checked", !planned}});
		else if (planned)
			/* new pools may be among --pools: the kernel's check waits for them */
			std::printf("%s: would change; admission checked once the planned pools exist\n", o.name.c_str());
		else
			std::printf("%s: would change\n", o.name.c_str());
		return;
	}

	const auto policy = move_policy(o.moves);
	const auto run = [&] {
		MoveUi ui; /* its bar ends before the lines below */
		return poolmem::set_moving(ctl, o.name, o.resume ? nullptr : &c, policy, ui.progress(), ui.stop());
	}();
	const poolmem::DomainSetResult &r = run.result;
	if (!run.applied)
		set_refusal(o.name, r); /* nothing changed: refused, exit 4 */
	const std::string moved = poolmem::format_size(run.moved_bytes),
			  left = poolmem::format_size(r.remaining_bytes);
	const std::string go_on = "; the tiers stay at their usage until it is done: poolctl vm set " + o.name +
				  " --resume goes on";
	nlohmann::json result = nullptr;
	if (o.json) {
		result = {{"name", o.name},
			  {"changed", true},
			  {"complete", run.done()},
			  {"moved_bytes", run.moved_bytes},
			  {"remaining_bytes", r.remaining_bytes},
			  {"seconds", run.seconds}};
		if (auto st = poolmem::read_domain(g.sysfs, o.name))
			result["domain"] = domain_json(*st);
	}
	if (o.autopilot.any())
		ap::store_bounds(ap::store_path, ap::Kind::vm, o.name, bounds_of(o), 0, false);
	if (run.interrupted)
		throw PartialError(o.name, "settings applied, moves interrupted after " + moved + ", " + left + " left" + go_on,
				   EINTR, result);
	if (r.err == EBUSY)
		throw PartialError(o.name, "settings applied, but a long-term pinned chunk (VFIO, RDMA, io_uring) "
					   "can't move; moved " + moved + ", the tier stays at its usage",
				   EBUSY, result);
	if (run.timed_out || r.err == EAGAIN)
		throw PartialError(o.name, "settings applied, but chunks stayed referenced (I/O in flight) for " +
						   o.moves.timeout + " s; moved " + moved + ", " + left + " left" + go_on,
				   EAGAIN, result);
	if (r.err)
		throw PartialError(o.name, "settings applied, moved " + moved + ", then: " + std::strerror(r.err) + go_on,
				   r.err, result);
	if (o.json)
		print_json(g, result);
	else
		print_set_result(g, ctl, o.name, run);
}

void run_destroy(const GlobalOptions &g, const NameOptions &o)
{
	if (o.check) {
		/* the domain, then the right to destroy (the control device) */
		const auto d = domain_or_throw(g, o.name);
		open_control(g);
		report(g, o.json,
		       o.name + ": destroy would go ahead (" + poolmem::format_size(d.local_bytes + d.pool_bytes) + " held)",
		       {{"name", o.name}, {"destroyed", false}, {"held_bytes", d.local_bytes + d.pool_bytes}});
		return;
	}
	poolmem::Control ctl = open_control(g);
	const auto d = ctl.domain_info(o.name);
	ctl.domain_destroy(o.name);
	try {
		ap::forget_bounds(ap::store_path, ap::Kind::vm, o.name);
	} catch (const poolmem::Error &e) {
		std::fprintf(stderr, "poolctl: %s (its autopilot bounds stay)\n", e.what());
	}
	report(g, o.json, o.name + ": destroyed (memory returns when the last open file and mapping go)",
	       {{"name", o.name}, {"destroyed", true}, {"held_bytes", d.local_bytes + d.pool_bytes}});
}

} // namespace

void setup_vm(CLI::App &app, const GlobalOptions &g)
{
	auto *vm = app.add_subcommand("vm", "VM domains: files <mount>/<name> with per-tier quotas");
	vm->require_subcommand(1);

	auto c = std::make_shared<CreateOptions>();
	auto *create = vm->add_subcommand("create", "create a domain and print the QEMU argument");
	create->add_option("name", c->name, "domain name")->required();
	create->add_option("--size", c->size, "guest RAM size (e.g. 16G)")->required();
	create->add_option("--local", c->local, "local DRAM quota (default 0)");
	create->add_option("--pool", c->pool, "pool quota (default 0); --local + --pool must cover --size");
	add_placement_options(create, c->place, "the domain file", "0600");
	add_tiering_options(create, c->tiering);
	create->add_flag("--libvirt", c->libvirt, "print libvirt XML (an NVDIMM memory device) instead of the QEMU argument");
	create->add_flag("--znuma", c->znuma,
			 "two windows, <name>.local and <name>.pool (--local + --pool = --size), for the guest as "
			 "NUMA node 0 and a CPU-less node 1; prints QEMU's -numa arguments");
	create->add_option("--vcpus", c->vcpus, "with --znuma: the guest's CPUs, all on node 0 (default 1)");
	create->add_option("--qemu", c->qemu,
			   "the QEMU binary the arguments are for: poolctl asks it which properties it takes "
			   "(default qemu-system-x86_64; none found: arguments QEMU 7.2 takes)");
	create->add_option("--prealloc", c->prealloc,
			   "QEMU touches the whole domain with THREADS threads before the guest starts (on the home "
			   "node's CPUs where QEMU has thread contexts)")
		->type_name("THREADS");
	add_check_flag(create, c->check, true);
	add_autopilot_bound_options(create, c->autopilot, "the VM's");
	create->add_flag("--json", c->json, "print the result as JSON: name, path, size and chunk bytes, and the QEMU arguments")
		->excludes("--libvirt");
	create->callback([&g, c] { run_create(g, *c); });

	auto l = std::make_shared<NameOptions>();
	auto *list = vm->add_subcommand("list", "list domains with per-tier usage against quota");
	list->add_flag("--json", l->json, "print JSON");
	list->callback([&g, l] { run_list(g, l->json); });

	auto s = std::make_shared<NameOptions>();
	auto *show = vm->add_subcommand("show", "usage, faults, denials and placement of one domain");
	show->add_option("name", s->name, "domain")->required();
	show->add_flag("--json", s->json, "print JSON");
	show->callback([&g, s] { run_show(g, *s); });

	auto m = std::make_shared<NameOptions>();
	auto *map = vm->add_subcommand("map", "guest offset ranges -> pool and host physical range");
	map->add_option("name", m->name, "domain")->required();
	map->add_flag("--json", m->json, "print JSON");
	map->callback([&g, m] { run_map(g, *m); });

	auto d = std::make_shared<NameOptions>();
	auto so2 = std::make_shared<SetOptions>();
	auto *set = vm->add_subcommand("set", "change a running VM's quotas, pools and policies (chunks move as needed)");
	set->add_option("name", so2->name, "domain")->required();
	set->add_option("--local", so2->local, "new local DRAM quota");
	set->add_option("--pool", so2->pool, "new pool quota; --local + --pool must cover the size");
	set->add_option("--pools", so2->pools, "allowed pools (chunks elsewhere move to them)")->delimiter(',');
	set->add_option("--tier-policy", so2->tier_policy, "local-first, interleave, pool-first");
	set->add_option("--pool-select", so2->pool_select, "smart-idle, round-robin, random, nearest");
	add_tiering_options(set, so2->tiering);
	add_move_options(set, so2->moves);
	add_autopilot_bound_options(set, so2->autopilot, "the VM's");
	set->add_flag("--resume", so2->resume,
		      "go on with the moves an earlier set left (after Ctrl-C, --timeout or a pinned chunk)");
	add_check_flag(set, so2->check, true);
	set->add_flag("--json", so2->json,
		      "print the result as JSON: moved and remaining bytes, seconds, and the domain as vm show --json");
	set->callback([&g, so2] { run_set(g, *so2); });

	auto *destroy = vm->add_subcommand("destroy", "destroy a domain (memory returns with the last mapping)");
	destroy->add_option("name", d->name, "domain")->required();
	add_check_flag(destroy, d->check);
	add_json_flag(destroy, d->json, "name, destroyed, held_bytes (returned with the last open file and mapping)");
	destroy->callback([&g, d] { run_destroy(g, *d); });
}

} // namespace poolctl
