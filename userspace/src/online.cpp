// A dax device onlined as a pool (online.hpp): the zone the kernel chose
// taken back, the memmap placed, the device split for progressive
// onlining, the blocks onlined, the pool registered, and every step undone
// when a later one fails.
#include <poolmem/online.hpp>

#include <poolmem/error.hpp>
#include <poolmem/topology.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* Files are written whole and renamed into place: a reader (pool show)
 * never sees half of one. */
void write_whole(const fs::path &path, const std::string &text)
{
	fs::create_directories(path.parent_path());
	const fs::path tmp = path.string() + ".tmp";
	{
		std::ofstream f(tmp);
		f << text;
	}
	fs::rename(tmp, path);
}

fs::path state_file(const std::string &pool) { return online_state_dir / (pool + ".online"); }

void write_state(const std::string &pool, const OnlineState &s)
{
	std::ostringstream text;
	text << s.done << ' ' << s.total << ' ' << s.seconds << ' ' << s.state << '\n';
	write_whole(state_file(pool), text.str());
}

void write_pieces(const std::string &pool, const Pieces &p)
{
	std::string text = p.device + ' ' + std::to_string(p.size) + '\n';
	for (const auto &m : p.made)
		text += m + '\n';
	write_whole(pieces_file(pool), text);
}

bool all_offline(const fs::path &sysfs, Dax &dax, const std::string &dev)
{
	for (unsigned b : dax.blocks(dev))
		if (block_state(sysfs, b) == "online")
			return false;
	return true;
}

/*
 * Memory the kernel onlined by itself into another zone than the one
 * asked for: on a kernel that auto-onlines (Debian's 6.12 does, into
 * ZONE_NORMAL), the hmem and CXL RAM devices it binds to kmem at boot
 * come online there. It is taken back (offlined), to be onlined in the
 * zone asked for; where the kernel can't give it back (memory in use),
 * the onlining is refused and the blocks stay as they were.
 */
void take_back_zone(const OnlineRequest &req, Dax &dax, DaxInfo &before)
{
	const std::string want = req.zone == Zone::movable ? "Movable" : "Normal";
	std::vector<unsigned> other;
	for (unsigned b : dax.blocks(req.device))
		if (block_state(req.sysfs, b) == "online" && block_zone(req.sysfs, b) != want)
			other.push_back(b);
	if (other.empty())
		return;
	const std::string had = block_zone(req.sysfs, other.front());
	std::vector<int> errs;
	const auto refused = offline_blocks(req.sysfs, other, &errs);
	if (!refused.empty()) {
		std::vector<unsigned> back;
		for (unsigned b : other)
			if (std::find(refused.begin(), refused.end(), b) == refused.end())
				back.push_back(b);
		try {
			online_blocks(req.sysfs, back, had == "Movable" ? Zone::movable : Zone::normal);
		} catch (const Error &) {
		}
		throw Error::plain(req.device,
				   std::to_string(refused.size()) + " of the " + std::to_string(other.size()) +
					   " blocks the kernel onlined into ZONE_" + had +
					   " by itself can't go offline (memory" + std::to_string(refused.front()) + ": " +
					   std::strerror(errs.front()) + "): --zone " +
					   (had == "Movable" ? "movable" : "normal") +
					   " takes the device as it is, or boot with memhp_default_state=offline",
				   EBUSY);
	}
	if (req.note)
		req.note("took back " + std::to_string(other.size()) + " blocks the kernel had onlined into ZONE_" +
			 had + " itself");
	before = dax.device(req.device);
}

/*
 * Where kmem is to put the memmap of the device's memory, set on the
 * device before it is bound: 64 bytes of struct page per 4 KiB page, 16 MiB
 * per GiB, 16 GiB of DRAM for a TiB of CXL memory when it goes to the
 * nearest DRAM (local). On the device (6.8+, booted with
 * memory_hotplug.memmap_on_memory) each memory block holds its own in its
 * first pages: no DRAM, but 1/64 of the pool is no pool memory, and those
 * pages can't be offlined apart from their block (a block goes whole).
 * auto: the device's where the kernel can, else local. Without the boot
 * parameter kmem ignores the device's setting, which is left alone. A
 * device the kernel bound to kmem itself (6.5+: hmem, CXL RAM) with every
 * block offline goes back to devdax to be set; with blocks online it stays
 * as it is (auto) or is refused (EBUSY). Updates BEFORE; returns whether
 * the memmap will be on the device.
 */
