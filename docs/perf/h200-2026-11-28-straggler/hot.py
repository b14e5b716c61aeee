import csv,io,sys
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
f=sys.argv[1]
txt=open(f).read().split('\n')
idx=[i for i,l in enumerate(txt) if l.startswith('"Kernel Name"')]+[len(txt)]
rows=list(csv.reader(io.StringIO('\n'.join(txt[idx[0]+1:idx[1]]))))
hdr=rows[0]; data=[dict(zip(hdr,r)) for r in rows[1:] if len(r)==len(hdr)]
st=[h for h in hdr if h.startswith('stall_') or 'Stall' in h]
s=[num(x['Warp Stall Sampling (All Samples)']) for x in data]
tot=sum(s)
print('instructions',len(data),'samples',tot, 'exec', sum(num(x['Instructions Executed']) for x in data))
# reason totals
reasons=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
if len(sys.argv)>2 and sys.argv[2]=='hdr': print(hdr); sys.exit()
rt={h:sum(num(x[h]) for x in data) for h in reasons}
for h,v in sorted(rt.items(),key=lambda a:-a[1])[:12]: print(f'  {h}: {100*v/tot:.1f}%')
order=sorted(range(len(data)),key=lambda i:-s[i])
N=int(sys.argv[2]) if len(sys.argv)>2 else 40
for i in order[:N]:
    x=data[i]
    top=sorted(((num(x[h]),h) for h in reasons),reverse=True)[:2]
    print(f"{i:6d} {100*s[i]/tot:5.2f}% ex={num(x['Instructions Executed']):10.0f} thr={x['Avg. Threads Executed']:>5s} {x['Source'].strip()[:60]:60s} {top[0][1][:30]}={top[0][0]:.0f} {top[1][1][:30]}={top[1][0]:.0f}")
