import sys, collections
# DUMP blocks of the stamped CLI (S league id globaltimer clock64): the last block of each tag. Times in us of
# globaltimer from the first split_scan team's entry (id 1); min .. max over the teams that stamped; "+" the step from
# the previous line's min.
blocks = collections.OrderedDict(); cur = None
for l in open(sys.argv[1]):
    a = l.split()
    if not a: continue
    if a[0] == 'DUMP': cur = a[1]; blocks[cur] = []
    elif a[0] == 'S' and cur: blocks[cur].append((int(a[1]), int(a[2]), int(a[3]), int(a[4])))
names = {1:'split_scan entry', 2:'segment scan published', 10:'decide entry', 11:'decision made', 13:'decide end',
         30:'split_gather entry', 31:'deferred: plan + early range', 32:'deferred: gathered, mass published',
         33:'gather: mass published', 39:'gather: last team', 40:'resolve entry', 41:'resolve: cut search done',
         42:'mask_gathered done', 43:'gather: cleared',
         50:'deferred_cut entry (last team)', 51:'masses joined', 52:'cut search done (resolve_buckets)',
         53:'partial_kept done', 70:'draw: sum_above on early set', 71:'draw: search on early set',
         72:'list: count above on early set', 73:'list: search for C', 54:'draw/list on early set done',
         55:'early_finish end', 56:'deferred_cut end (mode written)', 57:'await_cut returned',
         58:'cleared (last team)', 60:'third read entry', 61:'third read gathered', 62:'third read: done, cleared'}
order = [1, 2, 10, 11, 13, 30, 31, 32, 33, 39, 40, 41, 42, 43, 50, 51, 52, 53, 70, 71, 72, 73, 54, 55, 56, 57, 58, 60, 61, 62]
for tag, rows in blocks.items():
    by = collections.defaultdict(list)
    for lr, i, gt, clk in rows: by[i].append(gt)
    if 1 not in by: continue
    t0 = min(by[1])
    print(f'  {tag}:')
    prev = t0
    for i in order:
        if i not in by: continue
        v = by[i]
        lo, hi = (min(v) - t0) / 1000, (max(v) - t0) / 1000
        print(f'    {i:2d} {names[i]:36s} {lo:7.2f} .. {hi:7.2f} us  (+{(min(v)-prev)/1000:6.2f})  n={len(v)}')
        prev = min(v)
