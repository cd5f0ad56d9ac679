#!/usr/bin/env bash
# Guest kernel instructions per function, from a run under QEMU with the
# insn_profile plugin (scripts/measure/insn_profile.c), and the
# difference between two kernels' runs.
#   usage: insn-profile.sh funcs SYSTEM_MAP PROFILE
#          insn-profile.sh diff SYSTEM_MAP_A PROFILE_A SYSTEM_MAP_B PROFILE_B [N]
# funcs prints "instructions calls locked function" for every function,
# most first (calls: how often the block at its first address ran;
# locked: the locked instructions, LOCK-prefixed or XCHG with memory, it
# executed; 0 from a profile of the plugin before it counted them); diff
# prints the N (default 40) functions whose instruction counts differ
# most: "A B B-A CALLS_A CALLS_B LOCKED_A LOCKED_B function".
set -euo pipefail

funcs() {
	local map=$1 prof=$2
	{
		awk '$2 ~ /^[tTwW]$/ { print $1, "0S", $3 }' "$map"
		awk '{ printf "%016s 1P %s %s %s\n", $1, $2, $3, $4 + 0 }' "$prof"
	} | sort -k1,1 -k2,2 -s |
	awk '$2 == "0S" { fn = $3; at = $1; next }
	     { f = fn == "" ? "?" : fn; sum[f] += $3; locked[f] += $5
	       if ($1 == at) calls[f] += $4 }
	     END { for (f in sum) print sum[f], calls[f] + 0, locked[f], f }' | sort -rn
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
	awk 'NR == FNR { A[$4] = $1; CA[$4] = $2; LA[$4] = $3; next }
	     { B[$4] = $1; CB[$4] = $2; LB[$4] = $3 }
	     END { for (f in A) if (!(f in B)) B[f] = 0
		   for (f in B) { d = B[f] - A[f]
				  print (d < 0 ? -d : d), A[f] + 0, B[f], d, CA[f] + 0, CB[f] + 0,
					LA[f] + 0, LB[f] + 0, f } }' \
		"$a" "$b" | sort -rn | awk -v n="${6:-40}" 'NR <= n { $1 = ""; print substr($0, 2) }'
	;;
*)
	sed -n 's/^#   usage: //p; s/^#          / /p' "$0" >&2
	exit 2
	;;
esac
