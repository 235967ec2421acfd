#!/usr/bin/env bash
# Shared by scripts/run and scripts/test: install missing Debian packages, configure, build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${RACKTWIN_BUILD_DIR:-$ROOT/build}"
SANITIZE_BUILD_DIR="${RACKTWIN_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"

# The one list of Debian 12 packages racktwin builds and tests with (see DEVELOPERS.md).
PACKAGES=(
  g++ cmake ninja-build pkg-config git
  libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev libboost-graph-dev libsimgrid-dev
  libgtest-dev libbenchmark-dev
  libsqlitecpp-dev qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev fonts-dejavu-core
  libopenmpi-dev openmpi-bin sqlite3
)

ensure_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "racktwin: installing missing Debian packages: ${missing[*]}" >&2
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "racktwin: need root or sudo to install: ${missing[*]}" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local gen=()
  [ -f "$BUILD_DIR/CMakeCache.txt" ] || gen=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE="${RACKTWIN_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
  cmake --build "$BUILD_DIR" --parallel "${RACKTWIN_JOBS:-$(nproc)}"
}

# A target ($1: sanitizer_suite, or all) with AddressSanitizer and UndefinedBehaviorSanitizer, in a
# build directory of its own.
configure_and_build_sanitized() {
  local gen=()
  [ -f "$SANITIZE_BUILD_DIR/CMakeCache.txt" ] || gen=(-G Ninja)
  cmake -S "$ROOT" -B "$SANITIZE_BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE="${RACKTWIN_BUILD_TYPE:-RelWithDebInfo}" \
    -DRACKTWIN_SANITIZE=ON >/dev/null
  cmake --build "$SANITIZE_BUILD_DIR" --parallel "${RACKTWIN_JOBS:-$(nproc)}" --target "$1"
}

# Open MPI refuses to run as root and to start more ranks than cores unless told; CI runs as root on
# 2 cores. Set for the project's own runs only, not in the user's environment.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
