// SPDX-License-Identifier: Apache-2.0
// A serving engine's step with qrita: bf16 logits, per-row temperature,
// min-p, top-k and top-p in one qrita::SamplingParams, then
//   * qrita::sample_tokens: one token per request, from its own seed and
//     step (offset), exactly from the filtered distribution;
//   * qrita::candidate_list: the first C kept candidates with their
//     probabilities and log-probabilities, and the true kept count;
//   * qrita::sample_mask: the same filters as an in-place mask.
// It checks that they agree: every token lies in its row's mask, every list
// is the mask's kept set in order and its probabilities sum to 1 when the
// whole set fits, and the same (seed, step) gives the same token whether
// the row is sampled alone or in the batch. Exits non-zero on a mismatch.
#include <qrita/qrita.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  using Mem   = Space::memory_space;
  const int batch = 6, vocab = 32000, C = 8;
  Space space;

  Kokkos::View<qrita::bfloat16**, Kokkos::LayoutRight, Mem> logits("logits", batch, vocab);
  Kokkos::View<float*, Mem> temperature("temperature", batch), min_p("min_p", batch),
      p("p", batch);
  Kokkos::View<int*, Mem> k("k", batch);
  Kokkos::View<std::uint64_t*, Mem> seeds("seeds", batch), steps("steps", batch);

  auto logits_h = Kokkos::create_mirror_view(logits);
  auto t_h = Kokkos::create_mirror_view(temperature);
  auto m_h = Kokkos::create_mirror_view(min_p);
  auto p_h = Kokkos::create_mirror_view(p);
  auto k_h = Kokkos::create_mirror_view(k);
  auto seed_h = Kokkos::create_mirror_view(seeds);
  auto step_h = Kokkos::create_mirror_view(steps);
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < vocab; ++i) {
      const float x = 2.0f * std::sin(0.37f * float(i * (b + 1))) +
                      ((i * 7919) % 997 == 0 ? 5.0f : 0.0f);
      logits_h(b, i) = qrita::from_float<qrita::bfloat16>(x);  // bf16: many ties
    }
    t_h(b)    = b == 0 ? 0.0f : 0.5f + 0.25f * float(b);  // row 0 is greedy
    m_h(b)    = b == 2 ? 0.1f : 0.0f;                     // min-p off: 0
    k_h(b)    = b == 3 ? 0 : 40;                          // top-k off: 0
    p_h(b)    = b == 4 ? 1.0f : 0.9f;                     // top-p off: 1
    seed_h(b) = 1000 + std::uint64_t(b);                  // the request's seed
    step_h(b) = 17;                                       // its decoding step
  }
  Kokkos::deep_copy(logits, logits_h);
  Kokkos::deep_copy(temperature, t_h);
  Kokkos::deep_copy(min_p, m_h);
  Kokkos::deep_copy(p, p_h);
  Kokkos::deep_copy(k, k_h);
  Kokkos::deep_copy(seeds, seed_h);
  Kokkos::deep_copy(steps, step_h);

  qrita::SamplingParams<Mem> params;  // any member may stay empty: off
  params.temperature = temperature;
  params.min_p       = min_p;
  params.k           = k;
  params.p           = p;

  // One workspace, made once: the calls below allocate nothing and never
  // synchronise the host (they can be captured in a CUDA graph).
  qrita::Workspace<Space> ws(space, batch, vocab);
  const qrita::Options opts;

  Kokkos::View<int*, Mem> tokens("tokens", batch), counts("counts", batch);
  Kokkos::View<int**, Mem> ids("ids", batch, C);
  Kokkos::View<float**, Mem> probs("probs", batch, C), logprobs("logprobs", batch, C);
  qrita::sample_tokens(space, logits, params, seeds, steps, tokens, opts, ws);
  qrita::candidate_list(space, logits, params, ids, probs, logprobs, counts, opts, ws);

  // Row 5 alone (a 1-row view of the same data, with its own params).
  auto one = [](auto v) { return Kokkos::subview(v, Kokkos::make_pair(5, 6)); };
  qrita::SamplingParams<Mem> params5;
  params5.temperature = one(temperature);
  params5.min_p       = one(min_p);
  params5.k           = one(k);
  params5.p           = one(p);
  Kokkos::View<int*, Mem> token5("token5", 1);
  qrita::sample_tokens(space, Kokkos::subview(logits, Kokkos::make_pair(5, 6), Kokkos::ALL),
                       params5, one(seeds), one(steps), token5, opts, ws);

  qrita::sample_mask(space, logits, params, opts, ws);  // last: it writes the logits

  auto tok_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tokens);
  auto cnt_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  auto ids_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
  auto pr_h  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probs);
  auto lp_h  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logprobs);
  auto t5_h  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), token5);
  Kokkos::deep_copy(logits_h, logits);

  int failures = 0;
  for (int b = 0; b < batch; ++b) {
    int kept = 0;
    for (int i = 0; i < vocab; ++i) kept += qrita::to_float(logits_h(b, i)) != -INFINITY;
    const int token   = tok_h(b);
    const bool in_mask = token >= 0 && qrita::to_float(logits_h(b, token)) != -INFINITY;
    // Row 3 has no top-k but p = 0.9 and row 4 no top-p: every row has a
    // filter, so the mask is the kept set.
    bool list_ok = cnt_h(b) == kept;
    double total = 0.0;
    for (int j = 0; j < C && j < cnt_h(b); ++j) {
      const int id = ids_h(b, j);
      list_ok = list_ok && id >= 0 && qrita::to_float(logits_h(b, id)) != -INFINITY;
      if (j > 0) {  // descending value, ties by lower index
        const float prev = qrita::to_float(logits_h(b, ids_h(b, j - 1)));
        const float cur  = qrita::to_float(logits_h(b, id));
        list_ok = list_ok && (prev > cur || (prev == cur && ids_h(b, j - 1) < id));
      }
      total += double(pr_h(b, j));
    }
    if (cnt_h(b) <= C) list_ok = list_ok && std::fabs(total - 1.0) < 1e-5;
    failures += !in_mask + !list_ok;
    std::printf("row %d: T=%.2f min_p=%.2f k=%d p=%.2f kept %d, token %d %s, list %s "
                "(top: id %d p=%.4f logp=%.4f)\n",
                b, double(t_h(b)), double(m_h(b)), k_h(b), double(p_h(b)), kept, token,
                in_mask ? "(in the mask)" : "(NOT in the mask)",
                list_ok ? "matches the mask" : "DIFFERS from the mask", ids_h(b, 0),
                double(pr_h(b, 0)), double(lp_h(b, 0)));
  }
  const bool same = t5_h(0) == tok_h(5);
  failures += !same;
  std::printf("row 5 alone: token %d %s\n", t5_h(0),
              same ? "(the same as in the batch)" : "(DIFFERS from the batch)");
  return failures == 0 ? 0 : 1;
}
