# Summarizes `nvcc -Xptxas -v` output (c++filt-demangled): one line per kernel with registers,
# static shared memory, stack frame and spills.
import re,sys
for f in sys.argv[1:]:
    cur=None
    for line in open(f):
        m=re.search(r"Compiling entry function '(?:void )?(?:tilekit::gpu::)?([^'(]+)",line)
        if m: cur=m.group(1); info={}; continue
        m=re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",line)
        if m and cur: info['spill']="stack %s, spills %s/%s"%m.groups()
        m=re.search(r"Used (\d+) registers.*",line)
        if m and cur:
            smem=re.search(r"(\d+) bytes smem",line)
            print("%-58s regs %3s  smem %6s B  %s"%(cur, m.group(1), smem.group(1) if smem else 0, info.get('spill','')))
            cur=None
