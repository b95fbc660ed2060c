#include "poolmem/library.hpp"

#include "poolmem/error.hpp"

#include <cerrno>

#include <dlfcn.h>

namespace poolmem {

Library::Library(const std::string &name, const std::string &package) : name_(name)
{
	handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!handle_)
		throw Error::plain(name, "cannot load it (install " + package + "): " + dlerror(), ENOENT);
}

void *Library::raw(const char *sym) const
{
	void *p = dlsym(handle_, sym);
	if (!p)
		throw Error::plain(name_, std::string("has no ") + sym, ENOENT);
	return p;
}

} // namespace poolmem
