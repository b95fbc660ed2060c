// poolctl profile: directories of the poolmem file system whose files
// become domains (QEMU mem-path=DIR, libvirt memory_backing_dir).
#include "commands.hpp"
#include "qemu_args.hpp"
#include "table.hpp"

#include <poolmem/autopilot.hpp>
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/fs.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include "policy/pm_policy.h"

#include <algorithm>
#include <iostream>
#include <optional>

namespace poolctl {

namespace {

/// --libvirt's VM, for a znuma profile's <cpu><numa> cells
struct LibvirtVm {
	std::string size; ///< empty: not given
	unsigned vcpus = 1;
};

struct CreateOptions {
	std::string name, local = "0", pool = "0";
	PlacementOptions place;
	bool libvirt = false, znuma = false;
	bool check = false; ///< --check: every check, nothing made
	bool json = false;
	LibvirtVm vm;
	AutopilotBoundOptions autopilot;
};

struct NameOptions {
	std::string name;
	bool json = false, libvirt = false, check = false;
	LibvirtVm vm;
};

/// "25%" -> percentage, "4G" -> byte cap, or UsageError naming OPTION.
poolmem::ProfileQuota quota_value(const std::string &option, const std::string &text)
{
	if (!text.empty() && text.back() == '%') {
		size_t pos = 0;
		unsigned long v = 0;
		try {
			v = std::stoul(text.substr(0, text.size() - 1), &pos);
		} catch (const std::exception &) {
			pos = std::string::npos;
		}
		if (pos != text.size() - 1 || v > 100)
			throw UsageError(option + ": invalid percentage '" + text + "' (0% to 100%)");
		return {static_cast<uint32_t>(v), 0};
	}
	return {0, size_value(option, text)};
}

std::string quota_text(const poolmem::ProfileQuota &q)
{
	if (q.pct)
		return std::to_string(q.pct) + "%";
	return q.bytes ? poolmem::format_size(q.bytes) : "0";
}

/*
 * A znuma profile's windows: the local window is LOCAL% of a VM's size and
 * the kernel makes the pool window POOL/LOCAL times as large, exactly and
 * in whole chunks (pm_profile_fill_create). Returns {local, pool}, or
 * throws UsageError naming the nearest size that works.
 */
std::pair<uint64_t, uint64_t> znuma_split(const poolmem::ProfileSpec &s, const std::string &text, uint64_t size)
{
	const uint64_t chunk = s.chunk_bytes ? s.chunk_bytes : PM_DOMAIN_CHUNK_MIN;
	const uint64_t lp = s.local.pct, pp = s.pool.pct;
	auto fits = [&](uint64_t local) { return local % chunk == 0 && local * pp % lp == 0 && local * pp / lp % chunk == 0; };
	if (size * lp % 100 == 0 && fits(size * lp / 100) && size * lp / 100 + size * lp / 100 * pp / lp == size)
		return {size * lp / 100, size - size * lp / 100};
	/* the smallest size above with a split that works: some multiple of the chunk does */
	uint64_t local = (size * lp / 100) / chunk * chunk + chunk;
	while (!fits(local) && local <= PM_DOMAIN_BYTES_MAX)
		local += chunk;
	throw UsageError("--size " + text + ": " + std::to_string(lp) + "% local and " + std::to_string(pp) +
			 "% pool windows of whole " + poolmem::format_size(chunk) + " chunks don't split it (use --size " +
			 std::to_string((local + local * pp / lp) >> 20) + "M)");
}

void print_libvirt(const std::string &dir, const std::string &profile)
{
	std::printf("# /etc/libvirt/qemu.conf (restart libvirtd); libvirt makes <dir>/libvirt/qemu/<id>-<vm>/\n"
		    "memory_backing_dir = \"%s\"\n"
		    "<!-- in <domain>: guest RAM as a file in that directory, one domain per VM -->\n"
		    "<memoryBacking>\n"
		    "  <source type='file'/>\n"
		    "  <access mode='shared'/>\n"
		    "</memoryBacking>\n"
		    "<!-- with poolmem's qemu hook (/etc/libvirt/hooks/qemu.d/poolmem): this profile, and a domain named "
		    "after the VM -->\n"
		    "<metadata>\n"
		    "  <poolmem:profile xmlns:poolmem='http://poolmem.org/xmlns/libvirt/1.0' name='%s'/>\n"
		    "</metadata>\n",
		    dir.c_str(), profile.c_str());
}

/*
 * A znuma profile's VM in libvirt 9.0: cell 0 with the vCPUs and cell 1
 * with none, each backed by a file libvirt names itself
 * (<dir>/libvirt/qemu/<id>-<vm>/ram-node0 and ram-node1). QEMU creates and
 * sizes them in that order, and the kernel makes them the local and pool
 * windows of one domain. Distances and HMAT as vm create --znuma gives
 * them to QEMU.
 */
void print_libvirt_znuma(const GlobalOptions &g, const poolmem::ProfileSpec &s, const LibvirtVm &vm)
{
	if (vm.size.empty())
		throw UsageError(s.name + ": --libvirt with a znuma profile needs --size (the VM's memory) for its "
					  "NUMA cells");
	const uint64_t size = size_value("--size", vm.size);
	const auto [local, pool] = znuma_split(s, vm.size, size);
	const ZnumaLink l = znuma_link(g, s.home_node, s.pools);
	const std::string cpus = vm.vcpus > 1 ? "0-" + std::to_string(vm.vcpus - 1) : "0";
	std::printf("<!-- in <domain>: node 0 the local window with the vCPUs, node 1 the pool window -->\n"
		    "<memory unit='KiB'>%lu</memory>\n"
		    "<vcpu placement='static'>%u</vcpu>\n"
		    "<cpu>\n"
		    "  <numa>\n"
		    "    <cell id='0' cpus='%s' memory='%lu' unit='KiB' memAccess='shared'>\n"
		    "      <distances>\n"
		    "        <sibling id='0' value='10'/>\n"
		    "        <sibling id='1' value='%d'/>\n"
		    "      </distances>\n"
		    "    </cell>\n"
		    "    <cell id='1' memory='%lu' unit='KiB' memAccess='shared'>\n"
		    "      <distances>\n"
		    "        <sibling id='0' value='%d'/>\n"
		    "        <sibling id='1' value='10'/>\n"
		    "      </distances>\n"
		    "    </cell>\n",
		    static_cast<unsigned long>(size >> 10), vm.vcpus, cpus.c_str(),
		    static_cast<unsigned long>(local >> 10), l.distance, static_cast<unsigned long>(pool >> 10),
		    l.distance);
	if (l.hmat) {
		std::printf("    <interconnects>\n");
		for (int t = 0; t < 2; t++)
			std::printf("      <latency initiator='0' target='%d' type='access' value='%lu'/>\n", t,
				    static_cast<unsigned long>(l.latency_ns[t]));
		for (int t = 0; t < 2; t++)
			if (l.bandwidth_mbps[t])
				std::printf("      <bandwidth initiator='0' target='%d' type='access' value='%lu' "
					    "unit='MiB'/>\n",
					    t, static_cast<unsigned long>(l.bandwidth_mbps[t]));
		std::printf("    </interconnects>\n");
	}
	std::printf("  </numa>\n"
		    "</cpu>\n");
}

void print_libvirt_profile(const GlobalOptions &g, const poolmem::ProfileSpec &s, const LibvirtVm &vm)
{
	if (s.znuma)
		print_libvirt_znuma(g, s, vm); /* its usage errors before anything is printed */
	print_libvirt(g.mount + "/" + s.name, s.name);
}

/*
 * Every rule the kernel applies to a profile (pm_profile_check), checked
 * first so that each gets its own message and exit 2, as vm create's do.
 */
void check_profile(const GlobalOptions &g, const poolmem::ProfileSpec &s, const CreateOptions &o)
{
	check_name(s.name, "profile");
	/* kmod/policy's pm_profile_geometry is the one rule list; the kernel checks it again */
	const uint64_t chunk = s.chunk_bytes ? s.chunk_bytes : PM_DOMAIN_CHUNK_MIN;
	const u32 pct[PM_NR_TIERS] = {s.local.pct, s.pool.pct};
	const u64 bytes[PM_NR_TIERS] = {s.local.bytes, s.pool.bytes};
	u32 tier = PM_TIER_LOCAL;
	const auto geo = pm_profile_geometry(s.chunk_bytes, pct, bytes, s.znuma, &tier);
	const std::string opt = tier == PM_TIER_LOCAL ? "--local " + o.local : "--pool " + o.pool;
	const uint64_t b = bytes[tier];
	switch (geo) {
	case PM_PGEO_OK:
		break;
	case PM_PGEO_CHUNK:
		throw UsageError("--chunk " + o.place.chunk + ": must be a power of two from 2M to 1G");
	case PM_PGEO_QUOTA_ALIGN: {
		const uint64_t lo = b / chunk * chunk;
		throw UsageError(opt + ": not a multiple of the chunk size " + poolmem::format_size(chunk) + " (use " +
				 (lo ? poolmem::format_size(lo) + " or " : "") + poolmem::format_size(lo + chunk) + ")");
	}
	case PM_PGEO_QUOTA_MAX:
		throw UsageError(opt + ": above the largest domain (" + poolmem::format_size(PM_DOMAIN_BYTES_MAX) + ")");
	case PM_PGEO_COVER:
		throw UsageError("--local + --pool (" + quota_text(s.local) + " + " + quota_text(s.pool) +
				 ") must cover 100% of a VM's size");
	case PM_PGEO_ZNUMA:
		throw UsageError("--znuma: --local " + o.local + " and --pool " + o.pool +
				 " must be percentages adding up to 100, neither 0 (the windows are the quotas)");
	default: /* a percentage above 100, or both forms: quota_value() lets neither through */
		throw UsageError(opt + ": " + pm_profile_geometry_names[geo]);
	}
	if ((!o.vm.size.empty() || o.vm.vcpus != 1) && !(s.znuma && o.libvirt))
		throw UsageError("--size and --vcpus describe a VM for --znuma --libvirt only");
	if (s.znuma && o.libvirt && o.vm.size.empty())
		throw UsageError(s.name + ": --znuma --libvirt needs --size (the VM's memory) for its NUMA cells");
	if (!o.vm.vcpus)
		throw UsageError("--vcpus 0: a guest needs a CPU");
	check_placement(g, s.home_node, s.pools);
}

void run_create(const GlobalOptions &g, const CreateOptions &o)
{
	poolmem::ProfileSpec s;
	s.name = o.name;
	s.local = quota_value("--local", o.local);
	s.pool = quota_value("--pool", o.pool);
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
	check_profile(g, s, o);
	const poolmem::autopilot::Bounds bounds{o.autopilot.min, o.autopilot.max, o.autopilot.slo};
	if (o.autopilot.any()) {
		if (s.znuma)
			throw UsageError("--znuma: no --autopilot-* (a znuma domain's windows are fixed)");
		poolmem::autopilot::check_bounds(s.name, bounds, 0);
	}
	const std::string dir = g.mount + "/" + s.name;
	auto result = [&](bool created) {
		return nlohmann::json{{"name", s.name}, {"created", created}, {"path", dir}, {"local", o.local},
				      {"pool", o.pool}, {"znuma", s.znuma},
				      {"autopilot", autopilot_bounds_json(o.autopilot)}};
	};
	if (s.znuma && o.libvirt)
		znuma_split(s, o.vm.size, size_value("--size", o.vm.size));

	if (o.check && !g.planned_pools.empty() && !poolmem::module_sysfs_present(g.sysfs)) {
		/* the module comes with the planned pools: nothing there to clash with yet */
		report(g, o.json, s.name + ": would be created (local " + o.local + ", pool " + o.pool + ")", result(false));
		return;
	}
	poolmem::Control ctl = open_control(g);
	if (o.check) {
		/* the kernel's own rules are check_profile()'s; its name must be free */
		const auto taken = [&](const std::vector<std::string> &names) {
			return std::find(names.begin(), names.end(), s.name) != names.end();
		};
		if (taken(ctl.profile_names()) || taken(ctl.domain_names()))
			throw poolmem::Error::plain(s.name, "cannot create profile: a profile or domain of that name exists",
						    EEXIST);
		report(g, o.json, s.name + ": would be created (local " + o.local + ", pool " + o.pool + ")", result(false));
		return;
	}
	poolmem::ensure_mounted(g.mount);
	ctl.profile_create(s);
	/* a new profile: its own bounds, none that an earlier profile of its name left */
	try {
		namespace ap = poolmem::autopilot;
		if (o.autopilot.any())
			ap::store_bounds(ap::store_path, ap::Kind::profile, s.name, bounds, 0, true);
		else
			ap::forget_bounds(ap::store_path, ap::Kind::profile, s.name);
	} catch (...) {
		ctl.profile_remove(s.name);
		throw;
	}
	if (o.json) {
		print_json(g, result(true));
		return;
	}
	if (o.libvirt) {
		print_libvirt_profile(g, s, o.vm);
		return;
	}
	if (s.znuma) {
		/* QEMU without libvirt: one named file per node, created by the same QEMU, node 0 first */
		std::printf("%s\n-object memory-backend-file,id=mem0,mem-path=%s/VM/node0,size=LOCAL,share=on "
			    "-object memory-backend-file,id=mem1,mem-path=%s/VM/node1,size=POOL,share=on "
			    "-numa node,nodeid=0,cpus=0,memdev=mem0 -numa node,nodeid=1,memdev=mem1 -m LOCAL+POOL "
			    "(mkdir %s/VM first; LOCAL:POOL = %u:%u)\n",
			    dir.c_str(), dir.c_str(), dir.c_str(), dir.c_str(), s.local.pct, s.pool.pct);
		return;
	}
	std::printf("%s\n-object memory-backend-file,id=mem0,mem-path=%s,size=SIZE,share=on,align=%lu "
		    "-machine memory-backend=mem0 -m SIZE\n",
		    dir.c_str(), dir.c_str(), static_cast<unsigned long>(std::max<uint64_t>(s.chunk_bytes, 2ULL << 20)));
}

nlohmann::json profile_json(const poolmem::ProfileInfo &p, const std::string &mount)
{
	return {
		{"name", p.spec.name},
		{"directory", mount + "/" + p.spec.name},
		{"chunk_bytes", p.spec.chunk_bytes},
		{"local_quota_pct", p.spec.local.pct},
		{"local_quota_bytes", p.spec.local.bytes},
		{"pool_quota_pct", p.spec.pool.pct},
		{"pool_quota_bytes", p.spec.pool.bytes},
		{"pool_mask", p.pool_mask},
		{"home_node", p.spec.home_node},
		{"tier_policy", poolmem::to_string(p.spec.tier_policy)},
		{"pool_select", poolmem::to_string(p.spec.pool_select)},
		{"pinnable", p.spec.pinnable},
		{"znuma", p.spec.znuma},
		{"uid", p.spec.uid},
		{"gid", p.spec.gid},
		{"mode", p.spec.mode},
		{"domains", p.domains},
	};
}

void run_list(const GlobalOptions &g, bool json)
{
	poolmem::Control ctl = open_control(g);
	std::vector<poolmem::ProfileInfo> profiles;
	for (const auto &n : ctl.profile_names())
		profiles.push_back(ctl.profile_info(n));
	if (json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &p : profiles)
			out.push_back(profile_json(p, g.mount));
		print_json(g, out);
		return;
	}
	Table t({"NAME", ">LOCAL", ">POOL", ">CHUNK", "TIER-POLICY", "POOL-SELECT", ">DOMAINS", "DIRECTORY"});
	for (const auto &p : profiles)
		t.row({p.spec.name, quota_text(p.spec.local), quota_text(p.spec.pool),
		       poolmem::format_size(p.spec.chunk_bytes),
		       p.spec.znuma ? "znuma" : poolmem::to_string(p.spec.tier_policy),
		       poolmem::to_string(p.spec.pool_select), std::to_string(p.domains), g.mount + "/" + p.spec.name});
	t.print();
}

void run_show(const GlobalOptions &g, const NameOptions &o)
{
	if ((!o.vm.size.empty() || o.vm.vcpus != 1) && !o.libvirt)
		throw UsageError("--size and --vcpus describe a VM for --libvirt only");
	if (!o.vm.vcpus)
		throw UsageError("--vcpus 0: a guest needs a CPU");
	poolmem::Control ctl = open_control(g);
	auto p = ctl.profile_info(o.name);
	if (o.libvirt) {
		/* the allowed pools by name, for the distance to the nearest */
		for (const auto &n : ctl.pool_names())
			if (p.pool_mask >> ctl.pool_info(n).id & 1)
				p.spec.pools.push_back(n);
		print_libvirt_profile(g, p.spec, o.vm);
		return;
	}
	/* counts that outlive its domains (module ABI 8; absent before) */
	std::optional<poolmem::Counts> counts;
	for (auto &c : poolmem::read_profile_counts(g.sysfs))
		if (c.profile == o.name)
			counts = c;
	if (o.json) {
		auto j = profile_json(p, g.mount);
		if (counts)
			j["counts"] = counts_json(*counts);
		print_json(g, j);
		return;
	}
	std::printf("profile %s: %s/%s, %lu live domains\n", o.name.c_str(), g.mount.c_str(), o.name.c_str(),
		    static_cast<unsigned long>(p.domains));
	if (counts)
		std::printf("  counts  %lu SIGBUS, %lu refused, %lu domains made, %lu gone, %s discarded\n",
			    static_cast<unsigned long>(counts->sigbus),
			    static_cast<unsigned long>(counts->admission_refusals),
			    static_cast<unsigned long>(counts->domains_created),
			    static_cast<unsigned long>(counts->domains_destroyed),
			    poolmem::format_size(counts->discarded_bytes).c_str());
	std::printf("  quotas  local %s, pool %s of each VM's size, %s chunks\n", quota_text(p.spec.local).c_str(),
		    quota_text(p.spec.pool).c_str(), poolmem::format_size(p.spec.chunk_bytes).c_str());
	if (p.spec.znuma)
		std::printf("  policy  znuma windows (a VM's first file local, its next pool), %s%s\n",
			    poolmem::to_string(p.spec.pool_select).c_str(), p.spec.pinnable ? ", pinnable" : "");
	else
		std::printf("  policy  %s, %s%s\n", poolmem::to_string(p.spec.tier_policy).c_str(),
			    poolmem::to_string(p.spec.pool_select).c_str(), p.spec.pinnable ? ", pinnable" : "");
	std::printf("  owner   %u:%u mode %04o\n", p.spec.uid, p.spec.gid, p.spec.mode);
}

void run_remove(const GlobalOptions &g, const NameOptions &o)
{
	poolmem::Control ctl = open_control(g);
	if (o.check) {
		/* the kernel's rules: a profile of that name, and no live domain made from it */
		const auto info = ctl.profile_info(o.name);
		if (info.domains)
			throw poolmem::Error::plain(o.name, "cannot remove profile: " + poolmem::plural(info.domains, "live domain") +
								    " made from it (directory not empty)",
						    ENOTEMPTY);
		report(g, o.json, o.name + ": remove would go ahead", {{"name", o.name}, {"removed", false}});
		return;
	}
	ctl.profile_remove(o.name);
	try {
		poolmem::autopilot::forget_bounds(poolmem::autopilot::store_path, poolmem::autopilot::Kind::profile, o.name);
	} catch (const poolmem::Error &e) {
		std::fprintf(stderr, "poolctl: %s (its autopilot bounds stay)\n", e.what());
	}
	report(g, o.json, o.name + ": profile removed", {{"name", o.name}, {"removed", true}});
}

} // namespace

