// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_REDUCERS_HPP
#define QRITA_DETAIL_REDUCERS_HPP

// One Kokkos reducer for every multi-field team reduction qrita does. The
// value type supplies static init(T&) and join(T&, const T&); both must be
// order-independent (integer sums, min, max), which is what makes the
// results deterministic whatever the team size or backend.

#include <qrita/detail/compat.hpp>

namespace qrita {
namespace detail {

template <class T>
struct StructReducer {
  using reducer          = StructReducer<T>;
  using value_type       = T;
  using result_view_type = Kokkos::View<value_type, Kokkos::HostSpace,
                                        Kokkos::MemoryUnmanaged>;

 private:
  result_view_type m_value;

 public:
  KOKKOS_INLINE_FUNCTION explicit StructReducer(value_type& value)
      : m_value(&value) {}

  KOKKOS_INLINE_FUNCTION void join(value_type& dest,
                                   const value_type& src) const {
    T::join(dest, src);
  }

#if KOKKOS_VERSION < 40000
  // Kokkos 3.x may ask for the volatile overload; team reductions do not rely
  // on volatile semantics (they synchronise with barriers or shuffles).
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest,
                                   const volatile value_type& src) const {
    T::join(const_cast<value_type&>(dest), const_cast<const value_type&>(src));
  }
#endif

  KOKKOS_INLINE_FUNCTION void init(value_type& value) const { T::init(value); }

  KOKKOS_INLINE_FUNCTION value_type& reference() const {
    return *m_value.data();
  }

  KOKKOS_INLINE_FUNCTION result_view_type view() const { return m_value; }

  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_REDUCERS_HPP
