#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   scripts/qwenchat.sh run    install what is missing, build, launch the app on the embedded default model
#   scripts/qwenchat.sh test   install what is missing, build, run every test (CI calls this)
#   scripts/qwenchat.sh deb    install what is missing, build the Debian package (packaging/build_deb.sh)
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
  libpcre2-dev libutf8proc-dev libmd4c-dev libmd4c-html0-dev nlohmann-json3-dev libgtest-dev
  clang-14 libclang-rt-14-dev
  xvfb xauth xdotool x11-utils imagemagick libgl1-mesa-dri mesa-utils fonts-dejavu-core
  dpkg-dev help2man lintian desktop-file-utils appstream
  libcpp-httplib-dev curl sqlite3)
# Node runs the Hugging Face agreement tests (tests/agreement). Debian's packages only when no node/npm
# is on PATH: NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
command -v node > /dev/null && command -v npm > /dev/null || PACKAGES+=(nodejs npm)
# For `run` only (the tests do not need them): Chinese/Japanese text in the app. The app merges Noto Sans
# CJK into its regular face when the file is there (app/gui/fonts.cpp). No emoji font: Debian's libimgui
# is built with 16-bit ImWchar, so emoji above U+FFFF cannot be drawn whatever the font, and stb_truetype
# cannot read Noto Color Emoji's bitmap glyphs (docs/GUI.md).
RUN_PACKAGES=(fonts-noto-cjk)

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
    PACKAGES+=("${RUN_PACKAGES[@]}")
    install_missing
    # Machine code for this machine's GPU only (a quarter of the compile time of the full list), when one
    # is present and the build folder is new; a packaged build compiles the full list.
    arch=()
    if [ ! -f "$BUILD/CMakeCache.txt" ] && command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
      arch=(-DCMAKE_CUDA_ARCHITECTURES=native)
    fi
    configure_build "$BUILD" "${arch[@]}"
    exec "$BUILD/app/qwenchat" "$@"
    ;;
  test)
    install_missing
    # The test build compiles every .cu file for one architecture (sm_90, the card we measure on): that is
    # what proves they compile, at a sixth of the time of the default list (cmake/QwenchatCudaArch.cmake).
    configure_build "$BUILD" -DCMAKE_CUDA_ARCHITECTURES="${QWENCHAT_CUDA_ARCHITECTURES:-90}" -DQWENCHAT_WERROR=ON
    (cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 1500)
    # Second build: clang + AddressSanitizer/UBSan for every parser of outside files, plus the bounded
    # libFuzzer run of the GGUF reader. GPU and GUI parts are off there (they have their own suites above).
    CC=clang-14 CXX=clang++-14 configure_build "$BUILD-asan" -DQWENCHAT_CUDA=OFF -DQWENCHAT_GUI=OFF -DQWENCHAT_WERROR=ON \
      -DQWENCHAT_SANITIZE=ON -DQWENCHAT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
    (cd "$BUILD-asan" && ctest --output-on-failure -j "$JOBS" -L "asan|fuzz" --timeout 1500)
    # Third: the Debian package a user installs (packaging/check_deb.sh: a Release build with Debian's
    # flags, lintian, desktop entry and metainfo, install, use, remove). Exit 77 = skipped, with the reason.
    rc=0
    packaging/check_deb.sh || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
    ;;
  deb)
    install_missing
    exec packaging/build_deb.sh "$@"  # --cpu for the CPU-only package
    ;;
  *)
    echo "usage: scripts/qwenchat.sh run [app arguments] | test | deb [--cpu]" >&2
    exit 2
    ;;
esac
