#!/usr/bin/env python3
"""Carry out a guest's host request on a running rig QEMU through QMP.

usage: qmp.py SOCKET plug-dimm ID SIZE NODE
       qmp.py SOCKET unplug-dimm ID
       qmp.py SOCKET cxl-inject-poison DEVICE DPA LENGTH
       qmp.py SOCKET cxl-inject-general-media-event DEVICE DPA

plug-dimm adds a RAM backend "mem-ID" of SIZE (e.g. 1G) and a pc-dimm "ID"
on NUMA node NODE; unplug-dimm asks the guest to eject pc-dimm ID (the guest
must have offlined its memory first) and, once QEMU reports DEVICE_DELETED,
removes the backend. cxl-inject-poison puts LENGTH bytes (a multiple of 64)
at device physical address DPA of CXL type-3 device DEVICE (its id, e.g.
cxl-pmem0) on the device's poison list, as a media error would (QEMU 8+);
cxl-inject-general-media-event puts a General Media event record (an
uncorrectable ECC error on a host read at DPA) in the device's failure log
and signals it (QEMU 8.1+).
Exits non-zero, naming the command, when QEMU refuses.
"""
import json
import socket
import sys
import time

SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        self.recv()  # greeting
        self.cmd("qmp_capabilities")

    def recv(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError("QMP connection closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        self.sock.sendall(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        while True:
            msg = self.recv()
            if "event" in msg:
                self.events.append(msg)
                continue
            if "error" in msg:
                raise RuntimeError(f"{name}: {msg['error'].get('desc', msg['error'])}")
            return msg.get("return")

    def wait_event(self, name, device, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.events:
                if ev["event"] == name and ev.get("data", {}).get("device") == device:
                    return True
            try:
                self.events.append(self.recv())
            except socket.timeout:
                pass
        return False


def size_bytes(s):
    s = s.strip().upper()
    if s[-1] in SUFFIX:
        return int(s[:-1]) * SUFFIX[s[-1]]
    return int(s)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    q = Qmp(argv[1])
    action = argv[2]
    if action == "plug-dimm" and len(argv) == 6:
        dimm, size, node = argv[3], size_bytes(argv[4]), int(argv[5])
        q.cmd("object-add", **{"qom-type": "memory-backend-ram", "id": "mem-" + dimm, "size": size})
        q.cmd("device_add", driver="pc-dimm", id=dimm, memdev="mem-" + dimm, node=node)
    elif action == "unplug-dimm" and len(argv) == 4:
        dimm = argv[3]
        q.cmd("device_del", id=dimm)
        if not q.wait_event("DEVICE_DELETED", dimm, 30):
            print(f"qmp: {dimm}: guest did not release the DIMM within 30 s", file=sys.stderr)
            return 1
        q.cmd("object-del", id="mem-" + dimm)
    elif action == "cxl-inject-poison" and len(argv) == 6:
        q.cmd("cxl-inject-poison", path="/machine/peripheral/" + argv[3], start=int(argv[4], 0),
              length=int(argv[5], 0))
    elif action == "cxl-inject-general-media-event" and len(argv) == 5:
        q.cmd("cxl-inject-general-media-event", path="/machine/peripheral/" + argv[3], log="failure",
              flags=0, dpa=int(argv[4], 0), descriptor=1, type=0, **{"transaction-type": 1})
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, RuntimeError) as e:
        print(f"qmp: {' '.join(sys.argv[2:])}: {e}", file=sys.stderr)
        sys.exit(1)
