// What the QEMU on this host accepts, asked of QEMU itself (its -object and
// -device help), so that poolctl prints arguments that QEMU takes.
#pragma once

#include <string>
#include <string_view>

namespace poolmem {

/// The properties poolctl uses beyond what QEMU 7.2 (Debian 12) has. Each is
/// read from QEMU's own help output, never inferred from the version number:
/// a distribution may backport a property or build without one.
struct QemuCaps {
	std::string binary;  ///< as asked for (a name on PATH or a path)
	bool found = false;  ///< the binary ran and answered --version
	std::string version; ///< "10.0.2"; empty when not found
	/// memory-backend-file offset= (QEMU 8.1): a backend maps a range of a
	/// file, so a zNUMA domain's windows can be two ranges of one file
	bool file_offset = false;
	/// memory-backend prealloc-context= and -object thread-context (QEMU 7.2)
	bool prealloc_context = false;
	/// virtio-mem-pci dynamic-memslots= (QEMU 8.2)
	bool dynamic_memslots = false;

	/// "QEMU 10.0.2 (qemu-system-x86_64)", or "no qemu-system-x86_64 found"
	std::string describe() const;
};

/// Parse QEMU's answers: --version, "-object memory-backend-file,help",
/// "-object help" and "-device virtio-mem-pci,help" (an empty view for a
/// question QEMU refused).
QemuCaps parse_qemu_caps(std::string_view version, std::string_view file_backend_help,
			 std::string_view object_help, std::string_view virtio_mem_help);

/// Ask BINARY (run with no machine; nothing starts). A binary that cannot
/// run gives found = false and no capability.
QemuCaps probe_qemu(const std::string &binary);

} // namespace poolmem
