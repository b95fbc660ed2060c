#!/usr/bin/env python3
"""Generate poolctl's man pages (roff) from the descriptions below and
from the binary.

Run: python3 Documentation/man/gen-man.py [--poolctl PATH] [--out DIR]
(rewrites Documentation/man/*.8; PATH defaults to build/ctl/poolctl).

A poolctl verb's SYNOPSIS and OPTIONS come from the binary: its
positionals, and every option CLI11 defines for it (poolctl NOUN VERB
--help), in its order, with its metavar and its help text; a verb's page
below has no synopsis. A page's "options" below only add to that: a longer text, and a
better metavar, for the options that need more than the help line; one the
binary does not take is an error. So a page can't miss an option or keep a
removed one, and the help text is written once, in the C++ (ctl/*.cpp).
tests/poolctl/man-options.py regenerates the pages and fails when the
tree's differ. The daemons' pages, and a noun's own page (cluster), keep
their lists here (man-options.py checks them against --help).
Examples are real output captured from the QEMU rig (tests/guest/poolctl-*.sh).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# options every verb inherits (poolctl(8) documents them) or CLI11 adds
GLOBAL = {"--help", "--sysfs", "--control", "--mount", "--human", "--version", "--procfs", "--planned-pools"}
# --json on a verb that changes something
JS = "print the result as one JSON object (Documentation/json.md): "
EXIT = """.TP
.B 0
success
.TP
.B 1
the operation failed; the message names the object and the cause
.TP
.B 2
bad command line or value (size, policy, mode)
.TP
.B 3
no such pool, domain, node, device, memdev or user; module not loaded
.TP
.B 4
refused before anything changed: busy (chunks live there), exists, over capacity (admission control), no permission
.TP
.B 5
partly done: the command changed something, then stopped (Ctrl-C, --timeout, a pinned chunk, a later step of apply failing); the message says what is left and how to go on, and with --json the result printed first says what was done"""

PAGES = {
"poolctl": dict(
 summary="manage pooled memory (CXL, DAX, PMem) for VMs with per-tier quotas",
 synopsis="poolctl [--sysfs DIR] [--control DEV] [--mount DIR] NOUN VERB [OPTIONS]",
 description="""poolctl is the operator's command for poolmem. It brings hot-plugged far memory
online as pools, creates VM domains (files /run/poolmem/NAME of the poolmem file system)
with a hard quota per memory tier, creates profiles (directories whose files QEMU or
libvirt create become domains), shows where every chunk of a VM lives, and moves chunks
while VMs run: draining a pool, changing a VM's quotas, tiering hot and cold memory. It talks to the kernel only through
libpoolmem (libdaxctl, libcxl, libndctl, libkmod and the poolmem ioctls); it never
runs modprobe, daxctl, ndctl or cxl.
.PP
Every listing takes --json, and so does every verb that changes something: its result as one
object (Documentation/json.md). Every verb that changes something takes --check: its checks, and
nothing changed. Sizes accept K, M, G and T suffixes (powers of 1024).
Errors are one line: the object, then the cause; command-line errors too (exit 2).""",
 options=[("--version","print poolctl's version and the kernel ABI it was built for, and on a second line the loaded module's ABI (/sys/kernel/poolmem/abi_version), saying plainly when it is older or newer. Commands that open the control device, and status, warn on standard error when the two differ"),
          ("--sysfs DIR","sysfs root to read (default /sys; for tests)"),
          ("--control DEV","control device (default /dev/poolmem/control)"),
          ("--mount DIR","where the poolmem file system is; mounted there when it is not (default /run/poolmem)")],
 examples="""# poolctl pool online dax0.0 --name cxl0
cxl0: onlined 15 blocks (1.9 GiB) of dax0.0 on node 1 in 0.46 s (0.244 s/GiB), zone movable
# poolctl vm create web1 --size 64M --local 16M --pool 48M --tier-policy interleave
/run/poolmem/web1
-object memory-backend-file,id=mem-web1,mem-path=/run/poolmem/web1,size=67108864,share=on,align=2097152 -machine memory-backend=mem-web1 -m 64M""",
 extra=[("EXIT STATUS", EXIT)],
 see=["poolctl-pool-online","poolctl-pool-list","poolctl-pool-show","poolctl-pool-drain","poolctl-pool-undrain","poolctl-pool-set","poolctl-pool-events","poolctl-pool-soft-offline","poolctl-pool-poison-scan","poolctl-pool-offline","poolctl-pool-remove",
      "poolctl-vm-create","poolctl-vm-set","poolctl-vm-list","poolctl-profile-create","poolctl-profile-list","poolctl-profile-show","poolctl-profile-remove","poolctl-vm-show","poolctl-vm-map","poolctl-vm-destroy",
      "poolctl-status","poolctl-top","poolctl-capacity","poolctl-node-list","poolctl-apply","poolctl-export","poolctl-pool-add","poolctl-simulate","poolctl-cluster","poolctl-libvirt-hook","poolctl-autopilot-advise","poolctl-autopilot-run","poolctl-autopilot-status"]),
"poolctl-pool-online": dict(
 summary="bring DAX or CXL memory online and register it as a pool",
 description="""With a dax device: reconfigure it to system-ram (kmem) with libdaxctl, online every
