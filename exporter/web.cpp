// The exporter's HTTP side (web.hpp): listening sockets, the web
// configuration file, and libmicrohttpd's daemons.
//
// libmicrohttpd rather than civetweb (prometheus-cpp's server): Debian's
// civetweb 1.15 is built without IPv6 (mg_check_feature(8) is 0), while
// libmicrohttpd speaks IPv6, takes sockets we bound ourselves (so a
// dual-stack ":PORT" and "localhost"'s two addresses are ours to choose),
// and does TLS through GnuTLS.
#include "web.hpp"

#include <arpa/inet.h>
#include <crypt.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <fstream>
#include <atomic>
#include <mutex>
#include <thread>
#include <set>
#include <sstream>

namespace exporter::web {
namespace {

std::runtime_error error(const std::string &what, const std::string &cause)
{
	return std::runtime_error(what + ": " + cause);
}

/* @name relative to the configuration file's directory, as exporter-toolkit does */
std::string relative_to(const std::string &config, const std::string &name)
{
	if (name.empty() || name[0] == '/')
		return name;
	auto slash = config.rfind('/');
	return slash == std::string::npos ? name : config.substr(0, slash + 1) + name;
}

std::string read_file(const std::string &config, const std::string &key, const std::string &name)
{
	std::string path = relative_to(config, name);
	std::ifstream in(path, std::ios::binary);
	if (!in)
		throw error(config, key + " " + path + ": cannot read: " + std::strerror(errno));
	std::ostringstream s;
	s << in.rdbuf();
	if (s.str().empty())
		throw error(config, key + " " + path + ": empty");
	return s.str();
}

/* @node must be a map whose keys are all in @known */
void only_keys(const std::string &path, const std::string &where, const YAML::Node &node,
	       const std::set<std::string> &known)
{
	if (!node.IsMap())
		throw error(path, where + ": not a mapping");
	for (const auto &kv : node) {
		std::string k = kv.first.as<std::string>();
		if (!known.count(k))
			throw error(path, where + ": unknown key '" + k + "'");
	}
}

/* crypt_data is 32 KiB: off the stack of libmicrohttpd's threads */
std::string bcrypt(const std::string &password, const std::string &setting)
{
	auto data = std::make_unique<crypt_data>();
	std::memset(data.get(), 0, sizeof(*data));
	const char *h = crypt_r(password.c_str(), setting.c_str(), data.get());
	return h && h[0] != '*' ? std::string(h) : std::string();
}

bool same(const std::string &a, const std::string &b)
{
	if (a.size() != b.size())
		return false;
	unsigned char d = 0;
	for (size_t i = 0; i < a.size(); i++)
		d |= static_cast<unsigned char>(a[i] ^ b[i]);
	return d == 0;
}

/* the GnuTLS priority string for exporter-toolkit's min_version/max_version */
std::string tls_priorities(const std::string &path, const std::string &min, const std::string &max)
{
	static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
	static const char *const vers[] = {"-VERS-TLS1.0", "-VERS-TLS1.1", "-VERS-TLS1.2", "-VERS-TLS1.3"};
	auto index = [&](const std::string &v, const char *key) {
		for (int i = 0; i < 4; i++)
			if (v == names[i])
				return i;
		throw error(path, std::string("tls_server_config.") + key + " '" + v +
					  "': not one of TLS10, TLS11, TLS12, TLS13");
	};
	int lo = index(min.empty() ? "TLS12" : min, "min_version");
	int hi = max.empty() ? 3 : index(max, "max_version");
	if (hi < lo)
		throw error(path, "tls_server_config: max_version " + max + " is below min_version " +
					  (min.empty() ? "TLS12" : min));
	std::string p = "NORMAL";
	for (int i = 0; i < 4; i++)
		if (i < lo || i > hi)
			p += std::string(":") + vers[i];
	return p;
}

} // namespace

/*
 * exporter-toolkit's format (docs/web-configuration.md there):
 *
 *   tls_server_config:
 *     cert_file: server.crt        # relative to this file's directory
 *     key_file: server.key
 *     min_version: TLS12           # the default; max_version too
 *   http_server_config:
 *     headers: {Strict-Transport-Security: max-age=31536000}
 *   basic_auth_users:
 *     prometheus: $2y$10$...       # bcrypt (htpasswd -nBC 10 "" | tr -d ':\n')
 *
 * An unknown key is an error, as in exporter-toolkit. Client certificates:
 * client_auth_type NoClientCert (the default), VerifyClientCertIfGiven and
 * RequireAndVerifyClientCert (mutual TLS), the latter two against
 * client_ca_file; RequestClientCert and RequireAnyClientCert (a
 * certificate taken unchecked), cipher and curve choices are refused by
 * name rather than ignored: a configuration that asks for them does not
 * get less than it asked for without knowing.
 */
Config load_config(const std::string &path)
{
	YAML::Node root;
	try {
		root = YAML::LoadFile(path);
	} catch (const YAML::BadFile &) {
		throw error(path, std::string("cannot read: ") + std::strerror(errno ? errno : ENOENT));
	} catch (const YAML::Exception &e) {
		throw error(path, "not YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
	}
	Config c;
	if (root.IsNull())
		return c;
	try {
		only_keys(path, "top level", root, {"tls_server_config", "http_server_config", "basic_auth_users"});
		if (auto tls = root["tls_server_config"]; tls && !tls.IsNull()) {
			only_keys(path, "tls_server_config", tls,
				  {"cert_file", "key_file", "min_version", "max_version", "client_auth_type", "client_ca_file",
				   "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"});
			for (const char *k : {"cipher_suites", "curve_preferences", "prefer_server_cipher_suites"})
				if (tls[k])
					throw error(path, std::string("tls_server_config.") + k + ": not supported by poolmem-exporter");
			const std::string cat = tls["client_auth_type"] ? tls["client_auth_type"].as<std::string>() : "NoClientCert";
			if (cat == "VerifyClientCertIfGiven")
				c.client_auth = Config::ClientAuth::verify_if_given;
			else if (cat == "RequireAndVerifyClientCert")
				c.client_auth = Config::ClientAuth::require_and_verify;
			else if (cat != "NoClientCert")
				throw error(path, "tls_server_config.client_auth_type " + cat +
							  ": not supported by poolmem-exporter (NoClientCert, VerifyClientCertIfGiven, "
							  "RequireAndVerifyClientCert: a certificate is always checked)");
			if (c.client_auth != Config::ClientAuth::none) {
				if (!tls["client_ca_file"])
					throw error(path, "tls_server_config.client_auth_type " + cat + " needs client_ca_file");
				c.client_ca_pem = read_file(path, "tls_server_config.client_ca_file",
							    tls["client_ca_file"].as<std::string>());
			} else if (tls["client_ca_file"]) {
				throw error(path, "tls_server_config.client_ca_file: client_auth_type is NoClientCert");
			}
			if (!tls["cert_file"] || !tls["key_file"])
				throw error(path, "tls_server_config: cert_file and key_file are both required");
			c.cert_pem = read_file(path, "tls_server_config.cert_file", tls["cert_file"].as<std::string>());
			c.key_pem = read_file(path, "tls_server_config.key_file", tls["key_file"].as<std::string>());
			c.tls_priorities = tls_priorities(path, tls["min_version"] ? tls["min_version"].as<std::string>() : "",
							  tls["max_version"] ? tls["max_version"].as<std::string>() : "");
		}
		if (auto http = root["http_server_config"]; http && !http.IsNull()) {
			only_keys(path, "http_server_config", http, {"http2", "headers"});
			if (auto h = http["headers"]; h && !h.IsNull()) {
				static const std::set<std::string> allowed = {
					"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
					"X-XSS-Protection", "Strict-Transport-Security"};
				only_keys(path, "http_server_config.headers", h, allowed);
				for (const auto &kv : h)
					c.headers.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
			}
		}
		if (auto users = root["basic_auth_users"]; users && !users.IsNull()) {
			if (!users.IsMap())
				throw error(path, "basic_auth_users: not a mapping");
			for (const auto &kv : users) {
				std::string user = kv.first.as<std::string>(), hash = kv.second.as<std::string>();
				if (user.empty() || user.find(':') != std::string::npos)
					throw error(path, "basic_auth_users: user '" + user + "': empty or with a ':'");
				if (hash.rfind("$2a$", 0) && hash.rfind("$2b$", 0) && hash.rfind("$2y$", 0))
					throw error(path, "basic_auth_users." + user + ": not a bcrypt hash ($2a$, $2b$ or $2y$)");
				if (bcrypt("", hash).empty())
					throw error(path, "basic_auth_users." + user + ": malformed bcrypt hash");
				c.users[user] = hash;
			}
		}
	} catch (const YAML::Exception &e) {
		throw error(path, "bad value: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
	}
	return c;
}

bool check_password(const Config &c, const std::string &user, const std::string &password)
{
	if (c.users.empty())
		return false;
	auto it = c.users.find(user);
	/* an unknown user costs a bcrypt too: the time tells nothing of names */
	const std::string &hash = it != c.users.end() ? it->second : c.users.begin()->second;
	bool ok = same(bcrypt(password, hash), hash);
	return ok && it != c.users.end();
}

namespace {

/* 0 and @l, or the errno of the step that failed */
int bind_one(const sockaddr *sa, socklen_t len, int family, bool v6only, const std::string &text, Listener &l)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int one = 1, v6 = v6only ? 1 : 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if ((family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6, sizeof(v6))) ||
	    bind(fd, sa, len) || listen(fd, 128)) {
		int e = errno;
		close(fd);
		return e;
	}
	l.fd = fd;
	l.text = text;
	if (family == AF_INET)
		l.loopback = (ntohl(reinterpret_cast<const sockaddr_in *>(sa)->sin_addr.s_addr) >> 24) == 127;
	else
		l.loopback = IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
	return 0;
}

std::string addr_text(const sockaddr *sa)
{
	char buf[INET6_ADDRSTRLEN] = "";
	if (sa->sa_family == AF_INET6) {
		auto *s6 = reinterpret_cast<const sockaddr_in6 *>(sa);
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof(buf));
		return "[" + std::string(buf) + "]:" + std::to_string(ntohs(s6->sin6_port));
	}
	auto *s4 = reinterpret_cast<const sockaddr_in *>(sa);
	inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof(buf));
	return std::string(buf) + ":" + std::to_string(ntohs(s4->sin_port));
}

} // namespace