bool place_memmap(const OnlineRequest &req, Dax &dax, DaxInfo &before)
{
	const std::string &dev = req.device;
	const std::optional<bool> now = dax.memmap_on_memory(dev);
	const bool booted = memmap_on_memory_booted(req.sysfs);
	bool want = false;
	if (req.memmap == "device") {
		if (!now)
			throw Error::plain(dev, "this kernel cannot put a dax device's memmap on its memory "
						"(Linux 6.8 and later can); use --memmap local",
					   EOPNOTSUPP);
		if (!booted)
			throw Error::plain(dev, "the kernel was not booted with memory_hotplug.memmap_on_memory=1, so "
						"kmem puts the memmap in local DRAM; boot with it, or use --memmap local",
					   EOPNOTSUPP);
		want = true;
	} else if (req.memmap == "auto") {
		want = now.has_value() && booted;
	}
	/* without the boot parameter kmem puts it in DRAM whatever the device says */
	if (!now || !booted)
		return false;
	if (*now == want)
		return want;
	if (before.system_ram) {
		if (!all_offline(req.sysfs, dax, dev)) {
			if (req.memmap != "auto")
				throw Error::plain(dev, std::string("bound to kmem with its memmap ") +
								(*now ? "on the device" : "in local DRAM") +
								" and memory online: offline it first",
						   EBUSY);
			return *now;
		}
		dax.to_devdax(dev);
		before = dax.device(dev);
	}
	dax.set_memmap_on_memory(dev, want);
	return want;
}

/*
 * The rest of a progressive onlining, in the detached child: the blocks
 * bound already, then, for a split device, the rest of its region as one
 * more device. Only the first piece has to be small; after it, every piece
 * costs a device made and bound to kmem (tens of ms under emulation),
 * while kmem's memmap setup for all the rest takes about as long as
 * onlining a few of its blocks. So one piece: its blocks still come online
 * one by one, at the rate of the whole device. (Pieces that doubled,
 * 2026-11, made an 8 GiB device three pieces and cost a third of the
 * rate.) Never returns.
 */
[[noreturn]] void online_rest(const OnlineRequest &req, const std::vector<unsigned> &rest, unsigned done,
			      unsigned all_blocks, uint64_t device_size, bool split,
			      std::chrono::steady_clock::time_point t0)
{
	setsid();
	std::string st = "done";
	/* the state file at most every 100 ms: a block onlines in ~10 ms */
	auto last = std::chrono::steady_clock::time_point{};
	auto report = [&](unsigned d, unsigned) {
		const auto t = std::chrono::steady_clock::now();
		if (t - last < std::chrono::milliseconds(100))
			return;
		last = t;
		write_state(req.pool, {done + d, all_blocks, seconds_since(t0), "running"});
	};
	try {
		online_blocks(req.sysfs, rest, req.zone, report);
		done += static_cast<unsigned>(rest.size());
		if (split) {
			Dax dax(req.sysfs);
			const uint64_t block_size = memory_block_size(req.sysfs);
			const uint64_t avail = dax.region_available(req.device) / block_size * block_size;
			if (avail) {
				const std::string piece = dax.create_device(req.device, avail);
				write_pieces(req.pool, {req.device, device_size, {piece}});
				dax.to_system_ram(piece);
				const auto pb = dax.blocks(piece);
				online_blocks(req.sysfs, pb, req.zone, report);
				done += static_cast<unsigned>(pb.size());
			}
		}
	} catch (const std::exception &e) {
		st = std::string("failed: ") + e.what();
	}
	write_state(req.pool, {st == "done" ? all_blocks : done, all_blocks, seconds_since(t0), st});
	_exit(st == "done" ? 0 : 1);
}

} // namespace

std::optional<OnlineState> read_online_state(const std::string &pool)
{
	std::ifstream f(state_file(pool));
	OnlineState s;
	if (!(f >> s.done >> s.total >> s.seconds))
		return std::nullopt;
	std::getline(f >> std::ws, s.state);
	return s;
}

fs::path pieces_file(const std::string &pool) { return online_state_dir / (pool + ".pieces"); }

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

size_t merge_pieces(Dax &dax, const Pieces &p)
{
	size_t n = 0;
	for (auto it = p.made.rbegin(); it != p.made.rend(); ++it) {
		try {
			dax.device(*it);
		} catch (const Error &) {
			continue; /* never made, or gone already */
		}
		dax.destroy_device(*it);
		n++;
	}
	dax.resize(p.device, p.size);
	dax.to_devdax(p.device);
	return n;
}

fs::path added_marker(const std::string &pool) { return online_state_dir / (pool + ".added"); }

int lock_onlining(const std::string &pool)
{
	fs::create_directories(online_state_dir);
	const fs::path path = online_state_dir / (pool + ".lock");
	int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600); /* inherited by the child: no O_CLOEXEC */
	if (fd < 0)
		throw Error(path.string(), "cannot open", errno);
	if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
		const int e = errno;
		::close(fd);
		if (e == EWOULDBLOCK)
			throw Error::plain(pool, "onlining continues in the background; wait for it (poolctl pool show " +
							 pool + ")",
					   EBUSY);
		throw Error(path.string(), "cannot lock", e);
	}
	return fd;
}

