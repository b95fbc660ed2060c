// poolctl pool: bring DAX memory online as a pool, list, show, offline and
// remove pools.
#include "commands.hpp"
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
#include <filesystem>
#include <fstream>
#include <iostream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolctl {

namespace {

const fs::path state_dir = "/run/poolctl";

struct OnlineOptions {
	std::string dax;
	std::vector<std::string> cxl;
	std::string name;
	std::string zone = "movable";
	bool async = false;
	std::string first = "1G";
	std::string size; ///< --cxl: region size (default: all the capacity)
	bool force = false;
	unsigned overcommit = 100;
	std::string memmap = "auto"; ///< where kmem puts the struct pages: auto, local, device
};

struct NameOptions {
	std::string name;
	bool json = false;
};

struct AddOptions {
	std::string name;
	int node = -1;
	unsigned overcommit = 100;
	bool force = false;
};

/*
 * A pool registered from memory that was online already (pool add --node:
 * firmware's NUMA node, EFI_MEMORY_SP memory onlined by the kernel) is
 * recorded here: remove then only unregisters it, as it found it.
 */
fs::path added_marker(const std::string &pool) { return state_dir / (pool + ".added"); }

struct DrainOptions {
	std::string name;
	bool offline = false, allow_local = false, check = false;
	std::string rate;	  ///< SIZE per second; empty: as fast as it goes
	std::string timeout = "60"; ///< seconds without progress before giving up
};

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Progress of background onlining, kept in /run/poolctl/<pool>.online as
/// "done total seconds state".
struct OnlineState {
	unsigned done = 0, total = 0;
	double seconds = 0;
	std::string state; ///< "running", "done", "failed: ..."
};

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

std::optional<OnlineState> read_state(const std::string &pool)
{
	std::ifstream f(state_dir / (pool + ".online"));
	OnlineState s;
	if (!(f >> s.done >> s.total >> s.seconds))
		return std::nullopt;
	std::getline(f >> std::ws, s.state);
	return s;
}

void progress_bar(unsigned done, unsigned total)
{
	int width = 40, fill = total ? static_cast<int>(width * done / total) : width;
	std::fprintf(stderr, "\r[%s%s] %u/%u blocks", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), done, total);
	if (done == total)
		std::fprintf(stderr, "\n");
}

void online_dax(const GlobalOptions &g, const OnlineOptions &o, poolmem::Control &ctl, const std::string &name,
		const std::string &devname, uint64_t first_bytes);
void reonline_pool(const GlobalOptions &g, const OnlineOptions &o, const poolmem::PoolStats &p);
std::vector<unsigned> node_blocks(const GlobalOptions &g, int node);

