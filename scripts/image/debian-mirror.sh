#!/usr/bin/env bash
# Print the machine's Debian mirror (for debootstrap): the first URIs of
# its deb822 sources, else the first bookworm line of sources.list, else
# deb.debian.org.
set -uo pipefail
mirror=$(sed -n 's/^URIs: //p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | sed -n 1p)
[ -n "$mirror" ] ||
	mirror=$(sed -nE 's/^deb +(\[[^]]*\] +)?(https?:[^ ]+) +bookworm .*/\2/p' /etc/apt/sources.list 2>/dev/null | sed -n 1p)
echo "${mirror:-http://deb.debian.org/debian}"
