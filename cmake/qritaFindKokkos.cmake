# SPDX-License-Identifier: Apache-2.0
# Finds Kokkos >= 3.4 (any later major version too) and defines
# QRITA_KOKKOS_VERSION. Shared by the build and by the installed
# qritaConfig.cmake.
#
# Kokkos 3.x installs a version file with "SameMajorVersion" compatibility,
# later releases one with "AnyNewerVersion"; a plain find_package(Kokkos 3.4)
# would therefore reject some newer installs. Ask for 3.4 first, then for any
# version, and check the floor ourselves.
#
# Faulty distribution packages. Debian's libkokkos-dev 5.2.2 (sid) ships a
# KokkosTargets.cmake that imports libkokkosalgorithms.a and libkokkossimd.a,
# which the package does not contain; CMake's generated check then stops the
# configure of every project that calls find_package(Kokkos) with a fatal
# error ("The installation package was faulty ..."), which no caller can
# catch. So before find_package(Kokkos) runs, qrita locates the KokkosConfig.cmake it
# would load and checks that every file its KokkosTargets files import
# exists. If one is missing, qrita does not load that package; it builds an
# imported target Kokkos::kokkos from what is installed instead: the
# directory holding Kokkos_Core.hpp, libkokkoscore and libkokkoscontainers
# (and libkokkosalgorithms / libkokkossimd where they exist), the C++
# standard, backends and version from KokkosCore_config.h, and OpenMP, C++
# threads and libdl when that header says Kokkos uses them. This covers host
# backends (Serial, OpenMP, Threads); a faulty GPU package stops with an
# error that names the missing files and the fix. QRITA_KOKKOS_FALLBACK=OFF
# turns the fallback off (find_package(Kokkos) then reports the fault).

