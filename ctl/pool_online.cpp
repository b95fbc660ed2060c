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

void write_state(const std::string &pool, const OnlineState &s)
{
	fs::create_directories(state_dir);
	fs::path tmp = state_dir / (pool + ".online.tmp");
	{
		std::ofstream f(tmp);
		f << s.done << ' ' << s.total << ' ' << s.seconds << ' ' << s.state << '\n';
	}
	fs::rename(tmp, state_dir / (pool + ".online"));
}

} // namespace

std::optional<OnlineState> read_state(const std::string &pool)
{
	std::ifstream f(state_dir / (pool + ".online"));
	OnlineState s;
	if (!(f >> s.done >> s.total >> s.seconds))
		return std::nullopt;
	std::getline(f >> std::ws, s.state);
	return s;
}

namespace {

void progress_bar(unsigned done, unsigned total)
{
	int width = 40, fill = total ? static_cast<int>(width * done / total) : width;
	std::fprintf(stderr, "\r[%s%s] %u/%u blocks", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), done, total);
	if (done == total)
		std::fprintf(stderr, "\n");
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
	std::vector<unsigned> off;
	for (unsigned b : node_blocks(g, p.node))
		if (poolmem::block_state(g.sysfs, b) != "online")
			off.push_back(b);
	auto result = [&](size_t blocks, double secs) {
		return nlohmann::json{{"name", p.name},
				      {"onlined", true},
				      {"device", nullptr},
				      {"region", nullptr},
				      {"node", p.node},
				      {"zone", o.zone},
				      {"blocks", blocks},
				      {"blocks_total", node_blocks(g, p.node).size()},
				      {"online_bytes", blocks * poolmem::memory_block_size(g.sysfs)},
				      {"seconds", secs},
				      {"memmap", nullptr},
				      {"background", false}};
	};
	if (off.empty()) {
		if (o.json)
			print_json(g, result(0, 0));
		else
			std::printf("%s: every block of node %d is online already\n", p.name.c_str(), p.node);
		return;
	}
	const bool tty = isatty(STDERR_FILENO);
	auto t0 = std::chrono::steady_clock::now();
	poolmem::online_blocks(g.sysfs, off, zone,
			       tty ? poolmem::Progress([&](unsigned d, unsigned) { progress_bar(d, off.size()); })
				   : poolmem::Progress());
	const double t = seconds_since(t0);
	const uint64_t bytes = off.size() * poolmem::memory_block_size(g.sysfs);
	if (o.json) {
		print_json(g, result(off.size(), t));
		return;
	}
	std::printf("%s: onlined %s (%s) again on node %d in %.2f s, zone %s\n", p.name.c_str(),
		    poolmem::plural(off.size(), "block").c_str(), poolmem::format_size(bytes).c_str(), p.node, t,
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


/*
 * The background onlining of a pool holds an exclusive flock on
 * /run/poolctl/<pool>.lock while it runs (it goes with the process, however
 * that ends); offline and remove refuse while it is held.
 */
int background_lock(const std::string &pool)
{
	fs::create_directories(state_dir);
	const fs::path path = state_dir / (pool + ".lock");
	int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600); /* inherited by the child: no O_CLOEXEC needed */
	if (fd < 0)
		throw poolmem::Error(path.string(), "cannot open", errno);
	if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		::close(fd);
		if (e == EWOULDBLOCK)
			throw poolmem::Error::plain(pool, "onlining continues in the background; wait for it "
							  "(poolctl pool show " + pool + ")",
						    EBUSY);
		throw poolmem::Error(path.string(), "cannot lock", e);
	}
	return fd;
}

/*
 * Progressive onlining splits a device of a dynamic dax region into pieces
 * (kmem sets up the memmap and memory block devices of a whole device at
 * once, so the first GiB would wait for all of it). The pieces are kept in
 * /run/poolctl/<pool>.pieces: the device the operator gave and its size,
 * then one device made per line, so that remove can give the region back
 * as one device of that size.
 */
fs::path pieces_file(const std::string &pool) { return state_dir / (pool + ".pieces"); }

void write_pieces(const std::string &pool, const Pieces &p)
{
	fs::create_directories(state_dir);
	fs::path tmp = pieces_file(pool).string() + ".tmp";
	{
		std::ofstream f(tmp);
		f << p.device << ' ' << p.size << '\n';
		for (const auto &m : p.made)
			f << m << '\n';
	}
	fs::rename(tmp, pieces_file(pool));
}

std::optional<Pieces> read_pieces(const std::string &pool)
{
	std::ifstream f(pieces_file(pool));
	Pieces p;
	if (!(f >> p.device >> p.size))
		return std::nullopt;
	for (std::string m; f >> m;)
		p.made.push_back(m);
	return p;
}

