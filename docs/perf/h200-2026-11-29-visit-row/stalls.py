import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1])))
which=int(sys.argv[2]) if len(sys.argv)>2 else 2
kern=[];cur=None
for r in rows:
    if r and r[0]=='Kernel Name':
        cur={'name':r[1],'rows':[]};kern.append(cur);continue
    if r and r[0]=='Address': cur['hdr']=r;continue
    if cur is not None and r: cur['rows'].append(r)
k=kern[which]; h=k['hdr']; ix={n:i for i,n in enumerate(h)}
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
R=k['rows']
tot=sum(num(r[ix['Warp Stall Sampling (All Samples)']]) for r in R)
print(k['name'][:220]); print('instructions',len(R),'samples',tot)
reasons=[n for n in h if n.startswith('stall_') and 'Not Issued' not in n]
agg={n:sum(num(r[ix[n]]) for r in R) for n in reasons}
for n,v in sorted(agg.items(),key=lambda x:-x[1])[:8]: print(f'  {n:28s} {v/tot*100:5.1f}%')
# top instructions
top=sorted(range(len(R)),key=lambda i:-num(R[i][ix['Warp Stall Sampling (All Samples)']]))[:int(sys.argv[3]) if len(sys.argv)>3 else 30]
for i in top:
    r=R[i]; s=num(r[ix['Warp Stall Sampling (All Samples)']])
    main=max(reasons,key=lambda n:num(r[ix[n]]))
    print(f'{i:6d} {r[0]:>6s} {s/tot*100:5.2f}% ex={r[ix["Instructions Executed"]]:>8s} {main[6:]:14s} {r[1][:90]}')
# cumulative by windows of 500 instrs
w=collections.Counter()
for i,r in enumerate(R): w[i//1000]+=num(r[ix['Warp Stall Sampling (All Samples)']])
print('by 1000-instr windows (% samples):',' '.join(f'{b}:{v/tot*100:.1f}' for b,v in sorted(w.items()) if v/tot>0.005))
