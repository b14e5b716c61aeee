import os
D='/tmp/stamp3/include/qrita/detail/'
def edit(f, pairs):
    p=D+f; s=open(p).read()
    for old,new in pairs:
        assert s.count(old)==1,(f,old[:80],s.count(old)); s=s.replace(old,new)
    open(p,'w').write(s)
macro=r'''
#if defined(__CUDACC__)
#include <cstdio>
__device__ long long qs_clk[256][64];
__device__ unsigned long long qs_gt[256][64];
#endif
#if defined(__CUDA_ARCH__)
#define QS(id) do { if (team.team_rank() == 0 && team.league_rank() < 256) { unsigned long long gt_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt_)); qs_clk[team.league_rank()][id] = clock64(); qs_gt[team.league_rank()][id] = gt_; } } while (0)
#define QDUMP(tag, S) do { if (team.team_rank() == 0 && team.league_rank() == 0) { printf("DUMP %s\n", tag); \
  for (int l_ = 0; l_ < (S) && l_ < 256; ++l_) for (int i_ = 0; i_ < 64; ++i_) if (qs_gt[l_][i_] != 0) { \
    printf("S %d %d %llu %lld\n", l_, i_, qs_gt[l_][i_], qs_clk[l_][i_]); qs_gt[l_][i_] = 0; qs_clk[l_][i_] = 0; } } } while (0)
#else
#define QS(id) do {} while (0)
#define QDUMP(tag, S) do {} while (0)
#endif
'''
p=D+'compat.hpp'; s=open(p).read(); i=s.index('namespace qrita {'); s=s[:i]+macro+'\n'+s[i:]; open(p,'w').write(s)
edit('split_kernel.hpp', [
('''    const int s          = team.league_rank() % lay.teams_per_row;
    T* row               = row_of(r);
    Filters f            = k.row_filters(r);
    const int b          = seg_begin(s);''','''    const int s          = team.league_rank() % lay.teams_per_row;
    QS(1);
    T* row               = row_of(r);
    Filters f            = k.row_filters(r);
    const int b          = seg_begin(s);'''),
('''    Kokkos::single(Kokkos::PerTeam(team), [&]() { scans(r)[s] = scan; });
    if (last_team(team, r, slot.data()))''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() { scans(r)[s] = scan; });
    QS(2);
    if (last_team(team, r, slot.data()))'''),
('''    int tie_column = INT_MAX;
    constexpr bool mask = M == Mode::mask;''','''    int tie_column = INT_MAX;
    constexpr bool mask = M == Mode::mask;
    QS(10);'''),
('''      if constexpr (!mask) {
        if (finish) k.finish_row(team, r, row, f, scan, map, d, s);
      }''','''      QS(11);
      if constexpr (!mask) {
        if (finish) k.finish_row(team, r, row, f, scan, map, d, s);
      }
      QS(12);'''),
('''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(SplitGather''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
    QS(13);
  }

  KOKKOS_INLINE_FUNCTION void operator()(SplitGather'''),
('''    const int s          = team.league_rank() % lay.teams_per_row;
    SplitRow const& sr   = state(r);
    if (sr.mode == SplitMode::deferred) {''','''    const int s          = team.league_rank() % lay.teams_per_row;
    QS(30);
    SplitRow const& sr   = state(r);
    if (sr.mode == SplitMode::deferred) {'''),
('''      if constexpr (M == Mode::mask) write_segment(team, r, s);
      if (clears_in_gather() && s == 0) clear(team, r);
      return;''','''      if constexpr (M == Mode::mask) write_segment(team, r, s);
      if (clears_in_gather() && s == 0) clear(team, r);
      QS(31);
      if (clears_in_gather()) QDUMP(M == Mode::mask ? "mask" : "sample_nop", lay.teams_per_row);
      return;'''),
('''    SplitRow& sr         = state(r);
    if (sr.mode != SplitMode::third) {
      if (s == 0) clear(team, r);
      return;
    }''','''    SplitRow& sr         = state(r);
    QS(40);
    if (sr.mode != SplitMode::third) {
      if (s == 0) clear(team, r);
      QS(41);
      QDUMP(M == Mode::sample ? "sample_p" : "list_p", lay.teams_per_row);
      return;
    }'''),
])
edit('draw.hpp', [
('''                        : tie_column_bound(team, set, n, cut.key, cut.keep, vocab);
  // Weights as two''','''                        : tie_column_bound(team, set, n, cut.key, cut.keep, vocab);
  QS(20);
  // Weights as two'''),
('''    *drawn  = ~0u;
  });
  team.team_barrier();''','''    *drawn  = ~0u;
  });
  team.team_barrier();
  QS(21);'''),
('''  team.team_barrier();
  const int m = *shared;''','''  team.team_barrier();
  QS(22);
  const int m = *shared;'''),
('''    if (through >= target && through - weight(i) < target) *drawn = std::uint32_t(column);
  });
  team.team_barrier();''','''    if (through >= target && through - weight(i) < target) *drawn = std::uint32_t(column);
  });
  team.team_barrier();
  QS(23);'''),
])
