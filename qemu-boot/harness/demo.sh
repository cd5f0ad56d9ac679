#!/bin/sh
# The guest side of `make demo`: a cgroup with memory.tmpfs.max=16M writes
# into /tmp and /dev/shm until EDQUOT, while a sibling cgroup without a
# limit writes on; the memory.tmpfs.* files are shown before and after.
cg=/sys/fs/cgroup
limited=$cg/demo-limited
sibling=$cg/demo-sibling

say() { printf '\n== %s\n' "$*"; }
show() {
	for f in "$@"; do
		printf '%-40s %s\n' "${f#$cg/}:" "$(tr '\n' ' ' < "$f")"
	done
}
# run COMMAND... inside cgroup $1, printing the command line first
in_cgroup() {
	dir=$1
	shift
	echo "[${dir#$cg/}]\$ $*"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$dir" "$@" 2>&1 | sed 's/^/    /'
}

echo "memory.tmpfs demo on $(uname -sr)"
mkdir "$limited" "$sibling" || exit 1

if [ ! -e "$limited/memory.tmpfs.max" ]; then
	say "MISSING: this kernel has no memory.tmpfs.* files"
	echo "The series in patches/ does not provide them yet; the memory files of a"
	echo "cgroup here are:"
	ls "$limited" | grep '^memory\.' | tr '\n' ' ' | fold -s -w 76 | sed 's/^/    /'
	echo
	say "Without the limit, a cgroup fills /tmp as far as the mount allows"
	in_cgroup "$limited" dd if=/dev/zero of=/tmp/fill bs=1M count=32
	show "$limited/memory.current"
	grep '^shmem ' "$limited/memory.stat" | sed 's/^/memory.stat: /'
	rm -f /tmp/fill
	rmdir "$limited" "$sibling"
	exit 0
fi

files="memory.tmpfs.max memory.tmpfs.current memory.tmpfs.peak memory.tmpfs.events"
say "Before: a fresh cgroup"
for f in $files; do show "$limited/$f"; done

say "Set the limit"
echo "# echo 16M > ${limited#$cg/}/memory.tmpfs.max"
echo 16M > "$limited/memory.tmpfs.max"
show "$limited/memory.tmpfs.max"

say "The limited cgroup writes 10M into /tmp, then as much as it can into /dev/shm"
in_cgroup "$limited" dd if=/dev/zero of=/tmp/fill bs=1M count=10
in_cgroup "$limited" dd if=/dev/zero of=/dev/shm/fill bs=1M count=32
ls -l /tmp/fill /dev/shm/fill | sed 's/^/    /'

say "The mounts are not full: the cgroup's quota is what ran out"
df -k /tmp /dev/shm | sed 's/^/    /'

say "A sibling cgroup without a limit is unaffected"
in_cgroup "$sibling" dd if=/dev/zero of=/tmp/sibling bs=1M count=32
show "$sibling/memory.tmpfs.current"

say "After"
for f in $files; do show "$limited/$f"; done
grep -E '^(oom|oom_kill) ' "$limited/memory.events" | sed 's/^/memory.events: /'

say "Freeing the files gives the charge back"
rm -f /tmp/fill /dev/shm/fill /tmp/sibling
show "$limited/memory.tmpfs.current" "$sibling/memory.tmpfs.current"
rmdir "$limited" "$sibling"
