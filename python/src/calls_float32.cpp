// SPDX-License-Identifier: Apache-2.0
// The calls on float32 logits.
#include "calls_impl.hpp"

namespace qrita_python {
QRITA_PYTHON_DEFINE_CALLS(float)
}  // namespace qrita_python
