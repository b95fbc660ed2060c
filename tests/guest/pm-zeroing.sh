# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: the rig boots with init_on_alloc=0, so the page
# allocator does not zero pages by itself: only poolmem's own zeroing stands
# between one tenant's data and the next. A domain is filled with a pattern
# and destroyed; a new domain of the same size on the same pools must read
# back zeros. Punching a whole chunk must give zeros on the next touch;
# punching part of a chunk must zero exactly that part; a chunk punched
# page by page (QEMU's balloon) goes back once it reads as zeroes, and one
# with a byte left stays.
. /rig/tests/lib/common.sh
grep -qw init_on_alloc=0 /proc/cmdline || fail "rig must boot with init_on_alloc=0"
pm_pools_up

pmtest domain-create z1 64M 0 64M tier=pool-first >/dev/null
pmtest fill z1 0 64M 0xa5 >/dev/null
pmtest expect z1 0 64M 0xa5 >/dev/null
pmtest domain-destroy z1 >/dev/null
pmtest domain-create z2 64M 0 64M tier=pool-first >/dev/null
pmtest expect z2 0 64M 0
pmtest domain-destroy z2 >/dev/null

pmtest domain-create z3 16M 0 16M tier=pool-first >/dev/null
pmtest fill z3 0 16M 0x5a >/dev/null
pmtest punch z3 2M 2M                  # exactly chunk 1
check_eq "discards after whole-chunk punch" 1 "$(dom_attr z3 discards)"
check_eq "chunks after whole-chunk punch" 7 "$(dom_attr z3 chunks)"
pmtest expect z3 2M 2M 0
check_eq "chunk re-placed on touch" 8 "$(dom_attr z3 chunks)"
pmtest punch z3 4194304 12288          # 3 pages at the start of chunk 2
pmtest expect z3 4194304 12288 0
pmtest expect z3 $((4194304 + 12288)) $((2097152 - 12288)) 0x5a
pmtest expect z3 0 2M 0x5a
check_eq "partial punch frees nothing" 1 "$(dom_attr z3 discards)"
# QEMU's balloon discards a page at a time: a chunk punched page by page
# goes back once it reads as zeroes, and reads as zeroes after
pmtest punch z3 6M 2M 4096 >/dev/null   # chunk 3, in 512 punches
check_eq "discards after a chunk punched page by page" 2 "$(dom_attr z3 discards)"
check_eq "chunks after a chunk punched page by page" 7 "$(dom_attr z3 chunks)"
pmtest expect z3 6M 2M 0 >/dev/null
# a chunk with a byte left is kept, whole: chunk 4 punched but for its last
# page, and one page twice (a chunk's worth of punches: poolmem looks)
pmtest punch z3 8M $((2097152 - 4096)) 4096 >/dev/null
pmtest punch z3 8M 4096 >/dev/null
check_eq "a chunk with data left is not freed" 2 "$(dom_attr z3 discards)"
pmtest expect z3 $((10485760 - 4096)) 4096 0x5a
pmtest expect z3 8M $((2097152 - 4096)) 0 >/dev/null
pmtest domain-destroy z3 >/dev/null
