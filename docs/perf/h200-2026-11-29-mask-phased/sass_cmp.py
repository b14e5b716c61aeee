# sass_cmp.py A.sass B.sass: per kernel, whether the SASS is the same (addresses and
# constant-bank offsets kept; only the /*xxxx*/ address comments dropped).
import re, sys, subprocess
def funcs(path):
    out, name, body = {}, None, []
    for line in open(path):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            if name: out[name] = body
            name, body = m.group(1), []
            continue
        if name is not None:
            body.append(re.sub(r'/\*[0-9a-f]{4,}\*/', '', line).strip())
    if name: out[name] = body
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
dem = lambda n: subprocess.run(['c++filt', n], capture_output=True, text=True).stdout.strip()
for n in sorted(set(a) | set(b)):
    d = dem(n)
    short = re.sub(r'Kokkos::Impl::', '', d)
    m = re.search(r'(MaskKernel<[^>]*>|SplitKernel<[^>]*>)', d)
    tag = m.group(1) if m else short[:80]
    lb = re.search(r'LaunchBounds<\d+u?, \d+u?>', d)
    ph = re.search(r'(SplitScan|SplitGather|SplitDeferred\w*|SplitPlan\w*)', d)
    label = f"{tag} {lb.group(0) if lb else ''} {ph.group(1) if ph else ''}"
    if n not in a or n not in b:
        print('ONLY IN', 'A' if n in a else 'B', label); continue
    same = a[n] == b[n]
    print(('same   ' if same else 'DIFFERS'), len(a[n]), len(b[n]), label)
