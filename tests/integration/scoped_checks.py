"""Run inside a traced job by test_scoped.sh (it forks nothing, so that the
job is its shell and itself while it looks):

    scoped_checks.py SHELL BYSTANDER AGENT DIR

writes into DIR: own.txt and other.txt, how many bytes of SHELL's and of
BYSTANDER's libc code differ from the file as int3 (0xcc), where the kernel
put a uprobe's breakpoint; links.txt, the uprobe_multi links (entry and
return) AGENT holds
1.5 s later, once the links of the job's ended processes are let go."""
import os
import sys
import time


def breakpoints(pid):
    n = 0
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        if len(f) < 6 or f[1] != "r-xp" or not f[5].endswith("/libc.so.6"):
            continue
        start, end = (int(x, 16) for x in f[0].split("-"))
        with open(f"/proc/{pid}/mem", "rb") as mem, open(f[5], "rb") as lib:
            mem.seek(start)
            lib.seek(int(f[2], 16))
            code, disk = mem.read(end - start), lib.read(end - start)
        n += sum(1 for a, b in zip(code, disk) if a == 0xCC and b != 0xCC)
    return n


def links(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            text = open(f"/proc/{pid}/fdinfo/{fd}").read()
        except OSError:
            continue
        n += any(line.split() in (["link_type:", "uprobe_multi"], ["link_type:", "uretprobe_multi"])
                 for line in text.splitlines())
    return n


shell, bystander, agent, out = sys.argv[1:5]
open(f"{out}/own.txt", "w").write(f"{breakpoints(shell)}\n")
open(f"{out}/other.txt", "w").write(f"{breakpoints(bystander)}\n")
time.sleep(1.5)
open(f"{out}/links.txt", "w").write(f"{links(agent)}\n")
