import csv,io,sys
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
def load(f):
    txt=open(f).read().split('\n')
    idx=[i for i,l in enumerate(txt) if l.startswith('"Kernel Name"')]+[len(txt)]
    rows=list(csv.reader(io.StringIO('\n'.join(txt[idx[0]+1:idx[1]]))))
    hdr=rows[0]; return [dict(zip(hdr,r)) for r in rows[1:] if len(r)==len(hdr)],hdr
A,hdr=load('sass_ordered.csv'); B,_=load('sass_randn.csv')
assert len(A)==len(B)
reasons=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
W=int(sys.argv[1]) if len(sys.argv)>1 else 200
ta=sum(num(x['Warp Stall Sampling (All Samples)']) for x in A); tb=sum(num(x['Warp Stall Sampling (All Samples)']) for x in B)
print('total samples ordered',ta,'randn',tb)
for s in range(0,len(A),W):
    sa=sum(num(x['Warp Stall Sampling (All Samples)']) for x in A[s:s+W]); sb=sum(num(x['Warp Stall Sampling (All Samples)']) for x in B[s:s+W])
    ea=sum(num(x['Instructions Executed']) for x in A[s:s+W]); eb=sum(num(x['Instructions Executed']) for x in B[s:s+W])
    if sa+sb < 0.01*(ta+tb): continue
    ra={h:sum(num(x[h]) for x in A[s:s+W]) for h in reasons}
    top=sorted(ra.items(),key=lambda a:-a[1])[:3]
    print(f"{s:6d}-{s+W:6d} ord {sa:7.0f} ({100*sa/ta:4.1f}%) ex {ea/1e6:6.1f}M | randn {sb:7.0f} ({100*sb/tb:4.1f}%) ex {eb/1e6:6.1f}M | ord top: "+' '.join(f'{h[6:]}={v:.0f}' for h,v in top))
