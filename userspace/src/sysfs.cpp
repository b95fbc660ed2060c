#include "sysfs.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdexcept>

namespace poolmem::sysfs {

namespace {

/* plain read(2): sysfs files are small, and the exporter reads thousands
 * per scrape, where iostreams cost more than the syscalls */
std::optional<std::string> read_fd(int fd)
{
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

std::optional<uint64_t> to_u64(const std::optional<std::string> &s)
{
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

} // namespace

std::optional<std::string> read(const std::filesystem::path &p)
{
	return read_fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
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

std::optional<uint64_t> read_u64(const std::filesystem::path &p) { return to_u64(read(p)); }

Dir::Dir(const std::filesystem::path &p) : fd_(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

Dir::~Dir()
{
	if (fd_ >= 0)
		::close(fd_);
}

std::optional<std::string> Dir::read(const char *name) const
{
	if (fd_ < 0)
		return std::nullopt;
	return read_fd(::openat(fd_, name, O_RDONLY | O_CLOEXEC));
}

std::optional<uint64_t> Dir::read_u64(const char *name) const { return to_u64(read(name)); }

std::optional<std::array<uint64_t, 4>> Dir::identity(const std::string &sub) const
{
	struct stat st;
	if (fd_ < 0 || ::fstatat(fd_, sub.c_str(), &st, 0))
		return std::nullopt;
	return std::array<uint64_t, 4>{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
				       static_cast<uint64_t>(st.st_ctim.tv_sec),
				       static_cast<uint64_t>(st.st_ctim.tv_nsec)};
}

} // namespace poolmem::sysfs
