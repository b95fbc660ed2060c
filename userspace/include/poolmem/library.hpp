// A shared library loaded when first needed (dlopen), not at every start:
// what poolctl uses only in some verbs (libcurl for etcd, libxml2 for the
// libvirt hook) stays out of the others' start.
#pragma once

#include <string>

namespace poolmem {

class Library {
public:
	/// dlopen NAME ("libcurl.so.4"); Error naming it, and the PACKAGE that
	/// has it, when it can't be loaded. It stays loaded for the process's
	/// life.
	Library(const std::string &name, const std::string &package);
	/// The symbol SYM as type T (a function pointer, or a pointer to a
	/// variable); Error naming the library and the symbol when it lacks it.
	template <class T> T sym(const char *sym) const { return reinterpret_cast<T>(raw(sym)); }

private:
	void *raw(const char *sym) const;
	std::string name_;
	void *handle_ = nullptr;
};

} // namespace poolmem
