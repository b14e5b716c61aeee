// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_QRITA_HPP
#define QRITA_QRITA_HPP

// The umbrella header: everything a user of qrita needs.
//
//   #include <qrita/qrita.hpp>
//   qrita::sample_mask(space, logits, k, p);
//
// The host reference implementation (qrita/oracle.hpp) is separate: it does
// not need Kokkos and is only for tests and spot checks.

#include <qrita/candidate_list.hpp>
#include <qrita/options.hpp>
#include <qrita/params.hpp>
#include <qrita/sample_mask.hpp>
#include <qrita/sample_tokens.hpp>
#include <qrita/types.hpp>
#include <qrita/version.hpp>
#include <qrita/workspace.hpp>

#endif  // QRITA_QRITA_HPP
