#!/usr/bin/env bash
# Builds the Debian package the way a packager would: a Release build in its own folder with Debian's
# hardening flags (dpkg-buildflags), warnings not fatal, no tests, then CPack from the install rules.
#
#   packaging/build_deb.sh            # qwenchat_VERSION_amd64.deb (CUDA backend when nvcc is installed)
#   packaging/build_deb.sh --cpu      # qwenchat-cpu_VERSION_amd64.deb (no CUDA backend)
#
# The .deb lands in build-deb/ (QWENCHAT_DEB_OUT to change). QWENCHAT_CUDA_ARCHITECTURES narrows the CUDA
# architectures (CI: 90 only, to keep the check's build short); the default list is the release's.
# Needs: the build dependencies of scripts/qwenchat.sh, dpkg-dev (dpkg-shlibdeps), help2man.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
variant=cuda
[ "${1:-}" = "--cpu" ] && variant=cpu
OUT_DIR=${QWENCHAT_DEB_OUT:-$ROOT/build-deb}
BUILD=$ROOT/build-deb-$variant
JOBS=${QWENCHAT_JOBS:-$(nproc)}

for tool in dpkg-shlibdeps help2man cpack; do
  command -v "$tool" > /dev/null || { echo "build_deb: $tool is missing (apt-get install dpkg-dev help2man cmake)" >&2; exit 1; }
done
cuda=(-DQWENCHAT_CUDA=OFF)
if [ $variant = cuda ]; then
  cuda=(-DQWENCHAT_CUDA=ON)
  [ -n "${QWENCHAT_CUDA_ARCHITECTURES:-}" ] && cuda+=(-DCMAKE_CUDA_ARCHITECTURES="$QWENCHAT_CUDA_ARCHITECTURES")
fi
# Debian's flags for packages: -O2, stack protector, fortify, relro/now (what lintian's hardening checks want).
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
export CFLAGS CXXFLAGS LDFLAGS
rm -rf "$BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQWENCHAT_TESTS=OFF "${cuda[@]}" > /dev/null
cmake --build "$BUILD" -j "$JOBS"
(cd "$BUILD" && cpack -G DEB > cpack.log 2>&1) || { cat "$BUILD/cpack.log"; exit 1; }
mkdir -p "$OUT_DIR"
deb=$(ls "$BUILD"/*.deb)
cp "$deb" "$OUT_DIR/"
echo "build_deb: $OUT_DIR/$(basename "$deb")"
dpkg-deb --info "$OUT_DIR/$(basename "$deb")" | sed -n '/Package:/,$p'
