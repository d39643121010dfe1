#!/usr/bin/env bash
# Builds sluice as one file and puts it on the PATH: a release build with the Swift runtime
# linked in (`--static-swift-stdlib`), so the binary runs on a machine without the Swift
# toolchain (it needs only libc, libstdc++, SQLite and zlib, as the container's image does),
# stripped of its symbols, installed as $PREFIX/bin/sluice ($HOME/.local by default).
#   scripts/install.sh                      # ~/.local/bin/sluice
#   PREFIX=/usr/local scripts/install.sh    # /usr/local/bin/sluice (as root)
# The build is the container's own command (scripts/check-container.sh), in its scratch
# path: about 15 minutes cold on 2 cores, seconds once warm.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-build-deps.sh
prefix=${PREFIX:-$HOME/.local}
scratch=${SCRATCH_PATH:-.build-release}
swift build -c release --static-swift-stdlib --product sluice --scratch-path "$scratch"
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/sluice"
install -d "$prefix/bin"
install -m 0755 "$binary" "$prefix/bin/sluice"
strip "$prefix/bin/sluice" 2>/dev/null || true
echo "installed $prefix/bin/sluice ($(du -h "$prefix/bin/sluice" | cut -f1))"
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) echo "$prefix/bin is not on your PATH: add it with  export PATH=\"$prefix/bin:\$PATH\"  (in ~/.profile to keep it)" ;;
esac