std::vector<Listener> listen_on(const std::string &address)
{
	std::string host, port;
	if (!address.empty() && address[0] == '[') {
		auto close = address.find("]:");
		if (close == std::string::npos)
			throw error(address, "cannot listen: not [ADDRESS]:PORT");
		host = address.substr(1, close - 1);
		port = address.substr(close + 2);
		if (host.empty())
			throw error(address, "cannot listen: empty address in []");
	} else {
		auto colon = address.rfind(':');
		if (colon == std::string::npos)
			throw error(address, "cannot listen: not ADDRESS:PORT (or :PORT)");
		host = address.substr(0, colon);
		port = address.substr(colon + 1);
		if (host.find(':') != std::string::npos)
			throw error(address, "cannot listen: an IPv6 address goes in brackets ([::1]:PORT)");
	}
	char *end = nullptr;
	unsigned long p = std::strtoul(port.c_str(), &end, 10);
	if (port.empty() || *end || p < 1 || p > 65535)
		throw error(address, "cannot listen: port '" + port + "' is not 1-65535");

	std::vector<Listener> out;
	Listener l;
	int e;
	if (host.empty() || host == "::") {
		/* every address: one dual-stack socket, or IPv4 alone without IPv6 */
		sockaddr_in6 s6{};
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons(static_cast<uint16_t>(p));
		s6.sin6_addr = in6addr_any;
		e = bind_one(reinterpret_cast<sockaddr *>(&s6), sizeof(s6), AF_INET6, false, "[::]:" + port, l);
		if (e == EAFNOSUPPORT || e == EADDRNOTAVAIL) {
			sockaddr_in s4{};
			s4.sin_family = AF_INET;
			s4.sin_port = htons(static_cast<uint16_t>(p));
			s4.sin_addr.s_addr = htonl(INADDR_ANY);
			e = bind_one(reinterpret_cast<sockaddr *>(&s4), sizeof(s4), AF_INET, false, "0.0.0.0:" + port, l);
		}
		if (e)
			throw error(address, std::string("cannot listen: ") + std::strerror(e));
		out.push_back(l);
		return out;
	}
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	/* localhost is the loopback addresses (RFC 6761), whatever /etc/hosts says */
	int rc = getaddrinfo(host == "localhost" ? nullptr : host.c_str(), port.c_str(), &hints, &res);
	if (rc)
		throw error(address, std::string("cannot listen: ") + gai_strerror(rc));
	std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
	std::set<std::string> seen;
	std::string skipped;
	for (auto *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		std::string text = addr_text(ai->ai_addr);
		if (!seen.insert(text).second)
			continue;
		e = bind_one(ai->ai_addr, ai->ai_addrlen, ai->ai_family, true, text, l);
		if (!e) {
			out.push_back(l);
			continue;
		}
		/* one of a name's addresses that the host has not got (no IPv6 here) */
		if (e == EADDRNOTAVAIL || e == EAFNOSUPPORT) {
			skipped = text + ": " + std::strerror(e);
			continue;
		}
		for (auto &o : out)
			close(o.fd);
		throw error(address, std::string("cannot listen: ") +
					     (text == address ? "" : "on " + text + ": ") + std::strerror(e));
	}
	if (out.empty())
		throw error(address, "cannot listen: " + (skipped.empty() ? std::string("no address") : skipped));
	return out;
}

