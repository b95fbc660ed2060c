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

/// "1 chunk", "2 chunks": N and NOUN, plural when N != 1 (NOUN + "s").
std::string plural(uint64_t n, const std::string &noun);

/// An admission (overcommit) ratio as operators give it: "1.5" (a ratio of
/// capacity, 1 to 10) or "150%" (100% to 1000%); the kernel's percent
/// (100..1000), or nullopt for anything else. Thread-safe (pure).
std::optional<uint32_t> parse_overcommit(std::string_view text);

/// A kernel overcommit percent as a ratio: 100 -> "1", 150 -> "1.5", 125 -> "1.25".
std::string format_overcommit(uint32_t pct);

/// A duration as operators type it: "500ms", "90s", "5m", "1h", or a bare
/// number in UNIT_S seconds; seconds, or nullopt if malformed or negative.
std::optional<double> parse_duration(const std::string &text, double unit_s = 1);

/// A duration in ns with a unit that fits: "850 ns", "12.3 us", "16.8 ms", "2.50 s".
std::string format_duration_ns(uint64_t ns);

} // namespace poolmem
