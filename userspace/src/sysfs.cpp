#include "sysfs.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <stdexcept>

namespace poolmem::sysfs {

std::optional<std::string> read(const std::filesystem::path &p)
{
	/* plain read(2): sysfs files are small, and the exporter reads
	 * thousands per scrape, where iostreams cost more than the syscalls */
	int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return std::nullopt;
	std::string s;
	char buf[4096];
	ssize_t n;
	/* a sysfs attribute comes whole in one read; a short read is the end */
	while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
		s.append(buf, static_cast<size_t>(n));
		if (static_cast<size_t>(n) < sizeof(buf))
			break;
	}
	int e = errno;
	::close(fd);
	if (n < 0) {
		errno = e;
		return std::nullopt;
	}
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

std::string read_required(const std::filesystem::path &p)
{
	errno = 0;
	auto s = read(p);
	if (!s)
		throw std::runtime_error(p.string() + ": cannot read: " +
					 std::strerror(errno ? errno : ENOENT));
	return *s;
}

std::optional<uint64_t> read_u64(const std::filesystem::path &p)
{
	auto s = read(p);
	if (!s || s->empty())
		return std::nullopt;
	try {
		size_t pos = 0;
		uint64_t v = std::stoull(*s, &pos, 0);
		if (pos != s->size())
			return std::nullopt;
		return v;
	} catch (const std::exception &) {
		return std::nullopt;
	}
}

} // namespace poolmem::sysfs