memory block of it, and register its NUMA node with poolmem as a pool. With --cxl: first
create a pmem region over the memdevs (libcxl) and a devdax namespace on it (libndctl).
On a terminal a progress bar runs; the summary line gives blocks, size, node, time and
time per GiB. If any step fails, what this command did is undone: blocks it onlined go
offline again, a device it reconfigured returns to devdax, a region it created is deleted.
.PP
The kernel's own onlining of hot-added memory (auto_online_blocks, memhp_default_state; Debian's
6.12 onlines into ZONE_NORMAL) is set to offline while the device binds to kmem, under a lock
(/run/poolctl/auto-online.lock), and the value found is restored right after (kept in
/run/poolctl/auto-online.saved meanwhile: a poolctl that died holding it is undone by the next);
memory others hot-add in that window stays offline too. A device the kernel bound to kmem and
onlined at boot into another zone than --zone is taken back (its blocks offlined, then onlined
in that zone; a line on stderr says so); where a block can't go offline, the command is refused
and the blocks stay as they were.
.PP
Movable (the default) keeps the memory unpluggable but not pinnable (VFIO, RDMA);
normal can be pinned but not reliably unplugged. poolmem's chunks are of the movable
class and land in either.
.PP
The memmap (64 bytes of struct page per 4 KiB page: 16 MiB per GiB, 16 GiB of DRAM for
1 TiB of CXL memory) is made when kmem binds the device. --memmap local puts it in DRAM
of the nearest node with memory, as kmem always did; --memmap device puts it on the
device itself, in the first pages of each memory block (Linux 6.8 and later, booted
with memory_hotplug.memmap_on_memory=1; the device's memmap_on_memory attribute): no
DRAM, but 1/64 of the device is no pool memory, and a block's memmap goes offline and
away only with its block. auto (the default) is device where the kernel can, else local.
A device the kernel bound to kmem itself with every block offline (6.5 and later: hmem,
CXL RAM) goes back to devdax to be set; with memory online its memmap stays where it is,
and an explicit --memmap that differs is refused. The summary line says where it went;
poolctl pool show and the exporter (poolmem_pool_memmap_bytes) report it per pool.""",
 options=[("--check","run every check the command runs, the device present, the name free; nothing loaded, reconfigured or onlined, and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--cxl MEMDEV[,...]","CXL memdevs to interleave into a new region (instead of DAXDEV)"),
          ("--zone movable|normal","zone to online into (default movable: can be offlined and unplugged again, but not long-term pinned; normal: what pinnable domains, for VFIO and RDMA, need)"),
          ("--async","return once --first is online and registered; the rest is onlined by a background process, its progress shown by poolctl pool show. A device of a dynamic dax region (dax_hmem: memory the firmware marked Soft Reserved) is split first: it shrinks to --first, so that kmem sets up only that much before the pool is usable, and the rest of the region comes as one more device, bound to kmem and onlined block by block. pool remove gives the region back as one device of its old size. Pool offline and remove wait for the background process (they refuse, EBUSY, while it runs)"),
          ("--first SIZE", None),
          ("--force","no effect (kept for scripts: poolctl no longer races the kernel's auto-onlining, see above)"),
          ("--overcommit RATIO","admission limit for domains: capacity x RATIO, 1 to 10 (1.5, or 150%; default 1); poolctl pool set changes it later"),
          ("--memmap auto|local|device","where kmem puts the struct pages: device (the pool memory holds them; 6.8+, booted with memory_hotplug.memmap_on_memory=1), local (DRAM, 16 MiB per GiB), auto (default: device where the kernel can)"),
          ("--size SIZE","with --cxl: the region's size, a multiple of 256 MiB per memdev (default: the memdevs' persistent capacity)"),
          ("--json",JS+"name, onlined, device, region, node, zone, blocks (online now) of blocks_total, online_bytes, seconds, memmap (device or local), background (the rest onlines in the background)")],
 examples="""# poolctl pool online --cxl mem0 --name c0
mem0: region region0 (2.0 GiB) -> devdax dax0.0
c0: onlined 15 blocks (1.9 GiB) of dax0.0 on node 1 in 0.47 s (0.250 s/GiB), zone movable, memmap 30 MiB in local DRAM
# poolctl pool online dax1.0 --name pb --async --first 256M
pb: onlined 2 of 15 blocks (256.0 MiB) of dax1.0 on node 2 in 0.09 s, zone movable, memmap 30 MiB in local DRAM; the rest continues in the background (poolctl pool show pb)
# poolctl pool online dax9.9
poolctl: dax9.9: no such dax device""",
 see=["poolctl-pool-show","poolctl-pool-remove","daxctl-reconfigure-device","cxl-create-region"]),
"poolctl-pool-list": dict(
 summary="list pools",
 description="""One line per pool: id, NUMA node, capacity (the node's present memory), bytes
allocated to domain chunks, free memory of the node, chunks, access factor (weighted
recent allocations and faults; smart-idle avoids high values), failed allocations, and
the state of onlining. Read from /sys/kernel/poolmem/pools.""",
 options=[("--json","print a JSON array with every counter")],
 examples="""# poolctl pool list
NAME  ID  NODE  CAPACITY  ALLOCATED     FREE  CHUNKS  AF  FAILURES  ONLINE
pa     0     1   1.9 GiB        0 B  1.9 GiB       0   0         0  done
pb     1     2   1.9 GiB        0 B  1.9 GiB       0   0         0  done""",
 see=["poolctl-pool-show","poolctl-status"]),
"poolctl-pool-show": dict(
 summary="show one pool, its activity and the domains holding chunks in it",
 description="Capacity, allocation, commitment, activity counters, the access-factor windows, background onlining progress, and per domain the chunks it holds in the pool.",
 options=[("--json","print JSON (with \"online\" progress and \"domains\")")],
 examples="""# poolctl pool show pb
pool pb (id 1): node 2, tier pool, overcommit 1
  capacity   1.9 GiB
  allocated  56.0 MiB in 28 chunks
  free       1.9 GiB
  committed  80.0 MiB
  activity   28 allocations, 28 faults, 0 failures; access factor 176 (windows 0 22 0 0)
  onlining   15/15 blocks, 0.42 s, done
  domain     db: 16 chunks
  domain     web1: 12 chunks""",
 see=["poolctl-pool-list"]),
"poolctl-pool-offline": dict(
 summary="offline a pool's memory",
 description="Offlines every memory block of the pool's node. Refused (exit 4) while chunks of any domain live in the pool, naming the domains; the kernel module would refuse the offline of those blocks anyway (poolmem's memory notifier answers EBUSY at once instead of letting the kernel retry).",
 options=[("--json",JS+"name, offlined, node, blocks")],
 examples="""# poolctl pool offline pb
poolctl: pb: cannot offline: chunks of domains live there: db (16 chunks), web1 (12 chunks)""",
 see=["poolctl-pool-remove"]),
"poolctl-pool-drain": dict(
 summary="move every chunk off a pool while its VMs run",
 description="""Empties the pool with its VMs running, so that its memory can go offline (a failing
CXL expander can be returned without stopping a VM). A pre-check comes first: each
domain's chunks there must fit in the free memory of its other pools, or with
--allow-local in what is left of its local quota; otherwise nothing changes, and the
message names the domain and the figures (exit 4). The pool then turns draining: no new
chunk lands there. poolmem moves each chunk itself (reserve the destination, unmap,
freeze, copy with machine-check recovery, switch), one at a time; a vCPU touching a
moving chunk waits for that one copy. A progress bar shows the bytes moved.
.PP
Ctrl-C (or SIGTERM) stops after the chunk being moved; the pool stays draining, and
running the command again goes on. Chunks referenced for a moment (I/O in flight) are
retried until --timeout passes without progress. A long-term pinned chunk (VFIO, RDMA,
AF_XDP) cannot move: the drain stops naming the domain and the chunk's offset. Each of
these leaves the pool draining with part of it moved: exit 5 (partly done), where a drain
refused by the pre-check changed nothing (exit 4).
poolctl pool undrain ends draining; poolctl pool remove unregisters the empty pool and
takes it out of every domain's pools.""",
 options=[("--offline","offline the pool's memory blocks once it is empty"),
          ("--allow-local","chunks that fit no other pool may move to their domain's local tier, within its local quota"),
          ("--rate SIZE", None),
          ("--timeout T","give up after T (90, 90s, 5m; default 60 s) without progress on referenced chunks"),
          ("--check","only run the pre-check"),
          ("--json",JS+"name, drained, moved_bytes, remaining_bytes, seconds, and with --offline offlined_blocks; on exit 5 too, before the error")],
 examples="""# poolctl pool drain p0
poolctl: p0: cannot drain: domain va holds 48.0 MiB there but may use only 0 B elsewhere (--allow-local lets chunks move to local quota)
# poolctl vm set va --pools p0,p1
# poolctl pool drain p0 --offline
[########################################] 144.0 MiB/144.0 MiB 93 MiB/s
p0: drained 144.0 MiB in 1.55 s (93 MiB/s)
p0: offlined 15 blocks on node 1""",
 see=["poolctl-pool-undrain", "poolctl-pool-remove", "poolctl-vm-set"]),
"poolctl-pool-undrain": dict(
 summary="end a pool's draining",
 description="The pool takes new chunks again (from faults and from moves). Chunks already moved stay where they are.",
 options=[("--json",JS+"name, undrained, state")],
 examples="""# poolctl pool undrain p1
p1: takes chunks again""",
 see=["poolctl-pool-drain"]),
"poolctl-pool-set": dict(
 summary="change a pool's settings while it runs",
 description="""--overcommit sets the pool's admission limit while it runs: domains may commit its
capacity times RATIO (1 to 10, e.g. 1.5, or a percentage, 150%). Raising it always
works. Lowering it is refused (exit 4) when a domain that may use the pool would no
longer have been admitted: poolctl prints what the pool's domains commit and what the
new ratio would admit, and the kernel log names the domain and its pools' figures.
.PP
--zero-reserve sets how much of the pool's memory is kept zeroed ahead for new chunks.
.PP
--on-errors sets what memory errors in the pool do (sysfs error_policy). report, the
default, counts and logs them (poolctl pool events). drain with --error-threshold N or
N/PERIOD (N from 1 to 64; PERIOD like 30s, 10m, 24h or 7d) marks the pool degraded at
the Nth error (uncorrectable or soft offline) within PERIOD: it takes no new chunks and
poolmem drains it while its VMs run, as poolctl pool drain would; the kernel log says
whether it emptied. poolctl pool show says DEGRADED and the exporter's
poolmem_pool_degraded is 1 until poolctl pool undrain. Setting the policy starts the
count anew.""",
 options=[("--check","run every check the command runs, an overcommit decrease against this pool's commitment (the write itself also re-admits domains spread over several pools), and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--overcommit RATIO", "admission limit: capacity x RATIO, 1 to 10 (1.5), or 100% to 1000% (150%)"),
          ("--zero-reserve SIZE|PCT", "memory kept zeroed ahead: a size, or 0% to 50% of capacity (0: off; default 1%)"),
          ("--on-errors report|drain", "what memory errors do (default report)"),
          ("--error-threshold N[/PERIOD]", "with drain: the errors that degrade the pool"),
          ("--json",JS+"name, changed, and pool: the pool as poolctl pool show --json prints it, after the change")],
 examples="""# poolctl pool set p0 --overcommit 1.5
p0: overcommit 1.5 (admits 2.7 GiB; 0 B committed)
# poolctl pool set p0 --overcommit 1.2
poolctl: p0: cannot lower the overcommit to 1.2: its domains commit 2.4 GiB of pool memory, 2.2 GiB at that ratio (with the other pools they may use: see the kernel log)
# poolctl pool set p1 --on-errors drain --error-threshold 2/1h
p1: on memory errors: drain after 2 errors within 3600 s
# poolctl pool list
NAME  ID  NODE  CAPACITY  PINNABLE  ALLOCATED     FREE  CHUNKS    AF  FAILURES  STATE     ONLINE
p0     0     1   1.8 GiB       0 B   16.0 MiB  1.7 GiB       8  5616         0  online    -
p1     1     2   1.9 GiB       0 B        0 B  1.9 GiB       0  4192         0  degraded  -""",
 see=["poolctl-pool-events", "poolctl-pool-drain", "poolctl-pool-undrain"]),
"poolctl-pool-events": dict(
 summary="list the memory errors poolmem handled",
 description="""Lists the memory errors in poolmem's memory that the module handled, oldest first (it
keeps the last 256; a note on standard error says when older ones were dropped): when,
the kind (hard: an uncorrectable error, memory_failure(); soft: a soft offline), what
was done (isolated: a domain's page, unmapped, its data lost, an access gets a machine
check; moved: the chunk moved off first, nothing lost; unused: the page held no
domain's data; failed: see the kernel log), the host physical address, NUMA node, pool,
domain and offset in the domain. Needs the control device (root).""",
 options=[("--pool NAME","only errors in this pool"), ("--domain NAME","only the errors of the domain that has this name now, by its id (not those of an earlier domain of that name); with no such domain, every error recorded under the name"),
          ("--json","print JSON: seq, time, time_ns, kind, action, phys, node, pool, domain, offset (null where none)")],
 examples="""# poolctl pool events
TIME                  KIND  ACTION    HOST-PHYS    NODE  POOL  DOMAIN  OFFSET
2026-12-02T19:07:35Z  hard  isolated  0x188205000     1  p0    me      0x205000""",
 see=["poolctl-pool-soft-offline", "poolctl-vm-show", "poolctl-pool-set"]),
"poolctl-pool-poison-scan": dict(
 summary="read the poison lists of the CXL devices behind pools and take poisoned pages out of use",
 description="""A CXL memory device keeps a list of the addresses whose media it knows to be bad
(poison), found by its patrol scrub or written by a failed store, before anything reads
them. For every CXL memory device behind the pool NAME (default: every pool on CXL
memory) this asks the kernel to read that list (trigger_poison_list; the records come as
cxl:cxl_poison trace events, read from a trace instance of its own), names the pool, the
domain and the offset of each poisoned host address through poolmem's reverse map, and
takes each page out of use (hard_offline_page: memory_failure(), which poolmem handles:
the domain's page is unmapped and its offset gives a machine check from then on; see
poolmem's admin guide, Memory errors). So an error nobody has consumed yet does not stop
a VM when it is first read. --no-offline only lists.
.PP
It also reads each device's health (Get Health Info: status flags, media status,
temperature, life used, dirty shutdowns, corrected errors; a warning on standard error
when one needs attention) and counts the event records the devices reported since the
last scan (general media, DRAM and memory module events, which the kernel logs as trace
events; a trace instance of its own keeps them between scans, counted from the first
scan after boot).
.PP
The result goes to /run/poolctl/media-errors.json (mode 0640, group poolmem), which
poolmem-exporter exports (poolmem_cxl_poison_records and _bytes by memdev, pool and
domain; poolmem_cxl_health_*; poolmem_cxl_events_total).
poolmem-poison-scan.timer runs the scan every 10 minutes. Needs root, tracefs and Linux
6.3+ (the kernel reads poison lists since 6.3); exit 3 when no pool is on CXL memory.""",
 options=[("--no-offline","only list the poison; leave the pages in use"),
          ("--json","print JSON: memdev, region, dpa, length, hpa, pool, domain, offset, source, action")],
 examples="""# poolctl pool poison-scan p0
MEMDEV  DPA        LENGTH  HOST-PHYS    POOL  DOMAIN  OFFSET    SOURCE    ACTION
mem1    0x8005000      64  0x498005000  p0    cp      0x205000  Internal  isolated""",
 see=["poolctl-pool-events", "poolmem-exporter"]),
"poolctl-pool-soft-offline": dict(
 summary="take a page out of use, moving its data first",
 description="""Soft offline, as for a page with too many corrected errors: the chunk holding the
page at host physical address ADDRESS moves to other memory (another pool of its
domain first, its own pool last) with its data, and the page is poisoned and held out of
use for good. The kernel's own soft_offline_page() refuses poolmem's pages; poolmem
catches it and does the same, but this command says how it went. Exit 3 when no
domain's chunk holds the address, 4 when the chunk can't move (long-term pinned, no
memory elsewhere).""",
 options=[("--check","look the page up in the reverse map and say which domain's chunk would move; nothing moves (exit 3 when no domain's chunk holds it)"),
          ("--json",JS+"phys, offlined, domain and offset (null when the page was poisoned already)")],
 examples="""# poolctl pool soft-offline 0x0001fb000000
page 0x1fb000000: domain sp offset 0x0 moved with its data; the page is out of use
# poolctl pool soft-offline 0x1000
poolctl: page 0x1000: not in a domain's chunk""",
 see=["poolctl-pool-events"]),
"poolctl-pool-remove": dict(
 summary="unregister a pool and hand its device back to devdax",
 description="Unregisters the pool (refused while chunks live there, or while a live domain may allocate from it and the pool was not drained; a drained pool leaves the pools of the domains allowed on it), offlines its memory, and reconfigures its dax device back to devdax mode.",
 options=[("--json",JS+"name, removed, node, offlined_blocks, devices (the dax devices handed back to devdax)")],
 examples="""# poolctl pool remove pa
pa: offlined 15 blocks on node 1
pa: dax0.0 handed back to devdax""",
 see=["poolctl-pool-online"]),
"poolctl-pool-add": dict(
 summary="register a node whose memory is online already as a pool",
 description="""For memory that firmware or the kernel has onlined already as a NUMA node (a
CPU-less node of CXL or HBM memory): registers node N with poolmem as pool NAME, changing
nothing else. pool remove then only unregisters it: its memory stays online, as it was
found. A node with CPUs is refused (exit 2; its DRAM is some VMs' local tier) unless
--force; a node that is the home node of a live domain is refused by the kernel (exit 4).""",
 options=[("--check","run every check the command runs, the node's memory and CPUs, the name and node not a pool yet, and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--node N","the NUMA node"),
          ("--overcommit RATIO","admission limit: capacity x RATIO, 1 to 10 (1.5, or 150%; default 1)"),
          ("--json",JS+"name, registered, node, online_bytes")],
 examples="""# poolctl pool add fw --node 1
fw: node 1 (1.9 GiB online) registered as a pool
# poolctl pool remove fw
fw: unregistered; node 1's memory stays online""",
 see=["poolctl-pool-online", "poolctl-pool-remove"]),
"poolctl-apply": dict(
 summary="make the host's pools, profiles and named domains match a file",
 description="""Reads FILE (default /etc/poolmem/poolmem.toml; TOML), compares it with the host
and prints the plan: one line per step saying what changes, then the poolctl command (or
chown/chmod) that does it, as an operator would type it. Then every step is checked
before any runs: each poolctl step runs as itself with --check, which does every check
the command does (names, sizes, policies, pools, nodes, and the kernel's admission with
its figures) and changes nothing, so a step that would fail prints the command's own
message and an "x step" line, and apply exits with the command's exit code (2, 3 or 4)
having applied nothing. Steps on domains and profiles after pools the plan registers take
those pools as existing, and their admission is checked once the pools are there, just
before they run. With --dry-run apply stops after the checks. Otherwise the steps run in
order (pools first, then profiles, then domains); one that still fails (two new domains
that each fit but not together, a host that changed meanwhile) stops the rest, and the
message says which steps were applied and which not: run apply again once fixed, and it
plans only what is left (exit 5 when earlier steps were applied: partly done). A second apply plans nothing. A domain whose quotas, pools, policies or tiering differ is changed live (vm
set), and so is a pool's overcommit (pool set); what can't change in place (a domain's
size or chunk, a profile's quotas) is a conflict, printed with ! and left (exit 4). Pools, profiles and domains
the file does not name are left alone (lines with =). An unknown key or a malformed file
is an error naming FILE:LINE (exit 2), found before anything changes.
.PP
poolmem-apply.service runs poolctl apply at boot, after the module and the file system
and before libvirtd, so VMs that autostart find their pools and domains.
.PP
Tables: [pools.NAME] with device = "daxX.Y", cxl = ["mem0", ...] or node = N, and zone
(movable, normal), overcommit (a ratio, 1.5, or "150%"; an integer of 100 or more is
read as the percent of files written before the ratio); [profiles.NAME] with local and pool ("25%" or a
size), chunk, tier_policy, pool_select, pools, home_node, owner, mode, pinnable;
[domains.NAME] with size, local, pool, chunk, tier_policy, pool_select, pools,
home_node, owner, mode, pinnable, tiering, scan_rate, hot_threshold.""",
 options=[("--config FILE", None),
          ("--dry-run","print the plan, check every step, change nothing"),
          ("--json","print the plan as one JSON object instead of the lines: config, applied, steps (what, command as an argument list, waits_for_pools, check: passed, failed, pending or none, check_exit_code, check_error: the step's own error line, applied, exit_code), conflicts, unmanaged. The steps' commands run with their output discarded; an error is still one line on standard error")],
 examples="""# poolctl apply --dry-run
/etc/poolmem/poolmem.toml: 2 steps
+ pool pa: online dax0.0
    poolctl pool online dax0.0 --name pa --zone movable --overcommit 1
+ domain web1: 64M
    poolctl vm create web1 --size 64M --local 16M --pool 48M --tier-policy interleave --pools pa""",
 see=["poolctl-export"]),
"poolctl-export": dict(
 summary="write the host's pools, profiles and named domains as a file for apply",
 description="""Writes the current pools (their dax device, or node for pools added by node;
zone; overcommit), profiles and named domains (not those QEMU or libvirt made in profile
directories) as TOML that poolctl apply takes: apply of an exported file on a host torn
down to its devdax devices brings back the same state, and an export after it is the
same file.""",
 options=[("-o, --output FILE","write FILE (atomically) instead of standard output")],
 examples="""# poolctl export -o /etc/poolmem/poolmem.toml""",
 see=["poolctl-apply"]),
"poolctl-vm-create": dict(
 summary="create a VM domain with per-tier quotas",
 description="""Creates the domain file /run/poolmem/NAME (the poolmem file system, mounted when it is
not) of SIZE bytes and prints its path and a QEMU argument that backs guest RAM with it
as it is: the object id mem-NAME (QEMU wants ids that start with a letter), share=on
(guest writes reach the domain), align= the chunk size (so QEMU places the mapping where
2 MiB page-table entries fit; without it KVM maps the guest with 4 KiB pages) and the
matching -m. Nothing is allocated yet: each chunk is allocated, zeroed,
on first touch, from the tier the tier policy picks and the pool the selection policy
picks, within hard quotas. --local + --pool must cover --size.
.PP
Every rule is checked before the kernel is asked, each with its own message and exit 2:
the name (1 to 31 of A-Z a-z 0-9 _ . -, not starting with . or -), --chunk (a power of
two from 2M to 1G), --size (above 0, at most 64T, a multiple of the chunk: the message
offers the nearest sizes), each quota (at most --size, a multiple of the chunk),
--local + --pool covering --size, --home-node (a node with memory that is no pool's
node); a pool in --pools that does not exist exits 3. Admission control refuses
(exit 4) quotas that the home node or the pools (capacity x overcommit) can't hold,
with the figures: the tier and pools, what is asked, what is left of the limit, the
limit and what other domains hold.
.PP
Tier policies: local-first fills the local quota first; interleave alternates in the
ratio of the quotas; pool-first fills the pool quota first. Pool selection: smart-idle
takes the ceil(log2 n) pools with the lowest access factor, then the least allocated;
round-robin takes the pools in turn; random; nearest by NUMA distance from the home node.
.PP
A VM with VFIO passthrough devices (or RDMA) pins its whole RAM for the life of the VM:
create its domain with --pinnable, so that every chunk comes from memory outside
ZONE_MOVABLE (the home node's DRAM, pools onlined --zone normal). Without it, chunks on
pool memory onlined movable cannot be pinned, and QEMU's VFIO setup does not return
until it is killed.
.PP
With --znuma (Pond's zNUMA), the domain is two windows, also files:
/run/poolmem/NAME.local (the local quota, always local memory) and
/run/poolmem/NAME.pool (the pool quota, always pool memory), each from offset 0 and as
large as its window; --local + --pool must equal --size. poolctl prints two memory
backends and the -numa arguments that give the guest the local window as node 0 with
its --vcpus CPUs and the pool window as node 1 with none, the distance between them
the host's from the home node to the nearest allowed pool, and, where the host has
HMAT for both, the same latency and bandwidth (-machine hmat=on, -numa hmat-lb). The
windows stay fixed: no quota or tier policy change and no tiering later; a window can't
be unlinked alone, and destroying the domain removes them. For a QEMU that takes
memory-backend-file's offset= (8.1 and later) the two backends are ranges of the domain
file itself (offset=0 and offset= the local quota, the offsets the kernel places by), so
that a confinement policy names one file; for an older QEMU they are the window files.
.PP
The plain argument works with any QEMU from 2.x on. What --znuma and --prealloc print
depends on the QEMU that will run it: for those poolctl asks it (--qemu, default
qemu-system-x86_64 on PATH) for its help on memory-backend-file, -object and
virtio-mem-pci, never guessing from its version, and says on standard error which QEMU
it printed for ("arguments for QEMU 10.0.2 (qemu-system-x86_64)"). With no QEMU found it
prints what QEMU 7.2 (Debian 12) takes and says so. Standard output stays the path and
the argument. reserve=off is never printed: a share=on mapping of a file is not charged
against the kernel's overcommit limit, so MAP_NORESERVE changes nothing for a domain; its
quotas are its reservation.
.PP
With --prealloc THREADS, QEMU touches the whole domain with THREADS threads before the
guest starts (prealloc=on): a pool short of memory fails the start instead of a running
guest taking SIGBUS, at the price of holding the whole quota from the first second and a
slower start. For a QEMU with thread contexts (7.2 and later) the threads run in one
(-object thread-context,node-affinity=) on the CPUs of the domain's home node: the node
the local chunks come from, and on a real host the socket the pool memory hangs off
(pool nodes have no CPUs of their own). Not with --libvirt: libvirt preallocates with
<memoryBacking><allocation mode='immediate' threads='N'/>.""",
 options=[("--json","print the result as one JSON object: name, created, path, size_bytes, chunk_bytes and qemu_arguments (with --check: name, created false, size_bytes, admission_checked); not with --libvirt"),
          ("--check","run every check the command runs, the kernel's admission included (POOLMEM_DOMAIN_CHECK: not counted as a refusal), and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--size SIZE","size of the guest RAM"),
          ("--local SIZE","quota of the local tier: DRAM of the home node (default 0)"),
          ("--pool SIZE","quota of the pool tier (default 0)"),
          ("--tier-policy P", None),
          ("--pool-select P", None),
          ("--pools P1,P2","pools the domain may use (default: all registered now)"),
          ("--home-node N","node whose DRAM is the local tier (default: first node with CPUs)"),
          ("--scan-rate SIZE","with --tiering: bytes sampled, and moved at most, per second (default 64M, at most 1T)"),
          ("--hot-threshold T","with --tiering: a sampled chunk touched again within T is hot (500ms, 2s; default 500ms)"),
          ("--chunk SIZE","chunk size, power of two from 2M to 1G (default 2M)"),
          ("--owner USER[:GROUP]","owner of the domain file, e.g. libvirt-qemu (default root); chown works later too"),
          ("--mode MODE","octal permission bits of the domain file (default 0600)"),
          ("--pinnable","chunks only outside ZONE_MOVABLE, so VFIO and RDMA can pin the guest RAM; admission counts only such memory"),
          ("--tiering on|sample|off","hot/cold tiering by refault sampling, with --scan-rate SIZE and --hot-threshold T (see poolctl-vm-set(8))"),
          ("--znuma","two windows, NAME.local and NAME.pool, for the guest as NUMA node 0 and a CPU-less node 1; prints QEMU's -numa arguments (not with --tiering; for libvirt, use a znuma profile: poolctl-profile-create(8))"),
          ("--vcpus N","with --znuma: the guest's CPUs, all on node 0 (default 1; prints -smp N)"),
          ("--prealloc THREADS","QEMU touches the whole domain with THREADS threads (1 to 1024) before the guest starts, in a thread context on the home node's CPUs where QEMU has one"),
          ("--qemu BINARY","the QEMU the arguments are for, asked which properties it takes (default qemu-system-x86_64; none found: what QEMU 7.2 takes)"),
          ("--libvirt","print libvirt XML instead: an NVDIMM <memory> device with the file as <source><path> and the chunk size as <alignsize> (libvirt 9.0 has no element that names a file as boot RAM; for boot RAM use a profile, poolctl-profile-create(8))")],
 examples="""# poolctl vm create web1 --size 64M --local 16M --pool 48M --tier-policy interleave --pool-select round-robin
/run/poolmem/web1
-object memory-backend-file,id=mem-web1,mem-path=/run/poolmem/web1,size=67108864,share=on,align=2097152 -machine memory-backend=mem-web1 -m 64M
# poolctl vm create vmp --size 64M --local 16M --pool 48M --prealloc 2
poolctl: vmp: arguments for QEMU 10.0.2 (qemu-system-x86_64)
/run/poolmem/vmp
-object thread-context,id=mem-vmp-tc,node-affinity=0 -object memory-backend-file,id=mem-vmp,mem-path=/run/poolmem/vmp,size=67108864,share=on,align=2097152,prealloc=on,prealloc-threads=2,prealloc-context=mem-vmp-tc -machine memory-backend=mem-vmp -m 64M
# poolctl vm create huge --size 64G --pool 64G
poolctl: huge: cannot create domain: quotas exceed what the pools and the home node can hold (admission control)
# poolctl vm create zg --size 512M --local 256M --pool 256M --znuma --pools p0
poolctl: zg: arguments for QEMU 10.0.2 (qemu-system-x86_64)
/run/poolmem/zg
-object memory-backend-file,id=mem-zg-local,mem-path=/run/poolmem/zg,offset=0,size=268435456,share=on,align=2097152 -object memory-backend-file,id=mem-zg-pool,mem-path=/run/poolmem/zg,offset=268435456,size=268435456,share=on,align=2097152 -smp 1 -m 512M -numa node,nodeid=0,cpus=0,memdev=mem-zg-local,initiator=0 -numa node,nodeid=1,memdev=mem-zg-pool,initiator=0 -numa dist,src=0,dst=1,val=31 -machine hmat=on -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=10 -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10240M -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=200 -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=2048M""",
 see=["poolctl-vm-show","poolctl-vm-destroy"]),
"poolctl-vm-list": dict(
 summary="list VM domains",
 description="Per domain: size, per-tier usage against quota, chunks, policies, faults and SIGBUS denials (faults with no memory left within quota). Read from /sys/class/poolmem.",
 options=[("--json","print a JSON array with every counter and the fault latency histogram")],
 examples="""# poolctl vm list
NAME      SIZE              LOCAL               POOL  CHUNKS  TIER-POLICY  POOL-SELECT  FAULTS  SIGBUS
db    32.0 MiB            0 B/0 B  32.0 MiB/32.0 MiB      16  pool-first   smart-idle       16       0
web1  64.0 MiB  16.0 MiB/16.0 MiB  48.0 MiB/48.0 MiB      32  interleave   round-robin      32       0""",
 see=["poolctl-vm-show"]),
"poolctl-vm-show": dict(
 summary="show one VM domain",
 description="Usage against quota per tier, policies, the processes that map the domain (QEMU: its pid, from /proc/PID/maps, the file named or unlinked), faults with latency percentiles (upper bounds of log2 buckets), SIGBUS denials, discards, and chunks per pool.",
 options=[("--json","print JSON (the domain as vm list --json prints it, with memory_error_offsets, the latency percentiles and mapped_by: [{pid, comm, mapped_bytes}])")],
 examples="""# poolctl vm show web1
domain web1: /run/poolmem/web1, 64.0 MiB in 2.0 MiB chunks
  local   16.0 MiB/16.0 MiB (home node 0)
  pool    48.0 MiB/48.0 MiB
  policy  interleave, round-robin
  mapped  by qemu-system-x86 (pid 4242), 64.0 MiB
  faults  32 (p50 < 16777216 ns, p99 < 33554432 ns), SIGBUS denials 0, discards 0
  pool pa: 12 chunks (24.0 MiB)
  pool pb: 12 chunks (24.0 MiB)""",
 see=["poolctl-vm-map"]),
"poolctl-vm-map": dict(
 summary="show where a VM's memory lives",
 description="The domain's chunk map: ranges of guest offsets, contiguous in host physical memory and on one pool (or the local tier), with the host physical address and NUMA node.",
 options=[],
 examples="""# poolctl vm map web1
OFFSET          LENGTH   HOST-PHYS       POOL   NODE
0x000000000000  2.0 MiB  0x000003e00000  local     0
0x000000200000  2.0 MiB  0x000188000000  pa        1
0x000000400000  2.0 MiB  0x000108000000  pb        2""",
 see=["poolctl-vm-show"]),
"poolctl-vm-set": dict(
 summary="change a running VM's quotas, pools, policies and tiering",
 description="""Changes a live domain while its VM runs. New quotas are checked as at creation (they
must cover the size; admission control with the domain's old quotas left out, exit 4 when
they don't fit). A tier shrunk below its usage gives chunks to the other tier, and chunks
on pools left out of --pools move to the pools left; the shrunk tier's quota meanwhile
stays at its usage and comes down as chunks leave, so usage never exceeds a quota. When
the chunks can't fit where they must go, nothing changes and the message gives the
figures (exit 4).
.PP
The chunks move in steps (POOLMEM_SET_STEP, module ABI 13): a progress bar on a terminal,
at most --rate a second, and Ctrl-C (or SIGTERM) stops after the chunk being moved. A stop
before the end (Ctrl-C; chunks still referenced after --timeout; a long-term pinned chunk)
leaves the settings applied and the shrunk tier's quota at its usage: exit 5 (partly
done), and poolctl vm set NAME --resume goes on with the moves. With a module older than
ABI 13 everything moves in one call, without progress.
.PP
--tiering on samples the VM's accesses by refault (a random sample of chunks is unmapped
each period and timed until touched again) and moves hot chunks from the pools into free
local quota and cold ones the other way, at most --scan-rate bytes a second, always within
the quotas. --tiering sample only samples: hot and cold counts, and the pools' access
factor then sees accesses to memory mapped long ago. Counters: poolctl vm show.""",
 options=[("--check","run every check the command runs, the kernel's admission and the room for the chunks that would move included (POOLMEM_SET_CHECK), and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--local SIZE", None),
          ("--pool SIZE", None),
          ("--pools P1,P2","allowed pools; chunks elsewhere move to them"),
          ("--tier-policy P","local-first, interleave, pool-first (for chunks placed from now on)"),
          ("--pool-select P", None),
          ("--tiering on|sample|off","hot/cold tiering by refault sampling"),
          ("--scan-rate SIZE","bytes sampled, and moved at most, per second (default 64M, at most 1T)"),
          ("--hot-threshold T","a sampled chunk touched again within T is hot (500ms, 2s; default 500ms)"),
          ("--rate SIZE", None),
          ("--timeout T","give up after T (90, 90s, 5m; default 60 s) without progress on referenced chunks (exit 5)"),
          ("--resume","go on with the moves an earlier vm set left (after Ctrl-C, --timeout or a pinned chunk); no other change with it"),
          ("--json",JS+"name, changed, complete, moved_bytes, remaining_bytes, seconds, and domain: the domain as poolctl vm show --json prints it; on exit 5 too, before the error (with --check: name, changed false, admission_checked)")],
 examples="""# poolctl vm set va --local 32M --pool 32M
va: local 32.0 MiB/32.0 MiB, pool 32.0 MiB/32.0 MiB, local-first, round-robin, tiering off; moved 16.0 MiB
# poolctl vm set va --tiering on --scan-rate 64M
va: local 32.0 MiB/32.0 MiB, pool 32.0 MiB/32.0 MiB, local-first, round-robin, tiering on; moved 0 B""",
 see=["poolctl-vm-create", "poolctl-vm-show", "poolctl-pool-drain"]),
"poolctl-vm-destroy": dict(
 summary="destroy a VM domain",
 description="Unlinks /run/poolmem/NAME at once (no new opens; rm does the same). A running QEMU keeps its mapping and its data; the memory returns to the pools when the last mapping and open file are gone.",
 options=[("--json",JS+"name, destroyed, held_bytes (what returns with the last mapping)")],
 examples="""# poolctl vm destroy web1
web1: destroyed (memory returns when the last open file and mapping go)""",
 see=["poolctl-vm-create"]),
"poolctl-profile-create": dict(
 summary="create a profile: a directory whose files become VM domains",
 description="""Creates the directory /run/poolmem/NAME. A file created in it, or in any
subdirectory, becomes a domain when ftruncate() gives it a size: its quotas are the
profile's percentages of that size (rounded up to whole chunks) or its byte caps, and
admission control runs then (ftruncate fails with ENOSPC, and the kernel log names the
profile, the file and the figures). This is how QEMU and libvirt create domains
themselves: QEMU's mem-path=/run/poolmem/NAME makes a temporary file there and unlinks it
at once, so the domain lives exactly as long as QEMU; libvirt's memory_backing_dir makes
per-VM directories and files there and removes them when the VM stops. Such domains are
listed as NAME.INODE (poolctl vm list shows their file).
.PP
With --znuma (Pond's zNUMA through libvirt), a VM's two files are the windows of one
domain, given to the guest as NUMA node 0 (local memory, with the CPUs) and a CPU-less
node 1 (pool memory). libvirt 9.0 backs each NUMA cell with its own file,
ram-node0 then ram-node1 in the VM's directory, and QEMU creates and sizes them in that
order: the first file sized is the local window and makes the domain, with a pool window
of the size the percentages give (--local 25% --pool 75%: three times the local window,
in whole chunks); the next file the same process creates in that directory is the pool
window, already sized, and a second link to the domain. QEMU stops with "backing store
size ... does not match" (QEMU 10: "... is too small for 'size' option") when the guest's
node 1 is larger than that window. The
quotas must be percentages that add up to 100. Temporary files (QEMU's
mem-path=DIRECTORY) can't be windows: the kernel refuses them (EINVAL, logged).
With --libvirt and --size, poolctl prints the VM's <memory>, <vcpu> and <cpu><numa>
cells (distances and HMAT as poolctl-vm-create(8) gives QEMU); poolctl profile show
NAME --libvirt --size SIZE prints them for another VM size.
.PP
Whoever may write the directory (--owner, --mode) may create domains in it.""",
 options=[("--check","run every check the command runs, the name free among profiles and domains, and change nothing: one line and exit 0 if it would succeed, else its error and exit code (poolctl-apply(8) checks each step so)"),
          ("--json",JS+"name, created, path (the directory), local, pool, znuma; not with --libvirt"),
          ("--local PCT%|SIZE","local DRAM quota: a percentage of each VM's size, or a byte cap (default 0)"),
          ("--pool PCT%|SIZE","pool quota: a percentage or a byte cap (default 0); percentages must add up to 100% or more"),
          ("--tier-policy P", None),
          ("--pool-select P", None),
          ("--pools P1,P2","pools its domains may use (default: all)"),
          ("--home-node N","node whose DRAM is the local tier (default: first node with CPUs)"),
          ("--chunk SIZE","chunk size, power of two from 2M to 1G (default 2M)"),
          ("--owner USER[:GROUP]","owner of the directory, e.g. libvirt-qemu"),
          ("--mode MODE","octal permission bits of the directory (default 0700)"),
          ("--pinnable","its domains take chunks only outside ZONE_MOVABLE (VFIO, RDMA)"),
          ("--znuma","a VM's two files are the local and pool windows of one domain, the guest's nodes 0 and 1 (percentages adding up to 100)"),
          ("--libvirt","print the qemu.conf memory_backing_dir line and the <memoryBacking> XML; with --znuma, also the VM's <cpu><numa> cells"),
          ("--size SIZE","with --znuma --libvirt: the VM's memory, split into its cells (a size the percentages split into whole chunks)"),
          ("--vcpus N","with --znuma --libvirt: the VM's CPUs, all in cell 0 (default 1)")],
 examples="""# poolctl profile create gold --local 25% --pool 75% --owner libvirt-qemu --libvirt
# /etc/libvirt/qemu.conf (restart libvirtd); libvirt makes <dir>/libvirt/qemu/<id>-<vm>/
memory_backing_dir = "/run/poolmem/gold"
<!-- in <domain>: guest RAM as a file in that directory, one domain per VM -->
<memoryBacking>
  <source type='file'/>
  <access mode='shared'/>
</memoryBacking>
# qemu-system-x86_64 -object memory-backend-file,id=mem0,mem-path=/run/poolmem/gold,size=64G,share=on,align=2M ...
qemu-system-x86_64: unable to map backing store for guest RAM: No space left on device
# dmesg | tail -n 1
poolmem: profile gold: file /gold/qemu_back_mem.mem0.eGaBPu: domain gold.1501 refused: local quota 16384 MiB + 0 MiB committed on node 0 exceeds 2047 MiB (node memory x 100%)
# poolctl profile create zgold --znuma --local 25% --pool 75% --pools p0 --libvirt --size 1G --vcpus 2
<!-- in <domain>: node 0 the local window with the vCPUs, node 1 the pool window -->
<memory unit='KiB'>1048576</memory>
<vcpu placement='static'>2</vcpu>
<cpu>
  <numa>
    <cell id='0' cpus='0-1' memory='262144' unit='KiB' memAccess='shared'>
      <distances>
        <sibling id='0' value='10'/>
        <sibling id='1' value='31'/>
      </distances>
    </cell>
    <cell id='1' memory='786432' unit='KiB' memAccess='shared'>
      <distances>
        <sibling id='0' value='31'/>
        <sibling id='1' value='10'/>
      </distances>
    </cell>
    <interconnects>
      <latency initiator='0' target='0' type='access' value='10'/>
      <latency initiator='0' target='1' type='access' value='100'/>
      <bandwidth initiator='0' target='0' type='access' value='10240' unit='MiB'/>
      <bandwidth initiator='0' target='1' type='access' value='5120' unit='MiB'/>
    </interconnects>
  </numa>
</cpu>
# /etc/libvirt/qemu.conf (restart libvirtd); libvirt makes <dir>/libvirt/qemu/<id>-<vm>/
memory_backing_dir = "/run/poolmem/zgold"
<!-- in <domain>: guest RAM as a file in that directory, one domain per VM -->
<memoryBacking>
  <source type='file'/>
  <access mode='shared'/>
</memoryBacking>""",
 see=["poolctl-profile-list","poolctl-profile-remove","poolctl-vm-list"]),
"poolctl-profile-list": dict(
 summary="list profiles",
 description="Per profile: its quotas, chunk size, policies, live domains and directory.",
 options=[("--json","print a JSON array")],
 examples="""# poolctl profile list
NAME    LOCAL  POOL    CHUNK  TIER-POLICY  POOL-SELECT  DOMAINS  DIRECTORY
silver    50%   50%  2.0 MiB  local-first  smart-idle         0  /run/poolmem/silver""",
 see=["poolctl-profile-show"]),
"poolctl-profile-show": dict(
 summary="show one profile",
 description="Quotas, chunk size, policies, owner and the number of live domains made from it. With --libvirt, what poolctl-profile-create(8) prints for libvirt instead; for a znuma profile, the cells of a VM of --size with --vcpus CPUs.",
 options=[("--libvirt","print the qemu.conf line and XML for libvirt"),
          ("--vcpus N", None)],
 examples="""# poolctl profile show silver
profile silver: /run/poolmem/silver, 1 live domains
  quotas  local 50%, pool 50% of each VM's size, 2.0 MiB chunks
  policy  local-first, smart-idle
  owner   1000:1000 mode 0750""",
 see=["poolctl-profile-create"]),
"poolctl-profile-remove": dict(
 summary="remove a profile",
 description="Removes an empty profile, as rmdir of its directory does; refused (exit 4) while files or directories are in it. Domains whose files were unlinked but are still open (a running QEMU) keep the profile's settings until they end.",
 options=[("--check","the profile exists and no live domain was made from it; nothing removed"),
          ("--json",JS+"name, removed")],
 examples="""# poolctl profile remove gold
poolctl: gold: cannot remove profile: its directory is not empty""",
 see=["poolctl-profile-create"]),
"poolctl-libvirt-hook": dict(
 summary="libvirt's qemu hook: a profile per VM, and domains named after their VMs",
 synopsis="poolctl libvirt hook VM OPERATION SUB-OPERATION [EXTRA]   (the domain XML on standard input)",
 description="""qemu.conf has one memory_backing_dir for the whole host, so without this hook every
libvirt VM gets that directory's profile, and its domain a name that changes with every start
(PROFILE.INODE). libvirt runs every executable in /etc/libvirt/hooks/qemu.d/ with the VM's
name, the operation, the sub-operation and an extra argument, the domain's XML on standard
input; make install puts poolmem's there (a script that runs this command). libvirtd finds hooks
when it starts: restart it once after installing.
.PP
At prepare begin, when libvirt has chosen the VM's id but not yet made its directory
MEMORY_BACKING_DIR/libvirt/qemu/ID-NAME (the first 20 characters of the name), the hook binds that
directory in the kernel (POOLMEM_VM_BIND): it gets the profile the VM's XML names in
.B <metadata><poolmem:profile name='gold'/></metadata>
(namespace http://poolmem.org/xmlns/libvirt/1.0; virsh metadata VM --uri that --key poolmem
--set "<profile name='gold'/>" sets it), or memory_backing_dir's own profile when it names none
(the default). The first domain QEMU creates there is named after the VM, so
poolmem_domain_*{domain="web1"} joins with libvirt's exporter and keeps its series across
restarts; a second file (a second NUMA cell) is VM.FILE (web1.ram-node1). A VM name that is not
a valid domain name has its other characters replaced by '_' and is cut to 31.
.PP
The hook fails the start (libvirt's error carries its message) when the profile does not exist,
when the module is not loaded, or when the VM names a profile but its RAM is not a file
(<memoryBacking><source type='file'/>). Admission control still runs when QEMU sizes the file:
a VM too big for its profile fails with ENOSPC and the kernel logs the figures, naming the profile
and the VM's file. At release end it takes back a binding still waiting (a start that failed
before libvirt made the directory); an unused binding also expires after 10 minutes, and at most
256 wait at once. VMs whose RAM is not in memory_backing_dir are left alone. The waiting bindings
are in /sys/kernel/poolmem/vm_bindings (root only).
.PP
The hook file is a conffile: removing poolmem-tools without purging it leaves the file. With
poolctl gone it exits 0 for every call, so libvirt still starts every VM (their RAM files get
their directory's profile while the module is loaded), and the first call after a boot writes
why to the system log and /run/poolmem-libvirt-hook.missing.""",
 options=[],
 examples="""# poolctl profile create gold --local 25% --pool 75% --owner libvirt-qemu --libvirt | tail -n 3
<metadata>
  <poolmem:profile xmlns:poolmem='http://poolmem.org/xmlns/libvirt/1.0' name='gold'/>
</metadata>
# virsh start web1; cat /sys/class/poolmem/web1/profile /sys/class/poolmem/web1/file
gold
/vms/libvirt/qemu/1-web1/pc.ram
# virsh start bad
error: Failed to start domain 'bad'
error: Hook script execution failed: internal error: Child process (LC_ALL=C PATH=/rig/bin:/usr/bin:/usr/sbin:/bin:/sbin HOME=/ /etc/libvirt/hooks/qemu.d/poolmem bad prepare begin -) unexpected exit status 3: poolctl: VM bad: profile nosuch: no such profile""",
 see=["poolctl-profile-create","poolctl-profile-show","poolctl-vm-list"]),
"poolctl-simulate": dict(
 summary="run the placement policies in a model, with the module's own policy code; plan a host's capacity",
 synopsis="poolctl simulate SCENARIO [--compare SELECT,...] [--tier-policies TIER,...] [--tier-policy P] [--pool-select P] [--seed N] [--backpressure] [--rebalance [--rebalance-rate SIZE] [--free-moves]] [--out DIR] [--json] | poolctl simulate --policy-source | poolctl simulate plan --host-dram SIZE --vm-size SIZE [--pool SIZE] [--local-pct N] [--touched MIN:MAX] [--overcommit R,...] [--trials N] [--json] | poolctl simulate record FILE [--seconds N] [--interval S] | poolctl simulate autopilot [--workload W] [--vm-size SIZE] [--dram SIZE] [--vms N | --max-vms N] [--slo PCT%] [--rate SIZE] [--tier-rate SIZE] [--interval S] [--steps N] [--reclaim lazy|eager] [--windows N] [--seed N] [--json]",
 description="""A discrete-event model of hosts, pools and VMs (Documentation/simulation.md). Each
pool and each host's DRAM is a FIFO server (M/M/1, or M/D/1 with service =
"deterministic"); VMs touch a growing part of their memory, and the first access to a
chunk places it with the kernel module's own tier order, pool order and access factor
(kmod/policy/pm_policy.c, built into the simulator from the same file; --policy-source
prints its SHA-256). VMs arrive, are admitted by the module's rules, burst, and leave.
The scenario is a TOML file; a trace of (time_s, domain, offset, op) rows can replace
the generator. Prints, per tier policy and pool selection: mean, p99 and p99.9 access
latency, the share of accesses at 1 us or more, the imbalance (max - min accesses per
pool per Af window), SIGBUS and ENOSPC counts, peak VMs and the simulator's speed.
--out DIR writes results.json, summary.csv and per run the time series and latency
CDF as CSV; scripts/sim-plot.py DIR draws the figures (SVG, PNG). make simulate runs
seed 003's experiment.
.PP
plan: how many VMs of --vm-size fit a host under the module's admission rules at each
pool overcommit ratio, the density against a host of DRAM alone, and the risk (Monte
Carlo) that the VMs' touched pool memory exceeds the pool, when each VM touches a
uniform fraction --touched of its memory and its local quota first.
.PP
record: write this host's domains as a trace for the scenario key trace: each domain's
creation (its size), every chunk that becomes present (first touch) or goes away
(discard), and each domain's end, from the chunk maps read every --interval seconds
for --seconds. Accesses themselves are not recorded (the module exports no per-chunk
access counts), so a replay shows placement and allocation balance.
.PP
autopilot: the DRAM autopilot's decision (kmod/policy/pm_autopilot.c, the function
poolctl autopilot run calls; its SHA-256 is printed) replayed on one host whose VMs'
active sets change, against DRAM alone and the best static split chosen in hindsight
(each VM's smallest fixed quota that meets the SLO over the run). VMs are added one at a
time, as seed 000 draws its curve; each row gives per policy the worst VM's pool share
over the run, the share of VM-steps above the SLO, the local quota held at most, and for
the autopilot the pool share of all accesses and the bytes moved. The last lines give the
VMs that fit --dram with every VM within the SLO, and the DRAM each policy needs for the
SLO. Documentation/simulation.md describes the model and its workloads.""",
 options=[("--rr-start zero|random|sequence|salted","where each domain's round-robin cursor starts (pm_rr_cursor_start()): zero (every domain at pool 0, the module before ABI 10), random, sequence (the host's count of domains), salted (that count plus a random salt per host: the module's and the default; rr_start in the scenario)"),
          ("--compare SELECT,...","pool selections to run side by side (round-robin, random, nearest, smart-idle)"),
          ("--tier-policies TIER,...","tier policies to run side by side (local-first, interleave, pool-first)"),
          ("--tier-policy P, --pool-select P","override the scenario's policy"),
          ("--seed N","override the scenario's seed (the same seed gives the same result)"),
          ("--backpressure","bounded queues (backpressure = true): a host has at most [credits] host pool accesses in flight (default 16), a pool's port at most [credits] pool (default 32); a full one holds the access back, and the wait counts in its latency: seed 003's NIC and switch ports"),
          ("--rebalance","move hot chunks off contended pools with the module's decision (kmod/policy/pm_rebalance.c, its SHA-256 printed); [rebalance] in the scenario sets period_s, margin_pct, periods, rate and copy. A move copies the chunk at the rate, charged to both pools a line at a time; the MOVED column gives MiB/s moved"),
          ("--rebalance-rate SIZE","bytes of chunks moved per second, at most (default 1G)"),
          ("--free-moves","with --rebalance: moves cost nothing and take no time, an upper bound on what rebalancing can gain"),
          ("--out DIR","write results.json, summary.csv, series-*.csv and cdf-*.csv"),
          ("--json","print JSON"),
          ("--policy-source","print the SHA-256 of the policy source built in"),
          ("plan --host-dram SIZE --pool SIZE --vm-size SIZE","the host's DRAM and pool memory, each VM's size"),
          ("plan --local-pct N","each VM's local quota in % (default 25)"),
          ("plan --touched MIN:MAX","each VM's touched fraction, uniform (default 0.3:1.0)"),
          ("plan --overcommit R,...","pool overcommit ratios (default 1,1.25,1.5,2)"),
          ("plan --trials N","Monte Carlo trials per ratio (default 10000)"),
          ("record --seconds N --interval S","how long to record (default 10) and how often to read the chunk maps (default 0.5)"),
          ("autopilot --workload W","stream50 or stream80 (seed 000's STREAM VMs with 50% or 80% of memory active, in runs with idle gaps), or seed003 (its mix: lbm, fotonik, fft, fmm by their working sets' shapes); default stream50"),
          ("autopilot --vm-size SIZE --dram SIZE","each VM's memory (default 16G) and the host's DRAM for VMs, the budget (default 112G: seed 000's host)"),
          ("autopilot --vms N --max-vms N","this many VMs only, or the curve from 1 to --max-vms (default 20)"),
          ("autopilot --slo PCT%","at most this share of a VM's accesses from the pool over the run (default 5%)"),
          ("autopilot --rate SIZE --tier-rate SIZE","the autopilot's quota changes per second (default 256M) and tiering's promotions per second (default 512M)"),
          ("autopilot --interval S --steps N","time between decisions (default 5s) and decisions in a run (default 720: an hour)"),
          ("autopilot --reclaim lazy|eager --windows N","the decision's reclaim (default lazy) and how many decisions' hot sets it takes the largest of (default 6)"),
          ("autopilot --seed N","the workload's random seed (default 1)")],
 examples="""# poolctl simulate /usr/share/doc/poolmem/seed003.toml --tier-policies interleave --compare round-robin,smart-idle
seed003: 64 hosts, 6 pools, 0.02 s simulated, seed 3
TIER-POLICY  POOL-SELECT     MEAN      P99    P99.9  >=1us  IMBALANCE  SIGBUS  ENOSPC  VMS  EVENTS/S
interleave   round-robin  1003 ns  35.8 us  46.5 us  6.41%        746       0       0   64      5.4M
interleave   smart-idle    346 ns  1262 ns  2251 ns  2.42%        302       0       0   64      5.4M
# poolctl simulate plan --host-dram 112G --pool 224G --vm-size 16G --local-pct 62 --touched 0.5:0.8
host: 112.0 GiB DRAM, 224.0 GiB pool; VMs of 16.0 GiB, 62% local, touching 0.5:0.8 of their memory
all-DRAM host: 7 VMs
OVERCOMMIT  VMS  DENSITY  SIGBUS-RISK  POOL-TOUCHED
     1.00x   11     +57%        0.00%       9.5 GiB
# poolctl simulate autopilot --workload stream80 --max-vms 10 | tail -2
VMs that fit 112.0 GiB, each within the SLO over the run: all-local 7, best static 9, autopilot 10
DRAM for 7 VMs at the SLO: all-local 112.0 GiB, best static 85.2 GiB, autopilot 73.5 GiB""",
 see=["poolctl-vm-create","poolctl-status","poolctl-autopilot-advise"]),
"poolctl-cluster": dict(
 summary="the ledger of shared devices on etcd: which host may online which extent",
 synopsis="poolctl cluster [--etcd URL] [--cacert FILE] [--cert FILE --key FILE] [--prefix P] status [--json] | register DEV --size SIZE [--extent SIZE] [--check] [--json] | claim DEV --host H (--count N | --index I,...) [--ttl S] [--hold S] | fence HOST [--by WHO] [--check] [--json]",
 description="""Hosts that share a CXL device (multi-headed, multi-logical, dynamic capacity) must
never online the same extent. The ledger in etcd records each extent's owner; a claim is
one etcd transaction over a batch of extents (all or none), valid only while the host's
lease holds its host key. A host whose lease runs out leaves its extents fencing, never
free: only a confirmed fence (cluster fence, the operator's or a BMC's word that the
host is cut off) frees them. A host that comes back finds its old claims with a stale
epoch and must offline that memory first. See Documentation/cluster.md for the keys,
the guarantees and their limits.
.PP
status shows devices with their free, claimed and fencing extents, and hosts with their
lease's TTL and extents. register records a device once (the same definition again is
a no-op, another one exit 4). claim joins as HOST, claims the extents, keeps the lease
alive until --hold seconds pass or SIGINT/SIGTERM, then releases them and leaves: a
stand-in for a host's agent, for scripts and tests. fence confirms that HOST is down;
refused (exit 4) while its lease is live.""",
 options=[("--etcd URL[,URL...]","etcd endpoints: one member or several, comma-separated, as etcdctl --endpoints; a call goes on to the next member when one does not answer (default $POOLMEM_ETCD, then http://127.0.0.1:2379)"),
          ("--cacert FILE, --cert FILE, --key FILE","TLS to an https:// endpoint, as etcdctl: the CA that signed etcd's certificate, and this client's certificate and key for an etcd that requires one (--client-cert-auth). A TLS failure is one line that says TLS, and that no client certificate was given when none was"),
          ("--prefix P","key prefix of the ledger (default /poolmem)"),
          ("register --size SIZE --extent SIZE","the device's capacity and its extent size, whole memory blocks (default 128M)"),
          ("register --check, fence --check","the checks alone: the device not registered with another definition; the host down (no lease); nothing written"),
          ("register --json, fence --json",JS+"register: device, registered, new (false: the same definition was there), size_bytes, extent_bytes, extents; fence: host, fenced, by, extents (free again)"),
          ("claim --host H","this host's name in the ledger"),
          ("claim --count N | --index I,...","claim N free extents, or these (1 to 63: one etcd transaction)"),
          ("claim --ttl S --hold S","the lease's TTL (default 10 s) and how long to hold (default: until a signal)"),
          ("fence --by WHO","who confirms the fence (default: the operator on this machine)")],
 examples="""# poolctl cluster register dcd0 --size 2G --extent 128M
dcd0: registered, 16 extents of 128.0 MiB
# poolctl cluster claim dcd0 --host a --count 3 &
a: a claimed extents 0,1,2 of dcd0 (lease 2324035732548657928)
# kill -STOP %1; sleep 15; poolctl cluster status
ledger http://127.0.0.1:2379/poolmem at revision 12: 1 devices, 0 hosts alive
DEVICE     SIZE     EXTENT  FREE  CLAIMED  FENCING
dcd0    2.0 GiB  128.0 MiB    13        0        3
HOST  STATE          LEASE-TTL  EXTENTS
a     down: fencing          -  dcd0:3
# poolctl cluster fence a
a: fenced by operator on rack1; 3 extents are free again""",
 see=["poolctl-pool-online","poolctl-status"]),
"poolmem-agent": dict(
 summary="this host's extents of shared devices, by the ledger on etcd",
 synopsis="poolmem-agent [--config FILE]",
 description="""Joins the ledger of shared devices (poolctl-cluster(8)) with a lease, offlines whatever
a past life of this host held there (claims with a stale epoch) before anything else,
claims the extents it is configured to want and onlines exactly their memory blocks of
this host's dax device of that memory, as a pool. It renews its lease every third of its
TTL; when etcd can't be reached it keeps what it holds and claims nothing, and it
offlines every extent before its lease could run out (TTL less fence_margin_s; no etcd
call may outlast that deadline, and a watchdog checks it every 100 ms). When etcd is
back it starts a new life. While the lease certainly holds, tenants' chunks on an
extent going offline are moved off first (the pool drains, then takes chunks again);
once the lease may have run out (the watchdog late after a pause, the lease found gone,
a past life's claims), it revokes the pool first (POOLMEM_DRAIN_REVOKE): the chunks are
dropped unread as the memory goes offline, and their domains get memory errors
(SIGBUS, BUS_MCEERR_AR) on them, since the memory may be another host's by then. Each
round it publishes its pools' access factor and allocated bytes for cluster-wide smart
idle. SIGHUP reloads the targets ("want"; anything else needs a restart and is refused);
SIGTERM keeps the memory for the next start (on_stop = "keep", the default: a restart
takes the lease over, or reclaims the extents still recorded for this host, and no tenant
loses a byte); poolmem-agent release (or on_stop = "release") offlines and releases
everything and leaves. After every step it writes what it holds to
the state file (JSON). The configuration (TOML, default /etc/poolmem/agent.toml): etcd,
prefix, host, ttl_s, fence_margin_s, on_stop, on_outage ("offline", the default: self-fence
before the lease can run out; "keep": the memory stays online while etcd is away, and the
extents are reclaimed when it answers), state (default /run/poolmem-agent/state.json),
etcd_cacert, etcd_cert and etcd_key (TLS to an https:// etcd, as etcdctl's --cacert, --cert and
--key: each file must exist, the certificate and key go together, and an http:// endpoint with
them is refused), and
one [[device]] table per shared device with name (in the ledger), dax (this host's dax
device), pool, want and zone. See Documentation/cluster.md.""",
 options=[("--config FILE","configuration file (default /etc/poolmem/agent.toml)"),
          ("release","take over the last life's lease (or join), offline every extent, release them and leave the ledger: for a host that leaves the cluster")],
 examples="""# poolmem-agent --config /etc/poolmem/agent.toml
poolmem-agent: gA joined (lease 4267620449842716540), holding nothing
poolmem-agent: gA: reloaded /etc/poolmem/agent.toml
poolmem-agent: gA: holding dcd0:0 dcd0:1
poolmem-agent: gA: lease about to run out: fenced itself, every extent offline
poolmem-agent: gA: back in the ledger (lease 4267620449842716563)""",
 see=["poolctl-cluster","poolctl-pool-online"]),
"poolctl-status": dict(
 summary="pools, capacity, allocation, access factor, imbalance and VMs at a glance",
 description="Totals, the imbalance of the current window (max - min allocation and fault events across pools, as in the smart-idle evaluation), one line per pool and one per VM.",
 options=[],
 examples="""# poolctl status
pools: 2, capacity 3.8 GiB, allocated 80.0 MiB; domains: 2; imbalance (max-min events, current window) 0

POOL  NODE  CAPACITY  ALLOCATED  USE%   AF  ALLOC/S
pa       1   1.9 GiB   24.0 MiB     1   48        -
pb       2   1.9 GiB   56.0 MiB     3  176        -

VM                LOCAL               POOL  SIGBUS
db              0 B/0 B  32.0 MiB/32.0 MiB       0
web1  16.0 MiB/16.0 MiB  48.0 MiB/48.0 MiB       0""",
 see=["poolctl-top"]),
"poolctl-capacity": dict(
 summary="what admission control lets this host take now, and how many more VMs of a shape fit",
 description="""For each tier, the admission limit, what the live domains commit against it, and the
headroom: the local tier of the home node (its present memory x the module parameter
local_overcommit_pct, against the local quotas of the domains homed there), each pool
alone (capacity x overcommit, against the pool quotas of the domains allowed on it), and
the pools the VMs would use together (the sum of their limits, against the pool quotas of
every domain allowed on any of them). These are the kernel's own rules (pm_admit()) over
the same figures, read from sysfs, /proc/poolmem/domains and /proc/zoneinfo; a refusal's
figures (poolctl vm create, exit 4) are the same numbers.
.PP
With --shape, how many more VMs of that shape each tier admits, and the fewer of the two:
creating that many succeeds and one more is refused, as long as nothing else changes
meanwhile. SIZE/LOCAL gives the VM's size and its local quota, a percentage of the size
(rounded up to whole chunks, as a profile's) or a size; the rest is pool quota. Pinnable
VMs (which count only memory outside ZONE_MOVABLE) are not modelled. The exporter's
--capacity.shape exports the same count (poolmem_capacity_vms).""",
 options=[("--shape SIZE/LOCAL","a VM: 16G/25% (local 25% of 16G), 16G/4G, or 16G alone (all pool); whole 2 MiB chunks"),
          ("--pools P1,P2", None),
          ("--home-node N","the VMs' home node (default: the first node with CPUs, as the module picks)"),
          ("--json","print JSON: shape (null without --shape: size_bytes, local_bytes, pool_bytes), local (node, limit_bytes, committed_bytes, headroom_bytes, fits), pool (pools, the same figures), pools[] (name, node, the same figures, each pool alone), fits (null without --shape)")],
 examples="""# poolctl capacity --shape 512M/25% --pools p0
shape 512.0 MiB: local 128.0 MiB on node 0, pool 384.0 MiB on p0
TIER   WHERE      LIMIT  COMMITTED  HEADROOM  FITS
local  node 0   1.9 GiB        0 B   1.9 GiB    15
pool   p0       1.9 GiB        0 B   1.9 GiB     5
pool   p1       1.9 GiB        0 B   1.9 GiB     5
5 more VMs of this shape fit now (admission control; the pool tier is the limit)""",
 see=["poolctl-vm-create","poolctl-pool-set","poolctl-status","poolmem-exporter"]),
"poolctl-autopilot-advise": dict(
 summary="what the DRAM autopilot would set now: each VM's local quota, from its hot set, and why",
 description="""The autopilot's decision over the host's domains now, changing nothing. For each VM:
its size, local quota and local use, its hot set (chunks tiering's sampling found hot, the
largest of the recent windows), its untouched memory (never faulted), the share of its
sampled accesses served from the pool, its bounds (min, max), the local quota the decision
targets, the change, and the reason: hot-set (the hot set and --margin percent), slo (more
than the hot set: its pool share is above its SLO), min, max, budget (less than it wants:
the budget is shared in proportion to what each VM wants beyond its min), hold (the change is
below --hysteresis), rate (a step toward the target: the move budget, --rate times
--interval), keep (more than it wants: with --reclaim lazy, the default, a VM gives back
only what the other VMs' grows and the budget need; eager takes it down at once), or why
its quota never moves: pinnable, znuma, or tiering off (no measure:
poolctl vm set NAME --tiering sample). The last line gives the budget less the headroom,
the sum of the local quotas now and of the targets, and the DRAM the targets free or need.
.PP
The decision is one function in plain C, kmod/policy/pm_autopilot.c, the same code the
simulator replays; --json names its source's SHA-256. Its rules: the sum of the targets
never exceeds the budget; no target leaves [min, max] (except on the way up to min under
the move budget); a fixed VM keeps its quota. Settings come from [autopilot] of
/etc/poolmem/poolmem.toml (budget, headroom, rate, interval, windows, margin, hysteresis,
reclaim, and min, max and slo as defaults; [autopilot.vms.NAME] and [autopilot.profiles.NAME] give
a VM's or a profile's own min, max and slo, each a SIZE or PCT% of the VM's size), and the
options over them. Bad input changes nothing and exits 2 (a bound that is no size, an SLO
out of range) or 4 (a budget below the sum of the mins and fixed quotas), naming the value.""",
 examples="""# poolctl autopilot advise --config /tmp/autopilot.toml
VM       SIZE     QUOTA      USED        HOT  UNTOUCHED   POOL  MIN        MAX     TARGET     CHANGE  REASON
a   256.0 MiB  64.0 MiB  64.0 MiB   16.0 MiB        0 B   0.0%  0 B  256.0 MiB   28.0 MiB  -36.0 MiB  rate
b   256.0 MiB  64.0 MiB  64.0 MiB   32.0 MiB        0 B   0.0%  0 B  256.0 MiB   42.0 MiB  -22.0 MiB  rate
c   256.0 MiB  64.0 MiB  64.0 MiB   64.0 MiB        0 B   0.0%  0 B  256.0 MiB   70.0 MiB   +6.0 MiB  rate
d   256.0 MiB  64.0 MiB  64.0 MiB  128.0 MiB        0 B  47.3%  0 B  256.0 MiB  126.0 MiB  +62.0 MiB  rate
budget 320.0 MiB: local quotas 256.0 MiB now, 266.0 MiB targeted (needs 10.0 MiB)""",
 options=[("--json","print JSON: budget_bytes, step_bytes, local_quota_sum_bytes, target_sum_bytes, decision_sha256, vms[] (name, profile, size_bytes, chunk_bytes, local_quota_bytes, pool_quota_bytes, local_bytes, min_bytes, max_bytes, hot_bytes, hot_now_bytes, untouched_bytes, pool_permille, slo_permille, slo_broken, fixed, want_bytes, target_bytes, freed_bytes, reason)")],
 see=["poolctl-autopilot-run","poolctl-autopilot-status","poolctl-vm-set","poolctl-simulate"]),
"poolctl-autopilot-run": dict(
 summary="the DRAM autopilot: apply the decision every interval until SIGTERM",
 description="""Every --interval: read every domain from the kernel, decide as poolctl autopilot advise
does, and apply the changes with vm set's engine (POOLMEM_DOMAIN_SET in steps): the shrinks
first, then the grows, so that the sum of the local quotas stays within the budget at every
moment. A shrunk local tier gives up its cold chunks first (the kernel prefers them once
tiering has sampled the domain); tiering then moves hot chunks into the local quota a grow
gave. Quota changes and moves go at most --rate a second. A change the kernel refuses
(admission, no room: exit 4 of vm set) is logged and left for the next decision.
.PP
Each decision is a line on standard output (the journal, under poolmem-autopilot.service)
with its inputs: the quota before and after, the reason, the hot set (and this window's),
untouched memory, the pool share and SLO, the bounds and the local use. Each change is an
audit entry (verb "autopilot set", MESSAGE_ID 85847ce531f7465eb3bc23de1da02007). The
status file (--state) is rewritten after every decision; poolctl autopilot status reads it.
.PP
Nothing is kept that the kernel does not report again: killed mid-move, the kernel keeps
the shrunk tier at its usage until the moves are done (the quotas stay consistent), and the
next run first goes on with those moves, then decides from the kernel's figures. SIGTERM or
SIGINT end the step in progress and exit 0; the quotas stay where they are.""",
 examples="""# poolctl autopilot run --config /tmp/autopilot.toml --state /tmp/ap-state.json
autopilot: running: budget 320.0 MiB, headroom 0 B, rate 64.0 MiB/s, interval 2.0 s, decision 9bf4d41909575914043612e615b77d1148b3ac1298ce53326216078ca9097340
autopilot: a: local quota 64.0 MiB -> 24.0 MiB (rate): hot 16.0 MiB (now 16.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 64.0 MiB
autopilot: b: local quota 64.0 MiB -> 40.0 MiB (rate): hot 32.0 MiB (now 32.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 64.0 MiB
autopilot: c: local quota 64.0 MiB -> 64.0 MiB (hot-set): hot 58.0 MiB (now 58.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 64.0 MiB
autopilot: d: local quota 64.0 MiB -> 126.0 MiB (rate): hot 122.0 MiB (now 122.0 MiB), untouched 0 B, pool 39.1% of accesses, min 0 B, max 256.0 MiB, used 64.0 MiB
autopilot: a: local quota 24.0 MiB -> 18.0 MiB (hot-set): hot 16.0 MiB (now 16.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 24.0 MiB
autopilot: b: local quota 40.0 MiB -> 36.0 MiB (hot-set): hot 32.0 MiB (now 32.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 40.0 MiB
autopilot: c: local quota 64.0 MiB -> 72.0 MiB (hot-set): hot 64.0 MiB (now 64.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 64.0 MiB
autopilot: d: local quota 126.0 MiB -> 136.0 MiB (hot-set): hot 122.0 MiB (now 122.0 MiB), untouched 0 B, pool 0.0% of accesses, min 0 B, max 256.0 MiB, used 122.0 MiB""",
 options=[],
 see=["poolctl-autopilot-advise","poolctl-autopilot-status","poolctl-vm-set"]),
"poolctl-autopilot-status": dict(
 summary="the running autopilot's last decision, beside the quotas now",
 description="""Whether poolctl autopilot run is running (its pid in the status file), how long ago it
last decided, and per VM its target, its local quota and use now (read from the kernel),
its hot set, pool share and the reason; then the totals since it started: decisions,
changes, refusals, bytes moved and SLO violations (VMs above their SLO, counted once per
decision). Exit 3 when there is no status file.""",
 examples="""# poolctl autopilot status --state /tmp/ap-state.json
autopilot: running (pid 397), last decision 1 s ago, decision 9bf4d4190957
VM     TARGET      QUOTA       USED        HOT  POOL  REASON
a    18.0 MiB   18.0 MiB   18.0 MiB   16.0 MiB  0.0%  hot-set
b    36.0 MiB   36.0 MiB   36.0 MiB   32.0 MiB  0.0%  hot-set
c    72.0 MiB   72.0 MiB   64.0 MiB   64.0 MiB  0.0%  hot-set
d   142.0 MiB  142.0 MiB  128.0 MiB  128.0 MiB  0.0%  hot-set
budget 320.0 MiB: 2 decisions, 8 changes (0 refused), 74.0 MiB moved, 0 SLO violations""",
 options=[("--json","print the status file's JSON (as advise --json, with pid, started, updated, interval_seconds, rate_bytes, headroom_bytes and totals: decisions, changes, refused, moved_bytes, slo_violations), with running, and per VM gone, local_quota_now_bytes and local_now_bytes")],
 see=["poolctl-autopilot-run","poolctl-autopilot-advise"]),
"poolctl-top": dict(
 summary="refreshing status with allocation rates",
 description="poolctl status, refreshed; the ALLOC/S column gives chunk allocations per second per pool between refreshes. With --json, one JSON object per refresh on one line (JSON Lines), with allocations_per_second per pool from the second on.",
 options=[("--interval SECONDS","time between refreshes (default 1)"),("--iterations N","stop after N refreshes (default: run until interrupted)"),("--json","JSON Lines: one status object per refresh")],
 examples="# poolctl top --iterations 2 --interval 0.5",
 see=["poolctl-status"]),
"poolctl-node-list": dict(
 summary="list NUMA nodes: CPUs, memory, blocks, HMAT, distances",
 description="The raw material of pools: each node's CPUs, memory, memory blocks (online), HMAT read latency and bandwidth from its nearest initiator, and distances.",
 options=[],
 examples="""# poolctl node list
NODE  CPUS          TOTAL       FREE   BLOCKS(ONL)   LATENCY BANDWIDTH  DISTANCES
0     0-1         1.9 GiB    1.7 GiB        16(16)         -         -  10 20 20
1     -           1.9 GiB    1.9 GiB        15(15)         -         -  20 10 20
2     -           1.9 GiB    1.9 GiB        15(15)         -         -  20 20 10
memory block size 128.0 MiB, 46 blocks""",
 see=["poolctl-pool-online"]),
"poolmem-exporter": dict(
 summary="Prometheus exporter for poolmem pools, VM domains and NUMA nodes",
 synopsis="poolmem-exporter [--web.listen-address ADDR:PORT]... [--web.config.file FILE] [--path.sysfs DIR] [--path.procfs DIR] [--[no-]collector.NAME]... [--cluster.etcd URL] [--once] [--version]",
 description="""Serves /metrics for Prometheus, and a landing page at / (other paths: 404).
/metrics carries poolmem's metrics only. Reads only sysfs and procfs (no control
device; domain attributes need group stats_gid, see poolmem-exporter.service), builds every metric afresh on each scrape, and runs its collectors
concurrently: module (poolmem_module_*), probe (poolmem_pool_probe_*: a pointer chase on
each pool's node, in a background thread), pools (poolmem_pool_*), domains
(poolmem_domain_*, including the fault latency histogram) and nodes (poolmem_node_*:
meminfo, memory blocks by state and zone, free 2 MiB blocks from /proc/buddyinfo,
HMAT latency and bandwidth, distances), and, with \\-\\-cluster.etcd, cluster (poolmem_cluster_*:
the shared-device ledger on etcd: extents by state and host, leases, cluster-wide load;
see Documentation/cluster.md). Each collector reports
poolmem_scrape_collector_success and poolmem_scrape_collector_duration_seconds; a pool
or domain whose directory is there but a file of which can't be read (EACCES: not in
group stats_gid) is left out, logged with the file and the cause, and makes its
collector's success 0. A port in use fails at once with one line naming the address and
the cause (exit 1); a bad option exits 2.
Without the poolmem module the module collector reports poolmem_module_loaded 0, the
pools and domains collectors report failure and the nodes collector keeps working.
A Grafana dashboard ships as exporter/grafana/poolmem.json; the systemd unit is
poolmem-exporter.service. The default address is localhost:9788 ([::1] and 127.0.0.1):
the metrics name tenant VMs, which poolmem's sysfs shows only to group stats_gid. To expose
the exporter, give the address Prometheus scrapes and a web configuration with TLS and
basic_auth_users; a listener beyond loopback without basic auth logs a warning at start.
.PP
The web configuration file has node_exporter's format (Prometheus exporter-toolkit's):
tls_server_config (cert_file, key_file, relative to the file's directory;
min_version, default TLS12; max_version), http_server_config (headers:
Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, X-XSS-Protection,
Strict-Transport-Security; http2 is accepted and HTTP/1.1 served) and basic_auth_users
(user: bcrypt hash, as htpasswd -nBC 10 USER makes it). Client certificates:
client_auth_type RequireAndVerifyClientCert (mutual TLS) or VerifyClientCertIfGiven, with
client_ca_file, the CA that signs the clients' certificates (a client without one, or with
another CA's, gets 403 or no TLS session). An unknown key, client_auth_type
RequestClientCert or RequireAnyClientCert (a certificate taken unchecked), cipher_suites and
curve_preferences are refused with one line naming the file and the key (exit 2). The
file is read at start and again on SIGHUP (systemctl reload poolmem-exporter): new daemons
take over the listening sockets, so no connection is refused; a file that does not load,
or a certificate that can't serve, is logged and the running configuration stays. A
collector's error that repeats every scrape is logged once, then every 10 minutes with a
count. Each authenticated request costs one bcrypt
(1.2 ms at cost 4, 70 ms at cost 10 on the 2-core machine of Documentation/performance.md).""",
 options=[("--web.listen-address ADDR:PORT","where to serve / and /metrics, repeatable: localhost:PORT (the default, localhost:9788) is [::1] and 127.0.0.1; :PORT and [::]:PORT every address, IPv6 and IPv4 on one socket (IPv4 alone on a host without IPv6); [ADDR]:PORT an IPv6 address; A.B.C.D:PORT an IPv4 one; NAME:PORT every address NAME resolves to. /metrics is gzipped when asked (Accept-Encoding); HEAD answers as GET without a body; other methods get 405"),
          ("--web.config.file FILE","TLS, client certificates and basic auth, in node_exporter's web configuration format (above); read again on SIGHUP"),
          ("--web.runbooks FILE","the runbooks served at /runbooks.html, where the alert rules' runbook_url can point (default: the copy installed with the exporter, share/doc/poolmem-exporter/runbooks.html)"),
          ("--path.sysfs DIR","sysfs root (default /sys)"),
          ("--path.procfs DIR","procfs root (default /proc)"),
          ("--collector.NAME, --no-collector.NAME","enable or disable a collector: module, probe, pools, domains, nodes, resctrl, media, capacity (all on by default), cluster (on with --cluster.etcd)"),
          ("--capacity.shape SIZE/LOCAL","a VM shape as poolctl capacity --shape takes it (16G/25%), repeatable: poolmem_capacity_vms{shape} says how many more VMs of it admission control admits now"),
          ("--cluster.etcd URL[,URL...]","the shared-device ledger's etcd: one member's URL or several, comma-separated, as etcdctl --endpoints (a call goes on to the next member when one does not answer): export the cluster view, the member that answered (poolmem_cluster_etcd_member_info) and failovers (poolmem_cluster_etcd_failovers_total); 2 s per call, for all the members tried"),
          ("--cluster.prefix P","the ledger's key prefix (default /poolmem)"),
          ("--cluster.etcd.cacert FILE, --cluster.etcd.cert FILE, --cluster.etcd.key FILE","TLS to an https:// --cluster.etcd, as poolctl cluster's --cacert, --cert and --key"),
          ("--once","print the metrics once to standard output and exit"),
          ("--probe.interval SECONDS","time between rounds of the loaded-latency probe (default 10)"),
          ("--probe.duration MS","pointer chase per pool and round (default 5)"),
          ("--probe.size SIZE","probe buffer per pool, on the pool's node (default 2 x last-level cache, 32M..256M); the unit's MemoryMax=2G holds eight pools at the largest"),
          ("--no-collector.domain.histograms","leave out each domain's fault latency histogram (16 of a domain's series), for hosts with thousands of VMs; the other per-domain series stay"),
          ("--version","print the version and exit")],
 examples="""# poolmem-exporter --once | grep pool_allocated
# HELP poolmem_pool_allocated_bytes Bytes of the pool held by domain chunks, from allocated_bytes.
# TYPE poolmem_pool_allocated_bytes gauge
poolmem_pool_allocated_bytes{pool="p0"} 18874368
poolmem_pool_allocated_bytes{pool="p1"} 16777216""",
 see=["poolctl-status"]),
}

