// What Kokkos Tools see of a call: one kernel labelled qrita::sample_mask
// inside one balanced region of the same name (also when the call throws),
// and no memory allocation once a first call has sized the team scratch.

#include "support.hpp"
#include "synthetic.hpp"

#include <random>
#include <string>
#include <vector>

namespace {

struct ToolLog {
  std::vector<std::string> kernels, regions;
  int depth = 0, allocations = 0;
};
ToolLog log_;

void on_kernel(const char* name, std::uint32_t, std::uint64_t*) { log_.kernels.emplace_back(name); }
void on_push(const char* name) {
  log_.regions.emplace_back(name);
  ++log_.depth;
}
void on_pop() { --log_.depth; }
void on_alloc(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t) {
  ++log_.allocations;
}

// Registers the callbacks for the lifetime of the object.
struct Listening {
  Listening() {
    log_ = ToolLog{};
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(on_kernel);
    tools::set_push_region_callback(on_push);
    tools::set_pop_region_callback(on_pop);
    tools::set_allocate_data_callback(on_alloc);
  }
  ~Listening() {
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(nullptr);
    tools::set_push_region_callback(nullptr);
    tools::set_pop_region_callback(nullptr);
    tools::set_allocate_data_callback(nullptr);
  }
};

template <class Exec>
class Profiling : public ::testing::Test {};
TYPED_TEST_SUITE(Profiling, qtest::Backends, qtest::BackendName);

TYPED_TEST(Profiling, OneLabelledKernelNoAllocationBalancedRegions) {
  using mem = typename TypeParam::memory_space;
  const std::size_t batch = 16, vocab = 20000;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> logits("logits", batch, vocab);
  Kokkos::View<int*, mem> k("k", batch);
  Kokkos::View<float*, mem> p("p", batch);
  Kokkos::View<qrita::RowStats*, mem> stats("stats", batch);
  auto h = Kokkos::create_mirror_view(logits);
  std::mt19937_64 rng(1);
  for (std::size_t r = 0; r < batch; ++r) qrita::synthetic::lm_row(&h(r, 0), vocab, rng);
  Kokkos::deep_copy(logits, h);
  Kokkos::deep_copy(k, 50);
  Kokkos::deep_copy(p, 0.9f);
  const TypeParam space;
  qrita::sample_mask(space, logits, k, p);  // sizes the team scratch once
  space.fence();

  Listening listening;
  for (int call = 0; call < 3; ++call) {
    qrita::sample_mask(space, logits, k, p);
    qrita::sample_mask(space, logits, p);
    qrita::sample_mask(space, logits, k, p, {}, stats);
  }
  space.fence();
  EXPECT_EQ(log_.allocations, 0) << "sample_mask allocated memory";
  EXPECT_EQ(log_.kernels, std::vector<std::string>(9, "qrita::sample_mask"));
  EXPECT_EQ(log_.regions, std::vector<std::string>(9, "qrita::sample_mask"));
  EXPECT_EQ(log_.depth, 0);
  {  // control: the listener does see an allocation
    Kokkos::View<float*, mem> control("control", 8);
    EXPECT_EQ(log_.allocations, 1);
  }

  // A rejected call leaves no region open and launches nothing.
  log_ = ToolLog{};
  qrita::Options bad;
  bad.team_size = 1 << 20;
  EXPECT_THROW(qrita::sample_mask(space, logits, k, p, bad), std::invalid_argument);
  EXPECT_EQ(log_.depth, 0);
  EXPECT_TRUE(log_.kernels.empty());
}

}  // namespace
