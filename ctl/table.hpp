// Aligned human-readable tables for poolctl listings.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace poolctl {

/// Collects rows, then prints them with every column padded to its widest
/// cell: text columns left-aligned, columns marked numeric right-aligned.
class Table {
public:
	/// Header names; a leading '>' marks a right-aligned column.
	explicit Table(std::vector<std::string> header);
	void row(std::vector<std::string> cells);
	void print(std::FILE *out = stdout) const;

private:
	std::vector<std::string> header_;
	std::vector<bool> right_;
	std::vector<std::vector<std::string>> rows_;
};

} // namespace poolctl
