// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_TABLES_HPP
#define QRITA_DETAIL_TABLES_HPP

// The two lookup tables of Gaussian sigma-truncation, as printed in the
// appendix of Park, Kim, Cheung, Stoica, "Qrita: High-performance Top-k and
// Top-p using Pivot-based Truncation and Selection" (arXiv 2602.01518).
//
// Each has 200 entries, indexed by floor(200 * x) clamped to [0, 199]:
//  * top-k, x = k / V: delta_k = Phi^-1(1 - k / V), the standard normal
//    quantile (entry i is Phi^-1(1 - (i + 1) / 200) up to sampling noise,
//    i.e. the conservative end of its bin). The appendix prints it under the
//    name _PERCENTILE_TO_STD_TABLE; its caption there is swapped with the
//    top-p one, the values follow the formula above (and vLLM indexes it by
//    k / V).
//  * top-p, x = p: delta_p, the threshold (in sigmas above the mean) above
//    which Gaussian samples hold softmax mass p. Printed as
//    _NORMAL_CDF_TO_SIGMA_TABLE.
//
// The tables only choose where the candidate set is cut; a poor choice costs
// time (a truncation miss), never correctness.
//
// Constants in the functions that read them, not members of the kernel:
// as members they would make the kernel functor about 1.9 KB instead of
// about 0.3 KB, and nvcc copies the functor into every thread's local
// memory wherever a call is left out of line (docs/DESIGN.md, "Code shape
// on GPUs").

#include <qrita/detail/compat.hpp>

