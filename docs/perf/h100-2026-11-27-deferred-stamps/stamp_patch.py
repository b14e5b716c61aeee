p='split_kernel.hpp'
s=open(p).read()
macro='''
#if defined(__CUDACC__)
#include <cstdio>
__device__ long long qrita_stamp_clk[8192][40];
__device__ unsigned long long qrita_stamp_gt[8192][40];
#endif
#if defined(__CUDA_ARCH__)
#define QSTAMP_R(rr, id) do { if (team.team_rank() == 0) { unsigned long long gt_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt_)); qrita_stamp_clk[team.league_rank()][id] = clock64(); qrita_stamp_gt[team.league_rank()][id] = gt_; } } while (0)
#define QDUMP(rr, tag, a, b) do { if (team.team_rank() == 0) { const int lr_ = team.league_rank(); \
  for (int id_ = 0; id_ < 40; ++id_) if (qrita_stamp_clk[lr_][id_] != 0) printf("CHAIN %s %d %d %lld %llu\\n", tag, lr_, id_, qrita_stamp_clk[lr_][id_], qrita_stamp_gt[lr_][id_]); \
  const int S_ = lay.teams_per_row; for (int t_ = int(rr) * S_; t_ < int(rr) * S_ + S_; ++t_) printf("TEAM %s %d %lld %lld\\n", tag, t_, qrita_stamp_clk[t_][b] - qrita_stamp_clk[t_][a], qrita_stamp_clk[t_][b + 1] - qrita_stamp_clk[t_][b]); \
  for (int id_ = 0; id_ < 40; ++id_) qrita_stamp_clk[lr_][id_] = 0; } } while (0)
#else
#define QSTAMP_R(rr, id) do {} while (0)
#define QDUMP(rr, tag, a, b) do {} while (0)
#endif
#define QSTAMP(id) QSTAMP_R(r, id)
'''
i=s.index('namespace qrita {')
s=s[:i]+macro+'\n'+s[i:]
def rep(old,new,last=False):
    global s
    if last:
        j=s.rindex(old); s=s[:j]+new+s[j+len(old):]; return
    assert s.count(old)==1,(old,s.count(old)); s=s.replace(old,new)
rep('''    SplitRow& sr = state(r);
    scratch_view<int> slot(team.team_scratch(0), 2);
    const Scratch sc = row_scratch(r, slot.data() + 1);
    const Filters f  = sr.f;
    BucketPlan plan;
    bool planned;''','''    SplitRow& sr = state(r);
    QSTAMP(1);
    scratch_view<int> slot(team.team_scratch(0), 2);
    const Scratch sc = row_scratch(r, slot.data() + 1);
    const Filters f  = sr.f;
    BucketPlan plan;
    bool planned;''')
rep('''      planned = plan_deferred(team, sr, sc, plan);
    }
    RangeMass m;''','''      planned = plan_deferred(team, sr, sc, plan);
    }
    QSTAMP(2);
    RangeMass m;''')
rep('''                                              plan.range, sc.set, true, k.mass_of(sr.scan, f),
                                              false, b);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    if (!last_team(team, r, slot.data())) return;''','''                                              plan.range, sc.set, true, k.mass_of(sr.scan, f),
                                              false, b);
    }
    QSTAMP(3);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    if (!last_team(team, r, slot.data())) return;
    QSTAMP(4);''')
rep('''      const RangeMass exact = joined(team, masses(r));
      k.resolve_buckets(team, f, sr.scan, sr.map, plan, exact, *sc.set.counter, sc, d, st);''','''      const RangeMass exact = joined(team, masses(r));
      QSTAMP(5);
      k.resolve_buckets(team, f, sr.scan, sr.map, plan, exact, *sc.set.counter, sc, d, st);
      QSTAMP(6);''')
rep('''          range = k.draw_range(team, f, sr.scan, sr.map, d, sc, mass, target);
          read  = true;''','''          range = k.draw_range(team, f, sr.scan, sr.map, d, sc, mass, target);
          QSTAMP(7);
          read  = true;''')
rep('''        read = range_fits(team, sc.hist, sr.map.nb, d.outliers, range, sc.set.capacity());
      if (read) {''','''        read = range_fits(team, sc.hist, sr.map.nb, d.outliers, range, sc.set.capacity());
      QSTAMP(8);
      if (read) {''')
rep('''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
  }''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
    QSTAMP(9);
    QDUMP(r, "gather", 1, 2);
  }''', last=True)
rep('''    const int b            = seg_begin(s);
    const RangeMass m =
        gather_range<Kernel::gather_unroll>(team, row_of(r) + b, seg_end(s) - b, map, third,
                                            sc.set, true, mass, false, b);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    if (!last_team(team, r, slot.data())) return;
''','''    const int b            = seg_begin(s);
    QSTAMP(10);
    const RangeMass m =
        gather_range<Kernel::gather_unroll>(team, row_of(r) + b, seg_end(s) - b, map, third,
                                            sc.set, true, mass, false, b);
    QSTAMP(11);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    if (!last_team(team, r, slot.data())) return;
    QSTAMP(12);
''')
rep('''      done      = k.draw_third(team, d, sc, mass, sr.target, got, token);''','''      QSTAMP(15);
      done      = k.draw_third(team, d, sc, mass, sr.target, got, token);
      QSTAMP(13);''')
rep('''    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
    clear(team, r);
  }
};''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
    clear(team, r);
    QSTAMP(14);
    QDUMP(r, "finish", 10, 11);
  }
};''')
rep('''    if (sr.mode == SplitMode::gather) {
      // The row's state is read once''','''    if (sr.mode == SplitMode::gather) {
      QSTAMP(30);
      // The row's state is read once''')
rep('''    scratch_view<int> slot(team.team_scratch(0), 2);
    if (!last_team(team, r, slot.data())) return;
    resolve(team, r, slot.data() + 1);''','''    QSTAMP(31);
    scratch_view<int> slot(team.team_scratch(0), 2);
    if (!last_team(team, r, slot.data())) return;
    QSTAMP(32);
    resolve(team, r, slot.data() + 1);
    QSTAMP(33);
    QDUMP(r, "mask", 30, 31);''')
open(p,'w').write(s)
p='mask_kernel.hpp'
s=open(p).read()
old='''    const weight_type W = partial_kept(team, d, s, mass).mass;'''
new='''    const weight_type W = partial_kept(team, d, s, mass).mass;
#if defined(__CUDA_ARCH__)
    if (team.team_rank() == 0) { unsigned long long gt_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt_)); qrita_stamp_clk[team.league_rank()][20] = clock64(); qrita_stamp_gt[team.league_rank()][20] = gt_; }
#endif'''
assert s.count(old)==1; s=s.replace(old,new)
open(p,'w').write(s)