/*
 * Give a split device back as it was: the pieces made are deleted and the
 * device grows back to its size, in devdax mode. Every block must be
 * offline. Returns the pieces deleted.
 */
size_t merge_pieces(poolmem::Dax &dax, const Pieces &p)
{
	size_t n = 0;
	for (auto it = p.made.rbegin(); it != p.made.rend(); ++it) {
		try {
			dax.device(*it);
		} catch (const poolmem::Error &) {
			continue; /* never made, or gone already */
		}
		dax.destroy_device(*it);
		n++;
	}
	dax.resize(p.device, p.size);
	dax.to_devdax(p.device);
	return n;
}

namespace {

/* Online dax device DEVNAME and register it as pool NAME (checked unused). */
/*
 * Where kmem is to put the memmap of DEVNAME's memory (--memmap), set on the
 * device before it is bound: 64 bytes of struct page per 4 KiB page, 16 MiB
 * per GiB, 16 GiB of DRAM for a TiB of CXL memory when it goes to the
 * nearest DRAM (local). On the device (6.8+, booted with
 * memory_hotplug.memmap_on_memory) each memory block holds its own in its
 * first pages: no DRAM, but 1/64 of the pool is no pool memory, and those
 * pages can't be offlined apart from their block (a block goes whole).
 * auto: the device's where the kernel can, else local. Without the boot
 * parameter kmem ignores the device's setting, which is left alone. A device the kernel
 * bound to kmem itself (6.5+: hmem, CXL RAM) with every block offline goes
 * back to devdax to be set; with blocks online it stays as it is (auto) or
 * is refused (EBUSY). Updates BEFORE; returns whether the memmap will be
 * on the device.
 */
bool place_memmap(const GlobalOptions &g, poolmem::Dax &dax, const std::string &devname, const std::string &choice,
		  poolmem::DaxInfo &before)
{
	const std::optional<bool> now = dax.memmap_on_memory(devname);
	const bool booted = poolmem::memmap_on_memory_booted(g.sysfs);
	bool want = false;
	if (choice == "device") {
		if (!now)
			throw poolmem::Error::plain(devname, "this kernel cannot put a dax device's memmap on its memory "
							     "(Linux 6.8 and later can); use --memmap local",
						    EOPNOTSUPP);
		if (!booted)
			throw poolmem::Error::plain(devname, "the kernel was not booted with "
							     "memory_hotplug.memmap_on_memory=1, so kmem puts the memmap "
							     "in local DRAM; boot with it, or use --memmap local",
						    EOPNOTSUPP);
		want = true;
	} else if (choice == "auto") {
		want = now.has_value() && booted;
	}
	/* without the boot parameter kmem puts it in DRAM whatever the device says */
	if (!now || !booted)
		return false;
	if (*now == want)
		return want;
	if (before.system_ram) {
		bool all_offline = true;
		for (unsigned b : dax.blocks(devname))
			all_offline = all_offline && poolmem::block_state(g.sysfs, b) != "online";
		if (!all_offline) {
			if (choice != "auto")
				throw poolmem::Error::plain(devname, std::string("bound to kmem with its memmap ") +
									     (*now ? "on the device" : "in local DRAM") +
									     " and memory online: offline it first",
							    EBUSY);
			return *now;
		}
		dax.to_devdax(devname);
		before = dax.device(devname);
	}
	dax.set_memmap_on_memory(devname, want);
	return want;
}

} // namespace