def esc(s):
    return s.replace("\\", "\\\\").replace("-", "\\-")


def args():
    poolctl, out = os.path.join(ROOT, "build", "ctl", "poolctl"), HERE
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--poolctl" and argv:
            poolctl = argv.pop(0)
        elif a == "--out" and argv:
            out = argv.pop(0)
        else:
            sys.exit(f"usage: gen-man.py [--poolctl PATH] [--out DIR] (not {a!r})")
    if not os.access(poolctl, os.X_OK):
        sys.exit(f"gen-man: {poolctl}: no poolctl binary (build it first: make all, or --poolctl PATH)")
    return poolctl, out


def command_words(name):
    """poolctl-pool-soft-offline -> [pool, soft-offline]"""
    joined = " ".join(name[len("poolctl-"):].split("-"))
    for multi in ("soft offline", "poison scan", "libvirt hook"):
        joined = joined.replace(multi, multi.replace(" ", "-"))
    return joined.split()


def cli_help(poolctl, words):
    """poolctl WORDS --help, read: {"Positionals:": [...], "Options:": [...]},
    each entry [names, type, help] as CLI11 prints it; None for a noun (it
    has subcommands) or no such command."""
    r = subprocess.run([poolctl, *words, "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "\nSubcommands:" in r.stdout:
        return None
    out, section = {"Positionals:": [], "Options:": []}, None
    for line in r.stdout.splitlines():
        if line in ("Options:", "Positionals:", "Subcommands:"):
            section = line
            continue
        if re.match(r"^\S", line):
            section = None
            continue
        if section not in out:
            continue
        m = re.match(r"^  (\S+)(?: (\S.*?))?(?:\s{2,}(.*))?$", line)
        if m:
            typ, text = m.group(2) or "", (m.group(3) or "").strip()
            if not text and "} " in typ:
                # a type that ends one column short of the help's: one space between
                typ, text = typ.split("} ", 1)
                typ += "}"
            out[section].append([m.group(1), typ, text.strip()])
        elif out[section] and line.startswith("    "):
            # a long type ("TEXT:{a,b}") puts the help on the next line
            out[section][-1][2] = (out[section][-1][2] + " " + line.strip()).strip()
    return out


def cli_positionals(poolctl, words):
    """A verb's positionals: [(NAME, required, repeated)]."""
    return [(n.upper().replace("-", "_"), "REQUIRED" in t, "..." in t)
            for n, t, _ in (cli_help(poolctl, words) or {}).get("Positionals:", [])]


def cli_options(poolctl, words):
    """A verb's options: [(long, metavar, help)], in order; None for a noun."""
    h = cli_help(poolctl, words)
    if h is None:
        return None
    out = []
    for names, typ, text in h["Options:"]:
        longs = [n for n in names.split(",") if n.startswith("--")]
        if longs:
            out.append((re.sub(r"\{.*\}$", "", longs[0]), typ, text))
    return out


def metavar(long, typ):
    """CLI11's type as a man page's metavar: TEXT:{a,b} -> a|b; a type_name()
    of the command's own as it is; TEXT -> NAME"""
    typ = typ.replace(" REQUIRED", "").replace(" ...", "")
    m = re.search(r"\{(.*)\}", typ)
    if m:
        return m.group(1).replace(",", "|")
    if not typ or typ.startswith("FLAG"):
        return ""
    if ":" not in typ and " " not in typ and typ not in ("TEXT", "UINT", "INT", "FLOAT", "NUMBER"):
        return typ  # the command's own ->type_name()
    return long.lstrip("-").split(".")[-1].upper().replace("-", "_")


def generated_synopsis(name, options, poolctl):
    """A verb's SYNOPSIS from the binary: its positionals, then each option
    with the page's metavar (required ones without brackets)."""
    words = command_words(name)
    cli = {o[0]: o[1] for o in cli_options(poolctl, words)}
    out = ["poolctl", *words]
    for pos, required, repeated in cli_positionals(poolctl, words):
        w = pos + (" ..." if repeated else "")
        out.append(w if required else f"[{w}]")
    for head, _ in options:
        long = re.search(r"(--[a-z0-9][a-z0-9.\-]*)", head).group(1)
        h = head.split(", --")[0] if head.startswith(long) else head
        out.append(h if "REQUIRED" in cli.get(long, "") else f"[{h}]")
    return " ".join(out)


def generated_options(name, page, poolctl):
    """The OPTIONS of a verb's page: the binary's options, with the page's additions."""
    words = command_words(name)
    cli = cli_options(poolctl, words)
    if cli is None:
        return page["options"]
    extra, done = {}, set()
    for head, text in page["options"]:
        # one entry may document several options ("-o, --output FILE")
        for long in re.findall(r"(?<![a-z])(--[a-z0-9][a-z0-9.\-]*)", head):
            extra[long] = (head, text)
    out = []
    for long, typ, text in cli:
        if long in GLOBAL:
            continue
        if long in extra:
            entry = extra[long]
            if entry[0] not in done:
                # None: the help text is all there is to say (with a better metavar)
                out.append((entry[0], text if entry[1] is None else entry[1]))
                done.add(entry[0])
        else:
            mv = metavar(long, typ)
            out.append((f"{long} {mv}".strip(), text))
    taken = {o[0] for o in cli}
    for long in extra:
        if long not in taken:
            sys.exit(f"gen-man: {name}: documents {long}, which poolctl {' '.join(words)} does not take")
    return out

POOLCTL, OUT = args()
for name, p in PAGES.items():
    if name.startswith("poolctl-") and name != "poolctl-libvirt-hook" and \
            cli_options(POOLCTL, command_words(name)) is not None:
        # a verb's page: its synopsis and options are the binary's
        if "synopsis" in p:
            sys.exit(f"gen-man: {name}: a verb's synopsis comes from poolctl's --help; drop it from PAGES")
        p = dict(p, options=generated_options(name, p, POOLCTL))
        p["synopsis"] = generated_synopsis(name, p["options"], POOLCTL)
        p["generated"] = True  # one filled paragraph: man wraps it
    out = [f'.TH {name.upper()} 8 "November 2026" "poolmem 0.2" "poolmem manual"',
           ".SH NAME", f"{esc(name)} \\- {esc(p['summary'])}",
           ".SH SYNOPSIS", *([esc(p["synopsis"])] if p.get("generated") else [".nf", esc(p["synopsis"]), ".fi"]),
           ".SH EXAMPLES", ".nf", esc(p["examples"]), ".fi",
           ".SH DESCRIPTION", p["description"].replace("\n.PP\n", "\n.PP\n")]
    if p["options"]:
        out.append(".SH OPTIONS")
        for o, d in p["options"]:
            out += [".TP", f".B {esc(o)}", esc(d)]
    if name.startswith("poolctl-"):
        out += [".SH EXIT STATUS", "See \\fBpoolctl\\fR(8)."]
    for title, body in p.get("extra", []):
        out += [f".SH {title}", body]
    out += [".SH SEE ALSO", ", ".join(f"\\fB{esc(s)}\\fR(8)" for s in p["see"])]
    with open(os.path.join(OUT, name + ".8"), "w") as f:
        f.write("\n".join(out) + "\n")
print(f"wrote {len(PAGES)} man pages")