struct Server::State {
	Config config;
	Handler handler;
	std::vector<MHD_Daemon *> daemons;
	/*
	 * Each daemon's listening socket: a dup of its Listener's, which the
	 * Server keeps open for the next daemons. libmicrohttpd closes it
	 * when the daemon stops, or when its start fails; a quiesced daemon
	 * gives it back, and it is closed after that daemon stops.
	 */
	std::vector<int> fds;
	bool quiesced = false;
	std::mutex log_mu;
	std::string first_log;	/* while starting: the cause of a failure */
	bool started = false;
	/*
	 * Retired by a reload: each response closes its connection, so that a
	 * client's next request (Prometheus keeps connections alive) comes to
	 * the new daemons.
	 */
	std::atomic<bool> retired{false};
};

namespace {

void mhd_log(void *cls, const char *fmt, va_list ap)
{
	auto *st = static_cast<Server::State *>(cls);
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	std::string m(buf);
	while (!m.empty() && (m.back() == '\n' || m.back() == ' '))
		m.pop_back();
	std::lock_guard lock(st->log_mu);
	/* after the start, a client's failed handshake is its own affair */
	if (!st->started && st->first_log.empty())
		st->first_log = m;
}

MHD_Result queue(MHD_Connection *conn, const Server::State *st, const Response &r, bool auth_fail)
{
	MHD_Response *resp = MHD_create_response_from_buffer(r.body.size(), const_cast<char *>(r.body.data()),
							     MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
	for (const auto &[k, v] : st->config.headers)
		MHD_add_response_header(resp, k.c_str(), v.c_str());
	for (const auto &[k, v] : r.headers)
		MHD_add_response_header(resp, k.c_str(), v.c_str());
	if (st->retired.load(std::memory_order_relaxed))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_Result ret = auth_fail ? MHD_queue_basic_auth_fail_response(conn, "poolmem-exporter", resp)
				   : MHD_queue_response(conn, static_cast<unsigned>(r.status), resp);
	MHD_destroy_response(resp);
	return ret;
}

MHD_Result on_request(void *cls, MHD_Connection *conn, const char *url, const char *method, const char *,
		      const char *, size_t *, void **)
{
	auto *st = static_cast<Server::State *>(cls);
	std::string m(method);
	if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
		Response r;
		r.status = MHD_HTTP_METHOD_NOT_ALLOWED;
		r.body = "405 method not allowed: GET and HEAD only\n";
		r.headers.emplace_back("Allow", "GET, HEAD");
		return queue(conn, st, r, false);
	}
	if (st->config.client_auth != Config::ClientAuth::none) {
		/*
		 * libmicrohttpd asks for a client certificate when it has a
		 * trust list (MHD_OPTION_HTTPS_MEM_TRUST) but does not check it:
		 * that is done here, before anything is served.
		 */
		const MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		auto *session = ci ? static_cast<gnutls_session_t>(ci->tls_session) : nullptr;
		unsigned n = 0, status = 0;
		const bool given = session && gnutls_certificate_get_peers(session, &n) && n > 0;
		Response r;
		r.status = MHD_HTTP_FORBIDDEN;
		if (!given && st->config.client_auth == Config::ClientAuth::require_and_verify) {
			r.body = "403 a client certificate is required\n";
			return queue(conn, st, r, false);
		}
		if (given && (gnutls_certificate_verify_peers2(session, &status) < 0 || status)) {
			r.body = "403 the client certificate is not trusted (client_ca_file)\n";
			return queue(conn, st, r, false);
		}
	}
	if (st->config.auth()) {
		char *pass = nullptr;
		char *user = MHD_basic_auth_get_username_password(conn, &pass);
		bool ok = user && pass && check_password(st->config, user, pass);
		if (user)
			MHD_free(user);
		if (pass) {
			explicit_bzero(pass, std::strlen(pass));
			MHD_free(pass);
		}
		if (!ok) {
			Response r;
			r.status = MHD_HTTP_UNAUTHORIZED;
			r.body = "401 Unauthorized\n";
			return queue(conn, st, r, true);
		}
	}
	Request req;
	req.method = m;
	req.path = url ? url : "/";
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	req.accept_encoding = ae ? ae : "";
	Response r;
	try {
		r = st->handler(req);
	} catch (const std::exception &e) {
		r = Response();
		r.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		r.body = std::string("500 ") + e.what() + "\n";
	}
	return queue(conn, st, r, false);
}

} // namespace

