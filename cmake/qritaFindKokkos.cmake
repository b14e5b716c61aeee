# Finds Kokkos >= 3.4 (any later major version too) and defines
# QRITA_KOKKOS_VERSION. Shared by the build and by the installed
# qritaConfig.cmake.
#
# Kokkos 3.x installs a version file with "SameMajorVersion" compatibility,
# later releases one with "AnyNewerVersion"; a plain find_package(Kokkos 3.4)
# would therefore reject some newer installs. Ask for 3.4 first, then for any
# version, and check the floor ourselves.
macro(qrita_find_kokkos)
  if(NOT TARGET Kokkos::kokkos)
    find_package(Kokkos 3.4 CONFIG QUIET)
    if(NOT Kokkos_FOUND)
      find_package(Kokkos CONFIG REQUIRED)
    endif()
  endif()
  if(Kokkos_VERSION VERSION_LESS 3.4)
    message(FATAL_ERROR "qrita needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} in ${Kokkos_DIR}")
  endif()
  set(QRITA_KOKKOS_VERSION "${Kokkos_VERSION}")
endmacro()
