#!/bin/sh
# The guest side of `make hole` (run by scripts/vm/run-guest.sh on the
# baseline and on the patched kernel): a cgroup with memory.max 64M and
# no swap creates empty files in /tmp until something stops it. Each
# holds an inode and a dentry of unreclaimable kernel memory charged to
# the cgroup. Printed: how many files, what stopped it, memory.events,
# the cgroup's memory, and whether a new task can still run there.
# On the patched kernel memory.tmpfs.inodes.max is set to $LIMIT first,
# and the script fails unless creation stopped with EDQUOT at exactly
# $LIMIT files and no OOM event happened.
LIMIT=20000
cg=/sys/fs/cgroup/hole
prog=/opt/harness/tmpfs_hole
dir=/tmp/hole

say() { printf '\n== %s\n' "$*"; }
show() {
	for f in "$@"; do
		printf '%-32s %s\n' "${f#/sys/fs/cgroup/}:" "$(tr '\n' ' ' < "$f")"
	done
}
stat_kb() { awk -v k="$1" '$1 == k { printf "%s %d KiB\n", k, $2 / 1024 }' $cg/memory.stat; }
in_cg() { sh -c 'echo $$ > /sys/fs/cgroup/hole/cgroup.procs && exec "$@"' sh "$@"; }

[ -x $prog ] || { echo "hole: $prog missing"; exit 1; }
echo "memory.tmpfs hole on $(uname -sr)"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir $cg $dir || exit 1
echo 64M > $cg/memory.max
echo 0 > $cg/memory.swap.max
patched=0
if [ -e $cg/memory.tmpfs.inodes.max ]; then
	patched=1
	echo $LIMIT > $cg/memory.tmpfs.inodes.max
	echo "memory.tmpfs.inodes.max = $(cat $cg/memory.tmpfs.inodes.max)"
else
	echo "this kernel has no memory.tmpfs.inodes.max"
fi
say "a task in the cgroup (memory.max 64M, memory.swap.max 0) creates empty files in $dir"
t0=$(date +%s)
in_cg $prog create $dir 2>&1 | grep -v '^progress' | sed 's/^/    /'
t1=$(date +%s)
files=$(ls $dir | wc -l)
echo "files in $dir: $files (after $((t1 - t0)) s)"
show $cg/memory.events $cg/memory.current
stat_kb slab_unreclaimable
stat_kb slab_reclaimable
stat_kb shmem
[ $patched = 1 ] && show $cg/memory.tmpfs.inodes.current $cg/memory.tmpfs.events
oom=$(awk '$1 == "oom" { print $2 }' $cg/memory.events)
kills=$(awk '$1 == "oom_kill" { print $2 }' $cg/memory.events)

say "a new task in the cgroup touches 16 MiB of anonymous memory"
in_cg $prog alloc 16 2>&1 | sed 's/^/    /'
echo "    exit status: $? (the pipe's; see memory.events)"
show $cg/memory.events

say "the files removed"
rm -rf $dir
show $cg/memory.current
[ $patched = 1 ] && show $cg/memory.tmpfs.inodes.current
stat_kb slab_unreclaimable
rmdir $cg

if [ $patched = 1 ]; then
	if [ "$files" = $LIMIT ] && [ "$oom" = 0 ] && [ "$kills" = 0 ]; then
		echo "hole: closed: EDQUOT at exactly $LIMIT files, no OOM event"
		exit 0
	fi
	echo "hole: FAIL: $files files, oom $oom, oom_kill $kills (expected $LIMIT, 0, 0)"
	exit 1
fi
echo "hole: baseline: $files files, oom $oom, oom_kill $kills"
exit 0
