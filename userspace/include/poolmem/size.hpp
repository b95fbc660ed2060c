// Sizes as operators type and read them: K/M/G/T suffixes, powers of 1024.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace poolmem {

/// Parse "4096", "2M", "16G", "1.5G", "512k" (binary units, optional
/// trailing "B" or "iB"). Returns nullopt on empty input, trailing garbage,
/// negative numbers, a fraction below one byte, or overflow of 64 bits.
/// Thread-safe (pure).
std::optional<uint64_t> parse_size(std::string_view text);

/// Format bytes with the largest unit that keeps one decimal exact enough:
/// 0 -> "0 B", 1536 -> "1.5 KiB", 2147483648 -> "2.0 GiB".
std::string format_size(uint64_t bytes);

} // namespace poolmem
