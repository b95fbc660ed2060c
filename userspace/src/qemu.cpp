// Asking QEMU what it accepts (see qemu.hpp).
#include <poolmem/qemu.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <regex>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace poolmem {

namespace {

/// A line of QEMU's property help starts with two spaces and "NAME=<".
bool has_property(std::string_view help, std::string_view name)
{
	const std::string needle = "\n  " + std::string(name) + "=<";
	const std::string text = "\n" + std::string(help);
	return text.find(needle) != std::string::npos;
}

/// "-object help" lists each type on a line of its own, indented.
bool has_object_type(std::string_view help, std::string_view type)
{
	size_t pos = 0;
	while (pos < help.size()) {
		size_t end = help.find('\n', pos);
		if (end == std::string_view::npos)
			end = help.size();
		std::string_view line = help.substr(pos, end - pos);
		const size_t b = line.find_first_not_of(' ');
		if (b != std::string_view::npos && b > 0 && line.substr(b) == type)
			return true;
		pos = end + 1;
	}
	return false;
}

/// Run BINARY ARGS with no input; standard output and error, if it exited 0.
bool run_capture(const std::string &binary, const std::vector<std::string> &args, std::string &out)
{
	int fd[2];
	if (pipe2(fd, O_CLOEXEC) < 0)
		return false;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	std::vector<char *> argv;
	argv.push_back(const_cast<char *>(binary.c_str()));
	for (const auto &a : args)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	pid_t pid;
	const int err = posix_spawnp(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (err) {
		close(fd[0]);
		return false;
	}
	char buf[4096];
	ssize_t n;
	out.clear();
	while ((n = read(fd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			out.append(buf, static_cast<size_t>(n));
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

std::string QemuCaps::describe() const
{
	if (!found)
		return "no " + binary + " found";
	return "QEMU " + version + " (" + binary + ")";
}

QemuCaps parse_qemu_caps(std::string_view version, std::string_view file_backend_help,
			 std::string_view object_help, std::string_view virtio_mem_help)
{
	QemuCaps c;
	static const std::regex re("QEMU emulator version ([0-9]+\\.[0-9]+(\\.[0-9]+)?)");
	std::match_results<std::string_view::const_iterator> m;
	if (std::regex_search(version.begin(), version.end(), m, re)) {
		c.found = true;
		c.version = m[1].str();
	}
	c.file_offset = has_property(file_backend_help, "offset");
	c.prealloc_context = has_property(file_backend_help, "prealloc-context") &&
			     has_object_type(object_help, "thread-context");
	c.dynamic_memslots = has_property(virtio_mem_help, "dynamic-memslots");
	return c;
}

QemuCaps probe_qemu(const std::string &binary)
{
	std::string version, file_help, objects, virtio_mem;
	if (!run_capture(binary, {"--version"}, version)) {
		QemuCaps c;
		c.binary = binary;
		return c;
	}
	/* a question QEMU refuses (an unknown type) leaves its answer empty */
	if (!run_capture(binary, {"-object", "memory-backend-file,help"}, file_help))
		file_help.clear();
	if (!run_capture(binary, {"-object", "help"}, objects))
		objects.clear();
	if (!run_capture(binary, {"-device", "virtio-mem-pci,help"}, virtio_mem))
		virtio_mem.clear();
	QemuCaps c = parse_qemu_caps(version, file_help, objects, virtio_mem);
	c.binary = binary;
	return c;
}

} // namespace poolmem
