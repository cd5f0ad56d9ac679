#!/usr/bin/env bash
# Install, with apt-get, every Debian package the harness needs that is missing.
# Quiet and instant when everything is already installed.
set -euo pipefail

packages=(
	linux-source-6.12	# the tree the series applies to
	linux-config-6.12	# Debian's own configs: make bench's kernels
	build-essential bc bison flex libelf-dev libssl-dev dwarves kmod
	ccache			# kernel builds: a cache outside the checkout
	debhelper fakeroot dpkg-dev	# make deb (bindeb-pkg)
	apt-utils		# make repo (apt-ftparchive)
	xz-utils cpio rsync git
	libc6-dev		# libc.a for the static guest binaries
	qemu-system-x86 busybox-static e2fsprogs
	cgroup-tools libcgroup-dev
	crun debootstrap		# make check-integration
	gnuplot-nox		# make bench's chart
	stress-ng		# the peer suite stress-ng/ (carried with its libraries)
	libcap-dev liburing-dev	# libcap.a, liburing.a for the mm selftests
	# make cross: Debian's cross compilers
	gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-riscv64-linux-gnu
	gcc-s390x-linux-gnu gcc-powerpc64le-linux-gnu
)
missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$status" in
	ii*) ;;
	*) missing+=("$p") ;;
	esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]} (about 2 minutes on a fresh machine)"
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
