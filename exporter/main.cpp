// poolmem-exporter: Prometheus metrics for poolmem pools, domains and NUMA
// nodes, read from sysfs and procfs only, built fresh on every scrape.
//
// HTTP is civetweb's (the server prometheus-cpp's Exposer wraps), used
// directly: the Exposer adds its own exposer_* metrics to every scrape and
// can't serve a landing page, while an exporter should serve only its own
// metrics (node_exporter's conventions).
#include "registry.hpp"

#include <poolmem/size.hpp>

#include <CLI/CLI.hpp>
#include <CivetServer.h>
#include <prometheus/text_serializer.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>

#ifndef POOLMEM_VERSION
#define POOLMEM_VERSION "unknown"
#endif

namespace {

/* civetweb's own account of a failed start ("cannot bind to ...: 98
 * (Address already in use)"), for the one-line error */
std::mutex log_mu;
std::string last_log;

int log_message(const mg_connection *, const char *message)
{
	std::lock_guard lock(log_mu);
	/* the first is the cause; "Failed to setup server ports" follows it */
	if (last_log.empty())
		last_log = message;
	return 1; /* handled: civetweb prints nothing itself */
}

class MetricsHandler : public CivetHandler {
public:
	explicit MetricsHandler(std::shared_ptr<exporter::Registry> r) : registry_(std::move(r)) {}
	bool handleGet(CivetServer *, mg_connection *conn) override
	{
		const std::string body = prometheus::TextSerializer().Serialize(registry_->Collect());
		mg_printf(conn,
			  "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			  body.size());
		mg_write(conn, body.data(), body.size());
		return true;
	}

private:
	std::shared_ptr<exporter::Registry> registry_;
};

/* "/" only: other paths get 404 */
class LandingHandler : public CivetHandler {
public:
	bool handleGet(CivetServer *, mg_connection *conn) override
	{
		const mg_request_info *ri = mg_get_request_info(conn);
		if (std::string(ri->local_uri ? ri->local_uri : "/") != "/") {
			static const char nf[] = "404 page not found: metrics are at /metrics\n";
			mg_printf(conn,
				  "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
				  "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				  sizeof(nf) - 1, nf);
			return true;
		}
		static const std::string page =
			"<!DOCTYPE html>\n<html><head><title>poolmem exporter</title></head><body>\n"
			"<h1>poolmem exporter</h1>\n<p>Version " POOLMEM_VERSION
			". Prometheus metrics of poolmem's pools, VM domains and NUMA nodes.</p>\n"
			"<ul><li><a href=\"/metrics\">Metrics</a></li></ul>\n</body></html>\n";
		mg_printf(conn,
			  "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n%s",
			  page.size(), page.c_str());
		return true;
	}
};

/* ":9788" (node_exporter's form) -> "9788"; "HOST:PORT" and "[::]:PORT" as given */
std::string civet_ports(const std::string &listen)
{
	return !listen.empty() && listen[0] == ':' ? listen.substr(1) : listen;
}

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"poolmem-exporter: Prometheus metrics for poolmem (pools, VM domains, NUMA nodes)",
		     "poolmem-exporter"};
	app.set_version_flag("--version", "poolmem-exporter " POOLMEM_VERSION);
	std::string listen = "0.0.0.0:9788";
	exporter::Roots roots;
	std::string sysfs = "/sys", procfs = "/proc";
	bool once = false;
	app.add_option("--web.listen-address", listen,
		       "address:port to serve / and /metrics on (default 0.0.0.0:9788; :PORT for every address)");
	app.add_option("--path.sysfs", sysfs, "sysfs root (default /sys)");
	app.add_option("--path.procfs", procfs, "procfs root (default /proc)");
	std::string resctrl = "/sys/fs/resctrl";
	app.add_option("--path.resctrl", resctrl, "resctrl mount (default /sys/fs/resctrl): MBM bandwidth per VM");
	std::string poolctl_state = "/run/poolctl";
	app.add_option("--path.poolctl-state", poolctl_state,
		       "poolctl's state directory (default /run/poolctl): the last poison-scan's media-errors.json");
	app.add_flag("--once", once, "print the metrics once to stdout and exit (no HTTP)");
	app.add_option("--probe.interval", roots.probe.interval_s, "seconds between latency probe rounds (default 10)")
		->check(CLI::Range(0.1, 3600.0));
	app.add_option("--probe.duration", roots.probe.duration_ms, "milliseconds of pointer chase per pool and round (default 5)")
		->check(CLI::Range(0.1, 1000.0));
	std::string probe_size;
	app.add_option("--probe.size", probe_size, "probe buffer per pool, e.g. 64M (default: 2 x last-level cache, 32M..256M)");
	app.add_option("--cluster.etcd", roots.cluster_etcd,
		       "the shared-device ledger's etcd (e.g. http://127.0.0.1:2379): export the cluster view "
		       "(default: none, the cluster collector is off)");
	app.add_option("--cluster.prefix", roots.cluster_prefix, "the ledger's key prefix (default /poolmem)");
	app.add_flag("--collector.domain.histograms,!--no-collector.domain.histograms", roots.domain_histograms,
		     "each domain's fault latency histogram, 16 series per VM (default on; off on hosts with "
		     "thousands of VMs: the faults, SIGBUS and the rest stay)");
	std::map<std::string, bool> on;
	for (const auto &c : exporter::all_collectors()) {
		on[c->name()] = true;
		app.add_flag("--collector." + c->name() + ",!--no-collector." + c->name(), on[c->name()],
			     "enable the " + c->name() + " collector (default on" +
				     (c->name() == "cluster" ? " when --cluster.etcd is given)" : ")"));
	}
	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		std::fprintf(stderr, "poolmem-exporter: %s (see poolmem-exporter --help)\n", e.what());
		return 2;
	}
	roots.sysfs = sysfs;
	roots.procfs = procfs;
	roots.probe.once = once;
	roots.resctrl = resctrl;
	roots.poolctl_state = poolctl_state;
	if (!probe_size.empty()) {
		auto v = poolmem::parse_size(probe_size);
		if (!v || *v < (1ULL << 20)) {
			std::fprintf(stderr, "poolmem-exporter: --probe.size: invalid size '%s' (at least 1M)\n", probe_size.c_str());
			return 2;
		}
		roots.probe.size_bytes = *v;
	}
	std::set<std::string> enabled;
	for (const auto &[name, en] : on)
		if (en && (name != "cluster" || !roots.cluster_etcd.empty()))
			enabled.insert(name);

	auto registry = std::make_shared<exporter::Registry>(roots, enabled);
	if (once) {
		prometheus::TextSerializer().Serialize(std::cout, registry->Collect());
		return 0;
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, nullptr); /* the server's threads inherit this */
	mg_init_library(0);
	int rc = 0;
	try {
		CivetCallbacks cb;
		cb.log_message = log_message;
		CivetServer server({"listening_ports", civet_ports(listen), "num_threads", "4"}, &cb);
		MetricsHandler metrics(registry);
		LandingHandler landing;
		server.addHandler("/metrics", metrics);
		server.addHandler("/", landing);
		std::fprintf(stderr, "poolmem-exporter %s: serving / and /metrics on %s\n", POOLMEM_VERSION,
			     listen.c_str());
		int sig;
		sigwait(&set, &sig);
	} catch (const CivetException &) {
		std::lock_guard lock(log_mu);
		std::fprintf(stderr, "poolmem-exporter: %s: cannot listen: %s\n", listen.c_str(),
			     last_log.empty() ? "civetweb could not start" : last_log.c_str());
		rc = 1;
	}
	mg_exit_library();
	return rc;
}
