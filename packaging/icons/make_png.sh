#!/usr/bin/env bash
# The PNG sizes of the icon, from the SVG (run after changing it; the PNGs are committed so that a build
# needs no SVG renderer). Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
for s in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$s" -h "$s" io.github.qwenchat.qwenchat.svg -o "io.github.qwenchat.qwenchat-$s.png"
done
