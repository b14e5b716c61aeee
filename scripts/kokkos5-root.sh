#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and tests qrita against Debian sid's packaged Kokkos 5 (libkokkos-dev
# 5.2.2: OpenMP backend, C++20, shared libraries), inside a Debian sid root.
#
#   scripts/kokkos5-root.sh [--root DIR] [--setup-only | --run COMMAND]
#
# Debian 12 cannot install sid's libkokkos-dev (it needs a newer libc and
# libstdc++), so this script
# 1. creates a minimal sid root with debootstrap (default DIR: build/sid-root,
#    git-ignored) from the Debian mirror apt on this machine is configured
#    with, and installs g++, CMake, Ninja, libkokkos-dev, GoogleTest, Google
#    Benchmark, fmt and CLI11 in it. A finished root carries a stamp file and is
#    reused (a second run skips this step); QRITA_SID_FORCE=1 rebuilds it,
#    QRITA_SID_MIRROR=<uri> picks another mirror.
# 2. bind-mounts the repository at /src/qrita in the root (and /proc), and
#    there, with Debian's Kokkos found through plain find_package (no
#    Kokkos_ROOT; qrita works around the package's broken CMake files):
#    configures the `kokkos5` preset with every header compiled on its own,
#    builds everything (tests, perf suite, CLI, header check), runs the test
#    suite (which includes the CLI tests and the perf suite's smoke run), runs
#    qrita-cli on a small batch, installs qrita and builds and runs
#    examples/minimal against the installed qrita with find_package(qrita).
# Build outputs land in build/kokkos5, build/kokkos5-install and
# build/kokkos5-downstream. Mounts are undone on exit.
#
# Needs root (debootstrap, chroot, mount). --setup-only stops after step 1;
# --run COMMAND runs COMMAND (bash) in /src/qrita inside the root instead of
# step 2's checks, e.g. --run 'ctest --preset kokkos5 -R Semantics'.
set -euo pipefail

say() { printf '[qrita kokkos5] %s\n' "$*"; }
sid_packages=(g++ cmake ninja-build libkokkos-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
              libcli11-dev)
apt_opts=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0)

# --- inside the root: configure, build, test ---------------------------------
if [ "${1:-}" = --inside ]; then
  cd /src/qrita
  export OMP_PROC_BIND=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
  if [ -n "${2:-}" ]; then exec bash -c "$2"; fi
  say "$(g++ --version | head -n1); $(cmake --version | head -n1); libkokkos-dev $(dpkg-query -W -f='${Version}' libkokkos-dev)"
  say "configure (cmake --preset kokkos5 -DQRITA_CHECK_HEADERS=ON)"
  cmake --preset kokkos5 -DQRITA_CHECK_HEADERS=ON > build/kokkos5-configure.log 2>&1 || {
    cat build/kokkos5-configure.log >&2; exit 1; }
  grep -E 'qrita:|qrita_perf:' build/kokkos5-configure.log || true
  say "build: tests, perf suite, CLI, every public header on its own (-j2)"
  cmake --build --preset kokkos5
  say "test suite (ctest --preset kokkos5; includes the CLI tests and the perf smoke run)"
  ctest --preset kokkos5
  say "qrita-cli on a small batch"
  build/kokkos5/src/qrita-cli --batch 8 --repeat 3
  say "install, then build and run examples/minimal with find_package(qrita) and the system Kokkos"
  rm -rf build/kokkos5-install build/kokkos5-downstream
  cmake --install build/kokkos5 --prefix build/kokkos5-install > /dev/null
  cmake -S examples/minimal -B build/kokkos5-downstream -G Ninja \
    -DCMAKE_PREFIX_PATH="$PWD/build/kokkos5-install" > build/kokkos5-downstream.log 2>&1 || {
    cat build/kokkos5-downstream.log >&2; exit 1; }
  cmake --build build/kokkos5-downstream
  build/kokkos5-downstream/minimal
  say "all checks passed against Kokkos $(dpkg-query -W -f='${Version}' libkokkos-dev)"
  exit 0
fi

# --- outside: the root, the mounts -------------------------------------------
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=$repo/build/sid-root
setup_only=0
run_command=
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --root=*) root=${1#*=}; shift ;;
    --setup-only) setup_only=1; shift ;;
    --run) run_command=$2; shift 2 ;;
    --run=*) run_command=${1#*=}; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "kokkos5-root: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "kokkos5-root: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd)/$(basename "$root")

# The Debian mirror apt here already uses (scripts/debian-mirror.sh).
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"

stamp=$root/.qrita-sid-root
want="sid packages: ${sid_packages[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -z "${QRITA_SID_FORCE:-}" ]; then
  say "sid root: present in $root"
else
  t0=$(date +%s)
  mirror=${QRITA_SID_MIRROR:-$(debian_mirror)}
  [ -n "$mirror" ] || { echo "kokkos5-root: no Debian mirror found in apt's sources; set QRITA_SID_MIRROR" >&2; exit 1; }
  if ! command -v debootstrap > /dev/null; then
    say "installing debootstrap"
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
      --no-install-recommends debootstrap > /dev/null
  fi
  # A half-made root (no stamp) is started over; never with mounts inside.
  for m in "$root/src/qrita" "$root/proc"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
  rm -rf --one-file-system "$root"
  mkdir -p "$root"
  log=$(dirname "$root")/sid-root.log
  say "debootstrap sid into $root (log: $log)"
  debootstrap --variant=minbase --include=ca-certificates sid "$root" "$mirror" > "$log" 2>&1 || {
    tail -n 30 "$log" >&2; echo "kokkos5-root: debootstrap failed; full log: $log" >&2; exit 1; }
  say "installing in the root: ${sid_packages[*]}"
  {
    chroot "$root" apt-get "${apt_opts[@]}" update &&
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y "${sid_packages[@]}" &&
    chroot "$root" apt-get clean
  } >> "$log" 2>&1 || {
    tail -n 30 "$log" >&2; echo "kokkos5-root: package installation failed; full log: $log" >&2; exit 1; }
  echo "$want" > "$stamp"
  say "sid root ready in $(( $(date +%s) - t0 )) s"
fi
[ $setup_only -eq 1 ] && exit 0

mounted=()
cleanup() {
  local i
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do umount "${mounted[$i]}" || umount -l "${mounted[$i]}" || true; done
}
trap cleanup EXIT
mkdir -p "$root/src/qrita" "$root/proc"
if ! mountpoint -q "$root/proc"; then mount -t proc proc "$root/proc"; mounted+=("$root/proc"); fi
if ! mountpoint -q "$root/src/qrita"; then mount --bind "$repo" "$root/src/qrita"; mounted+=("$root/src/qrita"); fi
mkdir -p "$repo/build"
t0=$(date +%s)
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  ${OMP_NUM_THREADS:+OMP_NUM_THREADS=$OMP_NUM_THREADS} \
  bash /src/qrita/scripts/kokkos5-root.sh --inside "$run_command"
[ -n "$run_command" ] || say "build and checks inside the root: $(( $(date +%s) - t0 )) s"