namespace {

/* @st's daemons stop; quiesced ones gave their sockets back, closed here */
void stop_daemons(Server::State &st)
{
	for (size_t i = 0; i < st.daemons.size(); i++) {
		MHD_stop_daemon(st.daemons[i]);
		if (st.quiesced)
			close(st.fds[i]);
	}
	st.daemons.clear();
	st.fds.clear();
}

/*
 * Daemons for @st, one on a dup of each of @ls's sockets (@ls stay open).
 * On a failure the daemons started here stop, and the cause is thrown.
 */
void start_daemons(Server::State &st, const std::vector<Listener> &ls)
{
	const Config &c = st.config;
	const bool trust = c.tls() && c.client_auth != Config::ClientAuth::none;
	for (const Listener &l : ls) {
		const int fd = fcntl(l.fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			const int e = errno;
			stop_daemons(st);
			throw error(l.text, std::string("cannot serve: ") + std::strerror(e));
		}
		/* MHD_USE_ITC: what MHD_quiesce_daemon() needs, for a reload */
		unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC |
				 (c.tls() ? MHD_USE_TLS : 0);
		MHD_Daemon *d;
		if (trust)
			d = MHD_start_daemon(flags, 0, nullptr, nullptr, on_request, &st, MHD_OPTION_LISTEN_SOCKET, fd,
					     MHD_OPTION_THREAD_POOL_SIZE, 4u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
					     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &st,
					     MHD_OPTION_HTTPS_MEM_CERT, c.cert_pem.c_str(), MHD_OPTION_HTTPS_MEM_KEY,
					     c.key_pem.c_str(), MHD_OPTION_HTTPS_PRIORITIES, c.tls_priorities.c_str(),
					     MHD_OPTION_HTTPS_MEM_TRUST, c.client_ca_pem.c_str(), MHD_OPTION_END);
		else if (c.tls())
			d = MHD_start_daemon(flags, 0, nullptr, nullptr, on_request, &st, MHD_OPTION_LISTEN_SOCKET, fd,
					     MHD_OPTION_THREAD_POOL_SIZE, 4u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
					     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &st,
					     MHD_OPTION_HTTPS_MEM_CERT, c.cert_pem.c_str(), MHD_OPTION_HTTPS_MEM_KEY,
					     c.key_pem.c_str(), MHD_OPTION_HTTPS_PRIORITIES, c.tls_priorities.c_str(),
					     MHD_OPTION_END);
		else
			d = MHD_start_daemon(flags, 0, nullptr, nullptr, on_request, &st, MHD_OPTION_LISTEN_SOCKET, fd,
					     MHD_OPTION_THREAD_POOL_SIZE, 4u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
					     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &st,
					     MHD_OPTION_END);
		if (!d) {	/* libmicrohttpd closed fd */
			std::string cause;
			{
				std::lock_guard lock(st.log_mu);
				cause = st.first_log.empty() ? "libmicrohttpd could not start" : st.first_log;
			}
			stop_daemons(st);
			throw error(l.text, "cannot serve: " + cause);
		}
		st.daemons.push_back(d);
		st.fds.push_back(fd);
	}
	std::lock_guard lock(st.log_mu);
	st.started = true;
}

/* connections @st's daemons still serve */
unsigned connections(const Server::State &st)
{
	unsigned n = 0;
	for (auto *d : st.daemons)
		if (const MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS))
			n += i->num_connections;
	return n;
}

} // namespace

