// Small sysfs file helpers (private to libpoolmem).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace poolmem::sysfs {

/// Whole file, trailing newline removed; nullopt if it can't be opened.
std::optional<std::string> read(const std::filesystem::path &p);

/// Whole file or throw std::runtime_error("PATH: cannot read: CAUSE").
std::string read_required(const std::filesystem::path &p);

/// Decimal or 0x-hex unsigned value of a file, nullopt if absent or malformed.
std::optional<uint64_t> read_u64(const std::filesystem::path &p);

/// An open directory whose files are read by name (openat): the exporter
/// reads thousands of attributes per scrape, and resolving the whole path
/// (through /sys/class symlinks) for each costs more than reading it.
class Dir {
public:
	explicit Dir(const std::filesystem::path &p);
	~Dir();
	Dir(const Dir &) = delete;
	Dir &operator=(const Dir &) = delete;
	/// Like sysfs::read() and sysfs::read_u64(), for the file @name (a
	/// path relative to this directory).
	std::optional<std::string> read(const char *name) const;
	std::optional<std::string> read(const std::string &name) const { return read(name.c_str()); }
	std::optional<uint64_t> read_u64(const char *name) const;
	std::optional<uint64_t> read_u64(const std::string &name) const { return read_u64(name.c_str()); }
	/// Device, inode number and change time of @sub in here (symlinks
	/// followed): which object this is, since a name can be reused by a
	/// new one.
	std::optional<std::array<uint64_t, 4>> identity(const std::string &sub) const;

private:
	int fd_;
};

} // namespace poolmem::sysfs