void run_online(const GlobalOptions &g, const OnlineOptions &o)
{
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

	poolmem::load_module("kmem");
	poolmem::load_module("poolmem");
	poolmem::Control ctl(g.control);
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
		std::printf("%s: region %s (%s) -> devdax %s\n", o.cxl[0].c_str(), made->region.c_str(),
			    poolmem::format_size(made->size).c_str(), devname.c_str());
	}
	try {
		online_dax(g, o, ctl, name, devname, first_bytes);
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
	if (off.empty()) {
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
	const poolmem::Topology t = poolmem::read_topology(g.sysfs);
	const poolmem::Node *n = t.node(o.node);
	if (!n || !n->mem_total)
		throw UsageError("--node " + std::to_string(o.node) + ": no such node with online memory (see poolctl node list)");
	if (n->has_cpus() && !o.force)
		throw UsageError("--node " + std::to_string(o.node) +
				 ": the node has CPUs, so its DRAM is some VMs' local tier; --force to make it a pool anyway");
	poolmem::load_module("poolmem");
	poolmem::Control ctl(g.control);
	ctl.pool_add(o.name, o.node, o.overcommit);
	fs::create_directories(state_dir);
	std::ofstream(added_marker(o.name)) << o.node << '\n';
	std::printf("%s: node %d (%s online) registered as a pool\n", o.name.c_str(), o.node,
		    poolmem::format_size(n->mem_total).c_str());
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

struct Pieces {
	std::string device;
	uint64_t size = 0;
	std::vector<std::string> made;
};

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

void online_dax(const GlobalOptions &g, const OnlineOptions &o, poolmem::Control &ctl, const std::string &name,
		const std::string &devname, uint64_t first_bytes)
{
	const poolmem::Zone zone = o.zone == "movable" ? poolmem::Zone::movable : poolmem::Zone::normal;
	poolmem::Dax dax(g.sysfs);

	poolmem::DaxInfo before = dax.device(devname);
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
	if (!before.system_ram && !o.force && dax.will_auto_online(devname))
		throw poolmem::Error::plain(devname, "the kernel would online this memory by itself "
						     "(auto_online_blocks is not offline, as on Debian's 6.12 kernels), "
						     "racing poolctl; boot with memhp_default_state=offline or use --force",
					   EBUSY);
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
	/* a device poolctl just bound to kmem has every block offline (auto-onlining was refused above) */
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
		ctl.pool_add(name, node, o.overcommit);
	} catch (...) {
		rollback();
		throw;
	}
	const double t_first = seconds_since(t0);
	const uint64_t first_b = first.size() * block_size;
	const std::string memmap_text = "memmap " +
					poolmem::format_size(poolmem::memmap_bytes(blocks.size() * block_size)) +
					(memmap_device ? " on the device" : " in local DRAM");

	if (rest.empty() && !split) {
		write_state(name, {all_blocks, all_blocks, t_first, "done"});
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
	std::printf("%s: onlined %zu of %u blocks (%s) of %s on node %d in %.2f s, zone %s, %s; "
		    "the rest continues in the background%s (poolctl pool show %s)\n",
		    name.c_str(), first.size(), all_blocks, poolmem::format_size(first_b).c_str(), devname.c_str(),
		    node, t_first, o.zone.c_str(), memmap_text.c_str(), split ? " as a second dax device" : "",
		    name.c_str());
}

} // namespace

/* one schema for a pool wherever it is printed (Documentation/json.md) */
nlohmann::json pool_json(const poolmem::PoolStats &p)
{
	nlohmann::json j = {
		{"name", p.name},
		{"id", p.id},
		{"node", p.node},
		{"tier", p.tier},
		{"overcommit_pct", p.overcommit_pct},
		{"capacity_bytes", p.capacity_bytes},
		{"pinnable_bytes", p.pinnable_bytes},
		{"free_bytes", p.free_bytes},
		{"allocated_bytes", p.allocated_bytes},
		{"committed_bytes", p.committed_bytes},
		{"chunks", p.chunks},
		{"allocations", p.allocations},
		{"faults", p.faults},
		{"failures", p.failures},
		{"access_factor", p.access_factor},
		{"window_counts", p.window_counts},
		{"state", p.state},
		{"moved_in", p.moved_in},
		{"moved_out", p.moved_out},
		{"moved_bytes", p.moved_bytes},
		{"move_retries", p.move_retries},
		{"move_pins", p.move_pins},
		{"accesses", p.accesses},
		{"samples", p.samples},
		{"promotions", p.promotions},
		{"demotions", p.demotions},
		{"zero_reserve",
		 {{"setting", p.zero_reserve},
		  {"target_bytes", p.zero_reserve_target_bytes},
		  {"held_bytes", p.zero_reserve_bytes},
		  {"refills", p.zero_reserve_refills},
		  {"hits", p.zero_reserve_hits},
		  {"misses", p.zero_reserve_misses}}},
	};
	/* always there: null when this host has no onlining record for it */
	j["online"] = nullptr;
	if (auto s = read_state(p.name))
		j["online"] = {{"blocks_done", s->done}, {"blocks_total", s->total}, {"seconds", s->seconds}, {"state", s->state}};
	return j;
}

namespace {

std::vector<poolmem::PoolStats> pools_or_throw(const GlobalOptions &g)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded (poolctl pool online loads it)", ENOENT);
	return poolmem::read_pools(g.sysfs);
}

poolmem::PoolStats pool_or_throw(const GlobalOptions &g, const std::string &name)
{
	pools_or_throw(g);
	auto p = poolmem::read_pool(g.sysfs, name);
	if (!p)
		throw poolmem::Error::plain(name, "no such pool", ENOENT);
	return *p;
}

void run_list(const GlobalOptions &g, bool json)
{
	auto pools = pools_or_throw(g);
	if (json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &p : pools)
			out.push_back(pool_json(p));
		print_json(g, out);
		return;
	}
	Table t({"NAME", ">ID", ">NODE", ">CAPACITY", ">PINNABLE", ">ALLOCATED", ">FREE", ">CHUNKS", ">AF", ">FAILURES", "STATE", "ONLINE"});
	for (const auto &p : pools) {
		auto s = read_state(p.name);
		std::string online = s ? (s->state == "running" ? std::to_string(s->done) + "/" + std::to_string(s->total)
								: s->state)
				       : "-";
		t.row({p.name, std::to_string(p.id), std::to_string(p.node), poolmem::format_size(p.capacity_bytes),
		       poolmem::format_size(p.pinnable_bytes), poolmem::format_size(p.allocated_bytes),
		       poolmem::format_size(p.free_bytes),
		       std::to_string(p.chunks), std::to_string(p.access_factor), std::to_string(p.failures), p.state,
		       online});
	}
	t.print();
}

