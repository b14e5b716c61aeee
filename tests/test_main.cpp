// SPDX-License-Identifier: Apache-2.0
// The test binary's entry point: Kokkos lives for the whole run, so every
// backend it enables is available to the typed tests.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
