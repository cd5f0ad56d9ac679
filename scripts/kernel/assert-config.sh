#!/usr/bin/env bash
# Fail, naming each one, if an option a config fragment asks for did not
# make it into .config (a missing dependency, a typo, a renamed symbol).
#   usage: assert-config.sh DOTCONFIG FRAGMENT...
set -euo pipefail
dotconfig=$1
shift
bad=0
for frag in "$@"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			sym=${line%%=*}
			want=$line
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			want=$line
			;;
		*) continue ;;
		esac
		have=$(grep -E "^($sym=|# $sym is not set)" "$dotconfig" || true)
		if [ "$want" = "# $sym is not set" ] && [ -z "$have" ]; then
			continue	# not set and not even visible: as asked
		fi
		if [ "$have" != "$want" ]; then
			echo "assert-config: $(basename "$frag") asks for '$want' but .config has '${have:-nothing}'" >&2
			bad=1
		fi
	done < "$frag"
done
exit $bad