# The directory of the KokkosConfig.cmake that find_package(Kokkos) would
# load, following its search order for the usual places (Kokkos_DIR,
# Kokkos_ROOT, CMAKE_PREFIX_PATH, the system prefixes); empty if none.
function(_qrita_locate_kokkos_config out)
  set(${out} "" PARENT_SCOPE)
  if(Kokkos_DIR AND EXISTS "${Kokkos_DIR}/KokkosConfig.cmake")
    set(${out} "${Kokkos_DIR}" PARENT_SCOPE)
    return()
  endif()
  set(prefixes ${Kokkos_ROOT} ${KOKKOS_ROOT})
  foreach(var Kokkos_ROOT KOKKOS_ROOT CMAKE_PREFIX_PATH)
    if(DEFINED ENV{${var}})
      string(REPLACE ":" ";" env_list "$ENV{${var}}")
      if(var STREQUAL "CMAKE_PREFIX_PATH")
        list(APPEND prefixes ${CMAKE_PREFIX_PATH} ${env_list})
      else()
        list(APPEND prefixes ${env_list})
      endif()
    elseif(var STREQUAL "CMAKE_PREFIX_PATH")
      list(APPEND prefixes ${CMAKE_PREFIX_PATH})
    endif()
  endforeach()
  list(APPEND prefixes ${CMAKE_SYSTEM_PREFIX_PATH})
  set(suffixes "" cmake lib64/cmake/Kokkos lib/cmake/Kokkos share/cmake/Kokkos
    lib64/cmake/kokkos lib/cmake/kokkos)
  if(CMAKE_LIBRARY_ARCHITECTURE)
    list(PREPEND suffixes lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/Kokkos)
  endif()
  foreach(prefix IN LISTS prefixes)
    foreach(suffix IN LISTS suffixes)
      set(dir "${prefix}/${suffix}")
      if(EXISTS "${dir}/KokkosConfig.cmake")
        get_filename_component(dir "${dir}" ABSOLUTE)
        set(${out} "${dir}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

# Lists in ${missing} the files that the KokkosTargets*.cmake files in
# ${dir} import but that do not exist, and in ${prefix} the install prefix
# they are relative to.
function(_qrita_kokkos_missing_files dir missing prefix)
  # KokkosTargets.cmake walks up from its own directory, one line per level.
  set(levels 3)
  if(EXISTS "${dir}/KokkosTargets.cmake")
    file(STRINGS "${dir}/KokkosTargets.cmake" up
      REGEX "get_filename_component\\(_IMPORT_PREFIX \"\\\${_IMPORT_PREFIX}\" PATH\\)")
    list(LENGTH up levels)
  endif()
  set(import_prefix "${dir}")
  foreach(i RANGE 1 ${levels})
    get_filename_component(import_prefix "${import_prefix}" DIRECTORY)
  endforeach()
  file(GLOB target_files "${dir}/KokkosTargets-*.cmake")
  set(absent)
  foreach(target_file IN LISTS target_files)
    file(STRINGS "${target_file}" lines REGEX "_(cmake_import_check_files_for|IMPORT_CHECK_FILES_FOR)_")
    foreach(line IN LISTS lines)
      string(REGEX MATCHALL "\"[^\"]+\"" quoted "${line}")
      foreach(path IN LISTS quoted)
        string(REPLACE "\"" "" path "${path}")
        string(REPLACE "\${_IMPORT_PREFIX}" "${import_prefix}" path "${path}")
        if(NOT EXISTS "${path}")
          list(APPEND absent "${path}")
        endif()
      endforeach()
    endforeach()
  endforeach()
  set(${missing} "${absent}" PARENT_SCOPE)
  set(${prefix} "${import_prefix}" PARENT_SCOPE)
endfunction()

# Makes Kokkos::kokkos from the headers and libraries installed under
# ${prefix}, for a Kokkos whose CMake package at ${dir} is faulty.
function(_qrita_kokkos_fallback dir prefix missing)
  string(REPLACE ";" "\n     " missing_text "${missing}")
  set(fix "Fix: reinstall or repair that Kokkos (its CMake files must match the installed libraries), or point Kokkos_ROOT at a Kokkos installed from source (cmake --install of the Kokkos source tree)")
  set(hint_libdirs "${prefix}/lib64" "${prefix}/lib")
  if(CMAKE_LIBRARY_ARCHITECTURE)
    list(PREPEND hint_libdirs "${prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  endif()
  find_path(QRITA_KOKKOS_INCLUDE_DIR NAMES KokkosCore_config.h
    PATHS "${prefix}/include/kokkos" "${prefix}/include" NO_DEFAULT_PATH)
  find_library(QRITA_KOKKOS_CORE_LIBRARY NAMES kokkoscore PATHS ${hint_libdirs} NO_DEFAULT_PATH)
  mark_as_advanced(QRITA_KOKKOS_INCLUDE_DIR QRITA_KOKKOS_CORE_LIBRARY)
  if(NOT QRITA_KOKKOS_INCLUDE_DIR OR NOT EXISTS "${QRITA_KOKKOS_INCLUDE_DIR}/Kokkos_Core.hpp"
     OR NOT QRITA_KOKKOS_CORE_LIBRARY)
    message(FATAL_ERROR "qrita: the Kokkos CMake package in\n  ${dir}\nis faulty: it imports files that are not installed:\n     ${missing_text}\n"
      "and qrita could not find Kokkos_Core.hpp, KokkosCore_config.h and libkokkoscore under ${prefix} to use instead.\n${fix}.")
  endif()

  # Version, C++ standard and backends, as the Kokkos build recorded them.
  file(STRINGS "${QRITA_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h" defines REGEX "^#define KOKKOS_")
  set(version_parts)
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "#define KOKKOS_VERSION_${part} ([0-9]+)" match "${defines}")
    list(APPEND version_parts "${CMAKE_MATCH_1}")
  endforeach()
  string(REPLACE ";" "." version "${version_parts}")
  if(NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    string(REGEX MATCH "#define KOKKOS_VERSION ([0-9]+)" match "${defines}")
    if(CMAKE_MATCH_1)
      math(EXPR major "${CMAKE_MATCH_1} / 10000")
      math(EXPR minor "(${CMAKE_MATCH_1} / 100) % 100")
      math(EXPR patch "${CMAKE_MATCH_1} % 100")
      set(version "${major}.${minor}.${patch}")
    elseif(EXISTS "${dir}/KokkosConfigVersion.cmake")
      file(STRINGS "${dir}/KokkosConfigVersion.cmake" match REGEX "set\\(PACKAGE_VERSION \"")
      string(REGEX MATCH "\"([^\"]+)\"" match "${match}")
      set(version "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(cxx_standard 17)
  foreach(std 17 20 23 26)
    if(defines MATCHES "#define KOKKOS_ENABLE_CXX${std}")
      set(cxx_standard ${std})
    endif()
  endforeach()
  set(devices)
  foreach(device SERIAL OPENMP THREADS HPX CUDA HIP SYCL OPENMPTARGET OPENACC)
    if(defines MATCHES "#define KOKKOS_ENABLE_${device}( |\n|;|$)")
      list(APPEND devices ${device})
    endif()
  endforeach()
  set(host_devices SERIAL OPENMP THREADS)
  set(unsupported "${devices}")
  list(REMOVE_ITEM unsupported ${host_devices})
  if(unsupported)
    message(FATAL_ERROR "qrita: the Kokkos ${version} CMake package in\n  ${dir}\nis faulty: it imports files that are not installed:\n     ${missing_text}\n"
      "qrita can stand in for it only for host backends, and this Kokkos is built for ${unsupported}.\n${fix}.")
  endif()

  set(libraries "${QRITA_KOKKOS_CORE_LIBRARY}")
  foreach(name kokkoscontainers kokkosalgorithms kokkossimd)
    string(TOUPPER "${name}" upper)
    find_library(QRITA_${upper}_LIBRARY NAMES ${name} PATHS ${hint_libdirs} NO_DEFAULT_PATH)
    mark_as_advanced(QRITA_${upper}_LIBRARY)
    if(QRITA_${upper}_LIBRARY)
      list(APPEND libraries "${QRITA_${upper}_LIBRARY}")
    endif()
  endforeach()
  if("OPENMP" IN_LIST devices)
    find_package(OpenMP REQUIRED COMPONENTS CXX)
    list(APPEND libraries OpenMP::OpenMP_CXX)
  endif()
  if("THREADS" IN_LIST devices)
    find_package(Threads REQUIRED)
    list(APPEND libraries Threads::Threads)
  endif()
  if(defines MATCHES "#define KOKKOS_ENABLE_LIBDL" AND CMAKE_DL_LIBS)
    list(APPEND libraries ${CMAKE_DL_LIBS})
  endif()

  add_library(Kokkos::kokkos INTERFACE IMPORTED)
  set_target_properties(Kokkos::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${QRITA_KOKKOS_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES "cxx_std_${cxx_standard}"
    INTERFACE_LINK_LIBRARIES "${libraries}")

  if(NOT qrita_FIND_QUIETLY)
    string(REPLACE ";" ", " devices_text "${devices}")
    string(REPLACE ";" ", " missing "${missing}")
    message(STATUS "qrita: the Kokkos CMake package in ${dir} is faulty (it imports files that are not installed: ${missing}); "
      "using Kokkos ${version} (${devices_text}, C++${cxx_standard}) from ${QRITA_KOKKOS_INCLUDE_DIR} and ${QRITA_KOKKOS_CORE_LIBRARY} instead")
  endif()
  # What find_package(Kokkos) would have set and qrita uses.
  set(Kokkos_FOUND TRUE PARENT_SCOPE)
  set(Kokkos_VERSION "${version}" PARENT_SCOPE)
  set(Kokkos_DIR "${dir}" PARENT_SCOPE)
  set(Kokkos_DEVICES "${devices}" PARENT_SCOPE)
  set(Kokkos_CXX_STANDARD "${cxx_standard}" PARENT_SCOPE)
  foreach(device IN LISTS devices)
    set(Kokkos_ENABLE_${device} ON PARENT_SCOPE)
  endforeach()
  set(QRITA_KOKKOS_FALLBACK_USED TRUE PARENT_SCOPE)
endfunction()

macro(qrita_find_kokkos)
  if(NOT TARGET Kokkos::kokkos)
    set(_qrita_kokkos_missing)
    if(NOT DEFINED QRITA_KOKKOS_FALLBACK OR QRITA_KOKKOS_FALLBACK)
      _qrita_locate_kokkos_config(_qrita_kokkos_dir)
      if(_qrita_kokkos_dir)
        _qrita_kokkos_missing_files("${_qrita_kokkos_dir}" _qrita_kokkos_missing _qrita_kokkos_prefix)
      endif()
    endif()
    if(_qrita_kokkos_missing)
      _qrita_kokkos_fallback("${_qrita_kokkos_dir}" "${_qrita_kokkos_prefix}" "${_qrita_kokkos_missing}")
    else()
      find_package(Kokkos 3.4 CONFIG QUIET)
      if(NOT Kokkos_FOUND)
        find_package(Kokkos CONFIG REQUIRED)
      endif()
    endif()
    unset(_qrita_kokkos_dir)
    unset(_qrita_kokkos_prefix)
    unset(_qrita_kokkos_missing)
  endif()
  if(Kokkos_VERSION VERSION_LESS 3.4)
    message(FATAL_ERROR "qrita needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} in ${Kokkos_DIR}")
  endif()
  set(QRITA_KOKKOS_VERSION "${Kokkos_VERSION}")
endmacro()
