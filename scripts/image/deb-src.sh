#!/usr/bin/env bash
# Make apt find the source package PACKAGE: when it cannot, add a deb-src
# entry mirroring the machine's Debian entries (debian.sources, "Types:
# deb" stanzas) and update. For apt-get source and build-dep (make
# profile, make check-systemd).
#   usage: deb-src.sh PACKAGE WHO
set -euo pipefail
pkg=$1 who=$2
[ -n "$(apt-cache showsrc "$pkg" 2>/dev/null)" ] && exit 0
echo "$who: adding a deb-src entry for the machine's Debian mirror (for $pkg's source)"
sed -n '/^Types: deb$/,/^$/p' /etc/apt/sources.list.d/debian.sources |
	sed 's/^Types: deb$/Types: deb-src/' > /etc/apt/sources.list.d/debian-src.sources
apt-get update -qq