OnlineResult online_dax(Control &ctl, const OnlineRequest &req)
{
	const std::string &dev = req.device;
	Dax dax(req.sysfs);
	DaxInfo before = dax.device(dev);
	if (before.system_ram)
		take_back_zone(req, dax, before);
	/*
	 * Since 6.5 ("dax: Assign RAM regions to memory-hotplug by default")
	 * the kernel binds Soft Reserved (hmem) and CXL RAM devices to kmem
	 * itself, so on 6.12 such a device comes as system-ram with every
	 * block offline. Nothing uses offline memory: a progressive online,
	 * which must reshape the device first, takes it back to devdax.
	 */
	if (before.system_ram && req.progressive && dax.dynamic(dev) && all_offline(req.sysfs, dax, dev)) {
		dax.to_devdax(dev);
		before = dax.device(dev);
	}
	OnlineResult res;
	res.memmap_device = place_memmap(req, dax, before);
	/*
	 * The kernel's own auto-onlining (auto_online_blocks: Debian's 6.12
	 * onlines hot-added memory into ZONE_NORMAL) is off around the kmem
	 * bind (Dax::to_system_ram, AutoOnlineOff), so the blocks stay offline
	 * for us: no race, no reboot parameter.
	 */
	const uint64_t block_size = memory_block_size(req.sysfs);
	const uint64_t first_piece = (std::max<uint64_t>(req.first_bytes, 1) + block_size - 1) / block_size * block_size;
	/* split only a device we may reshape: devdax, in a dynamic region */
	res.split = req.progressive && !before.system_ram && before.size > first_piece && dax.dynamic(dev);

	const auto t0 = std::chrono::steady_clock::now();
	if (res.split) {
		dax.resize(dev, first_piece);
		write_pieces(req.pool, {dev, before.size, {}});
	}
	auto unsplit = [&] {
		if (!res.split)
			return;
		try {
			dax.resize(dev, before.size);
			dax.to_devdax(dev);
		} catch (const Error &) {
		}
		std::error_code ec;
		fs::remove(pieces_file(req.pool), ec);
	};
	try {
		dax.to_system_ram(dev);
	} catch (...) {
		unsplit();
		throw;
	}
	res.node = dax.device(dev).target_node;
	const std::vector<unsigned> blocks = dax.blocks(dev);
	if (blocks.empty() || block_size == 0) {
		if (!before.system_ram)
			dax.to_devdax(dev);
		unsplit();
		throw Error(dev, "no whole memory block in the device");
	}

	size_t sync_n = blocks.size();
	if (req.progressive)
		sync_n = std::min(blocks.size(), std::max<size_t>(1, first_piece / block_size));
	const std::vector<unsigned> first(blocks.begin(), blocks.begin() + static_cast<long>(sync_n));
	const std::vector<unsigned> rest(blocks.begin() + static_cast<long>(sync_n), blocks.end());
	res.blocks_total = res.split ? static_cast<unsigned>(before.size / block_size) : static_cast<unsigned>(blocks.size());
	/* a device just bound to kmem has every block offline (auto-onlining was off for the bind) */
	std::vector<unsigned> were_offline;
	for (unsigned b : blocks)
		if (!before.system_ram || block_state(req.sysfs, b) != "online")
			were_offline.push_back(b);

	try {
		const unsigned all = res.blocks_total;
		online_blocks(req.sysfs, first, req.zone,
			      req.progress ? Progress([&](unsigned d, unsigned) { req.progress(d, all); }) : Progress());
		ctl.pool_add(req.pool, res.node, req.overcommit_pct);
	} catch (...) {
		/* undo everything done here, leaving the device as it was */
		offline_blocks(req.sysfs, were_offline);
		if (!before.system_ram) {
			try {
				dax.to_devdax(dev);
			} catch (const Error &) {
			}
		}
		unsplit();
		throw;
	}
	res.seconds = seconds_since(t0);
	res.blocks = static_cast<unsigned>(first.size());
	res.online_bytes = first.size() * block_size;
	res.memmap_bytes = memmap_bytes(blocks.size() * block_size);
	res.background = !(rest.empty() && !res.split);
	if (!res.background) {
		write_state(req.pool, {res.blocks_total, res.blocks_total, res.seconds, "done"});
		return res;
	}

	/* progressive onlining: the rest continues in a detached child */
	write_state(req.pool, {res.blocks, res.blocks_total, res.seconds, "running"});
	std::fflush(nullptr);
	/* taken before the fork, so that no offline or remove slips in between */
	const int lock = lock_onlining(req.pool);
	const pid_t pid = fork();
	if (pid < 0) {
		const int e = errno;
		::close(lock);
		throw Error(req.pool, "cannot start background onlining", e);
	}
	if (pid == 0)
		online_rest(req, rest, res.blocks, res.blocks_total, before.size, res.split, t0);
	::close(lock); /* the child holds it until it is done */
	return res;
}

unsigned online_again(const fs::path &sysfs, int node, Zone zone, const Progress &progress)
{
	const Topology t = read_topology(sysfs);
	const Node *n = t.node(node);
	std::vector<unsigned> off;
	if (n)
		for (unsigned b : n->blocks)
			if (block_state(sysfs, b) != "online")
				off.push_back(b);
	if (!off.empty())
		online_blocks(sysfs, off, zone, progress);
	return static_cast<unsigned>(off.size());
}

} // namespace poolmem
