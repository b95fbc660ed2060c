// poolctl pool online and add: DAX and CXL memory brought online as a pool
// (in the background with --async), and memory online already registered.
#include "pool.hpp"
#include "table.hpp"
#include <poolmem/chain.hpp>
#include <poolmem/control.hpp>
#include <poolmem/cxl.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/error.hpp>
#include <poolmem/kmod.hpp>
#include <poolmem/online.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolctl::pool_cmd {

namespace {

void progress_bar(unsigned done, unsigned total)
{
	int width = 40, fill = total ? static_cast<int>(width * done / total) : width;
	std::fprintf(stderr, "\r[%s%s] %u/%u blocks", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), done, total);
	if (done == total)
		std::fprintf(stderr, "\n");
}

/* The block bar on stderr when it is a terminal; none otherwise. */
poolmem::Progress block_bar()
{
	if (!isatty(STDERR_FILENO))
		return {};
	return [](unsigned done, unsigned total) { progress_bar(done, total); };
}

} // namespace

void run_online(const GlobalOptions &g, const OnlineOptions &o)
{
	overcommit_pct(o.overcommit); /* checked before anything happens */
	if (o.zone != "movable" && o.zone != "normal")
		throw UsageError("--zone: must be movable or normal, not '" + o.zone + "'");
	if (o.dax.empty() == o.cxl.empty())
		throw UsageError("pool online: give a dax device or --cxl MEMDEV[,MEMDEV...], not both");
	const uint64_t first_bytes = o.async ? size_value("--first", o.first) : 0;
	if (!o.size.empty() && o.cxl.empty())
		throw UsageError("--size: only with --cxl (a dax device is onlined whole)");
	if (!o.size.empty()) {
		const uint64_t step = (256ULL << 20) * o.cxl.size();
		const uint64_t v = size_value("--size", o.size);
		if (!v || v % step)
			throw UsageError("--size " + o.size + ": must be a multiple of " + poolmem::format_size(step) +
					 " (256 MiB per memdev: the CXL decoders' granule)");
	}

	/* the pool is named after the device the operator gave, by default */
	const std::string name = !o.name.empty() ? o.name : !o.cxl.empty() ? o.cxl[0] : o.dax;

	/* pool online NAME of a registered pool: its offlined memory back */
	if (!o.dax.empty() && o.cxl.empty() && o.name.empty() && poolmem::module_sysfs_present(g.sysfs))
		if (auto p = poolmem::read_pool(g.sysfs, o.dax)) {
			if (o.check) {
				if (o.json)
					print_json(g, {{"name", p->name}, {"onlined", false}, {"device", nullptr}});
				else
					std::printf("%s: would online its offline blocks again\n", p->name.c_str());
				return;
			}
			reonline_pool(g, o, *p);
			return;
		}

	/* every check before the first side effect (loading a module is one) */
	check_name(name, "pool");
	if (!o.dax.empty() && !fs::exists(fs::path(g.sysfs) / "bus/dax/devices" / o.dax))
		throw poolmem::Error::plain(o.dax, "no such dax device (see daxctl list)", ENOENT);
	for (const auto &m : o.cxl)
		if (!fs::exists(fs::path(g.sysfs) / "bus/cxl/devices" / m))
			throw poolmem::Error::plain(m, "no such CXL memdev (see cxl list -M)", ENOENT);
	if (poolmem::module_sysfs_present(g.sysfs))
		for (const auto &p : poolmem::read_pools(g.sysfs))
			if (p.name == name)
				throw poolmem::Error::plain(name, "cannot register pool: a pool of that name exists", EEXIST);
	if (o.check && o.json) {
		print_json(g, {{"name", name}, {"onlined", false}, {"device", o.dax.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.dax)}});
		return;
	}
	if (o.check) {
		std::printf("%s: would be onlined from %s\n", name.c_str(),
			    o.dax.empty() ? ("CXL memdevs " + o.cxl[0] + (o.cxl.size() > 1 ? ",..." : "")).c_str()
					  : o.dax.c_str());
		return;
	}

	poolmem::load_module("kmem");
	poolmem::load_module("poolmem");
	poolmem::Control ctl = open_control(g);
	for (const auto &p : poolmem::read_pools(g.sysfs))
		if (p.name == name)
			throw poolmem::Error::plain(name, "cannot register pool: a pool of that name exists", EEXIST);

	/* a raw CXL memdev: region + devdax namespace first, undone on failure */
	std::optional<poolmem::CxlDevdax> made;
	std::string devname = o.dax;
	if (!o.cxl.empty()) {
		for (const char *m : {"cxl_pmem", "nd_pmem", "dax_pmem", "device_dax"})
			poolmem::load_module(m);
		made = poolmem::cxl_make_devdax(o.cxl, o.size.empty() ? 0 : size_value("--size", o.size));
		poolmem::Dax d(g.sysfs);
		for (const auto &i : d.devices())
			if (i.resource >= made->resource && i.resource < made->resource + made->size)
				devname = i.name;
		if (devname.empty()) {
			poolmem::cxl_destroy_devdax(*made);
			throw poolmem::Error::plain(made->region, "no dax device appeared on the new namespace", ENXIO);
		}
		if (!o.json)
			std::printf("%s: region %s (%s) -> devdax %s\n", o.cxl[0].c_str(), made->region.c_str(),
				    poolmem::format_size(made->size).c_str(), devname.c_str());
	}
	try {
		OnlineOptions oo = o;
		if (made)
			oo.made_region = made->region;
		online_dax(g, oo, ctl, name, devname, first_bytes);
	} catch (...) {
		if (made)
			poolmem::cxl_destroy_devdax(*made);
		throw;
	}
}

