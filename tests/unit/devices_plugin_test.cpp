// poolctl's way to the device libraries (userspace/src/devices.hpp): the
// stub loads poolmem-devices.so on first use and forwards to it, and an
// error the plugin throws arrives as the poolmem::Error it is. Linked with
// the stub, as poolctl is; the sysfs given is an empty tree, so libdaxctl
// finds no device and nothing on the machine is touched.
#include <poolmem/chain.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/error.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <string>


namespace {

bool loaded(const char *name)
{
	std::ifstream maps("/proc/self/maps");
	for (std::string line; std::getline(maps, line);)
		if (line.find(name) != std::string::npos)
			return true;
	return false;
}

TEST(DevicesPlugin, LoadedOnFirstUseOnly)
{
	EXPECT_FALSE(loaded("libdaxctl")) << "the device libraries are loaded at start";
	EXPECT_FALSE(loaded("poolmem-devices.so"));
	poolmem::Dax dax("/nonexistent-sysfs");
	EXPECT_TRUE(loaded("poolmem-devices.so"));
	EXPECT_TRUE(loaded("libdaxctl"));
}

TEST(DevicesPlugin, ErrorsCrossAsPoolmemErrors)
{
	poolmem::Dax dax("/nonexistent-sysfs");
	try {
		dax.device("dax99.99");
		FAIL() << "no error for a dax device that does not exist";
	} catch (const poolmem::Error &e) {
		EXPECT_NE(std::string(e.what()).find("dax99.99"), std::string::npos) << e.what();
		EXPECT_EQ(e.code(), ENOENT) << e.what();
	}
}

TEST(DevicesPlugin, ResultsCross)
{
	EXPECT_TRUE(poolmem::device_chain(4095).empty());
}

} // namespace
