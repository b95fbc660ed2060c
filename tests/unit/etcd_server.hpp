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
#include <vector>

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

/*
 * A real etcd cluster of N members (three by default) on loopback: each its
 * own process, data directory and ports, one --initial-cluster. A member
 * can be killed and started again (it rejoins with its data), and the
 * leader found through each member's maintenance/status.
 */
class EtcdCluster {
public:
	/* EXTRA: more etcd flags for every member (the bench's compaction) */
	explicit EtcdCluster(int n = 3, const char *base = "/tmp", std::vector<std::string> extra = {})
		: extra_(std::move(extra))
	{
		std::string tmpl = std::string(base) + "/poolmem-etcd3-XXXXXX";
		dir_ = mkdtemp(tmpl.data());
		for (int i = 0; i < n; i++) {
			client_.push_back(free_port());
			peer_.push_back(free_port());
			pid_.push_back(-1);
		}
		for (int i = 0; i < n; i++)
			initial_ += (i ? "," : "") + name(i) + "=" + peer_url(i);
		for (int i = 0; i < n; i++)
			spawn(i, "new");
		wait_ready();
	}
	~EtcdCluster()
	{
		for (size_t i = 0; i < pid_.size(); i++)
			kill_member(static_cast<int>(i));
		std::filesystem::remove_all(dir_);
	}
	int size() const { return static_cast<int>(client_.size()); }
	std::string url(int i) const { return "http://127.0.0.1:" + std::to_string(client_[i]); }
	/* every member, as etcdctl --endpoints takes them */
	std::string endpoints() const
	{
		std::string all;
		for (int i = 0; i < size(); i++)
			all += (i ? "," : "") + url(i);
		return all;
	}
	int index_of(const std::string &u) const
	{
		for (int i = 0; i < size(); i++)
			if (url(i) == u)
				return i;
		return -1;
	}
	void kill_member(int i)
	{
		if (pid_[i] > 0) {
			kill(pid_[i], SIGKILL);
			waitpid(pid_[i], nullptr, 0);
			pid_[i] = -1;
		}
	}
	/* again, with its data: it rejoins the cluster */
	void start_member(int i)
	{
		spawn(i, "existing");
		Etcd e(url(i), 500);
		for (int k = 0; k < 100; k++) {
			try {
				e.call("maintenance/status", nlohmann::json::object());
				return;
			} catch (const poolmem::Error &) {
				std::this_thread::sleep_for(100ms);
			}
		}
		throw std::runtime_error("etcd member " + name(i) + " did not come back on " + url(i));
	}
	bool up(int i) const { return pid_[i] > 0; }
	/* the leader's index, -1 when no member that is up knows one */
	int leader() const
	{
		for (int i = 0; i < size(); i++) {
			if (!up(i))
				continue;
			try {
				Etcd e(url(i), 1000);
				const auto j = e.call("maintenance/status", nlohmann::json::object());
				const std::string lead = j.value("leader", "");
				for (int k = 0; k < size(); k++) {
					if (!up(k))
						continue;
					Etcd ek(url(k), 1000);
					const auto jk = ek.call("maintenance/status", nlohmann::json::object());
					if (jk["header"].value("member_id", "") == lead)
						return k;
				}
			} catch (const poolmem::Error &) {
			}
		}
		return -1;
	}

private:
	std::vector<std::string> extra_;
	std::string dir_, initial_;
	std::vector<int> client_, peer_;
	std::vector<pid_t> pid_;

	std::string name(int i) const { return "m" + std::to_string(i); }
	std::string peer_url(int i) const { return "http://127.0.0.1:" + std::to_string(peer_[i]); }
	void spawn(int i, const char *state)
	{
		const std::string c = url(i), p = peer_url(i), d = dir_ + "/" + name(i);
		pid_[i] = fork();
		if (pid_[i] == 0) {
			freopen((d + ".log").c_str(), "a", stderr);
			freopen("/dev/null", "w", stdout);
			std::vector<std::string> args = {"etcd", "--name", name(i), "--data-dir", d,
							 "--listen-client-urls", c, "--advertise-client-urls", c,
							 "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
							 "--initial-cluster", initial_, "--initial-cluster-state", state,
							 "--heartbeat-interval", "100", "--election-timeout", "1000"};
			args.insert(args.end(), extra_.begin(), extra_.end());
			std::vector<char *> argv;
			for (auto &a : args)
				argv.push_back(a.data());
			argv.push_back(nullptr);
			execvp("etcd", argv.data());
			_exit(127);
		}
	}
	void wait_ready()
	{
		Etcd e(endpoints(), 1000);
		for (int k = 0; k < 200; k++) {
			try {
				e.range("/ping");
				if (leader() >= 0)
					return;
			} catch (const poolmem::Error &) {
			}
			std::this_thread::sleep_for(100ms);
		}
		throw std::runtime_error("a three-member etcd did not form on " + endpoints());
	}
};

} // namespace poolmem_test
