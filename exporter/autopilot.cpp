// autopilot: what the DRAM autopilot (poolctl autopilot run) last decided,
// from its status file (/run/poolmem-autopilot/status.json, rewritten
// after every decision). Per VM the target and the local quota the
// decision saw (the kernel's own quota is poolmem_domain_quota_bytes), its
// hot set and pool share; for the host the budget, the DRAM the targets
// save against all-local, and the run's counters. No file: no autopilot,
// which is no failure; a file that does not parse is.
#include "collector.hpp"

#include <nlohmann/json.hpp>


using prometheus::MetricType;

namespace exporter {

namespace {

class AutopilotCollector : public Collector {
public:
	std::string name() const override { return "autopilot"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		const auto path = r.autopilot_state / "status.json";
		auto file = read_state_file(path);
		if (!file)
			return;
		nlohmann::json j = std::move(*file);
		if (!j.contains("vms") || !j["vms"].is_array())
			throw std::runtime_error(path.string() + ": no vms");
		Family target("poolmem_autopilot_target_bytes", "The local quota the DRAM autopilot's last decision set for the VM (poolctl autopilot run), from its status file.", MetricType::Gauge);
		Family quota("poolmem_autopilot_local_quota_bytes", "The VM's local quota as the autopilot's last decision found it (the kernel's quota now: poolmem_domain_quota_bytes{tier=\"local\"}).", MetricType::Gauge);
		Family hot("poolmem_autopilot_hot_bytes", "The VM's hot set as the autopilot measured it: chunks tiering's sampling found hot, the largest of the recent windows.", MetricType::Gauge);
		Family share("poolmem_autopilot_pool_access_ratio", "Share of the VM's sampled accesses served from pool memory over the last interval (sample_hits_pool over sample_hits).", MetricType::Gauge);
		Family broken("poolmem_autopilot_slo_broken", "1 when the VM's pool access share was above its SLO at the last decision.", MetricType::Gauge);
		Family reason("poolmem_autopilot_reason_info", "Always 1: why the VM's target is what it is (reason=hot-set, slo, min, max, budget, hold, rate, pinnable, znuma, tiering off).", MetricType::Gauge);
		Family budget("poolmem_autopilot_budget_bytes", "Local DRAM the autopilot shares among the VMs' local quotas (its budget less the headroom).", MetricType::Gauge);
		Family saved("poolmem_autopilot_dram_saved_bytes", "DRAM the autopilot's targets leave out against every VM all-local: the VMs' sizes less their targets (VMs it does not move count their quota).", MetricType::Gauge);
		Family when("poolmem_autopilot_last_decision_timestamp_seconds", "When the autopilot last decided: a stale value means it stopped.", MetricType::Gauge);
		Family decisions("poolmem_autopilot_decisions_total", "Decisions since the autopilot started.", MetricType::Counter);
		Family changes("poolmem_autopilot_changes_total", "Local quota changes it applied (result=ok) and the kernel refused (result=refused).", MetricType::Counter);
		Family moved("poolmem_autopilot_moved_bytes_total", "Bytes of chunks its quota changes moved (its rate: the moves per second).", MetricType::Counter);
		Family slo("poolmem_autopilot_slo_violations_total", "VMs found above their SLO, counted once per decision.", MetricType::Counter);
		double sizes = 0, targets = 0;
		for (const auto &v : j["vms"]) {
			const Labels l{{"domain", v.value("name", std::string())}};
			target.add(l, v.value("target_bytes", 0.0));
			quota.add(l, v.value("local_quota_bytes", 0.0));
			hot.add(l, v.value("hot_bytes", 0.0));
			share.add(l, v.value("pool_permille", 0.0) / 1000.0);
			broken.add(l, v.value("slo_broken", false) ? 1 : 0);
			reason.add({{"domain", v.value("name", std::string())}, {"reason", v.value("reason", std::string())}}, 1);
			sizes += v.value("size_bytes", 0.0);
			targets += v.value("target_bytes", 0.0);
		}
		budget.add({}, j.value("budget_bytes", 0.0));
		saved.add({}, sizes - targets);
		when.add({}, j.value("updated", 0.0));
		const auto t = j.value("totals", nlohmann::json::object());
		decisions.add({}, t.value("decisions", 0.0));
		changes.add({{"result", "ok"}}, t.value("changes", 0.0));
		changes.add({{"result", "refused"}}, t.value("refused", 0.0));
		moved.add({}, t.value("moved_bytes", 0.0));
		slo.add({}, t.value("slo_violations", 0.0));
		for (Family *fam : {&target, &quota, &hot, &share, &broken, &reason, &budget, &saved, &when, &decisions,
				    &changes, &moved, &slo})
			if (!fam->empty())
				out.push_back(fam->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_autopilot_collector() { return std::make_unique<AutopilotCollector>(); }

} // namespace exporter
