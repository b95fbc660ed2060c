// The poolmem file system: domains are files, profiles are directories
// (kmod/fs.c). Mounted at /run/poolmem by default.
#pragma once

#include <string>

namespace poolmem {

/// Where poolctl mounts the file system when it is not mounted yet.
inline constexpr const char *default_mount = "/run/poolmem";

/// Is PATH the root (or any directory) of a poolmem file system?
bool is_poolmem_fs(const std::string &path);

/// Mount the poolmem file system at PATH (creating the directory) unless it
/// is mounted there already. Returns true when this call mounted it. Throws
/// poolmem::Error naming PATH when it can't.
bool ensure_mounted(const std::string &path = default_mount);

/// The QEMU object id for domain NAME: starts with a letter, as QEMU requires
/// ("mem-" + NAME; Proxmox names VMs by number).
std::string qemu_object_id(const std::string &name);

} // namespace poolmem
