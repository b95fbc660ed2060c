// Who changed what: one structured journal entry per change that poolctl
// or the agent makes (sd_journal_send), for "journalctl MESSAGE_ID=..."
// and log shippers. An audit trail, not a log: nothing else goes there.
#pragma once

#include <string>
#include <vector>

namespace poolmem {

/// MESSAGE_ID of every poolmem audit entry (journalctl MESSAGE_ID=...).
inline constexpr const char *audit_message_id = "85847ce531f7465eb3bc23de1da02007";

struct AuditEntry {
	std::string tool;   ///< SYSLOG_IDENTIFIER: poolctl, poolmem-agent
	std::string verb;   ///< POOLMEM_VERB: "vm set", "pool drain", "self-fence"
	std::string pool, domain, profile, host; ///< POOL=, DOMAIN=, PROFILE=, HOST= when set
	std::string result; ///< RESULT: ok, refused, partial, failed, usage, notfound
	int exit_code = 0;  ///< EXIT_CODE
	std::string error;  ///< ERROR: the one-line message of a failure
	std::string detail; ///< DETAIL: what was done, where the verb does not say (the agent's)
	std::vector<std::string> argv; ///< COMMAND: the command line, quoted
};

/// Send E to the journal: MESSAGE "TOOL: VERB OBJECT: RESULT[: ERROR][: DETAIL]",
/// MESSAGE_ID, PRIORITY (notice, or warning for a failure), the fields
/// above, UID= (the real user) and SUDO_UID= (who ran sudo, if set).
/// Without a journal (no systemd-journald) nothing happens: returns false.
bool audit(const AuditEntry &e);

} // namespace poolmem