namespace qrita {
namespace detail {

// delta_k for table index i in [0, 199].
KOKKOS_INLINE_FUNCTION float sigma_topk(int i) {
  static constexpr float table[200] = {
       2.576f,  2.319f,  2.178f,  2.064f,  1.968f,  1.892f,  1.819f,  1.757f,  1.708f,  1.659f,
       1.616f,  1.568f,  1.526f,  1.492f,  1.456f,  1.420f,  1.382f,  1.342f,  1.309f,  1.280f,
       1.249f,  1.221f,  1.193f,  1.169f,  1.145f,  1.121f,  1.095f,  1.073f,  1.050f,  1.030f,
       1.008f,  0.987f,  0.966f,  0.945f,  0.926f,  0.910f,  0.891f,  0.871f,  0.854f,  0.837f,
       0.819f,  0.803f,  0.784f,  0.767f,  0.753f,  0.734f,  0.719f,  0.702f,  0.690f,  0.675f,
       0.658f,  0.640f,  0.625f,  0.609f,  0.595f,  0.578f,  0.564f,  0.550f,  0.537f,  0.521f,
       0.509f,  0.495f,  0.481f,  0.466f,  0.453f,  0.439f,  0.424f,  0.410f,  0.397f,  0.383f,
       0.370f,  0.356f,  0.343f,  0.330f,  0.316f,  0.302f,  0.289f,  0.274f,  0.261f,  0.247f,
       0.235f,  0.223f,  0.209f,  0.196f,  0.184f,  0.172f,  0.159f,  0.149f,  0.137f,  0.124f,
       0.112f,  0.100f,  0.086f,  0.074f,  0.062f,  0.050f,  0.035f,  0.023f,  0.009f, -0.003f,
      -0.015f, -0.027f, -0.039f, -0.052f, -0.063f, -0.074f, -0.085f, -0.097f, -0.109f, -0.122f,
      -0.134f, -0.147f, -0.158f, -0.171f, -0.184f, -0.196f, -0.210f, -0.223f, -0.235f, -0.248f,
      -0.261f, -0.275f, -0.289f, -0.302f, -0.317f, -0.328f, -0.341f, -0.353f, -0.368f, -0.382f,
      -0.396f, -0.410f, -0.426f, -0.439f, -0.452f, -0.465f, -0.480f, -0.493f, -0.507f, -0.521f,
      -0.537f, -0.551f, -0.568f, -0.582f, -0.597f, -0.614f, -0.628f, -0.643f, -0.658f, -0.673f,
      -0.691f, -0.706f, -0.721f, -0.738f, -0.754f, -0.769f, -0.789f, -0.808f, -0.824f, -0.838f,
      -0.857f, -0.877f, -0.893f, -0.912f, -0.929f, -0.947f, -0.965f, -0.983f, -1.003f, -1.027f,
      -1.050f, -1.070f, -1.092f, -1.117f, -1.139f, -1.162f, -1.189f, -1.216f, -1.241f, -1.272f,
      -1.300f, -1.330f, -1.367f, -1.404f, -1.441f, -1.485f, -1.523f, -1.564f, -1.607f, -1.658f,
      -1.710f, -1.778f, -1.832f, -1.901f, -1.978f, -2.068f, -2.174f, -2.325f, -2.577f, -3.813f,
  };
  return table[i];
}

// delta_p for table index i in [0, 199].
KOKKOS_INLINE_FUNCTION float sigma_topp(int i) {
  static constexpr float table[200] = {
       3.656f,  3.650f,  3.650f,  3.650f,  3.626f,  3.626f,  3.626f,  3.514f,  3.514f,  3.503f,
       3.503f,  3.434f,  3.434f,  3.428f,  3.428f,  3.387f,  3.380f,  3.380f,  3.376f,  3.373f,
       3.373f,  3.356f,  3.354f,  3.354f,  3.291f,  3.249f,  3.234f,  3.214f,  3.198f,  3.198f,
       3.185f,  3.177f,  3.177f,  3.165f,  3.164f,  3.161f,  3.138f,  3.120f,  3.115f,  3.113f,
       3.093f,  3.066f,  3.054f,  3.043f,  3.037f,  3.023f,  2.993f,  2.991f,  2.976f,  2.970f,
       2.952f,  2.946f,  2.932f,  2.908f,  2.902f,  2.895f,  2.886f,  2.874f,  2.861f,  2.844f,
       2.836f,  2.810f,  2.801f,  2.790f,  2.784f,  2.779f,  2.767f,  2.757f,  2.745f,  2.733f,
       2.723f,  2.716f,  2.693f,  2.678f,  2.671f,  2.656f,  2.649f,  2.629f,  2.611f,  2.595f,
       2.592f,  2.585f,  2.574f,  2.550f,  2.543f,  2.534f,  2.521f,  2.518f,  2.497f,  2.485f,
       2.468f,  2.450f,  2.441f,  2.430f,  2.412f,  2.402f,  2.389f,  2.383f,  2.377f,  2.364f,
       2.349f,  2.338f,  2.332f,  2.319f,  2.310f,  2.301f,  2.282f,  2.274f,  2.266f,  2.250f,
       2.242f,  2.236f,  2.226f,  2.215f,  2.207f,  2.196f,  2.179f,  2.171f,  2.162f,  2.147f,
       2.135f,  2.121f,  2.109f,  2.095f,  2.085f,  2.073f,  2.063f,  2.045f,  2.030f,  2.016f,
       2.003f,  1.992f,  1.983f,  1.972f,  1.960f,  1.949f,  1.940f,  1.928f,  1.912f,  1.897f,
       1.881f,  1.869f,  1.854f,  1.838f,  1.824f,  1.807f,  1.792f,  1.779f,  1.764f,  1.751f,
       1.739f,  1.726f,  1.711f,  1.697f,  1.685f,  1.668f,  1.652f,  1.636f,  1.622f,  1.603f,
       1.585f,  1.568f,  1.551f,  1.534f,  1.513f,  1.499f,  1.480f,  1.464f,  1.441f,  1.422f,
       1.394f,  1.373f,  1.347f,  1.320f,  1.296f,  1.270f,  1.246f,  1.219f,  1.190f,  1.163f,
       1.135f,  1.104f,  1.073f,  1.041f,  1.006f,  0.969f,  0.931f,  0.894f,  0.851f,  0.806f,
       0.757f,  0.702f,  0.643f,  0.574f,  0.498f,  0.405f,  0.288f,  0.134f, -0.110f, -3.813f,
  };
  return table[i];
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_TABLES_HPP