void online_dax(const GlobalOptions &g, const OnlineOptions &o, poolmem::Control &ctl, const std::string &name,
		const std::string &devname, uint64_t first_bytes)
{
	const poolmem::Zone zone = o.zone == "movable" ? poolmem::Zone::movable : poolmem::Zone::normal;
	poolmem::Dax dax(g.sysfs);

	poolmem::DaxInfo before = dax.device(devname);
	/*
	 * Memory the kernel onlined by itself into another zone than the one
	 * asked for: on a kernel that auto-onlines (Debian's 6.12 does, into
	 * ZONE_NORMAL), the hmem and CXL RAM devices it binds to kmem at boot
	 * come online there. It is taken back (offlined) and onlined below in
	 * the zone asked for; where the kernel can't give it back (memory in
	 * use), the command is refused and the blocks stay as they were.
	 */
	if (before.system_ram) {
		const std::string want = zone == poolmem::Zone::movable ? "Movable" : "Normal";
		std::vector<unsigned> other;
		for (unsigned b : dax.blocks(devname))
			if (poolmem::block_state(g.sysfs, b) == "online" && poolmem::block_zone(g.sysfs, b) != want)
				other.push_back(b);
		if (!other.empty()) {
			const std::string had = poolmem::block_zone(g.sysfs, other.front());
			std::vector<int> errs;
			const auto refused = poolmem::offline_blocks(g.sysfs, other, &errs);
			if (!refused.empty()) {
				std::vector<unsigned> back;
				for (unsigned b : other)
					if (std::find(refused.begin(), refused.end(), b) == refused.end())
						back.push_back(b);
				try {
					poolmem::online_blocks(g.sysfs, back, had == "Movable" ? poolmem::Zone::movable
												: poolmem::Zone::normal);
				} catch (const poolmem::Error &) {
				}
				throw poolmem::Error::plain(
					devname,
					std::to_string(refused.size()) + " of the " + std::to_string(other.size()) +
						" blocks the kernel onlined into ZONE_" + had +
						" by itself can't go offline (memory" + std::to_string(refused.front()) +
						": " + std::strerror(errs.front()) + "): --zone " +
						(had == "Movable" ? "movable" : "normal") +
						" takes the device as it is, or boot with memhp_default_state=offline",
					EBUSY);
			}
			std::fprintf(stderr, "poolctl: %s: took back %zu blocks the kernel had onlined into ZONE_%s itself\n",
				     devname.c_str(), other.size(), had.c_str());
			before = dax.device(devname);
		}
	}
	/*
	 * Since 6.5 ("dax: Assign RAM regions to memory-hotplug by default")
	 * the kernel binds Soft Reserved (hmem) and CXL RAM devices to kmem
	 * itself, so on 6.12 such a device comes as system-ram with every
	 * block offline. Nothing uses offline memory: a progressive online,
	 * which must reshape the device first, takes it back to devdax.
	 */
	if (before.system_ram && o.async && dax.dynamic(devname)) {
		bool all_offline = true;
		for (unsigned b : dax.blocks(devname))
			all_offline = all_offline && poolmem::block_state(g.sysfs, b) != "online";
		if (all_offline) {
			dax.to_devdax(devname);
			before = dax.device(devname);
		}
	}
	const bool memmap_device = place_memmap(g, dax, devname, o.memmap, before);
	/*
	 * The kernel's own auto-onlining (auto_online_blocks: Debian's 6.12
	 * onlines hot-added memory into ZONE_NORMAL) is off around the kmem
	 * bind (poolmem::Dax::to_system_ram, poolmem::AutoOnlineOff), so the
	 * blocks stay offline for us: no race, no reboot parameter.
	 */
	const uint64_t block_size = poolmem::memory_block_size(g.sysfs);
	const uint64_t first_piece = (std::max<uint64_t>(first_bytes, 1) + block_size - 1) / block_size * block_size;

	/* split only a device poolctl may reshape: devdax, in a dynamic region */
	const bool split = o.async && !before.system_ram && before.size > first_piece && dax.dynamic(devname);
	const unsigned total_blocks = static_cast<unsigned>(before.size / block_size);

	auto t0 = std::chrono::steady_clock::now();
	if (split) {
		dax.resize(devname, first_piece);
		write_pieces(name, {devname, before.size, {}});
	}
	auto unsplit = [&] {
		if (split) {
			try {
				dax.resize(devname, before.size);
				dax.to_devdax(devname);
			} catch (const poolmem::Error &) {
			}
			std::error_code ec;
			fs::remove(pieces_file(name), ec);
		}
	};
	try {
		dax.to_system_ram(devname);
	} catch (...) {
		unsplit();
		throw;
	}
	const int node = dax.device(devname).target_node;
	const std::vector<unsigned> blocks = dax.blocks(devname);
	if (blocks.empty() || block_size == 0) {
		if (!before.system_ram)
			dax.to_devdax(devname);
		unsplit();
		throw poolmem::Error(devname, "no whole memory block in the device");
	}

	size_t sync_n = blocks.size();
	if (o.async)
		sync_n = std::min(blocks.size(), std::max<size_t>(1, first_piece / block_size));
	const std::vector<unsigned> first(blocks.begin(), blocks.begin() + static_cast<long>(sync_n));
	const std::vector<unsigned> rest(blocks.begin() + static_cast<long>(sync_n), blocks.end());
	const unsigned all_blocks = split ? total_blocks : static_cast<unsigned>(blocks.size());
	const bool tty = isatty(STDERR_FILENO);
	/* a device poolctl just bound to kmem has every block offline (auto-onlining was off for the bind) */
	std::vector<unsigned> were_offline;
	if (!before.system_ram)
		were_offline = blocks;
	else
		for (unsigned b : blocks)
			if (poolmem::block_state(g.sysfs, b) != "online")
				were_offline.push_back(b);

	/* undo everything this command did, leaving the device as it was */
	auto rollback = [&] {
		poolmem::offline_blocks(g.sysfs, were_offline);
		if (!before.system_ram) {
			try {
				dax.to_devdax(devname);
			} catch (const poolmem::Error &) {
			}
		}
		unsplit();
	};
	try {
		poolmem::online_blocks(g.sysfs, first, zone,
				       tty ? poolmem::Progress([&](unsigned d, unsigned) { progress_bar(d, all_blocks); })
					   : poolmem::Progress());
		if (tty && first.size() < all_blocks)
			std::fprintf(stderr, "\n");
		ctl.pool_add(name, node, overcommit_pct(o.overcommit));
	} catch (...) {
		rollback();
		throw;
	}
	const double t_first = seconds_since(t0);
	const uint64_t first_b = first.size() * block_size;
	const std::string memmap_text = "memmap " +
					poolmem::format_size(poolmem::memmap_bytes(blocks.size() * block_size)) +
					(memmap_device ? " on the device" : " in local DRAM");

	/* --json: what is online now; "background" when the rest goes on */
	const nlohmann::json result = {
		{"name", name},
		{"onlined", true},
		{"device", devname},
		{"region", o.made_region.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.made_region)},
		{"node", node},
		{"zone", o.zone},
		{"blocks", first.size()},
		{"blocks_total", all_blocks},
		{"online_bytes", first_b},
		{"seconds", t_first},
		{"memmap", memmap_device ? "device" : "local"},
		{"background", !(rest.empty() && !split)}};
	if (rest.empty() && !split) {
		write_state(name, {all_blocks, all_blocks, t_first, "done"});
		if (o.json) {
			print_json(g, result);
			return;
		}
		std::printf("%s: onlined %zu blocks (%s) of %s on node %d in %.2f s (%.3f s/GiB), zone %s, %s\n",
			    name.c_str(), blocks.size(), poolmem::format_size(first_b).c_str(), devname.c_str(), node,
			    t_first, t_first / (static_cast<double>(first_b) / (1ULL << 30)), o.zone.c_str(),
			    memmap_text.c_str());
		return;
	}

	/* progressive onlining: the rest continues in a detached child */
	write_state(name, {static_cast<unsigned>(first.size()), all_blocks, t_first, "running"});
	std::fflush(stdout);
	/* taken before the fork, so that no offline or remove slips in between */
	const int lock = background_lock(name);
	pid_t pid = fork();
	if (pid < 0)
		throw poolmem::Error(name, "cannot start background onlining", errno);
	if (pid == 0) {
		setsid();
		unsigned done = static_cast<unsigned>(first.size());
		std::string st = "done";
		/* the state file at most every 100 ms: a block onlines in ~10 ms */
		auto last = std::chrono::steady_clock::time_point{};
		auto report = [&](unsigned d, unsigned) {
			auto t = std::chrono::steady_clock::now();
			if (t - last < std::chrono::milliseconds(100))
				return;
			last = t;
			write_state(name, {done + d, all_blocks, seconds_since(t0), "running"});
		};
		try {
			poolmem::online_blocks(g.sysfs, rest, zone, report);
			done += static_cast<unsigned>(rest.size());
			if (split) {
				/*
				 * The rest of the region as one more device. Only the
				 * first piece has to be small; after it, every piece
				 * costs a device made and bound to kmem (tens of ms
				 * under emulation), while kmem's memmap setup for all
				 * the rest takes about as long as onlining a few of its
				 * blocks. So one piece: the rest's blocks still come
				 * online one by one, at the rate of the whole device.
				 * (Pieces that doubled, 2026-11, made an 8 GiB device
				 * three pieces and cost a third of the rate.)
				 */
				poolmem::Dax pdax(g.sysfs);
				const uint64_t avail = pdax.region_available(devname) / block_size * block_size;
				if (avail) {
					const std::string piece = pdax.create_device(devname, avail);
					write_pieces(name, {devname, before.size, {piece}});
					pdax.to_system_ram(piece);
					const auto pb = pdax.blocks(piece);
					poolmem::online_blocks(g.sysfs, pb, zone, report);
					done += static_cast<unsigned>(pb.size());
				}
			}
		} catch (const std::exception &e) {
			st = std::string("failed: ") + e.what();
		}
		write_state(name, {st == "done" ? all_blocks : done, all_blocks, seconds_since(t0), st});
		_exit(st == "done" ? 0 : 1);
	}
	::close(lock); /* the child holds it until it is done */
	if (o.json) {
		print_json(g, result);
		return;
	}
	std::printf("%s: onlined %zu of %u blocks (%s) of %s on node %d in %.2f s, zone %s, %s; "
		    "the rest continues in the background%s (poolctl pool show %s)\n",
		    name.c_str(), first.size(), all_blocks, poolmem::format_size(first_b).c_str(), devname.c_str(),
		    node, t_first, o.zone.c_str(), memmap_text.c_str(), split ? " as a second dax device" : "",
		    name.c_str());
}

} // namespace poolctl::pool_cmd
