// poolmem-exporter: Prometheus metrics for poolmem pools, domains and NUMA
// nodes, read from sysfs and procfs only, built fresh on every scrape.
//
// HTTP is libmicrohttpd's (web.cpp): IPv6 and dual stack, TLS and basic
// auth from a --web.config.file of node_exporter's format. prometheus-cpp
// serialises; its Exposer is not used: it adds its own exposer_* metrics
// to every scrape and can't serve a landing page, while an exporter should
// serve only its own metrics (node_exporter's conventions).
#include "registry.hpp"
#include "web.hpp"

#include <poolmem/capacity.hpp>
#include <poolmem/size.hpp>

#include <CLI/CLI.hpp>
#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <algorithm>
#include <sstream>
#include <fstream>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <iostream>

#include <malloc.h>
#include <unistd.h>

#ifndef POOLMEM_VERSION
#define POOLMEM_VERSION "unknown"
#endif

namespace {

/*
 * Whether the client takes gzip (Accept-Encoding, RFC 9110): a "gzip" or
 * "*" coding whose q is not 0.
 */
bool accepts_gzip(const std::string &h)
{
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
 * / (a landing page linking /metrics) and /metrics, gzipped when the
 * client asks for it, as node_exporter does; anything else is 404. HEAD
 * gets GET's headers without the body (libmicrohttpd leaves it out).
 */
exporter::web::Response serve(const exporter::Registry &registry, const std::string &runbooks,
			      const exporter::web::Request &req)
{
	exporter::web::Response r;
	if (req.path == "/metrics") {
		r.content_type = "text/plain; version=0.0.4; charset=utf-8";
		r.body = prometheus::TextSerializer().Serialize(registry.Collect());
		r.headers.emplace_back("Vary", "Accept-Encoding");
		if (accepts_gzip(req.accept_encoding)) {
			std::string z = gzip(r.body);
			if (!z.empty()) {
				r.body = std::move(z);
				r.headers.emplace_back("Content-Encoding", "gzip");
			}
		}
	} else if (req.path == "/runbooks.html") {
		/* the installed runbooks, for alerts whose runbook_url points here */
		std::ifstream f(runbooks);
		std::ostringstream body;
		if (f && (body << f.rdbuf())) {
			r.content_type = "text/html; charset=utf-8";
			r.body = body.str();
		} else {
			r.status = 404;
			r.body = "404: no runbooks at " + runbooks + " (--web.runbooks)\n";
		}
	} else if (req.path == "/") {
		r.content_type = "text/html; charset=utf-8";
		r.body = "<!DOCTYPE html>\n<html><head><title>poolmem exporter</title></head><body>\n"
			 "<h1>poolmem exporter</h1>\n<p>Version " POOLMEM_VERSION
			 ". Prometheus metrics of poolmem's pools, VM domains and NUMA nodes.</p>\n"
			 "<ul><li><a href=\"/metrics\">Metrics</a></li>"
			 "<li><a href=\"/runbooks.html\">Runbooks</a> (what to do when an alert fires)</li></ul>\n"
			 "</body></html>\n";
	} else {
		r.status = 404;
		r.body = "404 page not found: metrics are at /metrics\n";
	}
	return r;
}

} // namespace

int main(int argc, char **argv)
{
	/*
	 * A scrape of a host with thousands of domains builds and frees tens
	 * of MB (the metric families, then the text). glibc would hand that
	 * back to the kernel after each scrape (trimming, and mmap() for each
	 * large block), and the next scrape would pay again for faulting in and
	 * zeroing fresh pages: a fifth of its time at 10,000 domains. Keep
	 * the heap between scrapes instead, as a long-running server does.
	 */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	CLI::App app{"poolmem-exporter: Prometheus metrics for poolmem (pools, VM domains, NUMA nodes)",
		     "poolmem-exporter"};
	app.set_version_flag("--version", "poolmem-exporter " POOLMEM_VERSION);
	std::vector<std::string> listen = {"localhost:9788"};
	std::string web_config;
	std::string runbooks = POOLMEM_RUNBOOKS;
	exporter::Roots roots;
	std::string sysfs = "/sys", procfs = "/proc";
	bool once = false;
	app.add_option("--web.listen-address", listen,
		       "ADDRESS:PORT to serve / and /metrics on, repeatable (default localhost:9788: [::1] and "
		       "127.0.0.1; :PORT for every address, IPv6 and IPv4; [ADDR]:PORT for an IPv6 one)")
		->take_all();
	app.add_option("--web.config.file", web_config,
		       "TLS and basic auth (bcrypt), in node_exporter's web configuration format")
		->check(CLI::ExistingFile);
	app.add_option("--web.runbooks", runbooks,
		       "the runbooks served at /runbooks.html (default " POOLMEM_RUNBOOKS ", where they are installed)");
	app.add_option("--path.sysfs", sysfs, "sysfs root (default /sys)");
	app.add_option("--path.procfs", procfs, "procfs root (default /proc)");
	std::string resctrl = "/sys/fs/resctrl";
	app.add_option("--path.resctrl", resctrl, "resctrl mount (default /sys/fs/resctrl): MBM bandwidth per VM");
	std::string poolctl_state = "/run/poolctl";
	std::string autopilot_state = "/run/poolmem-autopilot";
	app.add_option("--path.autopilot-state", autopilot_state,
		       "the DRAM autopilot's state directory (default /run/poolmem-autopilot): its status.json");
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
		       "the shared-device ledger's etcd: one member's URL or several, comma-separated (e.g. "
		       "http://10.0.0.1:2379,http://10.0.0.2:2379): export the cluster view, the member that "
		       "answered and failovers (default: none, the cluster collector is off)");
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
	app.add_option("--capacity.shape", roots.capacity_shapes,
		       "a VM shape, SIZE/LOCAL as poolctl capacity --shape takes it (16G/25%), repeatable: "
		       "poolmem_capacity_vms{shape} says how many more of it admission control admits")
		->check([](const std::string &v) {
			return poolmem::parse_shape(v) ? std::string() : "invalid shape '" + v + "' (e.g. 16G/25%)";
		});
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
	roots.autopilot_state = autopilot_state;
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

