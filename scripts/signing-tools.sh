#!/usr/bin/env bash
# The tools the signature tests sign their fixtures with, and the one the service checks
# OpenPGP signatures with: Debian's gpg, gpgv and minisign.
#
#   scripts/signing-tools.sh install    install whichever is missing
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
install)
    scripts/apt-install.sh gpgv gpgv
    scripts/apt-install.sh gpg gpg
    scripts/apt-install.sh minisign minisign
    ;;
*)
    echo "usage: scripts/signing-tools.sh install" >&2
    exit 2
    ;;
esac
