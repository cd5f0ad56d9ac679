# make bench's configurations, read (sourced) by scripts/bench.sh, and by
# scripts/profile.sh for PROFILE_CONFIG=LABEL.
# label  kernel  guest config  kernel command line  reference (of the
# ratio; the first configuration is the reference of every other one)
runs=(
	"baseline baseline plain - -"
	"patched patched plain - baseline"
	"notmpfs patched plain cgroup.memory=notmpfs baseline"
	"limit-depth1 patched limit1 - baseline"
	"baseline-depth8 baseline nest8 - baseline"
	"limit-depth8 patched limit8 - baseline-depth8"
	"usrquota baseline usrquota - baseline"
	"size baseline size - baseline"
)
