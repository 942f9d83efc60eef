#!/usr/bin/env python3
"""The schedule ptxas wrote into a kernel's SASS: `cuobjdump -sass` text in, per kernel the
instruction mix of its hottest loop and the control codes of every instruction there.

On Volta and later an instruction is 128 bits; its upper 64-bit word (the second hex comment
cuobjdump prints) carries, from bit 41: the stall count (4 bits: cycles before this warp may
issue again), the yield bit, the write and read scoreboard barriers it sets (3 bits each, 7 = none),
the scoreboard barriers it waits on (6-bit mask) and the operand reuse flags (4 bits). The sum of
the stall counts over a loop is the fewest cycles one warp needs per iteration; with W warps per
scheduler the scheduler can only stay busy when that sum is at most W times the instructions.

Usage: python3 sass_control.py SASS.txt[.gz] [NAME_SUBSTRING]
"""
import collections
import gzip
import re
import sys

INST = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* 0x([0-9a-f]{16}) \*/")
HI = re.compile(r"^\s+/\* 0x([0-9a-f]{16}) \*/\s*$")


def kernels(lines):
    name, body, pending = None, [], None
    for line in lines:
        if "Function :" in line:
            if name:
                yield name, body
            name, body, pending = line.split("Function :")[1].strip(), [], None
            continue
        m = INST.search(line)
        if m:
            pending = (int(m.group(1), 16), m.group(2).strip())
            continue
        h = HI.match(line)
        if h and pending:
            hi = int(h.group(1), 16)
            body.append(dict(addr=pending[0], text=pending[1], stall=(hi >> 41) & 0xF, yld=(hi >> 45) & 1,
                             wbar=(hi >> 46) & 7, rbar=(hi >> 49) & 7, wait=(hi >> 52) & 0x3F, reuse=(hi >> 58) & 0xF))
            pending = None
    if name:
        yield name, body


def opcode(text):
    t = text.split()
    if t and t[0].startswith("@"):
        t = t[1:]
    return t[0].split(".")[0] if t else "?"


def hottest_loop(body):
    """The largest backward branch's range: the main K loop of a gemm kernel."""
    best = None
    for i, ins in enumerate(body):
        if opcode(ins["text"]) != "BRA":
            continue
        m = re.search(r"0x([0-9a-f]+)", ins["text"].split("BRA", 1)[1])
        if not m:
            continue
        target = int(m.group(1), 16)
        if target < ins["addr"]:
            j = next((k for k, x in enumerate(body) if x["addr"] == target), None)
            if j is not None and (best is None or i - j > best[1] - best[0]):
                best = (j, i)
    return body[best[0]:best[1] + 1] if best else body


def report(name, body):
    loop = hottest_loop(body)
    mix = collections.Counter(opcode(x["text"]) for x in loop)
    stalls = sum(x["stall"] for x in loop)
    ffma = [x for x in loop if opcode(x["text"]) == "FFMA"]
    print(name)
    print(f"  loop: {len(loop)} instructions, stall counts sum {stalls} ({stalls / max(1, len(loop)):.3f} per instruction)")
    print("  mix:", ", ".join(f"{k} {v}" for k, v in mix.most_common(12)))
    hist = collections.Counter(x["stall"] for x in ffma)
    print("  FFMA stall counts:", ", ".join(f"{k}: {v}" for k, v in sorted(hist.items())),
          f"; with a reuse flag {sum(1 for x in ffma if x['reuse'])} of {len(ffma)}",
          f"; waiting on a scoreboard {sum(1 for x in ffma if x['wait'])}")
    others = collections.Counter((opcode(x["text"]), x["stall"]) for x in loop if opcode(x["text"]) != "FFMA")
    print("  others (opcode, stall): count:", ", ".join(f"{k[0]}/{k[1]}: {v}" for k, v in sorted(others.items())))
    # Where the non-FFMA instructions sit: their positions in the loop, in FFMA runs between them.
    runs, run = [], 0
    for x in loop:
        if opcode(x["text"]) == "FFMA":
            run += 1
        else:
            runs.append(f"{run}F {opcode(x['text'])}" + (f"(w{x['wait']:x})" if x["wait"] else ""))
            run = 0
    runs.append(f"{run}F")
    print("  order:", " ".join(runs))


def main():
    path = sys.argv[1]
    want = sys.argv[2] if len(sys.argv) > 2 else ""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for name, body in kernels(f):
            if want in name:
                report(name, body)


if __name__ == "__main__":
    main()
