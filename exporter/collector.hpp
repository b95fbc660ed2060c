// poolmem-exporter collectors: one per file, each named after what it
// measures. A collector reads sysfs/procfs afresh on every scrape and
// appends metric families; it throws on failure, and the registry reports
// its success and duration (node_exporter's scrape_collector_* pattern).
#pragma once

#include <nlohmann/json.hpp>
#include <prometheus/metric_family.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace exporter {

/// The loaded-latency probe's settings (probe.cpp).
struct ProbeOptions {
	double interval_s = 10;   ///< between rounds
	double duration_ms = 5;   ///< of chasing per pool and round
	uint64_t size_bytes = 0;  ///< buffer per pool; 0 = 2 x LLC (32..256 MiB)
	bool once = false;        ///< --once: one round, synchronously
};

/// Where to read from (fixture trees in tests), and the probe's settings.
struct Roots {
	std::filesystem::path sysfs = "/sys";
	std::filesystem::path procfs = "/proc";
	std::filesystem::path resctrl = "/sys/fs/resctrl";
	std::filesystem::path poolctl_state = "/run/poolctl"; ///< poolctl's state: media-errors.json
	/// the DRAM autopilot's state: status.json (poolctl autopilot run --state)
	std::filesystem::path autopilot_state = "/run/poolmem-autopilot";
	ProbeOptions probe;
	/// The cluster ledger's etcd (--cluster.etcd); "" = no cluster collector output.
	std::string cluster_etcd;
	std::string cluster_prefix = "/poolmem";
	std::string cluster_cacert, cluster_cert, cluster_key; ///< TLS to an https:// etcd
	/// --[no-]collector.domain.histograms: each domain's fault latency
	/// histogram (16 of a domain's series); off on hosts with thousands of VMs
	bool domain_histograms = true;
	/// --capacity.shape (repeatable): VM shapes whose fit the capacity collector exports
	std::vector<std::string> capacity_shapes;
};

using Labels = std::vector<std::pair<std::string, std::string>>;

/// Builds one metric family; descriptors (name, help, type) are fixed at
/// construction, samples are added per scrape.
class Family {
public:
	Family(std::string name, std::string help, prometheus::MetricType type);
	Family &add(const Labels &labels, double value);
	/// A histogram sample: cumulative counts per upper bound (seconds), +Inf last.
	Family &add_histogram(const Labels &labels, const std::vector<std::pair<double, uint64_t>> &cumulative,
			      uint64_t count, double sum);
	prometheus::MetricFamily take() { return std::move(f_); }
	bool empty() const { return f_.metric.empty(); }

private:
	prometheus::MetricFamily f_;
};

/// Thrown by a collector after it appended what it could read: the scrape
/// keeps those families but counts the collector as failed, and logs each
/// line of what() (one per file that could not be read).
struct PartialError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

/// A state file another tool writes whole (poolctl's media-errors.json, the
/// autopilot's status.json): nullopt when there is none (nothing ran yet,
/// no failure); throws naming the file when it does not parse.
std::optional<nlohmann::json> read_state_file(const std::filesystem::path &path);

/// Throw PartialError for ERRORS, if any (one line each).
void throw_if_partial(const std::vector<std::string> &errors);

class Collector {
public:
	virtual ~Collector() = default;
	virtual std::string name() const = 0;
	/// Append this collector's families; throw on failure.
	virtual void collect(const Roots &roots, std::vector<prometheus::MetricFamily> &out) const = 0;
};

std::unique_ptr<Collector> make_pools_collector();
std::unique_ptr<Collector> make_capacity_collector();
std::unique_ptr<Collector> make_domains_collector();
std::unique_ptr<Collector> make_nodes_collector();
std::unique_ptr<Collector> make_module_collector();
std::unique_ptr<Collector> make_probe_collector();
std::unique_ptr<Collector> make_resctrl_collector();
std::unique_ptr<Collector> make_cluster_collector();
std::unique_ptr<Collector> make_media_collector();
std::unique_ptr<Collector> make_autopilot_collector();

/// The poolmem domain a resctrl group (path below /sys/fs/resctrl) belongs
/// to: a path component that is a domain's name, or libvirt's
/// "qemu-<id>-<name>-vcpus_*"; "" for none.
std::string resctrl_domain(const std::string &group, const std::set<std::string> &domains);

/// The probe's pointer chase: LINES[i * STRIDE] of N lines become one
/// random cycle through all of them (Sattolo); chase() follows STEPS links.
void chase_init(void **lines, size_t n, size_t stride_words, uint64_t seed);
void **chase(void **p, size_t steps);
/// Upper bounds (seconds) of the probe's latency histogram.
extern const std::vector<double> probe_buckets;

/// Every collector, by name, in output order.
std::vector<std::unique_ptr<Collector>> all_collectors();

/// Free blocks of at least 2 MiB per node from /proc/buddyinfo text,
/// counted in 2 MiB units (an order-10 block counts 2). Throws
/// std::invalid_argument on malformed lines.
std::map<int, uint64_t> parse_buddyinfo_2mib(const std::string &text, unsigned page_shift = 12);

} // namespace exporter