/// Domains holding chunks in POOL: name -> chunks.
std::map<std::string, uint64_t> holders(const GlobalOptions &g, const std::string &pool)
{
	std::map<std::string, uint64_t> out;
	for (const auto &d : poolmem::read_domains(g.sysfs)) {
		auto it = d.pool_chunks.find(pool);
		if (it != d.pool_chunks.end() && it->second)
			out[d.name] = it->second;
	}
	return out;
}

void run_show(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	auto h = holders(g, p.name);
	const auto chain = poolmem::device_chain(p.node);
	const auto tiers = poolmem::memory_tiers(g.sysfs);
	const auto memmaps = poolmem::kmem_memmap(g.sysfs);
	if (o.json) {
		auto j = pool_json(p);
		j["domains"] = h;
		if (auto m = memmaps.find(p.node); m != memmaps.end())
			j["memmap"] = {{"local_bytes", m->second.local_bytes}, {"device_bytes", m->second.device_bytes}};
		j["zones"] = poolmem::node_zones(g.sysfs, p.node);
		if (auto t = tiers.find(p.node); t != tiers.end())
			j["memory_tier"] = t->second;
		j["devices"] = nlohmann::json::array();
		for (const auto &c : chain) {
			nlohmann::json mem = nlohmann::json::array();
			for (const auto &m : c.memdevs)
				mem.push_back({{"name", m.name}, {"serial", m.serial}, {"host", m.host}});
			j["devices"].push_back({{"dax", c.dax}, {"resource", c.resource}, {"size_bytes", c.size},
						{"bus", c.bus}, {"region", c.region}, {"memdevs", mem}});
		}
		print_json(g, j);
		return;
	}
	std::printf("pool %s (id %u): node %d, tier %s, overcommit %lu%%, %s\n", p.name.c_str(), p.id, p.node,
		    p.tier.c_str(), static_cast<unsigned long>(p.overcommit_pct),
		    p.state == "draining" ? "draining (takes no new chunks)" : p.state.c_str());
	std::printf("  capacity   %s (%s pinnable: onlined normal)\n  allocated  %s in %s\n"
		    "  free       %s\n  committed  %s\n",
		    poolmem::format_size(p.capacity_bytes).c_str(), poolmem::format_size(p.pinnable_bytes).c_str(),
		    poolmem::format_size(p.allocated_bytes).c_str(),
		    poolmem::plural(p.chunks, "chunk").c_str(), poolmem::format_size(p.free_bytes).c_str(),
		    poolmem::format_size(p.committed_bytes).c_str());
	std::printf("  activity   %lu allocations, %lu faults, %lu failures; access factor %lu (windows",
		    static_cast<unsigned long>(p.allocations), static_cast<unsigned long>(p.faults),
		    static_cast<unsigned long>(p.failures), static_cast<unsigned long>(p.access_factor));
	for (auto w : p.window_counts)
		std::printf(" %lu", static_cast<unsigned long>(w));
	std::printf(")\n");
	std::printf("  migration  %lu chunks in, %lu out (%s); %lu put off (referenced), %lu refused (pinned)\n",
		    static_cast<unsigned long>(p.moved_in), static_cast<unsigned long>(p.moved_out),
		    poolmem::format_size(p.moved_bytes).c_str(), static_cast<unsigned long>(p.move_retries),
		    static_cast<unsigned long>(p.move_pins));
	std::printf("  tiering    %lu samples, %lu accesses estimated; %lu chunks promoted to local, %lu demoted here\n",
		    static_cast<unsigned long>(p.samples), static_cast<unsigned long>(p.accesses),
		    static_cast<unsigned long>(p.promotions), static_cast<unsigned long>(p.demotions));
	{
		const uint64_t taken = p.zero_reserve_hits + p.zero_reserve_misses;
		std::printf("  zero       %s of %s held pre-zeroed (setting %s); %s zeroed ahead, %lu of %lu new units "
			    "taken from it (%.0f%%)\n",
			    poolmem::format_size(p.zero_reserve_bytes).c_str(),
			    poolmem::format_size(p.zero_reserve_target_bytes).c_str(),
			    p.zero_reserve.empty() ? "?" : p.zero_reserve.c_str(),
			    poolmem::format_size(p.zero_reserve_refills << 21).c_str(),
			    static_cast<unsigned long>(p.zero_reserve_hits), static_cast<unsigned long>(taken),
			    taken ? 100.0 * static_cast<double>(p.zero_reserve_hits) / static_cast<double>(taken) : 0.0);
	}
	if (auto s = read_state(p.name))
		std::printf("  onlining   %u/%u blocks, %.2f s, %s\n", s->done, s->total, s->seconds, s->state.c_str());
	std::string zones;
	for (const auto &[zone, n] : poolmem::node_zones(g.sysfs, p.node))
		zones += (zones.empty() ? "" : ", ") + poolmem::plural(n, "block") + " " + zone;
	std::printf("  zone       %s\n", zones.empty() ? "no block online" : zones.c_str());
	if (auto t = tiers.find(p.node); t != tiers.end()) {
		/* DRAM's tier: that of the nodes with CPUs (the lowest of them) */
		int dram = -1;
		for (const auto &n : poolmem::read_topology(g.sysfs).nodes)
			if (auto d = tiers.find(n.id); n.has_cpus() && d != tiers.end() && (dram < 0 || d->second < dram))
				dram = d->second;
		std::printf("  memory tier %d (%s)\n", t->second,
			    dram < 0		   ? "no node with CPUs in a tier"
			    : t->second > dram ? ("below DRAM's " + std::to_string(dram)).c_str()
			    : t->second == dram
				    ? "DRAM's own: the kernel's demotion and promotion can't tell it from DRAM"
				    : ("above DRAM's " + std::to_string(dram)).c_str());
	}
	if (auto m = memmaps.find(p.node); m != memmaps.end())
		std::printf("  memmap     %s in local DRAM, %s on the pool memory\n",
			    poolmem::format_size(m->second.local_bytes).c_str(),
			    poolmem::format_size(m->second.device_bytes).c_str());
	if (fs::exists(added_marker(p.name)))
		std::printf("  device     node %d registered as it was (pool add --node)\n", p.node);
	for (const auto &c : chain) {
		std::printf("  device     %s (%s at 0x%lx)", c.dax.c_str(), poolmem::format_size(c.size).c_str(),
			    static_cast<unsigned long>(c.resource));
		if (!c.region.empty())
			std::printf(" <- %s %s", c.bus.c_str(), c.region.c_str());
		std::printf("\n");
		for (const auto &m : c.memdevs)
			std::printf("  memdev     %s serial %s%s%s\n", m.name.c_str(), m.serial.empty() ? "-" : m.serial.c_str(),
				    m.host.empty() ? "" : " at ", m.host.c_str());
	}
	for (const auto &[dom, chunks] : h)
		std::printf("  domain     %s: %s\n", dom.c_str(), poolmem::plural(chunks, "chunk").c_str());
}

