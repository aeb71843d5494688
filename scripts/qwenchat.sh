#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   scripts/qwenchat.sh run    install what is missing, build, launch the app on the embedded default model
#   scripts/qwenchat.sh test   install what is missing, build, run every test (CI calls this)
# Extra arguments after `run` go to the app. Environment: QWENCHAT_BUILD_DIR (default build),
# QWENCHAT_JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${QWENCHAT_BUILD_DIR:-$ROOT/build}
JOBS=${QWENCHAT_JOBS:-$(nproc)}

# Debian 12 packages (third_party/README.md says what each is for).
PACKAGES=(build-essential cmake ninja-build pkg-config git
  libglfw3-dev libimgui-dev libgl-dev libsqlite3-dev libsqlitecpp-dev libsentencepiece-dev sentencepiece
  libpcre2-dev libmd4c-dev libmd4c-html0-dev nlohmann-json3-dev libgtest-dev
  clang-14 libclang-rt-14-dev
  xvfb xauth xdotool x11-utils imagemagick libgl1-mesa-dri mesa-utils fonts-dejavu-core)
# Node runs the Hugging Face agreement tests (tests/agreement). Debian's packages only when no node/npm
# is on PATH: NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
command -v node > /dev/null && command -v npm > /dev/null || PACKAGES+=(nodejs npm)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "qwenchat: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_build() {
  local dir=$1; shift
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

cmd=${1:-}
shift || true
case "$cmd" in
  run)
    install_missing
    configure_build "$BUILD"
    exec "$BUILD/app/qwenchat" "$@"
    ;;
  test)
    install_missing
    # The test build compiles every .cu file for one architecture (sm_90, the card we measure on): that is
    # what proves they compile, at a quarter of the time of the default four-architecture list.
    configure_build "$BUILD" -DCMAKE_CUDA_ARCHITECTURES="${QWENCHAT_CUDA_ARCHITECTURES:-90}"
    (cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 1500)
    # Second build: clang + AddressSanitizer/UBSan for every parser of outside files, plus the bounded
    # libFuzzer run of the GGUF reader. GPU and GUI parts are off there (they have their own suites above).
    CC=clang-14 CXX=clang++-14 configure_build "$BUILD-asan" -DQWENCHAT_CUDA=OFF -DQWENCHAT_GUI=OFF \
      -DQWENCHAT_SANITIZE=ON -DQWENCHAT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
    (cd "$BUILD-asan" && ctest --output-on-failure -j "$JOBS" -L "asan|fuzz" --timeout 1500)
    ;;
  *)
    echo "usage: scripts/qwenchat.sh run [app arguments] | test" >&2
    exit 2
    ;;
esac
