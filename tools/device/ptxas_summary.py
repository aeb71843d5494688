#!/usr/bin/env python3
"""Summarise `nvcc -Xptxas -v` output (a build log) as one line per kernel and architecture:
registers, stack frame, spill stores/loads, demangled name. Usage: ptxas_summary.py build.log"""
import re
import subprocess
import sys


def demangle(name):
    try:
        out = subprocess.run(["c++filt", name], capture_output=True, text=True, check=False).stdout.strip()
        name = out or name
    except OSError:
        return name
    name = re.sub(r"qc::gpu::(detail::)?\(anonymous namespace\)::", "", name)
    return name.split("(")[0]


def main():
    cur, stack = None, ("?", "?", "?")
    for line in open(sys.argv[1], errors="replace"):
        m = re.search(r"Compiling entry function '(\S+)' for '(sm_\d+)'", line)
        if m:
            cur, stack = (m.group(1), m.group(2)), ("?", "?", "?")
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur:
            stack = m.groups()
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            print(f"{cur[1]} regs={m.group(1):>3} stack={stack[0]} spill={stack[1]}/{stack[2]}  {demangle(cur[0])}")
            cur = None


if __name__ == "__main__":
    main()
