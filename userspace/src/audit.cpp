// The audit trail in the journal (audit.hpp).
#include <poolmem/audit.hpp>

#include <systemd/sd-journal.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

namespace poolmem {

namespace {

/* A word of a command line as a shell would take it back. */
std::string quoted(const std::string &w)
{
	if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,._+:@%/=-") ==
				  std::string::npos)
		return w;
	std::string q = "'";
	for (char c : w)
		q += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return q + "'";
}

/*
 * sd_journal_sendv() from libsystemd, loaded with the first entry:
 * linking libsystemd would load it and its libraries (libgcrypt, liblz4,
 * libzstd, liblzma, libcap) at every poolctl start, for the verbs that
 * change nothing too. Without libsystemd there is no journal: no entry.
 */
using SendV = decltype(&sd_journal_sendv); /* the header's own signature */

SendV sendv()
{
	static const SendV f = [] {
		void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
		return h ? reinterpret_cast<SendV>(dlsym(h, "sd_journal_sendv")) : nullptr;
	}();
	return f;
}

} // namespace

bool audit(const AuditEntry &e)
{
	std::string object;
	for (const auto *v : {&e.pool, &e.domain, &e.profile, &e.host})
		if (!v->empty())
			object += " " + *v;
	std::string command;
	for (const auto &a : e.argv)
		command += (command.empty() ? "" : " ") + quoted(a);

	/* sd_journal_sendv(): each field "NAME=value", values may hold any byte */
	std::vector<std::string> f = {
		"MESSAGE=" + e.tool + ": " + e.verb + object + ": " + e.result + (e.error.empty() ? "" : ": " + e.error) +
			(e.detail.empty() ? "" : ": " + e.detail),
		std::string("MESSAGE_ID=") + audit_message_id,
		"PRIORITY=" + std::to_string(e.result == "ok" ? LOG_NOTICE : LOG_WARNING),
		"SYSLOG_IDENTIFIER=" + e.tool,
		"POOLMEM_VERB=" + e.verb,
		"RESULT=" + e.result,
		"EXIT_CODE=" + std::to_string(e.exit_code),
		"UID=" + std::to_string(getuid()),
	};
	if (const char *sudo = std::getenv("SUDO_UID"))
		f.push_back(std::string("SUDO_UID=") + sudo);
	if (!e.pool.empty())
		f.push_back("POOL=" + e.pool);
	if (!e.domain.empty())
		f.push_back("DOMAIN=" + e.domain);
	if (!e.profile.empty())
		f.push_back("PROFILE=" + e.profile);
	if (!e.host.empty())
		f.push_back("HOST=" + e.host);
	if (!e.error.empty())
		f.push_back("ERROR=" + e.error);
	if (!e.detail.empty())
		f.push_back("DETAIL=" + e.detail);
	if (!command.empty())
		f.push_back("COMMAND=" + command);
	std::vector<iovec> iov;
	for (auto &s : f)
		iov.push_back({s.data(), s.size()});
	const SendV send = sendv();
	return send && send(iov.data(), static_cast<int>(iov.size())) == 0;
}

} // namespace poolmem
