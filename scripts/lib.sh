# Sourced by the scripts: their usage line and their named options.

# Print the calling script's usage (its "#   usage:" comment line and the
# more indented comment lines after it) to stderr and exit 2.
usage() {
	awk 'p && /^#       / { sub(/^# +/, " "); print; next }
	     p { exit }
	     /^#   usage: / { p = 1; sub(/^#   usage: /, ""); print }' "$0" >&2
	exit 2
}

# parse_options SPEC... -- ARG...: set the variables the SPECs name from
# the ARGs, and put the other ARGs, in order, into the array ARGS. A SPEC
# is --option=variable (the option takes a value) or --flag=variable=value
# (the flag sets variable to value). An unknown option or a missing value
# prints the usage.
parse_options() {
	local -a _specs=()
	local _spec _rest _found _me
	_me=$(basename "$0" .sh)
	while [ "$1" != -- ]; do
		_specs+=("$1")
		shift
	done
	shift
	ARGS=()
	while [ $# -gt 0 ]; do
		_found=
		for _spec in "${_specs[@]}"; do
			[ "$1" = "${_spec%%=*}" ] || continue
			_found=1
			_rest=${_spec#*=}
			if [[ $_rest == *=* ]]; then
				printf -v "${_rest%%=*}" %s "${_rest#*=}"
				shift
			else
				[ $# -ge 2 ] || { echo "$_me: $1 wants a value" >&2; usage; }
				printf -v "$_rest" %s "$2"
				shift 2
			fi
			break
		done
		[ -n "$_found" ] && continue
		case "$1" in
		-*) echo "$_me: unknown option '$1'" >&2; usage ;;
		*) ARGS+=("$1"); shift ;;
		esac
	done
}

# Fail with the usage when parse_options left an argument in ARGS.
no_args() {
	[ ${#ARGS[@]} -eq 0 ] && return
	echo "$(basename "$0" .sh): unexpected argument '${ARGS[0]}'" >&2
	usage
}
