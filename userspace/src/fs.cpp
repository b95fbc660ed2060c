#include "poolmem/fs.hpp"

#include "poolmem/error.hpp"

#include <uapi/poolmem.h>

#include <cerrno>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <filesystem>
#include <system_error>

namespace poolmem {

bool is_poolmem_fs(const std::string &path)
{
	struct statfs st;
	return ::statfs(path.c_str(), &st) == 0 && static_cast<unsigned long>(st.f_type) == POOLMEM_FS_MAGIC;
}

bool ensure_mounted(const std::string &path)
{
	if (is_poolmem_fs(path))
		return false;
	std::error_code ec;
	std::filesystem::create_directories(path, ec);
	if (ec)
		throw Error(path, "cannot create mount point", ec.value());
	/* the module is loaded on demand: fs-poolmem is its alias */
	if (::mount("poolmem", path.c_str(), "poolmem", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr))
		throw Error(path, "cannot mount the poolmem file system", errno);
	return true;
}

std::string qemu_object_id(const std::string &name) { return "mem-" + name; }

} // namespace poolmem
