#!/usr/bin/env bash
# Installs a Debian package when the command it provides is missing: what the scripts that
# bring a test's third-party tool (faketime, minisign, gpg) share.
#
#   scripts/apt-install.sh COMMAND PACKAGE
#
# As root, or through sudo; apt's progress goes to stderr, so stdout stays clean for callers
# that capture it. Exits non-zero, saying why, when COMMAND is still missing.
set -euo pipefail

die() {
    echo "apt-install.sh: $*" >&2
    exit 1
}

[ $# -eq 2 ] || die "usage: scripts/apt-install.sh COMMAND PACKAGE"
command=$1
package=$2
command -v "$command" >/dev/null 2>&1 && exit 0
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "$command is not installed and, not being root, no sudo to install $package"
    sudo_cmd=(sudo)
fi
command -v apt-get >/dev/null 2>&1 || die "$command is not installed and there is no apt-get to install $package"
install=("${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package")
if ! "${install[@]}" >&2; then
    "${sudo_cmd[@]}" apt-get update -qq >&2 || true
    "${install[@]}" >&2 || die "apt-get could not install $package (see its output above)"
fi
command -v "$command" >/dev/null 2>&1 || die "$package was installed but there is still no $command"