void setup_profile(CLI::App &app, const GlobalOptions &g)
{
	auto *pr = app.add_subcommand("profile", "profiles: directories whose files QEMU or libvirt make become domains");
	pr->require_subcommand(1);

	auto c = std::make_shared<CreateOptions>();
	auto *create = pr->add_subcommand("create", "create a profile directory <mount>/<name>");
	create->add_option("name", c->name, "profile name")->required();
	create->add_option("--local", c->local, "local DRAM quota: PCT% of each VM's size, or a SIZE cap (default 0)");
	create->add_option("--pool", c->pool, "pool quota: PCT% or SIZE (default 0); with --local it must cover 100%");
	add_placement_options(create, c->place, "the directory (who may create VMs in it)", "0700");
	create->add_flag("--znuma", c->znuma,
			 "a VM's two files (libvirt's ram-node0, ram-node1) are the local and pool windows of one "
			 "domain: guest node 0 local, node 1 pool (percentages adding up to 100)");
	create->add_flag("--libvirt", c->libvirt,
			 "print the qemu.conf line and <memoryBacking> XML (with --znuma, the <cpu><numa> cells)");
	create->add_option("--size", c->vm.size, "with --znuma --libvirt: the VM's memory, for its cells");
	create->add_option("--vcpus", c->vm.vcpus, "with --znuma --libvirt: the VM's CPUs, all on node 0 (default 1)");
	add_autopilot_bound_options(create, c->autopilot, "each of its VMs'");
	add_check_flag(create, c->check);
	add_json_flag(create, c->json, "name, created, path (the directory), local, pool, znuma")->excludes("--libvirt");
	create->callback([&g, c] { run_create(g, *c); });

	auto l = std::make_shared<NameOptions>();
	auto *list = pr->add_subcommand("list", "list profiles");
	list->add_flag("--json", l->json, "print JSON");
	list->callback([&g, l] { run_list(g, l->json); });

	auto s = std::make_shared<NameOptions>();
	auto *show = pr->add_subcommand("show", "one profile's quotas, policies and live domains");
	show->add_option("name", s->name, "profile")->required();
	show->add_flag("--json", s->json, "print JSON");
	show->add_flag("--libvirt", s->libvirt,
		       "print the qemu.conf line and XML for a VM (a znuma profile: its cells, for --size)");
	show->add_option("--size", s->vm.size, "with --libvirt on a znuma profile: the VM's memory");
	show->add_option("--vcpus", s->vm.vcpus, "with --libvirt on a znuma profile: the VM's CPUs (default 1)");
	show->callback([&g, s] { run_show(g, *s); });

	auto r = std::make_shared<NameOptions>();
	auto *remove = pr->add_subcommand("remove", "remove an empty profile (as rmdir of its directory)");
	remove->add_option("name", r->name, "profile")->required();
	add_check_flag(remove, r->check);
	add_json_flag(remove, r->json, "name, removed");
	remove->callback([&g, r] { run_remove(g, *r); });
}

} // namespace poolctl
