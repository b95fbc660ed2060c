// Small sysfs file helpers (private to libpoolmem).
#pragma once

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

} // namespace poolmem::sysfs
