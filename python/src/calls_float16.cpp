// SPDX-License-Identifier: Apache-2.0
// The calls on float16 logits.
#include "calls_impl.hpp"

namespace qrita_python {
QRITA_PYTHON_DEFINE_CALLS(qrita::float16)
}  // namespace qrita_python
