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
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
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

/*
 * Whether the client takes gzip (Accept-Encoding, RFC 9110): a "gzip" or
 * "*" coding whose q is not 0.
 */
bool accepts_gzip(mg_connection *conn)
{
	const char *h = mg_get_header(conn, "Accept-Encoding");
	if (!h)
		return false;
	std::string v(h);
	for (char &c : v)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	size_t pos = 0;
	while (pos <= v.size()) {
		const size_t end = std::min(v.find(',', pos), v.size());
		std::string item = v.substr(pos, end - pos);
		item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
		const std::string coding = item.substr(0, item.find(';'));
		const size_t q = item.find(";q=");
		const bool zero = q != std::string::npos && std::strtod(item.c_str() + q + 3, nullptr) == 0;
		if ((coding == "gzip" || coding == "*") && !zero)
			return true;
		pos = end + 1;
	}
	return false;
}

/* @in as a gzip member (zlib's deflate with the gzip wrapper); empty on failure */
std::string gzip(const std::string &in)
{
	z_stream z{};
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return {};
	std::string out(deflateBound(&z, in.size()), '\0');
	z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
	z.avail_in = static_cast<uInt>(in.size());
	z.next_out = reinterpret_cast<Bytef *>(out.data());
	z.avail_out = static_cast<uInt>(out.size());
	const bool ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
	out.resize(z.total_out);
	deflateEnd(&z);
	return ok ? out : std::string();
}

/*
 * /metrics: GET, and HEAD (the same headers, no body), gzipped when the
 * client asks for it, as node_exporter does.
 */
class MetricsHandler : public CivetHandler {
public:
	explicit MetricsHandler(std::shared_ptr<exporter::Registry> r) : registry_(std::move(r)) {}
	bool handleGet(CivetServer *, mg_connection *conn) override { return reply(conn, true); }
	bool handleHead(CivetServer *, mg_connection *conn) override { return reply(conn, false); }

private:
	bool reply(mg_connection *conn, bool with_body)
	{
		std::string body = prometheus::TextSerializer().Serialize(registry_->Collect());
		const char *encoding = "";
		if (accepts_gzip(conn)) {
			std::string z = gzip(body);
			if (!z.empty()) {
				body = std::move(z);
				encoding = "Content-Encoding: gzip\r\n";
			}
		}
		mg_printf(conn,
			  "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			  "%sVary: Accept-Encoding\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			  encoding, body.size());
		if (with_body)
			mg_write(conn, body.data(), body.size());
		return true;
	}

	std::shared_ptr<exporter::Registry> registry_;
};

/* "/" only: other paths get 404 */
class LandingHandler : public CivetHandler {
public:
	bool handleGet(CivetServer *, mg_connection *conn) override { return reply(conn, true); }
	bool handleHead(CivetServer *, mg_connection *conn) override { return reply(conn, false); }

private:
	bool reply(mg_connection *conn, bool with_body)
	{
		const mg_request_info *ri = mg_get_request_info(conn);
		if (std::string(ri->local_uri ? ri->local_uri : "/") != "/") {
			static const char nf[] = "404 page not found: metrics are at /metrics\n";
			mg_printf(conn,
				  "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
				  "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				  sizeof(nf) - 1, with_body ? nf : "");
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
			  page.size(), with_body ? page.c_str() : "");
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
	app.add_option("--cluster.etcd.cacert", roots.cluster_cacert,
		       "with an https:// --cluster.etcd: the CA that signed etcd's certificate")
		->check(CLI::ExistingFile);
	app.add_option("--cluster.etcd.cert", roots.cluster_cert, "the exporter's client certificate for that etcd")
		->check(CLI::ExistingFile);
	app.add_option("--cluster.etcd.key", roots.cluster_key, "the key of --cluster.etcd.cert")
		->check(CLI::ExistingFile);
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