/*
 * Online again the blocks of a registered pool's node that are offline
 * (after pool offline): the pool stays registered across an offline, and
 * this is the way back. The zone is --zone's.
 */
void reonline_pool(const GlobalOptions &g, const OnlineOptions &o, const poolmem::PoolStats &p)
{
	const poolmem::Zone zone = o.zone == "movable" ? poolmem::Zone::movable : poolmem::Zone::normal;
	const size_t total = node_blocks(g, p.node).size();
	auto t0 = std::chrono::steady_clock::now();
	const unsigned n = poolmem::online_again(g.sysfs, p.node, zone, block_bar());
	const double t = seconds_since(t0);
	const uint64_t bytes = n * poolmem::memory_block_size(g.sysfs);
	if (o.json) {
		print_json(g, {{"name", p.name},
			       {"onlined", true},
			       {"device", nullptr},
			       {"region", nullptr},
			       {"node", p.node},
			       {"zone", o.zone},
			       {"blocks", n},
			       {"blocks_total", total},
			       {"online_bytes", bytes},
			       {"seconds", n ? t : 0},
			       {"memmap", nullptr},
			       {"background", false}});
		return;
	}
	if (!n)
		std::printf("%s: every block of node %d is online already\n", p.name.c_str(), p.node);
	else
		std::printf("%s: onlined %s (%s) again on node %d in %.2f s, zone %s\n", p.name.c_str(),
			    poolmem::plural(n, "block").c_str(), poolmem::format_size(bytes).c_str(), p.node, t,
			    o.zone.c_str());
}

/*
 * poolctl pool add NAME --node N: memory the firmware or the kernel has
 * onlined already (a CPU-less node of CXL or HBM memory) becomes a pool.
 * Nothing is onlined or reconfigured, and remove gives it back as it was.
 */
