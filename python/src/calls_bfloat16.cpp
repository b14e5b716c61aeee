// SPDX-License-Identifier: Apache-2.0
// The calls on bfloat16 logits.
#include "calls_impl.hpp"

namespace qrita_python {
QRITA_PYTHON_DEFINE_CALLS(qrita::bfloat16)
}  // namespace qrita_python
