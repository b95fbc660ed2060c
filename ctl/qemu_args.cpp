// poolctl: QEMU arguments and libvirt XML for a domain (qemu_args.hpp).
#include "qemu_args.hpp"

#include <poolmem/fs.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include <algorithm>
#include <cstdio>

namespace poolctl {

/*
 * The QEMU argument for a domain file, usable as is: an object id that
 * starts with a letter, share=on (guest writes reach the domain), align= so
 * QEMU places the mapping where PMDs fit, and the matching -m.
 */
std::string qemu_argument(const std::string &name, const std::string &path, uint64_t bytes, uint64_t align,
			  const std::string &extra)
{
	const std::string id = poolmem::qemu_object_id(name);
	return "-object memory-backend-file,id=" + id + ",mem-path=" + path + ",size=" + std::to_string(bytes) +
	       ",share=on,align=" + std::to_string(align) + extra + " -machine memory-backend=" + id + " -m " +
	       std::to_string(bytes >> 20) + "M";
}

/*
 * libvirt 9.0 has no element that names a file as boot RAM (memoryBacking
 * <source type='file'/> takes no path): a named domain goes to the guest
 * as an NVDIMM memory device, whose <source><path> and <alignsize> libvirt
 * passes as mem-path= and align=. Boot RAM from poolmem goes through a
 * profile (poolctl profile create --libvirt).
 */
void print_libvirt_nvdimm(const std::string &path, uint64_t bytes, uint64_t align)
{
	std::printf("<!-- in <devices>; the domain needs <maxMemory slots=...> and a NUMA cell -->\n"
		    "<memory model='nvdimm' access='shared'>\n"
		    "  <source>\n"
		    "    <path>%s</path>\n"
		    "    <alignsize unit='KiB'>%lu</alignsize>\n"
		    "  </source>\n"
		    "  <target>\n"
		    "    <size unit='KiB'>%lu</size>\n"
		    "    <node>0</node>\n"
		    "  </target>\n"
		    "</memory>\n",
		    path.c_str(), static_cast<unsigned long>(align >> 10), static_cast<unsigned long>(bytes >> 10));
}

/*
 * zNUMA (Pond): the guest gets the local window as node 0, with its CPUs,
 * and the pool window as node 1, with none, so that its kernel keeps its
 * own data and hot memory local and spills to the pool last. The distance
 * between them is the host's from the home node to the nearest allowed
 * pool's node; where the host has HMAT for both, the guest gets the same
 * latency and bandwidth (initiator: node 0).
 */
ZnumaLink znuma_link(const GlobalOptions &g, int home, const std::vector<std::string> &allowed)
{
	const auto topo = poolmem::read_topology(g.sysfs);
	const auto pools = poolmem::read_pools(g.sysfs);
	for (const auto &n : topo.nodes)
		if (home < 0 && n.has_cpus() && n.mem_total)
			home = n.id;
	auto pos = [&](int id) {
		for (size_t i = 0; i < topo.nodes.size(); i++)
			if (topo.nodes[i].id == id)
				return static_cast<int>(i);
		return -1;
	};
	const poolmem::Node *hn = topo.node(home);
	const poolmem::Node *pn = nullptr;
	int dist = 0;
	for (const auto &p : pools) {
		if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), p.name) == allowed.end())
			continue;
		const poolmem::Node *n = topo.node(p.node);
		const int i = pos(p.node);
		if (!hn || !n || i < 0 || static_cast<size_t>(i) >= hn->distance.size())
			continue;
		if (!pn || hn->distance[i] < dist) {
			pn = n;
			dist = hn->distance[i];
		}
	}
	ZnumaLink l;
	/* QEMU and libvirt take 11..255 between nodes; the host's own value when it has one */
	l.distance = dist > 10 ? std::min(dist, 255) : 20;
	if (hn && pn && hn->access0.read_latency_ns && pn->access0.read_latency_ns) {
		l.hmat = true;
		const poolmem::Node *tn[2] = {hn, pn};
		for (int t = 0; t < 2; t++) {
			l.latency_ns[t] = *tn[t]->access0.read_latency_ns;
			l.bandwidth_mbps[t] = tn[t]->access0.read_bandwidth_mbps.value_or(0);
		}
	}
	return l;
}

