# Sourced by the device scripts (gpu_run.sh, before_after.sh), not run: the one home of their prefix
# environment. QWENCHAT_DEVICE_PREFIX names a prefix holding the engine's Debian libraries, unpacked
# (make_prefix.sh: PCRE2, SentencePiece, nlohmann-json, GoogleTest, ...; the GPU machine has no package
# access). When set, it goes in front of CMAKE_PREFIX_PATH (cmake's find_*), PKG_CONFIG_PATH (with Debian's
# multiarch and share .pc folders) and LD_LIBRARY_PATH (the built programs' shared libraries); unset, nothing
# changes.
# shellcheck shell=bash
if [[ -n "${QWENCHAT_DEVICE_PREFIX:-}" ]]; then
  P=$QWENCHAT_DEVICE_PREFIX
  export CMAKE_PREFIX_PATH="$P${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export PKG_CONFIG_PATH="$P/lib/pkgconfig:$P/lib/x86_64-linux-gnu/pkgconfig:$P/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$P/lib:$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
