// Errors that name the object and the cause, as operators read them:
//   "dax0.0: cannot online memory: Device or resource busy"
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>

namespace poolmem {

/// An operation on OBJECT failed. what() is "OBJECT: ACTION: CAUSE"; code()
/// is the errno behind it (0 when there is none), so callers can map it to
/// exit codes.
class Error : public std::runtime_error {
public:
	Error(const std::string &object, const std::string &action, int err);
	Error(const std::string &object, const std::string &message);
	/// "OBJECT: MESSAGE" carrying errno ERR without appending its text,
	/// for messages that already say the cause ("no such pool").
	static Error plain(const std::string &object, const std::string &message, int err);
	int code() const noexcept { return code_; }

private:
	int code_ = 0;
};

} // namespace poolmem