void refuse_if_held(const GlobalOptions &g, const poolmem::PoolStats &p, const char *action)
{
	auto h = holders(g, p.name);
	if (h.empty() && p.chunks == 0)
		return;
	std::string who;
	for (const auto &[dom, chunks] : h)
		who += (who.empty() ? "" : ", ") + dom + " (" + poolmem::plural(chunks, "chunk") + ")";
	throw poolmem::Error::plain(p.name, std::string("cannot ") + action + ": chunks of domains live there: " +
						    (who.empty() ? "destroyed domains still mapped" : who),
				    EBUSY);
}

std::vector<unsigned> node_blocks(const GlobalOptions &g, int node)
{
	auto t = poolmem::read_topology(g.sysfs);
	const auto *n = t.node(node);
	return n ? n->blocks : std::vector<unsigned>{};
}

/* Bytes the zero reserve holds on NODE (/sys/kernel/poolmem/zero_reserve). */
uint64_t node_reserve_bytes(const GlobalOptions &g, int node)
{
	for (const auto &z : poolmem::read_zero_reserves(g.sysfs))
		if (z.node == node)
			return z.bytes;
	return 0;
}

/*
 * Empty the zero reserve of a pool's node before its blocks go offline,
 * and put the setting back after (RAII). In ZONE_MOVABLE the kernel gives
 * reserve units back by itself when a block goes offline; in a normal zone
 * it refuses to isolate a block holding them (allocated memory) before
 * poolmem is asked, so the reserve must be empty first.
 */
