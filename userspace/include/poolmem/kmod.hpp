// Loading kernel modules with libkmod (never by running modprobe).
#pragma once

#include <string>

namespace poolmem {

/// Load NAME and its dependencies like "modprobe NAME" (no-op when loaded).
/// Throws poolmem::Error ("NAME: cannot load module: CAUSE").
void load_module(const std::string &name);

/// True when NAME is loaded (/sys/module/NAME exists). Thread-safe.
bool module_loaded(const std::string &name);

} // namespace poolmem