	if (once) {
		prometheus::TextSerializer().Serialize(std::cout, exporter::Registry(roots, enabled).Collect());
		return 0;
	}

	/* what would stop the server, before the collectors' threads start */
	exporter::web::Config web;
	std::vector<exporter::web::Listener> listeners;
	try {
		if (!web_config.empty())
			web = exporter::web::load_config(web_config);
	} catch (const std::runtime_error &e) {
		std::fprintf(stderr, "poolmem-exporter: --web.config.file %s\n", e.what());
		return 2;
	}
	try {
		for (const auto &address : listen) {
			auto ls = exporter::web::listen_on(address);
			listeners.insert(listeners.end(), ls.begin(), ls.end());
		}
	} catch (const std::runtime_error &e) {
		for (auto &l : listeners)
			close(l.fd);
		std::fprintf(stderr, "poolmem-exporter: %s\n", e.what());
		return 1;
	}

	auto registry = std::make_shared<exporter::Registry>(roots, enabled);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, nullptr); /* the server's threads inherit this */
	std::string where;
	bool open_to_all = false;
	for (const auto &l : listeners) {
		where += (where.empty() ? "" : ", ") + l.text;
		open_to_all |= !l.loopback;
	}
	try {
		exporter::web::Server server(std::move(listeners), web,
					     [registry, runbooks](const exporter::web::Request &req) { return serve(*registry, runbooks, req); });
		std::fprintf(stderr, "poolmem-exporter %s: serving / and /metrics on %s (%s%s)\n", POOLMEM_VERSION,
			     where.c_str(),
			     web.tls() ? (web.client_auth != exporter::web::Config::ClientAuth::none ? "TLS, client certificates"
											: "TLS")
				       : "plain HTTP",
			     web.auth() ? ", basic auth" : ", no authentication");
		/* the metrics name tenant VMs, which poolmem's sysfs shows only to its group */
		if (open_to_all && !web.auth())
			std::fprintf(stderr, "poolmem-exporter: warning: tenant VM names are served to anyone who can "
					     "reach %s: set basic_auth_users in --web.config.file\n",
				     where.c_str());
		/*
		 * SIGHUP: read --web.config.file again (a new certificate, users,
		 * client CA) and serve with it, without refusing a connection;
		 * a file that does not load leaves the running configuration.
		 * SIGINT, SIGTERM: exit.
		 */
		for (;;) {
			const timespec second{1, 0};
			const int sig = sigtimedwait(&set, nullptr, &second);
			if (sig < 0) {
				server.tick();
				continue;
			}
			if (sig != SIGHUP)
				break;
			if (web_config.empty()) {
				std::fprintf(stderr, "poolmem-exporter: SIGHUP: no --web.config.file to read again\n");
				continue;
			}
			try {
				exporter::web::Config next = exporter::web::load_config(web_config);
				const std::string what = std::string(next.tls() ? "TLS" : "plain HTTP") +
							 (next.client_auth != exporter::web::Config::ClientAuth::none
								  ? ", client certificates"
								  : "") +
							 (next.auth() ? ", basic auth" : ", no authentication");
				server.reload(std::move(next));
				std::fprintf(stderr, "poolmem-exporter: SIGHUP: %s read again: serving with %s\n",
					     web_config.c_str(), what.c_str());
			} catch (const std::runtime_error &e) {
				std::fprintf(stderr, "poolmem-exporter: SIGHUP: %s; the running configuration stays\n",
					     e.what());
			}
		}
	} catch (const std::runtime_error &e) {
		std::fprintf(stderr, "poolmem-exporter: %s\n", e.what());
		return 1;
	}
	return 0;
}
