#include "poolmem/poison.hpp"

#include "poolmem/error.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

/// Write VALUE to PATH; the errno, or 0.
int write_file(const fs::path &path, const std::string &value, int flags = O_WRONLY)
{
	const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = ::write(fd, value.data(), value.size()) < 0 ? errno : 0;
	::close(fd);
	return err;
}

fs::path tracefs_root()
{
	for (const char *p : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
		if (fs::exists(fs::path(p) / "instances"))
			return p;
	throw Error::plain("tracefs", "not mounted (mount -t tracefs nodev /sys/kernel/tracing)", ENOENT);
}

/// A trace instance of our own, with cxl:cxl_poison on, removed when done.
class PoisonTrace {
public:
	PoisonTrace()
	{
		dir_ = tracefs_root() / "instances" / "poolctl-poison";
		if (::mkdir(dir_.c_str(), 0700) && errno != EEXIST)
			throw Error(dir_.string(), "cannot create a trace instance", errno);
		const int err = write_file(dir_ / "events/cxl/cxl_poison/enable", "1");
		if (err) {
			::rmdir(dir_.c_str());
			throw Error::plain("cxl_poison",
						    err == ENOENT ? "no such trace event: the kernel can't read poison "
								    "lists (Linux 6.3+, cxl_core loaded)"
								  : "cannot enable the trace event",
						    err);
		}
		write_file(dir_ / "trace", "", O_WRONLY | O_TRUNC);
	}
	~PoisonTrace()
	{
		write_file(dir_ / "events/cxl/cxl_poison/enable", "0");
		::rmdir(dir_.c_str());
	}
	std::string text() const
	{
		std::ifstream f(dir_ / "trace");
		std::stringstream s;
		s << f.rdbuf();
		return s.str();
	}

private:
	fs::path dir_;
};

/// The value of KEY= in a trace line's fields ("" if absent).
std::string field(const std::string &line, const std::string &key)
{
	const std::string k = " " + key + "=";
	auto at = line.find(k);
	if (at == std::string::npos)
		return "";
	at += k.size();
	return line.substr(at, line.find(' ', at) - at);
}

uint64_t hex_field(const std::string &line, const std::string &key, uint64_t dflt)
{
	const std::string v = field(line, key);
	try {
		return v.empty() ? dflt : std::stoull(v, nullptr, 16);
	} catch (const std::exception &) {
		return dflt;
	}
}

} // namespace

/*
 * The kernel reads the devices' event records from their event logs when
 * they signal, and emits them as trace events; trace_pipe consumes them.
 * Counted from the first call after boot on.
 */
std::map<std::string, std::map<std::string, uint64_t>> cxl_read_events()
{
	const fs::path dir = tracefs_root() / "instances" / "poolctl-cxl-events";
	if (::mkdir(dir.c_str(), 0700) && errno != EEXIST)
		throw Error(dir.string(), "cannot create a trace instance", errno);
	static const char *const events[] = {"cxl_general_media", "cxl_dram", "cxl_memory_module"};
	for (const char *ev : events)
		write_file(dir / "events/cxl" / ev / "enable", "1"); /* an older kernel lacks some */
	std::map<std::string, std::map<std::string, uint64_t>> counts;
	const int fd = ::open((dir / "trace_pipe").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return counts;
	std::string text;
	char buf[16384];
	for (;;) {
		const ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n <= 0)
			break; /* EAGAIN: nothing more */
		text.append(buf, static_cast<size_t>(n));
	}
	::close(fd);
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);) {
		for (const char *ev : events) {
			const std::string tag = std::string(ev) + ":";
			const auto at = line.find(tag);
			if (at == std::string::npos)
				continue;
			const std::string md = field(" " + line.substr(at + tag.size()), "memdev");
			if (!md.empty())
				counts[md][std::string(ev).substr(4)]++; /* "general_media", "dram", "memory_module" */
		}
	}
	return counts;
}

std::vector<CxlPoisonRecord> cxl_read_poison(const fs::path &sysfs, const std::vector<std::string> &memdevs)
{
	PoisonTrace trace;
	for (const auto &md : memdevs) {
		const int err = write_file(sysfs / "bus/cxl/devices" / md / "trigger_poison_list", "1");
		if (err)
			throw Error(md, err == ENOENT ? "the kernel can't read its poison list" : "cannot read the poison list",
				    err);
	}
	std::vector<CxlPoisonRecord> recs;
	std::istringstream in(trace.text());
	for (std::string line; std::getline(in, line);) {
		const auto at = line.find("cxl_poison:");
		if (at == std::string::npos)
			continue;
		line = " " + line.substr(at + 11);
		CxlPoisonRecord r;
		r.memdev = field(line, "memdev");
		r.region = field(line, "region");
		r.source = field(line, "source");
		r.hpa = hex_field(line, "hpa", cxl_no_hpa);
		r.dpa = hex_field(line, "dpa", 0);
		r.length = hex_field(line, "dpa_length", 0);
		if (!r.memdev.empty())
			recs.push_back(r);
	}
	return recs;
}

int hard_offline_page(uint64_t phys)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(phys));
	return write_file("/sys/devices/system/memory/hard_offline_page", buf);
}

} // namespace poolmem
