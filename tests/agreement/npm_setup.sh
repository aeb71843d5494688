# Sourced by the agreement drivers: makes sure node, npm and tools/npm/node_modules are there.
# `node` missing: exit 77 (CTest SKIP_RETURN_CODE) with the reason. node present but npm missing, or
# `npm ci` failing (no registry): a failure, not a skip, so CI cannot silently lose the test.
# The caller sets SRC (the repository root).
if ! command -v node > /dev/null 2>&1; then
  echo "SKIP: node is not installed (Debian: apt-get install nodejs npm; scripts/qwenchat.sh installs them)"
  exit 77
fi
NPM_DIR="$SRC/tools/npm"
echo "node $(node --version) at $(command -v node)"
# Reinstall when node_modules is missing or older than the lock file (npm ci writes
# node_modules/.package-lock.json).
if [ ! -f "$NPM_DIR/node_modules/.package-lock.json" ] ||
  [ "$NPM_DIR/package-lock.json" -nt "$NPM_DIR/node_modules/.package-lock.json" ]; then
  if ! command -v npm > /dev/null 2>&1; then
    echo "FAIL: node is installed but npm is not (Debian: apt-get install npm)"
    exit 1
  fi
  echo "npm ci in $NPM_DIR (npm $(npm --version))"
  if ! (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error); then
    echo "FAIL: npm ci failed in $NPM_DIR (is the npm registry reachable?)"
    exit 1
  fi
fi