void run_add(const GlobalOptions &g, const AddOptions &o)
{
	check_name(o.name, "pool");
	overcommit_pct(o.overcommit);
	const poolmem::Topology t = poolmem::read_topology(g.sysfs);
	const poolmem::Node *n = t.node(o.node);
	if (!n || !n->mem_total)
		throw UsageError("--node " + std::to_string(o.node) + ": no such node with online memory (see poolctl node list)");
	if (n->has_cpus() && !o.force)
		throw UsageError("--node " + std::to_string(o.node) +
				 ": the node has CPUs, so its DRAM is some VMs' local tier; --force to make it a pool anyway");
	if (poolmem::module_sysfs_present(g.sysfs))
		for (const auto &p : poolmem::read_pools(g.sysfs)) {
			if (p.name == o.name)
				throw poolmem::Error::plain(o.name, "cannot register pool: a pool of that name exists",
							    EEXIST);
			if (p.node == o.node)
				throw poolmem::Error::plain(o.name, "cannot register pool: node " + std::to_string(o.node) +
									    " is pool " + p.name + " already",
							    EEXIST);
		}
	const nlohmann::json result = {
		{"name", o.name}, {"registered", !o.check}, {"node", o.node}, {"online_bytes", n->mem_total}};
	if (o.check) {
		report(g, o.json, o.name + ": node " + std::to_string(o.node) + " would be registered as a pool", result);
		return;
	}
	poolmem::load_module("poolmem");
	poolmem::Control ctl = open_control(g);
	ctl.pool_add(o.name, o.node, overcommit_pct(o.overcommit));
	fs::create_directories(state_dir);
	std::ofstream(added_marker(o.name)) << o.node << '\n';
	report(g, o.json,
	       o.name + ": node " + std::to_string(o.node) + " (" + poolmem::format_size(n->mem_total) +
		       " online) registered as a pool",
	       result);
}


void online_dax(const GlobalOptions &g, const OnlineOptions &o, poolmem::Control &ctl, const std::string &name,
		const std::string &devname, uint64_t first_bytes)
{
	poolmem::OnlineRequest req;
	req.pool = name;
	req.device = devname;
	req.zone = o.zone == "movable" ? poolmem::Zone::movable : poolmem::Zone::normal;
	req.memmap = o.memmap;
	req.overcommit_pct = overcommit_pct(o.overcommit);
	req.progressive = o.async;
	req.first_bytes = first_bytes;
	req.sysfs = g.sysfs;
	bool open = false; /* a bar on stderr not ended by a newline (progress_bar ends a full one) */
	if (auto bar = block_bar())
		req.progress = [&open, bar](unsigned done, unsigned total) {
			open = done < total;
			bar(done, total);
		};
	req.note = [&](const std::string &line) { std::fprintf(stderr, "poolctl: %s: %s\n", devname.c_str(), line.c_str()); };
	poolmem::OnlineResult r;
	try {
		r = poolmem::online_dax(ctl, req);
	} catch (...) {
		if (open)
			std::fprintf(stderr, "\n"); /* the error on a line of its own, not after the bar */
		throw;
	}
	if (open)
		std::fprintf(stderr, "\n"); /* the bar stops where the background goes on */
	const std::string memmap_text = "memmap " + poolmem::format_size(r.memmap_bytes) +
					(r.memmap_device ? " on the device" : " in local DRAM");
	if (o.json) {
		/* what is online now; "background" when the rest goes on */
		print_json(g, {{"name", name},
			       {"onlined", true},
			       {"device", devname},
			       {"region", o.made_region.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.made_region)},
			       {"node", r.node},
			       {"zone", o.zone},
			       {"blocks", r.blocks},
			       {"blocks_total", r.blocks_total},
			       {"online_bytes", r.online_bytes},
			       {"seconds", r.seconds},
			       {"memmap", r.memmap_device ? "device" : "local"},
			       {"background", r.background}});
		return;
	}
	if (!r.background)
		std::printf("%s: onlined %u blocks (%s) of %s on node %d in %.2f s (%.3f s/GiB), zone %s, %s\n",
			    name.c_str(), r.blocks, poolmem::format_size(r.online_bytes).c_str(), devname.c_str(), r.node,
			    r.seconds, r.seconds / (static_cast<double>(r.online_bytes) / (1ULL << 30)), o.zone.c_str(),
			    memmap_text.c_str());
	else
		std::printf("%s: onlined %u of %u blocks (%s) of %s on node %d in %.2f s, zone %s, %s; "
			    "the rest continues in the background%s (poolctl pool show %s)\n",
			    name.c_str(), r.blocks, r.blocks_total, poolmem::format_size(r.online_bytes).c_str(),
			    devname.c_str(), r.node, r.seconds, o.zone.c_str(), memmap_text.c_str(),
			    r.split ? " as a second dax device" : "", name.c_str());
}

} // namespace poolctl::pool_cmd
