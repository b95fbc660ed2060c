// A real etcd for tests and benchmarks: Debian's etcd-server on free
// loopback ports, its own data directory, stopped by its PID.
#pragma once

#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

namespace poolmem_test {

using namespace std::chrono_literals;
using poolmem::cluster::Etcd;

inline int free_port()
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
	socklen_t len = sizeof(a);
	getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
	close(fd);
	return ntohs(a.sin_port);
}

class EtcdServer {
public:
	explicit EtcdServer(const char *base = "/tmp")
	{
		std::string tmpl = std::string(base) + "/poolmem-etcd-XXXXXX";
		dir_ = mkdtemp(tmpl.data());
		client_ = free_port();
		peer_ = free_port();
		start();
	}
	~EtcdServer()
	{
		stop();
		std::filesystem::remove_all(dir_);
	}
	void start()
	{
		const std::string c = "http://127.0.0.1:" + std::to_string(client_),
				  p = "http://127.0.0.1:" + std::to_string(peer_);
		pid_ = fork();
		if (pid_ == 0) {
			freopen((dir_ + "/log").c_str(), "a", stderr);
			freopen("/dev/null", "w", stdout);
			execlp("etcd", "etcd", "--name", "t", "--data-dir", (dir_ + "/data").c_str(), "--listen-client-urls",
			       c.c_str(), "--advertise-client-urls", c.c_str(), "--listen-peer-urls", p.c_str(),
			       "--initial-advertise-peer-urls", p.c_str(), "--initial-cluster", ("t=" + p).c_str(),
			       static_cast<char *>(nullptr));
			_exit(127);
		}
		Etcd e(url(), 500);
		for (int i = 0; i < 100; i++) {
			try {
				e.range("/ping");
				return;
			} catch (const poolmem::Error &) {
				std::this_thread::sleep_for(100ms);
			}
		}
		throw std::runtime_error("etcd did not start on " + url() + " (is etcd-server installed?)");
	}
	void stop()
	{
		if (pid_ > 0) {
			kill(pid_, SIGKILL);
			waitpid(pid_, nullptr, 0);
			pid_ = -1;
		}
	}
	/* SIGSTOP: it still accepts connections, and answers nothing */
	void pause() { kill(pid_, SIGSTOP); }
	void resume() { kill(pid_, SIGCONT); }
	std::string url() const { return "http://127.0.0.1:" + std::to_string(client_); }

private:
	std::string dir_;
	int client_ = 0, peer_ = 0;
	pid_t pid_ = -1;
};

} // namespace poolmem_test
