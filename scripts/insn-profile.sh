#!/usr/bin/env bash
# Guest kernel instructions per function, from a run under QEMU with the
# insn_profile plugin (scripts/insn-profile/insn_profile.c), and the
# difference between two kernels' runs.
#   usage: insn-profile.sh funcs SYSTEM_MAP PROFILE
#          insn-profile.sh diff SYSTEM_MAP_A PROFILE_A SYSTEM_MAP_B PROFILE_B [N]
# funcs prints "instructions function" for every function, most first;
# diff prints the N (default 40) functions whose counts differ most:
# "A B B-A function".
set -euo pipefail

funcs() {
	local map=$1 prof=$2
	{
		awk '$2 ~ /^[tTwW]$/ { print $1, "S", $3 }' "$map"
		awk '{ printf "%016s P %s\n", $1, $2 }' "$prof"
	} | sort -k1,1 -s |
	awk '$2 == "S" { fn = $3; next }
	     { sum[fn == "" ? "?" : fn] += $3 }
	     END { for (f in sum) print sum[f], f }' | sort -rn
}

case "${1:-}" in
funcs)
	[ $# -eq 3 ] || { sed -n 's/^#   usage: //p; s/^#          / /p' "$0" >&2; exit 2; }
	funcs "$2" "$3"
	;;
diff)
	[ $# -ge 5 ] || { sed -n 's/^#   usage: //p; s/^#          / /p' "$0" >&2; exit 2; }
	a=$(mktemp) b=$(mktemp)
	trap 'rm -f "$a" "$b"' EXIT
	funcs "$2" "$3" > "$a"
	funcs "$4" "$5" > "$b"
	awk 'NR == FNR { A[$2] = $1; next } { B[$2] = $1 }
	     END { for (f in A) if (!(f in B)) B[f] = 0
		   for (f in B) { d = B[f] - A[f]; print (d < 0 ? -d : d), A[f] + 0, B[f], d, f } }' \
		"$a" "$b" | sort -rn | awk -v n="${6:-40}" 'NR <= n { $1 = ""; print substr($0, 2) }'
	;;
*)
	sed -n 's/^#   usage: //p; s/^#          / /p' "$0" >&2
	exit 2
	;;
esac
