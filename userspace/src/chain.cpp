#include "poolmem/chain.hpp"

#include "poolmem/topology.hpp"

#include <cxl/libcxl.h>
#include <daxctl/libdaxctl.h>
#include <ndctl/libndctl.h>

#include <cstdio>
#include <memory>

namespace poolmem {

namespace {

using CxlCtx = std::unique_ptr<cxl_ctx, decltype(&cxl_unref)>;
using NdCtx = std::unique_ptr<ndctl_ctx, decltype(&ndctl_unref)>;
using DaxCtx = std::unique_ptr<daxctl_ctx, decltype(&daxctl_unref)>;

bool contains(uint64_t start, uint64_t size, uint64_t addr) { return addr >= start && addr - start < size; }

std::string hex(unsigned long long v)
{
	char b[32];
	std::snprintf(b, sizeof(b), "0x%llx", v);
	return b;
}

/* the CXL region whose range holds ADDR, with its memdevs in target order */
bool cxl_chain(cxl_ctx *ctx, uint64_t addr, DeviceChain &c)
{
	cxl_bus *bus;
	cxl_bus_foreach(ctx, bus)
	{
		cxl_port *port = cxl_bus_get_port(bus);
		cxl_decoder *d;
		cxl_decoder_foreach(port, d)
		{
			cxl_region *r;
			cxl_region_foreach(d, r)
			{
				if (!contains(cxl_region_get_resource(r), cxl_region_get_size(r), addr))
					continue;
				c.bus = "cxl";
				c.region = cxl_region_get_devname(r);
				cxl_memdev_mapping *m;
				cxl_mapping_foreach(r, m)
				{
					cxl_decoder *ed = cxl_mapping_get_decoder(m);
					cxl_memdev *md = ed ? cxl_decoder_get_memdev(ed) : nullptr;
					if (!md)
						continue;
					const char *host = cxl_memdev_get_host(md);
					c.memdevs.push_back({cxl_memdev_get_devname(md), hex(cxl_memdev_get_serial(md)),
							     host ? host : ""});
				}
				return true;
			}
		}
	}
	return false;
}

/* the nvdimm region whose range holds ADDR, with its DIMMs */
bool nd_chain(ndctl_ctx *ctx, uint64_t addr, DeviceChain &c)
{
	ndctl_bus *bus;
	ndctl_bus_foreach(ctx, bus)
	{
		ndctl_region *r;
		ndctl_region_foreach(bus, r)
		{
			if (!contains(ndctl_region_get_resource(r), ndctl_region_get_size(r), addr))
				continue;
			c.bus = "nvdimm";
			c.region = ndctl_region_get_devname(r);
			ndctl_mapping *m;
			ndctl_mapping_foreach(r, m)
			{
				ndctl_dimm *dimm = ndctl_mapping_get_dimm(m);
				if (!dimm)
					continue;
				const unsigned serial = ndctl_dimm_get_serial(dimm);
				c.memdevs.push_back({ndctl_dimm_get_devname(dimm), serial ? hex(serial) : "",
						     ndctl_bus_get_provider(bus)});
			}
			return true;
		}
	}
	return false;
}

} // namespace

std::vector<DeviceChain> device_chain(int node)
{
	std::vector<DeviceChain> out;
	daxctl_ctx *dc = nullptr;
	if (daxctl_new(&dc) < 0)
		return out;
	DaxCtx dax(dc, daxctl_unref);
	cxl_ctx *cc = nullptr;
	CxlCtx cxl(cxl_new(&cc) < 0 ? nullptr : cc, cxl_unref);
	ndctl_ctx *nc = nullptr;
	NdCtx nd(ndctl_new(&nc) < 0 ? nullptr : nc, ndctl_unref);

	daxctl_region *region;
	daxctl_region_foreach(dax.get(), region)
	{
		daxctl_dev *dev;
		daxctl_dev_foreach(region, dev)
		{
			if (daxctl_dev_get_target_node(dev) != node || !daxctl_dev_get_size(dev))
				continue;
			DeviceChain c;
			c.dax = daxctl_dev_get_devname(dev);
			c.resource = daxctl_dev_get_resource(dev);
			c.size = daxctl_dev_get_size(dev);
			/* a CXL pmem region shows as an nvdimm region too: CXL first */
			if (!(cxl && cxl_chain(cxl.get(), c.resource, c)) && nd)
				nd_chain(nd.get(), c.resource, c);
			/* Soft Reserved memory (EFI_MEMORY_SP): dax_hmem's platform device */
			const std::string rpath = daxctl_region_get_path(region);
			if (c.bus.empty() && rpath.find("/hmem.") != std::string::npos) {
				c.bus = "hmem";
				c.region = rpath.substr(rpath.rfind('/') + 1);
			}
			out.push_back(std::move(c));
		}
	}
	return out;
}

} // namespace poolmem
