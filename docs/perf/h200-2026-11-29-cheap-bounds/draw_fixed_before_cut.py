# draw_fixed_before_cut.py (forty-fifth session, host, plain Python, about a minute): how often is the draw's token
# fixed before the cut? The kept mass W is known before the cut to within the last kept entry's weight w_last (the
# plan's bound on it is looser: 'within 4 w_last' models that). 60 rows of 128256 entries per shape, p = 0.7, 200
# draws per row; the token is fixed where the targets u W of the smallest and the largest W give the same entry.
# Output on 2026-11-29: randn 0.701 / 0.361, uniform 0.599 / 0.194, randn/2 0.619 / 0.233, randn*3 0.847 / 0.648.
import random, math, bisect
random.seed(1)
def rate(gen, V=128256, p=0.7, rows=60, us=200, widen=1.0):
    fixed = 0; n = 0
    for _ in range(rows):
        x = [gen() for _ in range(V)]
        m = max(x)
        w = sorted((math.exp(v - m) for v in x), reverse=True)
        C = []; s = 0.0
        for v in w: s += v; C.append(s)
        T = s; K = bisect.bisect_left(C, p * T) + 1
        wl = w[K - 1] * widen
        lo, hi = p * T, p * T + wl
        for _ in range(us):
            u = random.random()
            a = bisect.bisect_left(C, u * lo); b = bisect.bisect_left(C, u * hi)
            fixed += a == b; n += 1
    return fixed / n
for name, g in (('randn', lambda: random.gauss(0, 1)), ('uniform', random.random), ('temp2 (randn/2)', lambda: random.gauss(0, 0.5)), ('randn*3', lambda: random.gauss(0, 3))):
    print(name, 'fixed: %.3f (W within w_last), %.3f (within 4 w_last)' % (rate(g), rate(g, widen=4.0)))
