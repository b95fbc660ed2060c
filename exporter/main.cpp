// poolmem-exporter: Prometheus metrics for poolmem pools, domains and NUMA
// nodes, read from sysfs and procfs only, built fresh on every scrape.
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include <csignal>
#include <cstdio>
#include <iostream>

int main(int argc, char **argv)
{
	CLI::App app{"poolmem-exporter: Prometheus metrics for poolmem (pools, VM domains, NUMA nodes)",
		     "poolmem-exporter"};
	std::string listen = "0.0.0.0:9788";
	exporter::Roots roots;
	std::string sysfs = "/sys", procfs = "/proc";
	bool once = false;
	app.add_option("--web.listen-address", listen, "address:port to serve /metrics on (default 0.0.0.0:9788)");
	app.add_option("--path.sysfs", sysfs, "sysfs root (default /sys)");
	app.add_option("--path.procfs", procfs, "procfs root (default /proc)");
	app.add_flag("--once", once, "print the metrics once to stdout and exit (no HTTP)");
	std::map<std::string, bool> on;
	for (const auto &c : exporter::all_collectors()) {
		on[c->name()] = true;
		app.add_flag("--collector." + c->name() + ",!--no-collector." + c->name(), on[c->name()],
			     "enable the " + c->name() + " collector (default on)");
	}
	CLI11_PARSE(app, argc, argv);
	roots.sysfs = sysfs;
	roots.procfs = procfs;
	std::set<std::string> enabled;
	for (const auto &[name, en] : on)
		if (en)
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
	try {
		prometheus::Exposer exposer{listen};
		exposer.RegisterCollectable(registry);
		std::fprintf(stderr, "poolmem-exporter: serving /metrics on %s\n", listen.c_str());
		int sig;
		sigwait(&set, &sig);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "poolmem-exporter: %s: cannot listen: %s\n", listen.c_str(), e.what());
		return 1;
	}
	return 0;
}
