#include "poolmem/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <limits>

namespace poolmem {

std::optional<uint64_t> parse_size(std::string_view s)
{
	size_t i = 0;
	uint64_t whole = 0;
	bool digits = false;

	while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
		uint64_t d = static_cast<uint64_t>(s[i] - '0');
		if (whole > (std::numeric_limits<uint64_t>::max() - d) / 10)
			return std::nullopt;
		whole = whole * 10 + d;
		digits = true;
		i++;
	}
	/* up to 9 fractional digits, kept as an exact fraction num / den */
	uint64_t num = 0, den = 1;
	if (i < s.size() && s[i] == '.') {
		i++;
		while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
			if (den < 1000000000ULL) {
				num = num * 10 + static_cast<uint64_t>(s[i] - '0');
				den *= 10;
			}
			digits = true;
			i++;
		}
	}
	if (!digits)
		return std::nullopt;

	unsigned shift = 0;
	if (i < s.size()) {
		switch (std::toupper(static_cast<unsigned char>(s[i]))) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		case 'T': shift = 40; break;
		case 'P': shift = 50; break;
		case 'B': break;
		default: return std::nullopt;
		}
		if (shift)
			i++;
		std::string_view rest = s.substr(i);
		if (!(rest.empty() || rest == "B" || rest == "b" || (shift && (rest == "iB" || rest == "ib"))))
			return std::nullopt;
	}
	if (whole > (std::numeric_limits<uint64_t>::max() >> shift))
		return std::nullopt;
	uint64_t bytes = whole << shift;
	/* fraction: num / den * 2^shift, exact in 128 bits */
	unsigned __int128 frac = (static_cast<unsigned __int128>(num) << shift) / den;
	if (num && frac == 0)
		return std::nullopt; /* "0.5" bytes */
	if (frac > std::numeric_limits<uint64_t>::max() - bytes)
		return std::nullopt;
	return bytes + static_cast<uint64_t>(frac);
}

std::string format_size(uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes >= 1024 && bytes < (uint64_t{1} << 53)) {
		/*
		 * What "%.1f" prints for bytes / 1024^u, in integers: below 2^53
		 * the double is exact (a power of two divides it), and printf
		 * rounds an exact value to nearest, a tie to even. vm list and
		 * status format two sizes a domain: snprintf was a fifth of
		 * vm list's time at 10,000 domains.
		 */
		unsigned u = 0;
		while (u < 6 && bytes >> (10 * (u + 1)))
			u++;
		const uint64_t d = uint64_t{1} << (10 * u), num = bytes * 10;
		uint64_t q = num / d;
		const uint64_t r = num % d;
		if (2 * r > d || (2 * r == d && (q & 1)))
			q++;
		return std::to_string(q / 10) + "." + static_cast<char>('0' + q % 10) + " " + units[u];
	}
	unsigned u = 0;
	double v = static_cast<double>(bytes);
	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	char buf[32];
	if (u == 0)
		std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
	else
		std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
	return buf;
}

std::string plural(uint64_t n, const std::string &noun)
{
	return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string format_duration_ns(uint64_t ns)
{
	char buf[32];
	const double v = static_cast<double>(ns);
	if (ns < 1000)
		std::snprintf(buf, sizeof(buf), "%llu ns", static_cast<unsigned long long>(ns));
	else if (ns < 1000000)
		std::snprintf(buf, sizeof(buf), "%.1f us", v / 1e3);
	else if (ns < 1000000000)
		std::snprintf(buf, sizeof(buf), "%.1f ms", v / 1e6);
	else
		std::snprintf(buf, sizeof(buf), "%.2f s", v / 1e9);
	return buf;
}


std::optional<uint32_t> parse_overcommit(std::string_view text)
{
	const bool pct = !text.empty() && text.back() == '%';
	if (pct)
		text.remove_suffix(1);
	/* digits, at most one point, at most two decimals: no exponents, signs or spaces */
	const size_t dot = text.find('.');
	if (text.empty() || text.size() > 8 || text.find_first_not_of("0123456789.") != std::string_view::npos ||
	    (dot != std::string_view::npos && (text.find('.', dot + 1) != std::string_view::npos ||
					       dot == 0 || dot + 1 == text.size() || text.size() - dot - 1 > 2)))
		return std::nullopt;
	/* in hundredths: "1.5" -> 150 */
	uint64_t whole = 0, frac = 0;
	for (size_t i = 0; i < (dot == std::string_view::npos ? text.size() : dot); i++)
		whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
	if (dot != std::string_view::npos) {
		const std::string_view f = text.substr(dot + 1);
		frac = static_cast<uint64_t>(f[0] - '0') * 10 + (f.size() > 1 ? static_cast<uint64_t>(f[1] - '0') : 0);
	}
	if (pct) {
		if (dot != std::string_view::npos)
			return std::nullopt; /* whole percents only: the kernel's unit */
	} else {
		whole = whole * 100 + frac;
	}
	if (whole < 100 || whole > 1000)
		return std::nullopt;
	return static_cast<uint32_t>(whole);
}

std::string format_overcommit(uint32_t pct)
{
	std::string s = std::to_string(pct / 100);
	if (pct % 100) {
		s += "." + std::to_string(pct % 100 / 10);
		if (pct % 10)
			s += std::to_string(pct % 10);
	}
	return s;
}

std::optional<double> parse_duration(const std::string &text, double unit_s)
{
	size_t pos = 0;
	double v = -1;
	try {
		v = std::stod(text, &pos);
	} catch (const std::exception &) {
		return std::nullopt;
	}
	const std::string unit = text.substr(pos);
	const double mult = unit.empty() ? unit_s
			    : unit == "ms" ? 1e-3
			    : unit == "s"  ? 1
			    : unit == "m"  ? 60
			    : unit == "h"  ? 3600
					   : -1;
	if (pos == 0 || !std::isfinite(v) || v < 0 || mult < 0)
		return std::nullopt;
	return v * mult;
}

} // namespace poolmem
