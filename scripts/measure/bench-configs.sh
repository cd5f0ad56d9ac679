# make bench's configurations, read (sourced) by scripts/measure/bench.sh,
# and by scripts/measure/profile.sh for PROFILE_CONFIG=LABEL.
# label  kernel  guest config  kernel command line (- for none)  reference
# (what bench.sh divides the label's figures by, booted in the same round:
# - for none; the first configuration is the table's first column).
# baseline-aa is the A/A control: the baseline again, divided by the
# baseline, so that its ratio shows the resolution of the method.
runs=(
	"baseline baseline plain - -"
	"patched patched plain - baseline"
	"notmpfs patched plain cgroup.memory=notmpfs baseline"
	"limit-depth1 patched limit1 - baseline"
	"baseline-depth8 baseline nest8 - baseline"
	"limit-depth8 patched limit8 - baseline-depth8"
	"usrquota baseline usrquota - baseline"
	"size baseline size - baseline"
	"baseline-aa baseline plain - baseline"
)