Server::Server(std::vector<Listener> listeners, Config config, Handler handler)
	: listeners_(std::move(listeners)), handler_(std::move(handler)), state_(std::make_unique<State>())
{
	state_->config = std::move(config);
	state_->handler = handler_;
	try {
		start_daemons(*state_, listeners_);
	} catch (...) {
		for (auto &l : listeners_)
			close(l.fd);
		throw;
	}
}

void Server::reload(Config config)
{
	auto next = std::make_unique<State>();
	next->config = std::move(config);
	next->handler = handler_;
	/*
	 * The old daemons stop accepting (their connections in progress go
	 * on, each closed after its response); until the new ones accept,
	 * the kernel queues new connections on the listening sockets.
	 */
	for (auto *d : state_->daemons)
		MHD_quiesce_daemon(d);
	state_->quiesced = true;
	state_->retired = true;
	std::unique_ptr<State> retired = std::move(state_);
	std::string failed;
	try {
		start_daemons(*next, listeners_);
	} catch (const std::runtime_error &e) {
		failed = e.what();
		next = std::make_unique<State>();
		next->config = retired->config;
		next->handler = handler_;
		start_daemons(*next, listeners_);	/* as it served a moment ago */
	}
	state_ = std::move(next);
	{
		std::lock_guard lock(old_mu_);
		old_.push_back(std::move(retired));
	}
	reap(false);
	if (!failed.empty())
		throw std::runtime_error(failed);
}

/*
 * Stop retired daemons whose connections are done (@all: every one, after
 * at most 35 s: the connection timeout is 30 s). A scrape in progress on
 * an old daemon finishes there.
 */
void Server::reap(bool all)
{
	std::vector<std::unique_ptr<State>> done;
	{
		std::lock_guard lock(old_mu_);
		for (auto it = old_.begin(); it != old_.end();) {
			if (!connections(**it)) {
				done.push_back(std::move(*it));
				it = old_.erase(it);
			} else {
				++it;
			}
		}
		if (all) {
			for (auto &st : old_) {
				for (int i = 0; i < 350 && connections(*st); i++)
					std::this_thread::sleep_for(std::chrono::milliseconds(100));
				done.push_back(std::move(st));
			}
			old_.clear();
		}
	}
	for (auto &st : done)
		stop_daemons(*st);
}

Server::~Server()
{
	reap(true);
	stop_daemons(*state_);
	for (auto &l : listeners_)
		close(l.fd);
}

} // namespace exporter::web
