import sys, collections
# DUMP blocks of the stamped CLI (S lr id globaltimer clock64): the last block of each tag, times in us of globaltimer
# from the first split_scan team's entry.
blocks = collections.OrderedDict(); cur = None
for l in open(sys.argv[1]):
    a = l.split()
    if not a: continue
    if a[0] == 'DUMP': cur = a[1]; blocks[cur] = []
    elif a[0] == 'S' and cur: blocks[cur].append((int(a[1]), int(a[2]), int(a[3]), int(a[4])))
names = {1:'split_scan entry (first team)', 2:'segments published (last team)', 10:'decide entry', 11:'decision made',
         12:'finish_row done', 13:'decide end', 20:'draw: bound', 21:'draw: single+barrier', 22:'draw: copies', 23:'draw: ranked',
         30:'2nd launch entry', 31:'2nd launch exit', 40:'3rd launch entry', 41:'3rd launch exit (team 0)'}
for tag, rows in blocks.items():
    by = collections.defaultdict(list)
    for lr, i, gt, clk in rows: by[i].append(gt)
    if 1 not in by: continue
    t0 = min(by[1])
    print(f'  {tag}:')
    prev = t0
    for i in (1, 2, 10, 20, 21, 22, 23, 11, 12, 13, 30, 31, 40, 41):
        if i not in by: continue
        v = by[i]
        lo, hi = (min(v) - t0) / 1000, (max(v) - t0) / 1000
        print(f'    {names[i]:34s} {lo:7.2f} .. {hi:7.2f} us  (+{(min(v)-prev)/1000:6.2f})  n={len(v)}')
        prev = min(v)
