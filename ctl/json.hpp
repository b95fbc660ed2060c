// poolctl's JSON: the objects a pool, a domain and the counts are printed
// as (one schema wherever they appear: Documentation/json.md), and how
// --json and -u print them.
#pragma once

#include "options.hpp"

#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace poolctl {

/// The JSON objects of a pool and a domain: one schema wherever they are
/// printed (pool list/show, vm list/show, status, top; Documentation/json.md).
nlohmann::json pool_json(const poolmem::PoolStats &p);
nlohmann::json domain_json(const poolmem::DomainStats &d);
/// Counts that outlive domains (host-wide or a profile's), for status and profile show.
nlohmann::json counts_json(const poolmem::Counts &c);
/// Print J (--json): indented, or on one line (JSON Lines) if COMPACT; with
/// -u every "*_bytes" value becomes a human size string, as daxctl -u does.
void print_json(const GlobalOptions &g, const nlohmann::json &j, bool compact = false);

/// A mutating verb's result: LINE as it is, or with --json (JSON true) the
/// object OBJ (Documentation/json.md, "Results of the verbs that change").
void report(const GlobalOptions &g, bool json, const std::string &line, const nlohmann::json &obj);
/// J with every "*_bytes" number as a size string ("1.5 GiB"): -u.
nlohmann::json humanize(const nlohmann::json &j);

} // namespace poolctl