struct ReserveEmptied {
	const GlobalOptions &g;
	fs::path attr;
	std::optional<std::string> saved;

	ReserveEmptied(const GlobalOptions &g_, const std::string &pool, int node) : g(g_)
	{
		attr = fs::path(g.sysfs) / "kernel/poolmem/pools" / pool / "zero_reserve";
		std::ifstream f(attr);
		std::string v;
		if (f >> v) {
			saved = v;
			write("0");
		}
		/* the kernel's thread trims at once when told; a second at most */
		for (int i = 0; i < 40 && node_reserve_bytes(g, node); i++)
			usleep(50000);
	}
	~ReserveEmptied()
	{
		if (saved)
			write(*saved);
	}
	void write(const std::string &v)
	{
		int fd = ::open(attr.c_str(), O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return;	/* the pool is gone: nothing to keep or restore */
		if (::write(fd, v.data(), v.size()) < 0) {
			/* best effort: the offline itself reports what matters */
		}
		::close(fd);
	}
};

void offline_node(const GlobalOptions &g, const std::string &pool, int node)
{
	auto blocks = node_blocks(g, node);
	std::vector<int> errs;
	ReserveEmptied emptied(g, pool, node);
	auto refused = poolmem::offline_blocks(g.sysfs, blocks, &errs);
	if (!refused.empty())
		throw poolmem::Error(pool, "cannot offline memory" + std::string(" (memory") +
						   std::to_string(refused[0]) + " and " + std::to_string(refused.size() - 1) +
						   " more)",
				     errs[0]);
	std::printf("%s: offlined %zu blocks on node %d\n", pool.c_str(), blocks.size(), node);
}

void run_offline(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	refuse_if_held(g, p, "offline");
	::close(background_lock(p.name));
	offline_node(g, p.name, p.node);
}

void run_remove(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	refuse_if_held(g, p, "remove");
	const int lock = background_lock(p.name);
	struct Unlock {
		int fd;
		~Unlock() { ::close(fd); }
	} unlock{lock};
	poolmem::Control ctl(g.control);
	ctl.pool_remove(p.name);
	std::error_code ec;
	if (fs::exists(added_marker(p.name))) {
		/* pool add --node: its memory stays online, as it was found */
		fs::remove(added_marker(p.name), ec);
		std::printf("%s: unregistered; node %d's memory stays online\n", p.name.c_str(), p.node);
		return;
	}
	offline_node(g, p.name, p.node);
	poolmem::Dax dax(g.sysfs);
	if (auto pieces = read_pieces(p.name)) {
		size_t n = merge_pieces(dax, *pieces);
		std::printf("%s: %s handed back to devdax whole (%s, %s deleted)\n", p.name.c_str(),
			    pieces->device.c_str(), poolmem::format_size(pieces->size).c_str(),
			    poolmem::plural(n, "piece").c_str());
		fs::remove(pieces_file(p.name), ec);
	}
	for (const auto &d : dax.devices()) {
		if (d.system_ram && d.target_node == p.node) {
			dax.to_devdax(d.name);
			std::printf("%s: %s handed back to devdax\n", p.name.c_str(), d.name.c_str());
		}
	}
	fs::remove(state_dir / (p.name + ".online"), ec);
}


volatile std::sig_atomic_t drain_interrupted = 0;

void on_drain_signal(int) { drain_interrupted = 1; }

/// Seconds from "90", "90s", "5m", "1h"; UsageError naming OPTION.
double seconds_value(const std::string &option, const std::string &text)
{
	size_t pos = 0;
	double v = -1;
	try {
		v = std::stod(text, &pos);
	} catch (const std::exception &) {
		pos = 0;
	}
	std::string unit = text.substr(pos);
	double mult = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
	if (pos == 0 || v < 0 || mult < 0)
		throw UsageError(option + ": invalid duration '" + text + "' (e.g. 90, 90s, 5m)");
	return v * mult;
}

void bytes_bar(uint64_t done, uint64_t total, double secs)
{
	int width = 40, fill = total ? static_cast<int>(width * std::min(done, total) / total) : width;
	std::fprintf(stderr, "\r[%s%s] %s/%s %.0f MiB/s ", std::string(fill, '#').c_str(),
		     std::string(width - fill, ' ').c_str(), poolmem::format_size(done).c_str(),
		     poolmem::format_size(total).c_str(), secs > 0 ? static_cast<double>(done) / secs / (1 << 20) : 0.0);
}

std::string hex(uint64_t v)
{
	char b[32];
	std::snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(v));
	return b;
}

