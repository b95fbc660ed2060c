#include "table.hpp"

#include <algorithm>

namespace poolctl {

Table::Table(std::vector<std::string> header)
{
	for (auto &h : header) {
		bool r = !h.empty() && h[0] == '>';
		right_.push_back(r);
		header_.push_back(r ? h.substr(1) : h);
	}
}

void Table::row(std::vector<std::string> cells)
{
	cells.resize(header_.size());
	rows_.push_back(std::move(cells));
}

void Table::print(std::FILE *out) const
{
	std::vector<size_t> w(header_.size());
	for (size_t i = 0; i < header_.size(); i++) {
		w[i] = header_[i].size();
		for (const auto &r : rows_)
			w[i] = std::max(w[i], r[i].size());
	}
	auto line = [&](const std::vector<std::string> &cells) {
		std::string s;
		for (size_t i = 0; i < cells.size(); i++) {
			std::string pad(w[i] - cells[i].size(), ' ');
			if (i)
				s += "  ";
			s += right_[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
		}
		std::fprintf(out, "%s\n", s.c_str());
	};
	line(header_);
	for (const auto &r : rows_)
		line(r);
}

} // namespace poolctl
