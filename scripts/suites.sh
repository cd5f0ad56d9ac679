#!/usr/bin/env bash
# Read qemu-boot/suites.list, the one list of the guest's suites.
#   usage: suites.sh specs IMAGE GUEST          build-initramfs.sh's SRC:DEST
#                                               of IMAGE's dir lines
#          suites.sh expected MODE GUEST [APPEND]   the SUITE/PROG that a run
#                                               in MODE must report (APPEND:
#                                               its harness.peers=0 ...)
#          suites.sh boot MODE                  MODE's kernel command line
#          suites.sh peers                      the peer suites, one a line
#          suites.sh both                       our suites that must pass on
#                                               the baseline kernel too
#          suites.sh ours                       our programs in peer suites
# GUEST is the build's guest directory (build/guest), for @NAME.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
list=${SUITES_LIST:-$top/qemu-boot/suites.list}
usage() { sed -n '3,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
rows() { sed -e 's/#.*//' "$list" | awk -v k="$1" '$1 == k'; }

# host SRC of a dir line: @NAME in GUEST, + kept in front
host_src() {
	local src=$1 guest=$2 plus=
	[ "${src#+}" = "$src" ] || { plus=+; src=${src#+}; }
	case "$src" in
	@*) src=$guest/${src#@} ;;
	/*) ;;
	*) src=$top/$src ;;
	esac
	echo "$plus$src"
}

cmd=${1:-}
case "$cmd" in
specs)
	[ $# -eq 3 ] || usage
	rows dir | while read -r _ dir image src; do
		[ "$image" = "$2" ] || continue
		src=$(host_src "$src" "$3")
		if [ -d "${src#+}" ]; then
			echo "$src:$dir"
		else
			echo "$src:$dir/${src##*/}"
		fi
	done
	;;
expected)
	[ $# -ge 3 ] || usage
	mode=$2 guest=$3 append=${4:-}
	rows run | while read -r _ m suite gdir _ _ flags; do
		[ "$m" = "$mode" ] || continue
		case " $flags " in *" peers "*) [[ " $append " == *" harness.peers=0 "* ]] && continue ;; esac
		case " $flags " in *" faults "*) [[ " $append " == *" harness.faults=0 "* ]] && continue ;; esac
		only=$(sed -nE 's/(^| )only=([^ ]*).*/\2/p' <<< "$flags")
		without=$(sed -nE 's/(^| )without=([^ ]*).*/\2/p' <<< "$flags")
		rows dir | while read -r _ dir _ src; do
			[ "$dir" = "$gdir" ] || continue
			src=$(host_src "$src" "$guest")
			src=${src#+}
			if [ -d "$src" ]; then
				for f in "$src"/test_*; do
					# a program, or a link to one at its guest path
					{ [ -L "$f" ] || { [ -f "$f" ] && [ -x "$f" ]; }; } && echo "${f##*/}"
				done
			elif [[ ${src##*/} == test_* ]]; then
				[ -x "$src" ] || echo "suites: $src (suite $suite) is not on the host" >&2
				echo "${src##*/}"
			fi
		done | while read -r prog; do
			[ -z "$only" ] || [[ ",$only," == *",$prog,"* ]] || continue
			[ -z "$without" ] || [[ ",$without," != *",$prog,"* ]] || continue
			echo "$suite/$prog"
		done
	done
	;;
boot)
	[ $# -eq 2 ] || usage
	rows boot | awk -v m="$2" '$2 == m { $1 = $2 = ""; sub(/^ +/, ""); print }'
	;;
peers|both)
	rows run | awk -v o="${cmd%s}" '$6 == o { print $3 }' | sort -u
	;;
ours)
	rows program | awk '{ print $2 }'
	;;
*)
	usage
	;;
esac
