#!/usr/bin/env bash
# Builds .device/root: the Debian 12 library packages the engine and its GPU tests link (PCRE2,
# SentencePiece, utf8proc, nlohmann-json, GoogleTest, SQLite + SQLiteCpp for the app core the worker test links), unpacked (not installed) so they can travel to the GPU
# machine, which is Ubuntu 24.04 without package access. Run here, on the Debian machine; then pass
# carry=[".device/root"] to the device tool and QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr to gpu_run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rm -rf .device/debs .device/root
mkdir -p .device/debs .device/root
(cd .device/debs && apt-get download libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 \
  libsentencepiece-dev libsentencepiece0 nlohmann-json3-dev libgtest-dev \
  libsqlite3-dev libsqlite3-0 libsqlitecpp-dev libutf8proc-dev libutf8proc2)
for f in .device/debs/*.deb; do dpkg -x "$f" .device/root; done
du -sh .device/root