/*
 * Preallocation, when asked for (--prealloc THREADS): QEMU touches every
 * page before the guest starts, so a pool short of memory fails the start
 * rather than a running guest (SIGBUS), at the cost of the whole quota from
 * the first second. Where QEMU has thread contexts (7.2) its prealloc
 * threads run on the CPUs of the domain's home node, the node the local
 * chunks come from and, on a real host, the socket the pool memory hangs
 * off (pool nodes have no CPUs of their own to name). Returns the
 * backend's extra properties; the thread-context object goes to OBJECTS.
 */
std::string prealloc_properties(const PreallocPlan &p, const std::string &id, std::string &objects)
{
	if (!p.threads)
		return "";
	std::string props = ",prealloc=on,prealloc-threads=" + std::to_string(p.threads);
	if (p.caps.prealloc_context && p.home_node >= 0) {
		objects += "-object thread-context,id=" + id + "-tc,node-affinity=" + std::to_string(p.home_node) + " ";
		props += ",prealloc-context=" + id + "-tc";
	}
	return props;
}

std::string znuma_arguments(const GlobalOptions &g, const poolmem::DomainSpec &s, const std::string &path,
			    unsigned vcpus, const PreallocPlan &pre)
{
	const ZnumaLink l = znuma_link(g, s.home_node, s.pools);
	const uint64_t align = std::max<uint64_t>(s.chunk_bytes, 2ULL << 20);
	const std::string id = poolmem::qemu_object_id(s.name);
	std::string objects;
	const std::string extra = prealloc_properties(pre, id, objects);
	/*
	 * QEMU 8.1's offset= maps a range of a file: both windows become ranges
	 * of the domain's own file (the local window at 0, the pool window at
	 * the local quota), the offsets the kernel places by, so that one file
	 * is all a confinement policy or an audit has to name. Before 8.1 each
	 * window is a file of its own (<name>.local, <name>.pool).
	 */
	auto backend = [&](const char *w, uint64_t offset, uint64_t bytes) {
		const std::string file = pre.caps.file_offset ? path + ",offset=" + std::to_string(offset)
							      : path + "." + w;
		return "-object memory-backend-file,id=" + id + "-" + w + ",mem-path=" + file + ",size=" +
		       std::to_string(bytes) + ",share=on,align=" + std::to_string(align) + extra + " ";
	};
	const std::string init = l.hmat ? ",initiator=0" : "";
	std::string a = objects + backend("local", 0, s.local_quota) + backend("pool", s.local_quota, s.pool_quota);
	a += "-smp " + std::to_string(vcpus) + " -m " + std::to_string(s.bytes >> 20) + "M";
	a += " -numa node,nodeid=0,cpus=0" + (vcpus > 1 ? "-" + std::to_string(vcpus - 1) : std::string()) +
	     ",memdev=" + id + "-local" + init;
	a += " -numa node,nodeid=1,memdev=" + id + "-pool" + init;
	a += " -numa dist,src=0,dst=1,val=" + std::to_string(l.distance);
	if (l.hmat) {
		a += " -machine hmat=on";
		for (int t = 0; t < 2; t++) {
			const std::string lb = " -numa hmat-lb,initiator=0,target=" + std::to_string(t) +
					       ",hierarchy=memory,data-type=";
			a += lb + "access-latency,latency=" + std::to_string(l.latency_ns[t]);
			if (l.bandwidth_mbps[t])
				a += lb + "access-bandwidth,bandwidth=" + std::to_string(l.bandwidth_mbps[t]) + "M";
		}
	}
	return a;
}

} // namespace poolctl