/*
 * poolctl pool drain: move every chunk off the pool while VMs run, in
 * steps (one ioctl each) so that Ctrl-C, --rate and the progress bar work;
 * the kernel keeps the pool draining between steps, so a second run goes
 * on where the first stopped.
 */
void run_drain(const GlobalOptions &g, const DrainOptions &o)
{
	const uint64_t rate = o.rate.empty() ? 0 : size_value("--rate", o.rate);
	const double timeout = seconds_value("--timeout", o.timeout);
	auto p = pool_or_throw(g, o.name);
	poolmem::Control ctl(g.control);

	auto first = ctl.pool_drain(p.name, 0, o.allow_local, true);
	if (first.err == ENOSPC) {
		std::string where = first.blocker.empty() ? "its domains" : "domain " + first.blocker;
		throw poolmem::Error::plain(
			p.name, "cannot drain: " + where + " hold" + (first.blocker.empty() ? " " : "s ") +
					poolmem::format_size(first.need_bytes) + " there but may use only " +
					poolmem::format_size(first.room_bytes) + " elsewhere" +
					(o.allow_local ? "" : " (--allow-local lets chunks move to local quota)"),
			ENOSPC);
	}
	if (o.check) {
		std::printf("%s: can drain: %s to move\n", p.name.c_str(),
			    poolmem::format_size(first.remaining_bytes).c_str());
		return;
	}

	struct sigaction sa = {}, old_int = {}, old_term = {};
	sa.sa_handler = on_drain_signal; /* no SA_RESTART: the ioctl returns EINTR */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	const bool tty = isatty(STDERR_FILENO);
	const auto t0 = std::chrono::steady_clock::now();
	auto last_progress = t0;
	const uint64_t total = first.remaining_bytes;
	uint64_t moved = 0;
	/* with --rate, steps of a tenth of a second's worth (at least a chunk) */
	const uint64_t step = rate ? std::max<uint64_t>(rate / 10, 2 << 20) : 64 << 20;
	poolmem::DrainStep r;
	unsigned pinned_tries = 0;
	std::string pinned_at;
	for (;;) {
		r = ctl.pool_drain(p.name, step, o.allow_local);
		if (r.err == EBUSY) {
			const std::string at = r.blocker + "@" + hex(r.blocker_offset);
			if (at != pinned_at)
				pinned_tries = 0;
			pinned_at = at;
		}
		/*
		 * A pin the kernel saw for ~10 ms: gone a moment later if it
		 * was I/O (process_vm_readv, O_DIRECT); a pin still there after
		 * a few tries is long-term (VFIO, RDMA, AF_XDP).
		 */
		if (r.err == EBUSY && ++pinned_tries < 5 && !drain_interrupted) {
			moved += r.moved_bytes;
			usleep(200000);
			continue;
		}
		moved += r.moved_bytes;
		const double secs = seconds_since(t0);
		if (tty)
			bytes_bar(moved, std::max(total, moved + r.remaining_bytes), secs);
		if (r.err == EINTR || drain_interrupted)
			break;
		if (r.err)
			break;
		if (r.remaining_bytes == 0)
			break;
		if (r.moved_bytes)
			last_progress = std::chrono::steady_clock::now();
		else if (seconds_since(last_progress) > timeout)
			break;
		else
			usleep(100000); /* only referenced (busy or retired) chunks left: wait for them */
		if (rate && moved > rate * secs)
			usleep(static_cast<useconds_t>((static_cast<double>(moved) / rate - secs) * 1e6));
	}
	sigaction(SIGINT, &old_int, nullptr);
	sigaction(SIGTERM, &old_term, nullptr);
	if (tty)
		std::fprintf(stderr, "\n");
	const double secs = seconds_since(t0);
	const std::string left = poolmem::format_size(r.remaining_bytes);
	if (r.err == EINTR || drain_interrupted)
		throw poolmem::Error::plain(p.name, "drain interrupted after " + poolmem::format_size(moved) + ", " + left +
							    " left; the pool stays draining: run again to go on, or "
							    "poolctl pool undrain " + p.name,
					    EINTR);
	if (r.err == EBUSY)
		throw poolmem::Error::plain(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
							    " is long-term pinned (VFIO, RDMA, AF_XDP: a device "
							    "may DMA to it); " + left + " left, the pool stays draining",
					    EBUSY);
	if (r.err == EIO)
		throw poolmem::Error::plain(p.name, "cannot drain: domain " + r.blocker + " offset " + hex(r.blocker_offset) +
							    " has an uncorrectable memory error; " + left + " left",
					    EIO);
	if (r.err == ENOSPC)
		throw poolmem::Error::plain(p.name, "cannot drain: no room elsewhere for domain " + r.blocker + " offset " +
							    hex(r.blocker_offset) + "; " + left + " left" +
							    (o.allow_local ? "" : " (--allow-local lets chunks move to local quota)"),
					    ENOSPC);
	if (r.remaining_bytes)
		throw poolmem::Error::plain(p.name, "drain timed out after " + o.timeout + " s without progress: " + left +
							    " still referenced (I/O in flight, a pipe or a discarded "
							    "chunk's last user); the pool stays draining",
					    EBUSY);
	std::printf("%s: drained %s in %.2f s (%.0f MiB/s)\n", p.name.c_str(), poolmem::format_size(moved).c_str(),
		    secs, secs > 0 ? static_cast<double>(moved) / secs / (1 << 20) : 0.0);
	if (o.offline)
		offline_node(g, p.name, p.node);
}

