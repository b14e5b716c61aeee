# Stamps (46th session) on a copy of the headers: globaltimer + clock64 by thread 0 of each team.
D='/tmp/st46/include/qrita/detail/'
def edit(f, pairs):
    p=D+f; s=open(p).read()
    for old,new in pairs:
        assert s.count(old)==1,(f,old[:80],s.count(old)); s=s.replace(old,new)
    open(p,'w').write(s)
macro=r'''
#if defined(__CUDACC__)
#include <cstdio>
__device__ long long qs_clk[256][96];
__device__ unsigned long long qs_gt[256][96];
#endif
#if defined(__CUDA_ARCH__)
#define QS(id) do { if (team.team_rank() == 0 && team.league_rank() < 256) { unsigned long long gt_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt_)); qs_clk[team.league_rank()][id] = clock64(); qs_gt[team.league_rank()][id] = gt_; } } while (0)
#define QDUMP(tag, S) do { if (team.team_rank() == 0) { printf("DUMP %s\n", tag); \
  for (int l_ = 0; l_ < (S) && l_ < 256; ++l_) for (int i_ = 0; i_ < 96; ++i_) if (qs_gt[l_][i_] != 0) { \
    printf("S %d %d %llu %lld\n", l_, i_, qs_gt[l_][i_], qs_clk[l_][i_]); qs_gt[l_][i_] = 0; qs_clk[l_][i_] = 0; } } } while (0)
#else
#define QS(id) do {} while (0)
#define QDUMP(tag, S) do {} while (0)
#endif
'''
p=D+'compat.hpp'; s=open(p).read(); i=s.index('namespace qrita {'); s=s[:i]+macro+'\n'+s[i:]; open(p,'w').write(s)
TAG='(M == Mode::mask ? "mask" : M == Mode::sample ? "sample" : "list")'
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
      }'''),
('''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
  }''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.st   = st;
      sr.mode = mode;
    });
    QS(13);
  }'''),
('''    const int s          = team.league_rank() % lay.teams_per_row;
    SplitRow const& sr   = state(r);
    if (sr.mode == SplitMode::deferred) {''','''    const int s          = team.league_rank() % lay.teams_per_row;
    QS(30);
    SplitRow const& sr   = state(r);
    if (sr.mode == SplitMode::deferred) {'''),
('''    put_mass(team, r, s, m);
    if (sr.mode != SplitMode::gather) {''','''    put_mass(team, r, s, m);
    QS(33);
    if (sr.mode != SplitMode::gather) {'''),
('''    resolve(team, r, slot.data() + 1);
    if (clears_in_gather()) {
      team.team_barrier();
      clear(team, r);
    }''','''    QS(39);
    resolve(team, r, slot.data() + 1);
    if (clears_in_gather()) {
      team.team_barrier();
      clear(team, r);
    }
    QS(43);
    QDUMP(M == Mode::mask ? "mask" : "gather_nondeferred", lay.teams_per_row);'''),
('''    k.resolve_buckets(team, sr.f, sr.scan, sr.map, sr.plan, exact, n, s, d, st);
    st.tier = n > k.prm.capacity;''','''    QS(40);
    k.resolve_buckets(team, sr.f, sr.scan, sr.map, sr.plan, exact, n, s, d, st);
    QS(41);
    st.tier = n > k.prm.capacity;'''),
('''    mask_gathered(team, row_of(r), s.set, d.set_size, d.cut.key, tie_column);''','''    mask_gathered(team, row_of(r), s.set, d.set_size, d.cut.key, tie_column);
    QS(42);'''),
('''    const BucketRange early = deferred_early(team, sr, sc, plan, planned, early_size);
    if (planned) {''','''    const BucketRange early = deferred_early(team, sr, sc, plan, planned, early_size);
    QS(31);
    if (planned) {'''),
('''    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    const bool last = last_team(team, r, slot.data());''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    QS(32);
    const bool last = last_team(team, r, slot.data());'''),
('''      if (await_cut(team, r, slot) == SplitMode::third) {
        third_read(team, r, s, slot);
      } else if (last) {
        team.team_barrier();
        clear(team, r);
      }''','''      const SplitMode got_ = await_cut(team, r, slot);
      QS(57);
      if (got_ == SplitMode::third) {
        third_read(team, r, s, slot);
      } else if (last) {
        team.team_barrier();
        clear(team, r);
        QS(58);
        QDUMP(M == Mode::sample ? "sample" : "list", lay.teams_per_row);
      }'''),
('''    SplitRow& sr   = state(r);
    const T* row   = row_of(r);
    const Filters f = sr.f;
    RowStats st    = sr.st;''','''    QS(50);
    SplitRow& sr   = state(r);
    const T* row   = row_of(r);
    const Filters f = sr.f;
    RowStats st    = sr.st;'''),
('''      const RangeMass exact{both.above, both.total};
      k.resolve_buckets(team, f, sr.scan, sr.map, plan, exact, *sc.set.counter, sc, d, st);''','''      const RangeMass exact{both.above, both.total};
      QS(51);
      k.resolve_buckets(team, f, sr.scan, sr.map, plan, exact, *sc.set.counter, sc, d, st);
      QS(52);'''),
('''      // read it once they see the mode (await_cut).
      Kokkos::memory_fence();
      sr.mode = mode;
    });''','''      // read it once they see the mode (await_cut).
      Kokkos::memory_fence();
      sr.mode = mode;
    });
    QS(56);'''),
('''    const typename Kernel::KeptSum kept = k.partial_kept(team, d, sc, mass);
    if constexpr (M == Mode::sample) {
      const weight_type target = mul_high_64(f.u, kept.mass) + 1;
      int token                = -1;
      if (!k.draw_third(team, d, early, mass, target, got, token)) return false;
      k.put_token(team, r, token);''','''    const typename Kernel::KeptSum kept = k.partial_kept(team, d, sc, mass);
    QS(53);
    if constexpr (M == Mode::sample) {
      const weight_type target = mul_high_64(f.u, kept.mass) + 1;
      int token                = -1;
      if (!k.draw_third(team, d, early, mass, target, got, token)) return false;
      QS(54);
      k.put_token(team, r, token);'''),
('''            k.list_third(team, r, f, d, early, mass, kept, got, listed)))
        return false;
      k.list_tail(team, r, listed, kept.count);
    }
    return true;''','''            k.list_third(team, r, f, d, early, mass, kept, got, listed)))
        return false;
      QS(54);
      k.list_tail(team, r, listed, kept.count);
    }
    QS(55);
    return true;'''),
('''    const int b            = seg_begin(s);
    const RangeMass m =
        gather_range<Kernel::gather_unroll, false>(team, row_of(r) + b, seg_end(s) - b, map,
                                                   third, sc.set, Kernel::third_weigh, mass, b);
    put_mass(team, r, s, m);''','''    const int b            = seg_begin(s);
    QS(60);
    const RangeMass m =
        gather_range<Kernel::gather_unroll, false>(team, row_of(r) + b, seg_end(s) - b, map,
                                                   third, sc.set, Kernel::third_weigh, mass, b);
    put_mass(team, r, s, m);
    QS(61);'''),
('''    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
    clear(team, r);
  }''','''    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
    clear(team, r);
    QS(62);
    QDUMP(M == Mode::sample ? "sample3" : "list3", lay.teams_per_row);
  }'''),
])
edit('mask_kernel.hpp', [
('''    const weight_type inside = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * got.copies;
    // Above the range''','''    const weight_type inside = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * got.copies;
    QS(70);
    // Above the range'''),
('''    const Boundary b = search(team, src, mass, cut.key, got.copies, target - above,
                              third_low(got, cut), got.top);
    token = tie_column_bound(team, s.set, got.n, b.key, b.keep, prm.vocab);''','''    const Boundary b = search(team, src, mass, cut.key, got.copies, target - above,
                              third_low(got, cut), got.top);
    QS(71);
    token = tie_column_bound(team, s.set, got.n, b.key, b.keep, prm.vocab);'''),
('''    if (sum_above(team, src, CountMeasure{}, cut.key) + got.copies < weight_type(C)) return false;
    const Boundary list_cut = search(team, src, CountMeasure{}, cut.key, got.copies,
                                     weight_type(C), third_low(got, cut), got.top);''','''    if (sum_above(team, src, CountMeasure{}, cut.key) + got.copies < weight_type(C)) return false;
    QS(72);
    const Boundary list_cut = search(team, src, CountMeasure{}, cut.key, got.copies,
                                     weight_type(C), third_low(got, cut), got.top);
    QS(73);'''),
])
print("patched")
