#include "poolmem/error.hpp"

#include <cstring>

namespace poolmem {

Error::Error(const std::string &object, const std::string &action, int err)
	: std::runtime_error(object + ": " + action + ": " + std::strerror(err)), code_(err)
{
}

Error::Error(const std::string &object, const std::string &message)
	: std::runtime_error(object + ": " + message)
{
}

Error Error::plain(const std::string &object, const std::string &message, int err)
{
	Error e(object, message);
	e.code_ = err;
	return e;
}

} // namespace poolmem