struct SetOptions {
	std::string name;
	std::string zero_reserve;
};

/*
 * poolctl pool set NAME --zero-reserve SIZE|PCT: how much of the pool's
 * memory is kept zeroed ahead for new chunks (0 = off).
 */
void run_set(const GlobalOptions &g, const SetOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	if (o.zero_reserve.empty())
		throw UsageError("pool set: nothing to set (--zero-reserve SIZE|PCT)");
	std::string value = o.zero_reserve;
	if (value.back() == '%') {
		unsigned long pct = 0;
		size_t pos = 0;
		try {
			pct = std::stoul(value.substr(0, value.size() - 1), &pos);
		} catch (const std::exception &) {
			pos = std::string::npos;
		}
		if (pos != value.size() - 1 || pct > 50)
			throw UsageError("--zero-reserve " + o.zero_reserve + ": a percentage from 0% to 50%, or a size");
	} else {
		const uint64_t b = size_value("--zero-reserve", value);
		if (b > p.capacity_bytes)
			throw UsageError("--zero-reserve " + o.zero_reserve + ": above the pool's capacity " +
					 poolmem::format_size(p.capacity_bytes));
		value = std::to_string(b);
	}
	const fs::path attr = fs::path(g.sysfs) / "kernel/poolmem/pools" / p.name / "zero_reserve";
	const int fd = ::open(attr.c_str(), O_WRONLY | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	if (!err && ::write(fd, value.data(), value.size()) < 0)
		err = errno;
	if (fd >= 0)
		::close(fd);
	if (err)
		throw poolmem::Error(p.name, "cannot set the zero reserve", err);
	auto now = pool_or_throw(g, o.name);
	std::printf("%s: zero reserve %s (%s); it fills in the background on idle CPU\n", p.name.c_str(),
		    now.zero_reserve.c_str(), poolmem::format_size(now.zero_reserve_target_bytes).c_str());
}

void run_undrain(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	poolmem::Control ctl(g.control);
	ctl.pool_undrain(p.name);
	std::printf("%s: takes chunks again\n", p.name.c_str());
}

} // namespace

