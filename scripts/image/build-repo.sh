#!/usr/bin/env bash
# make repo: a flat apt repository in OUT: the kernel packages of make deb
# (linux-image, linux-headers) and the systemd packages of patches/systemd/
# (no debug symbols, no test suite), with the Packages index and a Release
# file that apt-ftparchive writes. A machine uses it with
#   deb [trusted=yes] file:/path/to/OUT ./
# (README, Install).
#   usage: build-repo.sh --kernel-debs DIR --systemd-debs DIR --out DIR
set -euo pipefail
kdebs= sdebs= out=
. "$(dirname "$(realpath "$0")")/../lib.sh"
parse_options --kernel-debs=kdebs --systemd-debs=sdebs --out=out -- "$@"
no_args
[ -n "$kdebs" ] && [ -n "$sdebs" ] && [ -n "$out" ] || usage
command -v apt-ftparchive >/dev/null || { echo "repo: apt-ftparchive is missing; run make deps" >&2; exit 1; }
kernel=("$kdebs"/linux-image-*.deb "$kdebs"/linux-headers-*.deb)
for f in "${kernel[@]}"; do
	[ -f "$f" ] || { echo "repo: no kernel package in $kdebs (make deb)" >&2; exit 1; }
done
systemd=()
for f in "$sdebs"/*.deb; do
	case "${f##*/}" in
	*-dbgsym_*|systemd-tests_*) ;;
	*) systemd+=("$f") ;;
	esac
done
[ ${#systemd[@]} -gt 0 ] || { echo "repo: no systemd package in $sdebs" >&2; exit 1; }

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cp "${kernel[@]}" "${systemd[@]}" "$out.tmp/"
(cd "$out.tmp" && apt-ftparchive packages . > Packages && gzip -9nk Packages &&
	apt-ftparchive -o APT::FTPArchive::Release::Origin=memory-tmpfs \
		-o APT::FTPArchive::Release::Label=memory-tmpfs release . > Release)
rm -rf "$out"
mv "$out.tmp" "$out"
echo "repo: $out: $(ls "$out"/*.deb | wc -l) packages ($(du -sh "$out" | cut -f1)):"
for f in "$out"/*.deb; do
	printf '  %-44s %-28s %6s KiB\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" $(( $(stat -c %s "$f") / 1024 ))
done
