#include "sysfs.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace poolmem::sysfs {

std::optional<std::string> read(const std::filesystem::path &p)
{
	std::ifstream f(p);
	if (!f)
		return std::nullopt;
	std::ostringstream ss;
	ss << f.rdbuf();
	std::string s = ss.str();
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