void setup_pool(CLI::App &app, const GlobalOptions &g)
{
	auto *pool = app.add_subcommand("pool", "pools: far memory registered with poolmem");
	pool->require_subcommand(1);

	auto on = std::make_shared<OnlineOptions>();
	auto *online = pool->add_subcommand("online", "online a dax device's memory and register it as a pool, "
						      "or online an offlined pool again");
	online->add_option("device", on->dax, "dax device (e.g. dax0.0), or a pool to online again");
	online->add_option("--cxl", on->cxl, "CXL memdev(s) to interleave into a new region (e.g. mem0)")
		->delimiter(',');
	online->add_option("--size", on->size, "with --cxl: the region's size (default: the memdevs' persistent capacity)");
	online->add_option("--name", on->name, "pool name (default: the device name)");
	online->add_option("--zone", on->zone, "movable (default: can be unplugged, not pinned) or normal")
		->check(CLI::IsMember({"movable", "normal"}));
	online->add_flag("--async", on->async, "return once --first is online; finish in the background");
	online->add_option("--first", on->first, "with --async: how much to online synchronously (default 1G)");
	online->add_flag("--force", on->force, "online even if the kernel's auto-online policy would race");
	online->add_option("--overcommit", on->overcommit, "admission limit in percent of capacity (100..1000)")
		->check(CLI::Range(100, 1000));
	online->add_option("--memmap", on->memmap,
			   "where the struct pages go: device (the pool memory holds them; 6.8+, booted with "
			   "memory_hotplug.memmap_on_memory=1), local (DRAM, 16 MiB per GiB), auto (default: device "
			   "where the kernel can)")
		->check(CLI::IsMember({"auto", "local", "device"}));
	online->callback([&g, on] { run_online(g, *on); });

	auto ad = std::make_shared<AddOptions>();
	auto *add = pool->add_subcommand("add", "register a node whose memory is online already as a pool");
	add->add_option("name", ad->name, "pool name")->required();
	add->add_option("--node", ad->node, "NUMA node (CPU-less: CXL, HBM or firmware-onlined memory)")->required();
	add->add_option("--overcommit", ad->overcommit, "admission limit in percent of capacity (100..1000)")
		->check(CLI::Range(100, 1000));
	add->add_flag("--force", ad->force, "register a node with CPUs too");
	add->callback([&g, ad] { run_add(g, *ad); });

	auto lo = std::make_shared<NameOptions>();
	auto *list = pool->add_subcommand("list", "list pools");
	list->add_flag("--json", lo->json, "print JSON");
	list->callback([&g, lo] { run_list(g, lo->json); });

	auto so = std::make_shared<NameOptions>();
	auto *show = pool->add_subcommand("show", "show one pool, its activity and the domains in it");
	show->add_option("name", so->name, "pool")->required();
	show->add_flag("--json", so->json, "print JSON");
	show->callback([&g, so] { run_show(g, *so); });

	auto oo = std::make_shared<NameOptions>();
	auto *off = pool->add_subcommand("offline", "offline a pool's memory (refused while chunks live there)");
	off->add_option("name", oo->name, "pool")->required();
	off->callback([&g, oo] { run_offline(g, *oo); });

	auto dro = std::make_shared<DrainOptions>();
	auto *drain = pool->add_subcommand("drain", "move every chunk off a pool while its VMs run (then offline, remove)");
	drain->add_option("name", dro->name, "pool")->required();
	drain->add_flag("--offline", dro->offline, "offline the pool's memory once it is empty");
	drain->add_flag("--allow-local", dro->allow_local,
			"let chunks that fit no other pool move to their domain's local quota");
	drain->add_option("--rate", dro->rate, "move at most SIZE per second (e.g. 512M)");
	drain->add_option("--timeout", dro->timeout,
			  "give up after this long without progress on referenced chunks (default 60 s)");
	drain->add_flag("--check", dro->check, "only check that the pool's chunks fit elsewhere");
	drain->callback([&g, dro] { run_drain(g, *dro); });

	auto uo = std::make_shared<NameOptions>();
	auto *undrain = pool->add_subcommand("undrain", "end draining: the pool takes chunks again");
	undrain->add_option("name", uo->name, "pool")->required();
	undrain->callback([&g, uo] { run_undrain(g, *uo); });

	auto se = std::make_shared<SetOptions>();
	auto *set = pool->add_subcommand("set", "change a pool's settings while it runs");
	set->add_option("name", se->name, "pool")->required();
	set->add_option("--zero-reserve", se->zero_reserve,
			"memory kept zeroed ahead for new chunks: a size or a percentage of capacity (0 = off; default 1%)");
	set->callback([&g, se] { run_set(g, *se); });

	auto ro = std::make_shared<NameOptions>();
	auto *rm = pool->add_subcommand("remove", "unregister a pool, offline it and hand the device back to devdax");
	rm->add_option("name", ro->name, "pool")->required();
	rm->callback([&g, ro] { run_remove(g, *ro); });
}

} // namespace poolctl
