// The exporter's HTTP side: where it listens, and the web configuration
// file of node_exporter's (Prometheus exporter-toolkit's) format: TLS and
// basic auth with bcrypt hashes. The server is libmicrohttpd's.
#pragma once

#include <sys/socket.h>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace exporter::web {

/* What --web.config.file says (exporter-toolkit's keys; see web.cpp). */
struct Config {
	std::string cert_pem, key_pem;	/* TLS when both are set */
	std::string tls_priorities;	/* GnuTLS priority string from min/max_version */
	/*
	 * Client certificates (client_auth_type): none (NoClientCert), or
	 * checked against client_ca_pem when a client gives one
	 * (VerifyClientCertIfGiven), or required and checked
	 * (RequireAndVerifyClientCert, mutual TLS).
	 */
	enum class ClientAuth { none, verify_if_given, require_and_verify } client_auth = ClientAuth::none;
	std::string client_ca_pem;
	std::map<std::string, std::string> users;	/* basic auth: name -> bcrypt hash */
	std::vector<std::pair<std::string, std::string>> headers;	/* added to every response */

	bool tls() const { return !cert_pem.empty(); }
	bool auth() const { return !users.empty(); }
};

/* Reads and checks @path; throws std::runtime_error("PATH: cause"). */
Config load_config(const std::string &path);

/* Whether @password is @user's (a bcrypt compare; constant time in the
 * hash, and as slow for an unknown user as for a known one). */
bool check_password(const Config &c, const std::string &user, const std::string &password);

/* One listening socket of an address. */
struct Listener {
	int fd = -1;
	std::string text;	/* "[::1]:9788", "127.0.0.1:9788", "[::]:9788 (and 0.0.0.0)" */
	bool loopback = false;
};

/*
 * Binds and listens on what --web.listen-address names:
 *  ":PORT" and "[::]:PORT"  every address, IPv6 and IPv4 on one socket
 *                           (IPv4 alone when the host has no IPv6);
 *  "[ADDR]:PORT"            that IPv6 address;
 *  "A.B.C.D:PORT"           that IPv4 address ("0.0.0.0": every IPv4 one);
 *  "NAME:PORT"              every address NAME resolves to ("localhost":
 *                           [::1] and 127.0.0.1), skipping one the host
 *                           has not got while another binds.
 * Throws std::runtime_error("ADDR: cannot listen: cause").
 */
std::vector<Listener> listen_on(const std::string &address);

struct Request {
	std::string method, path, accept_encoding;
};

struct Response {
	int status = 200;
	std::string content_type = "text/plain; charset=utf-8";
	std::string body;
	std::vector<std::pair<std::string, std::string>> headers;
};

using Handler = std::function<Response(const Request &)>;

/*
 * libmicrohttpd daemons on @listeners (one each; they own the sockets
 * from here on), four threads each, GET and HEAD only (HEAD: the same
 * headers, no body), basic auth, TLS and client certificates as @config
 * says. Throws std::runtime_error("ADDR: cannot serve: cause").
 */
class Server {
public:
	Server(std::vector<Listener> listeners, Config config, Handler handler);
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	/*
	 * Serve with @config from now on (SIGHUP: a new certificate, users,
	 * TLS on or off): new daemons take over the listening sockets (the
	 * old ones stop accepting first, so the kernel queues what arrives in
	 * between: no connection is refused), and each old daemon stops once
	 * its connections in progress are done (at most 35 s). Throws
	 * std::runtime_error when the new configuration can't serve; the
	 * sockets are then served again with the configuration in force.
	 */
	void reload(Config config);
	/* stop the daemons a reload retired whose connections are done */
	void tick() { reap(false); }

	struct State;

private:
	std::vector<Listener> listeners_;	/* the addresses; fds as taken over */
	Handler handler_;
	std::unique_ptr<State> state_;
	std::mutex old_mu_;
	std::vector<std::unique_ptr<State>> old_;	/* draining */
	void reap(bool all);
};

} // namespace exporter::web
