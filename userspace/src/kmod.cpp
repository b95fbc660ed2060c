// load_module(): libkmod, in the device plugin (devices.hpp); module_loaded()
// is in stats.cpp, for every binary.
#include "poolmem/kmod.hpp"

#include "poolmem/error.hpp"

#include <libkmod.h>
#include <memory>

namespace poolmem {

void load_module(const std::string &name)
{
	if (module_loaded(name))
		return;
	std::unique_ptr<kmod_ctx, decltype(&kmod_unref)> ctx(kmod_new(nullptr, nullptr), kmod_unref);
	if (!ctx)
		throw Error(name, "cannot load module", ENOMEM);
	kmod_list *list = nullptr;
	int err = kmod_module_new_from_lookup(ctx.get(), name.c_str(), &list);
	if (err < 0)
		throw Error(name, "cannot load module", -err);
	if (!list)
		throw Error(name, "cannot load module", ENOENT);
	kmod_list *it;
	int ret = 0;
	kmod_list_foreach(it, list)
	{
		kmod_module *mod = kmod_module_get_module(it);
		/* built into the kernel (a debug kernel has kmem, nfit, ... built in): nothing to load */
		if (kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN) {
			kmod_module_unref(mod);
			continue;
		}
		ret = kmod_module_probe_insert_module(mod, KMOD_PROBE_IGNORE_LOADED, nullptr, nullptr,
						      nullptr, nullptr);
		kmod_module_unref(mod);
		if (ret < 0)
			break;
	}
	kmod_module_unref_list(list);
	if (ret < 0)
		throw Error(name, "cannot load module", -ret);
}

} // namespace poolmem
