#!/usr/bin/env python3
"""Every option a poolctl verb takes is in its man page, and the page names
no option the verb does not take, and the pages are what
Documentation/man/gen-man.py makes from this binary (a verb's OPTIONS are
its CLI11 options and help text): they can't drift from the binary
unnoticed.

usage: man-options.py POOLCTL MANDIR
"""
import os
import re
import subprocess
import sys

poolctl, mandir = sys.argv[1], sys.argv[2]
# options every verb inherits (poolctl(8) documents them) or CLI11 adds
GLOBAL = {"--help", "--sysfs", "--control", "--mount", "--human", "--version", "--procfs", "--planned-pools"}


def help_options(words):
    """The long options of WORDS and, for a noun's page, of its verbs."""
    out = subprocess.run([poolctl, *words, "--help"], capture_output=True, text=True).stdout
    opts = set()
    section = None
    for line in out.splitlines():
        if line in ("Options:", "Subcommands:"):
            section = line
            continue
        if re.match(r"^\S", line):
            section = None
        m = re.match(r"^  (\S+)", line)
        if not m:
            continue
        if section == "Options:":
            # the option's names, before its type and description ("-o,--output TEXT")
            opts |= {re.sub(r"\{.*\}$", "", n) for n in m.group(1).split(",") if n.startswith("--")}
        elif section == "Subcommands:":
            opts |= help_options([*words, m.group(1)])
    return opts


def page_options(path):
    opts = set()
    section = False
    with open(path) as f:
        for line in f:
            if line.startswith(".SH"):
                section = line.strip() == ".SH OPTIONS"
                continue
            if section and line.startswith(".B "):
                opts |= set(re.findall(r"\\-\\-([a-z][a-z0-9.\\-]*)", line))
    return {"--" + o.replace("\\-", "-") for o in opts}


fails = 0
for name in sorted(os.listdir(mandir)):
    if not name.startswith("poolctl-") or not name.endswith(".8") or name == "poolctl-libvirt-hook.8":
        continue
    words = name[len("poolctl-"):-2].split("-")
    # verbs with a dash in their name
    joined = " ".join(words)
    for multi in ("soft offline", "poison scan"):
        joined = joined.replace(multi, multi.replace(" ", "-"))
    words = joined.split()
    if subprocess.run([poolctl, *words, "--help"], capture_output=True).returncode != 0:
        print(f"FAIL: {name}: 'poolctl {' '.join(words)}' is not a command")
        fails += 1
        continue
    # a noun's page (cluster) documents the noun's own options
    have = help_options(words) - GLOBAL
    documented = page_options(os.path.join(mandir, name)) - GLOBAL
    for o in sorted(have - documented):
        print(f"FAIL: {name}: poolctl {' '.join(words)} takes {o}, the page does not say")
        fails += 1
    for o in sorted(documented - have):
        print(f"FAIL: {name}: the page documents {o}, which poolctl {' '.join(words)} does not take")
        fails += 1
# and every noun and verb has a page: poolctl-NOUN-VERB.8, or the noun's own
top = subprocess.run([poolctl, "--help"], capture_output=True, text=True).stdout
nouns = re.findall(r"^  ([a-z-]+) ", top.split("Subcommands:")[1], re.M)
for noun in nouns:
    verbs = []
    sub = subprocess.run([poolctl, noun, "--help"], capture_output=True, text=True).stdout
    if "Subcommands:" in sub and not os.path.exists(os.path.join(mandir, f"poolctl-{noun}.8")):
        verbs = re.findall(r"^  ([a-z-]+) ", sub.split("Subcommands:")[1], re.M)
    for page in [f"poolctl-{noun}-{v}.8" for v in verbs] or [f"poolctl-{noun}.8"]:
        if page == "poolctl-libvirt.8":
            page = "poolctl-libvirt-hook.8"
        if not os.path.exists(os.path.join(mandir, page)):
            print(f"FAIL: {page}: no man page for a command poolctl has")
            fails += 1
# the pages in the tree are the generator's output for this binary
import filecmp
import tempfile
with tempfile.TemporaryDirectory() as out:
    gen = subprocess.run([sys.executable, os.path.join(mandir, "gen-man.py"), "--poolctl", poolctl, "--out", out],
                         capture_output=True, text=True)
    if gen.returncode != 0:
        print(f"FAIL: gen-man.py: {(gen.stderr or gen.stdout).strip()}")
        fails += 1
    else:
        for name in sorted(os.listdir(out)):
            if not os.path.exists(os.path.join(mandir, name)):
                print(f"FAIL: {name}: generated, not in the tree (python3 Documentation/man/gen-man.py)")
                fails += 1
            elif not filecmp.cmp(os.path.join(out, name), os.path.join(mandir, name), shallow=False):
                print(f"FAIL: {name}: not what gen-man.py makes from this poolctl (run python3 Documentation/man/gen-man.py)")
                fails += 1
print(f"{fails} failed" if fails else "ok: every page lists its verb's options, as gen-man.py makes it")
sys.exit(1 if fails else 0)
