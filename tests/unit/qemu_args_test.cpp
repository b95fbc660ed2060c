// What vm create hands QEMU (ctl/qemu_args.hpp): one file's arguments,
// preallocation, and a zNUMA guest's two nodes with the host's distance,
// against a fixture host (node 0 with CPUs, pool cxl0 on node 1 at
// distance 21).
#include "qemu_args.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

namespace fs = std::filesystem;
using poolctl::PreallocPlan;

namespace {

/* sysfs-2node's nodes with sysfs-poolmem's pools, in a tree of our own */
struct FixtureHost {
	fs::path root = fs::temp_directory_path() / ("poolmem-qemu-args-" + std::to_string(getpid()));
	FixtureHost()
	{
		fs::remove_all(root);
		fs::create_directories(root);
		fs::copy(fs::path(FIXTURES) / "sysfs-2node", root, fs::copy_options::recursive);
		fs::create_directories(root / "kernel");
		fs::copy(fs::path(FIXTURES) / "sysfs-poolmem/kernel", root / "kernel", fs::copy_options::recursive);
	}
	~FixtureHost() { fs::remove_all(root); }
};

} // namespace

TEST(QemuArgs, OneFile)
{
	EXPECT_EQ(poolctl::qemu_argument("web1", "/run/poolmem/web1", 1ULL << 30, 2ULL << 20),
		  "-object memory-backend-file,id=mem-web1,mem-path=/run/poolmem/web1,size=1073741824,share=on,"
		  "align=2097152 -machine memory-backend=mem-web1 -m 1024M");
}

TEST(QemuArgs, PreallocRunsOnTheHomeNodeWhereQemuCan)
{
	std::string objects;
	PreallocPlan none;
	EXPECT_EQ(poolctl::prealloc_properties(none, "mem-a", objects), "");
	EXPECT_EQ(objects, "");

	PreallocPlan p;
	p.threads = 4;
	p.home_node = 0;
	EXPECT_EQ(poolctl::prealloc_properties(p, "mem-a", objects), ",prealloc=on,prealloc-threads=4");
	EXPECT_EQ(objects, ""); /* a QEMU without thread contexts */
	p.caps.prealloc_context = true;
	EXPECT_EQ(poolctl::prealloc_properties(p, "mem-a", objects),
		  ",prealloc=on,prealloc-threads=4,prealloc-context=mem-a-tc");
	EXPECT_EQ(objects, "-object thread-context,id=mem-a-tc,node-affinity=0 ");
}

TEST(QemuArgs, ZnumaTwoNodesAtTheHostsDistance)
{
	FixtureHost host;
	poolctl::GlobalOptions g;
	g.sysfs = host.root.string();
	poolmem::DomainSpec s;
	s.name = "db";
	s.bytes = 3ULL << 30;
	s.local_quota = 1ULL << 30;
	s.pool_quota = 2ULL << 30;
	s.pools = {"cxl0"};
	PreallocPlan pre;
	pre.caps.file_offset = true; /* QEMU 8.1: two ranges of the one file */
	const std::string a = poolctl::znuma_arguments(g, s, "/run/poolmem/db", 2, pre);
	EXPECT_NE(a.find("id=mem-db-local,mem-path=/run/poolmem/db,offset=0,size=1073741824,"), std::string::npos) << a;
	EXPECT_NE(a.find("id=mem-db-pool,mem-path=/run/poolmem/db,offset=1073741824,size=2147483648,"),
		  std::string::npos)
		<< a;
	EXPECT_NE(a.find("-smp 2 -m 3072M -numa node,nodeid=0,cpus=0-1,memdev=mem-db-local -numa "
			 "node,nodeid=1,memdev=mem-db-pool -numa dist,src=0,dst=1,val=21"),
		  std::string::npos)
		<< a;
	EXPECT_EQ(a.find("hmat"), std::string::npos) << a; /* node 0 has no access0: no HMAT */

	pre.caps.file_offset = false; /* before 8.1: a file per window */
	const std::string old = poolctl::znuma_arguments(g, s, "/run/poolmem/db", 1, pre);
	EXPECT_NE(old.find("mem-path=/run/poolmem/db.local,size=1073741824"), std::string::npos) << old;
	EXPECT_NE(old.find("mem-path=/run/poolmem/db.pool,size=2147483648"), std::string::npos) << old;
}
