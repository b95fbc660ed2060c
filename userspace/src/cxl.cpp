#include "poolmem/cxl.hpp"

#include "poolmem/error.hpp"

#include <cxl/libcxl.h>
#include <ndctl/libndctl.h>
#include <uuid/uuid.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <thread>

namespace poolmem {

namespace {

using CxlCtx = std::unique_ptr<cxl_ctx, decltype(&cxl_unref)>;
using NdCtx = std::unique_ptr<ndctl_ctx, decltype(&ndctl_unref)>;

cxl_memdev *find_memdev(cxl_ctx *ctx, const std::string &name)
{
	cxl_memdev *m;
	cxl_memdev_foreach(ctx, m)
		if (name == cxl_memdev_get_devname(m))
			return m;
	throw Error::plain(name, "no such CXL memdev", ENOENT);
}

/// A pmem-capable root decoder whose targets reach every memdev.
cxl_decoder *find_root_decoder(cxl_ctx *ctx, const std::vector<cxl_memdev *> &mems, uint64_t size)
{
	cxl_bus *bus;
	cxl_bus_foreach(ctx, bus)
	{
		cxl_port *port = cxl_bus_get_port(bus);
		if (!cxl_port_is_root(port))
			continue;
		cxl_decoder *d;
		cxl_decoder_foreach(port, d)
		{
			if (!cxl_decoder_is_pmem_capable(d) ||
			    cxl_decoder_get_max_available_extent(d) < size)
				continue;
			bool all = true;
			for (auto *m : mems)
				all = all && cxl_decoder_get_target_by_memdev(d, m);
			if (all)
				return d;
		}
	}
	return nullptr;
}

/// A free endpoint decoder of MEMDEV.
cxl_decoder *free_endpoint_decoder(cxl_memdev *m)
{
	cxl_endpoint *ep = cxl_memdev_get_endpoint(m);
	cxl_port *port = ep ? cxl_endpoint_get_port(ep) : nullptr;
	if (!port)
		return nullptr;
	cxl_decoder *d;
	cxl_decoder_foreach(port, d)
		if (cxl_decoder_get_size(d) == 0)
			return d;
	return nullptr;
}

/*
 * Persistent capacity of @m not yet given to an endpoint decoder. 6.1 has
 * one endpoint decoder per memdev in the rig; 6.12 (and QEMU 10) several,
 * so a memdev's capacity can be cut into regions, and what is free is
 * what its decoders don't hold.
 */
uint64_t free_pmem(cxl_memdev *m)
{
	uint64_t used = 0;
	cxl_endpoint *ep = cxl_memdev_get_endpoint(m);
	cxl_port *port = ep ? cxl_endpoint_get_port(ep) : nullptr;
	cxl_decoder *d;
	if (port)
		cxl_decoder_foreach(port, d)
			if (cxl_decoder_get_mode(d) == CXL_DECODER_MODE_PMEM)
				used += cxl_decoder_get_dpa_size(d);
	const uint64_t total = cxl_memdev_get_pmem_size(m);
	return used < total ? total - used : 0;
}

void check(int rc, const std::string &object, const char *action)
{
	if (rc < 0)
		throw Error(object, action, -rc);
}

/// The nvdimm region cxl_pmem registers for a CXL region (asynchronously).
ndctl_region *wait_nd_region(ndctl_ctx *ctx, uint64_t resource)
{
	for (int i = 0; i < 100; i++) {
		ndctl_invalidate(ctx);
		ndctl_bus *bus;
		ndctl_region *r;
		ndctl_bus_foreach(ctx, bus)
		{
			ndctl_bus_wait_probe(bus);
			ndctl_region_foreach(bus, r)
				if (ndctl_region_get_resource(r) == resource)
					return r;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	return nullptr;
}

void make_devdax_namespace(ndctl_region *r)
{
	const std::string rname = ndctl_region_get_devname(r);
	ndctl_namespace *ns = ndctl_region_get_namespace_seed(r);
	ndctl_dax *dax = ndctl_region_get_dax_seed(r);
	if (!ns || !dax)
		throw Error::plain(rname, "cannot create namespace: no namespace or dax seed", ENXIO);
	uuid_t uu;
	uuid_generate(uu);
	check(ndctl_namespace_set_uuid(ns, uu), rname, "cannot set namespace uuid");
	check(ndctl_namespace_set_size(ns, ndctl_region_get_available_size(r)), rname, "cannot size namespace");
	check(ndctl_namespace_set_enforce_mode(ns, NDCTL_NS_MODE_DAX), rname, "cannot set namespace mode");
	uuid_generate(uu);
	check(ndctl_dax_set_uuid(dax, uu), rname, "cannot set dax uuid");
	check(ndctl_dax_set_location(dax, NDCTL_PFN_LOC_PMEM), rname, "cannot set dax metadata location");
	check(ndctl_dax_set_align(dax, 2UL << 20), rname, "cannot set dax alignment");
	check(ndctl_dax_set_namespace(dax, ns), rname, "cannot attach namespace to dax");
	check(ndctl_dax_enable(dax), rname, "cannot enable devdax");
}

} // namespace

CxlDevdax cxl_make_devdax(const std::vector<std::string> &memdevs, uint64_t region_size)
{
	if (memdevs.empty())
		throw Error::plain("cxl", "no memdev given", EINVAL);
	cxl_ctx *c = nullptr;
	int rc = cxl_new(&c);
	if (rc < 0)
		throw Error("libcxl", "cannot initialise", -rc);
	CxlCtx cctx(c, cxl_unref);

	std::vector<cxl_memdev *> mems;
	uint64_t per_dev = UINT64_MAX, total = UINT64_MAX;
	for (const auto &n : memdevs) {
		mems.push_back(find_memdev(c, n));
		total = std::min<uint64_t>(total, cxl_memdev_get_pmem_size(mems.back()));
		per_dev = std::min<uint64_t>(per_dev, free_pmem(mems.back()));
	}
	/* in the decoders' 256 MiB granules */
	per_dev &= ~((256ULL << 20) - 1);
	if (total == 0) {
		/*
		 * Linux 6.1 creates pmem regions only (ram regions came with
		 * 6.3): a volatile expander is mapped by the firmware and
		 * reaches Linux as a soft-reserved dax device or as a node.
		 */
		if (cxl_memdev_get_ram_size(mems[0]))
			throw Error::plain(memdevs[0], "volatile capacity only: Linux 6.1 can't create a ram region; "
						       "use the dax device the firmware's mapping gives (poolctl pool online "
						       "daxX.Y) or its node (poolctl pool add --node N)",
					   ENOTSUP);
		throw Error::plain(memdevs[0], "no persistent capacity to map", ENOSPC);
	}
	if (per_dev == 0)
		throw Error::plain(memdevs[0], "no free persistent capacity (it is in regions already: cxl list -R)",
				   ENOSPC);
	/* --size: the region's size, spread evenly, in 256 MiB steps per device */
	if (region_size) {
		constexpr uint64_t step = 256ULL << 20;
		const uint64_t want = region_size / memdevs.size();
		if (region_size % (step * memdevs.size()))
			throw Error::plain(memdevs[0], "region size " + std::to_string(region_size >> 20) +
							       " MiB: not a multiple of " +
							       std::to_string((step * memdevs.size()) >> 20) + " MiB",
					   EINVAL);
		if (want > per_dev)
			throw Error::plain(memdevs[0], "region size " + std::to_string(region_size >> 20) +
							       " MiB: the memdevs have " +
							       std::to_string((per_dev * memdevs.size()) >> 20) +
							       " MiB of persistent capacity" +
							       (per_dev < total ? " free" : ""),
					   ENOSPC);
		per_dev = want;
	}
	for (size_t i = 0; i < mems.size(); i++)
		if (!free_endpoint_decoder(mems[i]))
			throw Error::plain(memdevs[i], "no free endpoint decoder (is its capacity in a region already?)",
					   EBUSY);
	const unsigned ways = static_cast<unsigned>(mems.size());
	const uint64_t size = per_dev * ways;
	cxl_decoder *root = find_root_decoder(c, mems, size);
	if (!root)
		throw Error::plain(memdevs[0], "no pmem-capable root decoder reaches the memdev(s) with " +
						       std::to_string(size >> 20) + " MiB free",
				   ENOSPC);
	const std::string rootname = cxl_decoder_get_devname(root);
	cxl_region *region = cxl_decoder_create_pmem_region(root);
	if (!region)
		throw Error::plain(rootname, "cannot create a pmem region", ENXIO);
	const std::string rname = cxl_region_get_devname(region);

	std::vector<cxl_decoder *> eps;
	try {
		uuid_t uu;
		uuid_generate(uu);
		check(cxl_region_set_interleave_granularity(
			      region, static_cast<unsigned>(cxl_decoder_get_interleave_granularity(root))),
		      rname, "cannot set interleave granularity");
		check(cxl_region_set_interleave_ways(region, ways), rname, "cannot set interleave ways");
		check(cxl_region_set_uuid(region, uu), rname, "cannot set uuid");
		check(cxl_region_set_size(region, size), rname, "cannot set size");
		for (unsigned i = 0; i < ways; i++) {
			cxl_decoder *ep = free_endpoint_decoder(mems[i]);
			if (!ep)
				throw Error::plain(memdevs[i], "no free endpoint decoder", EBUSY);
			const std::string epname = cxl_decoder_get_devname(ep);
			if (cxl_decoder_get_mode(ep) != CXL_DECODER_MODE_PMEM) {
				check(cxl_decoder_set_dpa_size(ep, 0), epname, "cannot reset DPA size");
				check(cxl_decoder_set_mode(ep, CXL_DECODER_MODE_PMEM), epname, "cannot set pmem mode");
			}
			check(cxl_decoder_set_dpa_size(ep, per_dev), epname, "cannot allocate DPA");
			eps.push_back(ep);
			check(cxl_region_set_target(region, static_cast<int>(i), ep), rname,
			      ("cannot set target " + memdevs[i]).c_str());
		}
		check(cxl_region_decode_commit(region), rname, "cannot commit decode");
		check(cxl_region_enable(region), rname, "cannot enable region");
	} catch (...) {
		cxl_region_decode_reset(region);
		for (unsigned i = 0; i < eps.size(); i++) {
			cxl_region_clear_target(region, static_cast<int>(i));
			cxl_decoder_set_dpa_size(eps[i], 0);
		}
		cxl_region_delete(region);
		throw;
	}

	CxlDevdax out;
	out.region = rname;
	out.resource = cxl_region_get_resource(region);
	out.size = size;

	ndctl_ctx *n = nullptr;
	rc = ndctl_new(&n);
	if (rc < 0)
		throw Error("libndctl", "cannot initialise", -rc);
	NdCtx nctx(n, ndctl_unref);
	ndctl_region *nd = wait_nd_region(n, out.resource);
	if (!nd)
		throw Error::plain(rname, "no nvdimm region appeared (is cxl_pmem loaded?)", ENXIO);
	out.nd_region = ndctl_region_get_devname(nd);
	try {
		make_devdax_namespace(nd);
	} catch (...) {
		cxl_destroy_devdax(out);
		throw;
	}
	return out;
}

void cxl_destroy_devdax(const CxlDevdax &d)
{
	ndctl_ctx *n = nullptr;
	if (ndctl_new(&n) == 0) {
		NdCtx nctx(n, ndctl_unref);
		ndctl_bus *bus;
		ndctl_region *r;
		ndctl_bus_foreach(n, bus)
			ndctl_region_foreach(bus, r)
			{
				if (ndctl_region_get_resource(r) != d.resource)
					continue;
				ndctl_namespace *ns, *next;
				ndctl_namespace_foreach_safe(r, ns, next)
				{
					if (ndctl_namespace_disable_safe(ns) == 0)
						ndctl_namespace_delete(ns); /* clears its labels */
				}
			}
	}
	cxl_ctx *c = nullptr;
	if (cxl_new(&c) < 0)
		return;
	CxlCtx cctx(c, cxl_unref);
	cxl_bus *bus;
	cxl_bus_foreach(c, bus)
	{
		cxl_decoder *root;
		cxl_decoder_foreach(cxl_bus_get_port(bus), root)
		{
			cxl_region *region, *next;
			cxl_region_foreach_safe(root, region, next)
			{
				if (d.region != cxl_region_get_devname(region))
					continue;
				cxl_region_disable(region);
				cxl_region_decode_reset(region);
				unsigned ways = cxl_region_get_interleave_ways(region);
				for (unsigned i = 0; i < ways && ways != UINT32_MAX; i++) {
					cxl_decoder *ep = cxl_region_get_target_decoder(region, static_cast<int>(i));
					cxl_region_clear_target(region, static_cast<int>(i));
					if (ep)
						cxl_decoder_set_dpa_size(ep, 0);
				}
				cxl_region_delete(region);
			}
		}
	}
}

CxlHealth cxl_health(const std::string &name)
{
	struct cxl_ctx *c = nullptr;
	if (cxl_new(&c) < 0)
		throw Error("libcxl", "cannot open a context", ENOMEM);
	CxlCtx cctx(c, cxl_unref);
	struct cxl_memdev *md = nullptr, *m;
	cxl_memdev_foreach(c, m)
		if (name == cxl_memdev_get_devname(m))
			md = m;
	if (!md)
		throw Error::plain(name, "no such CXL memdev", ENOENT);
	CxlHealth h;
	struct cxl_cmd *cmd = cxl_cmd_new_get_health_info(md);
	if (!cmd)
		return h;
	std::unique_ptr<cxl_cmd, decltype(&cxl_cmd_unref)> hold(cmd, cxl_cmd_unref);
	if (cxl_cmd_submit(cmd) < 0 || cxl_cmd_get_mbox_status(cmd) != 0)
		return h; /* unsupported (or failed): no figures rather than wrong ones */
	h.supported = true;
	h.maintenance_needed = cxl_cmd_health_info_get_maintenance_needed(cmd) > 0;
	h.performance_degraded = cxl_cmd_health_info_get_performance_degraded(cmd) > 0;
	h.hw_replacement_needed = cxl_cmd_health_info_get_hw_replacement_needed(cmd) > 0;
	h.media = cxl_cmd_health_info_get_media_normal(cmd) > 0		     ? "normal"
		  : cxl_cmd_health_info_get_media_not_ready(cmd) > 0	     ? "not-ready"
		  : cxl_cmd_health_info_get_media_persistence_lost(cmd) > 0 ? "persistence-lost"
		  : cxl_cmd_health_info_get_media_data_lost(cmd) > 0	     ? "data-lost"
		  : cxl_cmd_health_info_get_media_persistence_loss_imminent(cmd) > 0 ? "persistence-loss-imminent"
		  : cxl_cmd_health_info_get_media_data_loss_imminent(cmd) > 0 ? "data-loss-imminent"
									      : "other";
	const int t = cxl_cmd_health_info_get_temperature(cmd);
	h.temperature_c = t == 0xffff || t < -273 ? -1 : t;
	const int life = cxl_cmd_health_info_get_life_used(cmd);
	h.life_used_pct = life < 0 || life > 100 ? -1 : life;
	h.dirty_shutdowns = static_cast<uint64_t>(std::max(0, cxl_cmd_health_info_get_dirty_shutdowns(cmd)));
	h.volatile_errors = static_cast<uint64_t>(std::max(0, cxl_cmd_health_info_get_volatile_errors(cmd)));
	h.pmem_errors = static_cast<uint64_t>(std::max(0, cxl_cmd_health_info_get_pmem_errors(cmd)));
	return h;
}

} // namespace poolmem
