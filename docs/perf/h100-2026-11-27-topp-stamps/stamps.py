import sys, collections
names={1:'entry',2:'plan done',3:'segment gathered',4:'arrived last',5:'segments joined',6:'cut (resolve_buckets)',20:'W (partial_kept)',21:'topp_range entry',22:'hi crossing done',24:'lo: loop start',25:'lo: bounds summed',26:'lo: barrier',27:'lo: team_scan',28:'lo: walk',29:'lo: result read',23:'lo crossing done',7:'draw_range (target buckets)',8:'range_fits',9:'state written',10:'entry',11:'segment gathered',12:'arrived last',15:'check passed',13:'draw_third done',14:'row cleared',30:'entry',31:'segment gathered (and written)',32:'arrived last',33:'cut (resolve)'}
order={'gather':[1,2,3,4,5,6,20,21,22,24,25,26,27,28,29,23,7,8,9],'finish':[10,11,12,15,13,14],'mask':[30,31,32,33]}
chains=collections.defaultdict(dict); teams=collections.defaultdict(list)
for l in open(sys.argv[1]):
    a=l.split()
    if a[0]=='CHAIN':
        tag,lr,i,clk,gt=a[1],int(a[2]),int(a[3]),int(a[4]),int(a[5])
        if i in order[tag]:
            if i==order[tag][0]: chains[tag]={}
            chains[tag][i]=clk
    elif a[0]=='TEAM':
        teams[a[1]].append(int(a[3])/1980.0)
for tag in ('mask','gather','finish'):
    c=chains.get(tag)
    if not c: continue
    print(f'  {tag}: the last team (clock64 at 1.98 GHz, us since its entry; step)')
    t0=c[order[tag][0]]; prev=t0
    for i in order[tag]:
        if i in c:
            print(f'    {names[i]:30s} {(c[i]-t0)/1980.0:7.1f}  +{(c[i]-prev)/1980.0:6.1f}'); prev=c[i]
    v=sorted(teams[tag][-64:])
    first='plan' if tag=='gather' else 'segment read'
    if v: print(f'    every team, {first}: median {v[len(v)//2]:.1f} us, max {v[-1]:.1f} us ({len(v)} teams)')
