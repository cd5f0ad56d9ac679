// SPDX-License-Identifier: GPL-2.0
/*
 * Two objections to memory.tmpfs, answered with figures measured on the
 * patched and the unpatched kernel alike (suite "both"):
 *
 * A. "Do not split tmpfs out of the regular limit; give each container a
 *    private mount with size=." A container mounts its own tmpfs: as uid
 *    65534 in a new user and mount namespace, a task mounts NR_MOUNTS
 *    tmpfs of size=16m and fills each up to its ENOSPC. Every mount stops
 *    at its size, and the container writes NR_MOUNTS times as much: a
 *    per-mount size bounds nothing the container does not choose. With
 *    memory.tmpfs.max set on its cgroup by root, the total over all the
 *    mounts stops at the limit with EDQUOT.
 *
 * B. "A mount is not a resource domain: memfd and IPC shm escape it."
 *    memfd_create(2), SysV shm and MAP_SHARED|MAP_ANONYMOUS live on the
 *    kernel's internal shmem mount, in no mount table and with no size,
 *    and write as much as memory.max lets them. The spec leaves them out
 *    of memory.tmpfs (its "What is charged"): with memory.tmpfs.max 16M
 *    they still write 32 MiB each, memory.tmpfs.current stays 0, and
 *    memory.current grows as before. They go when their holder does: a
 *    killed holder leaves behind only its tmpfs file in /dev/shm, which
 *    memory.tmpfs charges and limits (write: EDQUOT, store: SIGBUS), and
 *    a SysV segment of an IPC namespace that outlives it.
 *
 * Every case runs in a cgroup with memory.max 256M and memory.swap.max 0,
 * so that neither the ordinary limit nor swap is what stops a writer. The
 * kernel has memory.tmpfs when memory.tmpfs.max exists in that cgroup.
 * The "# A:" and "# B:" lines are the figures. Bytes written, errors and
 * memory.tmpfs values are asserted exactly; memory.current, which memcg
 * charges in batches, within the batches (charge_slack()).
 */
#include "../tmpfs_util.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#define MEMORY_MAX	"256M"		/* memory.max of every case */
#define NR_MOUNTS	4
#define MOUNT_SIZE	(16 * MiB)	/* size=16m */
#define TMPFS_MAX	(16 * MiB)	/* memory.tmpfs.max on the patched kernel, */
#define TMPFS_MAX_STR	"16M"		/* as written to the file */
#define SHM_BYTES	(32 * MiB)	/* what each internal shmem user writes */
#define SCAFFOLD	"/mnt"		/* where the container mounts its tmpfs */
#define SHM_NAME	"/tmpfs_mounts"
#define SHM_PATH	"/dev/shm/tmpfs_mounts"
/*
 * After a holder is killed, memory.current may keep what is not data:
 * the charge batch of each CPU (64 pages), slab of the inodes and
 * dentries that stay, per-cpu LRU batches not drained yet.
 */
#define HELD_SLACK	(2 * MiB)

static char root[PATH_MAX];
static bool have_tmpfs;		/* memory.tmpfs.max exists: patched kernel */

/*
 * memcg charges memory.current in batches: up to TMPFS_BATCH_PAGES (64,
 * MEMCG_CHARGE_BATCH) pages a CPU charged ahead of use, which a charge
 * takes before it charges more. So a rise of memory.current over some
 * writes reads at least the data written, less that.
 */
static long charge_slack(void)
{
	return TMPFS_BATCH_PAGES * page_size * sysconf(_SC_NPROCESSORS_ONLN);
}

static const char *err_name(int err)
{
	switch (err) {
	case 0:
		return "no error";
	case ENOSPC:
		return "ENOSPC";
	case EDQUOT:
		return "EDQUOT";
	default:
		return strerror(err);
	}
}

static double mib(long bytes)
{
	return (double)bytes / MiB;
}

/* memory.tmpfs.current of CG as text, "absent" on the unpatched kernel. */
static const char *tmpfs_str(const char *cg)
{
	static char buf[32];

	if (!have_tmpfs)
		return "absent";
	snprintf(buf, sizeof(buf), "%ld", tmpfs_current(cg));
	return buf;
}

/*
 * Write from offset 0 of FD up to LEN bytes, 64 KiB a call; returns the
 * bytes written, and in *ERR the errno that stopped it (0 if none did).
 */
static long fill(int fd, long len, int *err)
{
	long w;

	errno = 0;
	w = write_pattern(fd, 0, len);
	if (w < 0) {
		*err = -w;
		return 0;
	}
	*err = w < len ? errno : 0;
	return w;
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/*
 * Store a byte into each page of [P, P + LEN); returns the bytes stored
 * before a SIGBUS, and whether one came in *SIGBUS.
 */
static long store_pages(char *p, long len, bool *sigbus)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	volatile long stored = 0;

	*sigbus = false;
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(sigbus_jmp, 1) == 0) {
		for (long off = 0; off < len; off += page_size) {
			p[off] = 1;
			stored = off + page_size;
		}
	} else {
		*sigbus = true;
	}
	signal(SIGBUS, SIG_DFL);
	return stored;
}

/* Whether a mount of this mount namespace is on device DEV. */
static bool dev_mounted(dev_t dev)
{
	unsigned int maj, min;
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d %*d %u:%u", &maj, &min) == 2 &&
		    makedev(maj, min) == dev)
			found = true;
	fclose(f);
	return found;
}

/*
 * Where the file behind FD lives: its device must be in no mount of
 * /proc/self/mountinfo and its filesystem must have no size (statfs
 * f_blocks 0), unless MOUNTED, when it must be mounted.
 */
static int check_where(int fd, bool mounted, const char *what)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) || fstatfs(fd, &sfs)) {
		ksft_print_msg("%s: fstat: %s\n", what, strerror(errno));
		return -1;
	}
	if (dev_mounted(st.st_dev) != mounted ||
	    (!mounted && sfs.f_blocks != 0)) {
		ksft_print_msg("%s: device %u:%u %s in /proc/self/mountinfo, statfs f_blocks %ld\n",
			       what, major(st.st_dev), minor(st.st_dev),
			       mounted ? "not" : "is", (long)sfs.f_blocks);
		return -1;
	}
	ksft_print_msg("B: %s: device %u:%u, %s, filesystem size %ld MiB%s\n",
		       what, major(st.st_dev), minor(st.st_dev),
		       mounted ? "mounted" : "in no mount table",
		       (long)(sfs.f_blocks * sfs.f_bsize / MiB),
		       sfs.f_blocks ? "" : " (none)");
	return 0;
}

/* The file of the mapping [P, P + LEN), from /proc/self/map_files. */
static int open_mapping(void *p, long len)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)p, (unsigned long)p + len);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_print_msg("open %s: %s\n", path, strerror(errno));
	return fd;
}

/* memory.tmpfs.current of CG must be WANT, where the kernel has it. */
static int expect_charged(const char *cg, long want, const char *when)
{
	if (!have_tmpfs)
		return 0;
	return expect_tmpfs(cg, want, when) || check_within_memory(cg, when);
}

/* No OOM event or kill (memory.tmpfs.max never reclaims nor OOM-kills), and memory.max did not stop anything. */
static int expect_no_oom(const char *cg, const char *when)
{
	long oom = cg_read_key_long(cg, "memory.events", "oom ");
	long kill = cg_read_key_long(cg, "memory.events", "oom_kill ");
	long max = cg_read_key_long(cg, "memory.events", "max ");

	if (!oom && !kill && !max)
		return 0;
	ksft_print_msg("%s: %s memory.events max %ld oom %ld oom_kill %ld, expected 0\n",
		       when, cg, max, oom, kill);
	return -1;
}

/*
 * The cgroups of a case: PARENT, with the memory controller for its child
 * CG, the container, whose memory.max is MEMORY_MAX, memory.swap.max 0 and,
 * where the kernel has it, memory.tmpfs.max TMPFS_MAX (NULL: default).
 */
static int make_cgroups(struct setup *s, const char *name,
			const char *tmpfs_max)
{
	static bool said;

	if (!*root && cg_find_unified_root(root, sizeof(root), NULL)) {
		ksft_print_msg("%s: cgroup v2 isn't mounted\n", name);
		return -1;
	}
	s->parent = make_parent(root, name);
	s->cg = s->parent ? make_child(s->parent, "container") : NULL;
	if (!s->cg || cg_write(s->cg, "memory.max", MEMORY_MAX) ||
	    cg_write(s->cg, "memory.swap.max", "0")) {
		ksft_print_msg("%s: cannot set up the cgroups\n", name);
		return -1;
	}
	have_tmpfs = !access(cg_control(s->cg, "memory.tmpfs.max"), F_OK);
	if (!said) {
		said = true;
		if (have_tmpfs)
			ksft_print_msg("memory.tmpfs.max: present (patched kernel): %s in every case but the first\n",
				       TMPFS_MAX_STR);
		else
			ksft_print_msg("memory.tmpfs.max: absent (unpatched kernel)\n");
	}
	if (have_tmpfs && tmpfs_max &&
	    cg_write(s->cg, "memory.tmpfs.max", (char *)tmpfs_max)) {
		ksft_print_msg("%s: memory.tmpfs.max %s: %s\n", name, tmpfs_max,
			       strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * memory.current of CGROUP, after the pages freed into a per-cpu LRU
 * batch (the last ones of a case before) are freed and uncharged.
 */
static long memory_current(const char *cgroup)
{
	drain_lru_batches();
	return cg_read_long(cgroup, "memory.current");
}

static void remove_cgroups(struct setup *s)
{
	remove_cgroup(s->cg);
	remove_cgroup(s->parent);
}

/*
 * A: what a container can do. As uid 65534, in a new user and mount
 * namespace, mount a tmpfs on SCAFFOLD for the mount points, then
 * NR_MOUNTS tmpfs of size=16m on it, and write a file in each until the
 * write fails. With no memory.tmpfs limit (LIMIT -1) every mount takes
 * MOUNT_SIZE, then ENOSPC. With LIMIT, the mounts take what is left of
 * it in turn: a write that reaches the limit fails with EDQUOT, before
 * the size= check, and the filesystem keeps its free space.
 */
static int body_mounts(const char *cgroup, void *arg)
{
	long limit = *(long *)arg;
	long mem_before, mem_rise, total = 0;
	char dir[64], opts[64], file[80];
	int i;

	mem_before = memory_current(cgroup);
	if (enter_userns_as_nobody())
		return -1;
	if (mount("scaffold", SCAFFOLD, "tmpfs", 0, "mode=0755")) {
		ksft_print_msg("mount tmpfs on %s: %s\n", SCAFFOLD, strerror(errno));
		return -1;
	}
	snprintf(opts, sizeof(opts), "size=%ldm", MOUNT_SIZE / MiB);
	for (i = 0; i < NR_MOUNTS; i++) {
		long room = limit < 0 ? LONG_MAX : limit - total;
		long want = room < MOUNT_SIZE ? room : MOUNT_SIZE;
		int want_err = room <= MOUNT_SIZE ? EDQUOT : ENOSPC;
		struct statfs sfs;
		long w, left;
		int fd, err;

		snprintf(dir, sizeof(dir), "%s/m%d", SCAFFOLD, i);
		snprintf(file, sizeof(file), "%s/fill", dir);
		if (mkdir(dir, 0755) || mount("tmpfs", dir, "tmpfs", 0, opts)) {
			ksft_print_msg("mount tmpfs -o %s on %s: %s\n", opts, dir,
				       strerror(errno));
			return -1;
		}
		fd = open(file, O_CREAT | O_WRONLY, 0644);
		if (fd < 0) {
			ksft_print_msg("open %s: %s\n", file, strerror(errno));
			return -1;
		}
		w = fill(fd, 4 * MOUNT_SIZE, &err);
		if (fstatfs(fd, &sfs)) {
			ksft_print_msg("statfs %s: %s\n", dir, strerror(errno));
			return -1;
		}
		close(fd);
		left = sfs.f_bavail * sfs.f_bsize;
		ksft_print_msg("mount %d (%s): wrote %ld bytes, then %s; df: %ld bytes free\n",
			       i, opts, w, err_name(err), left);
		if (w != want || err != want_err || left != MOUNT_SIZE - want) {
			ksft_print_msg("mount %d: expected %ld bytes, then %s, and %ld bytes free\n",
				       i, want, err_name(want_err), MOUNT_SIZE - want);
			return -1;
		}
		total += w;
	}
	mem_rise = cg_read_long(cgroup, "memory.current") - mem_before;
	if (limit < 0)
		ksft_print_msg("A: uid 65534 in a user namespace mounted %d tmpfs of %s and wrote %ld MiB (%ld bytes), each mount to its ENOSPC; memory.current +%.1f MiB under memory.max %s\n",
			       NR_MOUNTS, opts, total / MiB, total, mib(mem_rise),
			       MEMORY_MAX);
	else
		ksft_print_msg("A: with memory.tmpfs.max=%ldM, the same %d mounts took %ld MiB (%ld bytes) in all, then EDQUOT; memory.tmpfs.current %ld\n",
			       limit / MiB, NR_MOUNTS, total / MiB, total,
			       tmpfs_current(cgroup));
	if (total != (limit < 0 ? NR_MOUNTS * MOUNT_SIZE : limit) ||
	    mem_rise < total - charge_slack()) {
		ksft_print_msg("total %ld bytes, memory.current +%ld\n", total, mem_rise);
		return -1;
	}
	/* all the data is written and at rest: exact */
	if (expect_charged(cgroup, total, "the mounts filled"))
		return -1;
	return 0;
}

/*
 * A, both kernels: per-mount sizes do not bound a container. On the
 * patched kernel, with every memory.tmpfs.max at max, the same, and all
 * of it charged to memory.tmpfs.
 */
static int test_mounts_size_bounds_no_container(const char *cg_root)
{
	struct setup s = { 0 };
	long limit = -1;
	int ret = KSFT_FAIL;

	if (make_cgroups(&s, "tmpfs_mounts_size", NULL))
		goto out;
	if (cg_run(s.cg, body_mounts, &limit))
		goto out;
	/* the namespace is gone, and its mounts with it */
	if (expect_charged(s.cg, 0, "unmounted") ||
	    expect_charged(s.parent, 0, "unmounted") ||
	    expect_no_oom(s.cg, "the mounts filled") ||
	    (have_tmpfs && expect_events(s.parent, 0, 0, "no limit")))
		goto out;
	ret = KSFT_PASS;
out:
	remove_cgroups(&s);
	return ret;
}

/*
 * A, patched kernel: with memory.tmpfs.max 16M on the container's cgroup,
 * set by root, the first mount takes 16 MiB and fails with EDQUOT; so
 * does every later mount, at once, with its 16 MiB free. Each failed
 * write counts one max and one fail event, on the cgroup and its parent.
 */
static int test_mounts_under_tmpfs_max(const char *cg_root)
{
	struct setup s = { 0 };
	long limit = TMPFS_MAX;
	int ret = KSFT_FAIL;

	if (!have_tmpfs) {
		ksft_print_msg("no memory.tmpfs.max: the unpatched kernel has no per-cgroup bound to check\n");
		return KSFT_SKIP;
	}
	if (make_cgroups(&s, "tmpfs_mounts_max", TMPFS_MAX_STR))
		goto out;
	if (cg_run(s.cg, body_mounts, &limit))
		goto out;
	if (expect_events(s.cg, NR_MOUNTS, NR_MOUNTS, "cgroup") ||
	    expect_events(s.parent, NR_MOUNTS, NR_MOUNTS, "parent, propagated") ||
	    expect_charged(s.cg, 0, "unmounted") ||
	    expect_charged(s.parent, 0, "unmounted") ||
	    expect_no_oom(s.cg, "at memory.tmpfs.max"))
		goto out;
	ksft_print_msg("A: memory.tmpfs.events max %ld fail %ld: one of each per write that failed\n",
		       cg_read_key_long(s.cg, "memory.tmpfs.events", "max "),
		       cg_read_key_long(s.cg, "memory.tmpfs.events", "fail "));
	ret = KSFT_PASS;
out:
	remove_cgroups(&s);
	return ret;
}

/*
 * memory.current of CGROUP must have grown by at least SHM_BYTES since
 * BEFORE (less charge_slack()), and memory.tmpfs.current (patched: limit
 * 16M) be 0, with no event.
 */
static int expect_memory_only(const char *cgroup, long before, const char *what)
{
	long rise = memory_current(cgroup) - before;

	ksft_print_msg("B: %s: %ld MiB (%ld bytes) written, memory.current +%.1f MiB%s\n",
		       what, SHM_BYTES / MiB, SHM_BYTES, mib(rise),
		       have_tmpfs ? ", memory.tmpfs.current 0 under memory.tmpfs.max " TMPFS_MAX_STR :
		       "");
	if (rise < SHM_BYTES - charge_slack()) {
		ksft_print_msg("%s: memory.current grew by %ld, expected at least %ld less %ld charged ahead\n",
			       what, rise, SHM_BYTES, charge_slack());
		return -1;
	}
	if (have_tmpfs && (expect_charged(cgroup, 0, what) ||
			   expect_events(cgroup, 0, 0, what)))
		return -1;
	return 0;
}

/*
 * B: memfd, SysV shm and shared anonymous memory, one after the other,
 * each freed before the next: SHM_BYTES each, on a device in no mount
 * table and a filesystem with no size, charged to memory.current and,
 * by the spec, not to memory.tmpfs.
 */
static int body_internal(const char *cgroup, void *arg)
{
	long before, w;
	bool sigbus;
	char *p;
	int fd, id, err;

	before = memory_current(cgroup);
	fd = memfd_create("tmpfs_mounts", 0);
	if (fd < 0) {
		ksft_print_msg("memfd_create: %s\n", strerror(errno));
		return -1;
	}
	w = fill(fd, SHM_BYTES, &err);
	if (w != SHM_BYTES) {
		ksft_print_msg("memfd: wrote %ld of %ld bytes, then %s\n", w,
			       SHM_BYTES, err_name(err));
		return -1;
	}
	if (check_where(fd, false, "memfd_create(2)") ||
	    expect_memory_only(cgroup, before, "memfd_create(2) and write(2)"))
		return -1;
	close(fd);
	if (expect_charged(cgroup, 0, "memfd closed"))
		return -1;

	before = memory_current(cgroup);
	id = shmget(IPC_PRIVATE, SHM_BYTES, IPC_CREAT | 0600);
	p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (p == (void *)-1) {
		ksft_print_msg("shmget/shmat: %s\n", strerror(errno));
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		return -1;
	}
	w = store_pages(p, SHM_BYTES, &sigbus);
	fd = open_mapping(p, SHM_BYTES);
	if (w != SHM_BYTES || fd < 0 || check_where(fd, false, "SysV shm") ||
	    expect_memory_only(cgroup, before, "SysV shmget(2), shmat(2) and stores")) {
		if (w != SHM_BYTES)
			ksft_print_msg("SysV shm: SIGBUS after %ld of %ld bytes\n",
				       w, SHM_BYTES);
		shmctl(id, IPC_RMID, NULL);
		return -1;
	}
	close(fd);
	shmdt(p);
	if (shmctl(id, IPC_RMID, NULL) ||
	    expect_charged(cgroup, 0, "SysV segment removed"))
		return -1;

	before = memory_current(cgroup);
	p = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ksft_print_msg("mmap: %s\n", strerror(errno));
		return -1;
	}
	w = store_pages(p, SHM_BYTES, &sigbus);
	if (w != SHM_BYTES) {
		ksft_print_msg("MAP_SHARED|MAP_ANONYMOUS: SIGBUS after %ld of %ld bytes\n",
			       w, SHM_BYTES);
		return -1;
	}
	fd = open_mapping(p, SHM_BYTES);
	if (fd < 0 || check_where(fd, false, "MAP_SHARED|MAP_ANONYMOUS") ||
	    expect_memory_only(cgroup, before, "MAP_SHARED|MAP_ANONYMOUS and stores"))
		return -1;
	close(fd);
	munmap(p, SHM_BYTES);
	return expect_charged(cgroup, 0, "unmapped");
}

static int test_memfd_sysv_shared_anon_on_no_mount(const char *cg_root)
{
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (make_cgroups(&s, "tmpfs_mounts_internal", TMPFS_MAX_STR))
		goto out;
	if (cg_run(s.cg, body_internal, NULL) ||
	    expect_no_oom(s.cg, "internal shmem") ||
	    expect_charged(s.parent, 0, "end"))
		goto out;
	ret = KSFT_PASS;
out:
	remove_cgroups(&s);
	return ret;
}

/*
 * B: POSIX shm, a file in /dev/shm, a mount everyone shares. The
 * unpatched kernel lets the cgroup write SHM_BYTES, bounded only by the
 * shared mount's size; the patched one stops the write at TMPFS_MAX with
 * EDQUOT and a store through a mapping with SIGBUS, the mount not full.
 */
static int body_dev_shm(const char *cgroup, void *arg)
{
	long want = have_tmpfs ? TMPFS_MAX : SHM_BYTES;
	struct statfs sfs;
	long w, events = 0;
	bool sigbus;
	char *p;
	int fd, err;

	fd = shm_open(SHM_NAME, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0) {
		ksft_print_msg("shm_open: %s\n", strerror(errno));
		return -1;
	}
	if (check_where(fd, true, "shm_open(3), " SHM_PATH))
		return -1;
	w = fill(fd, SHM_BYTES, &err);
	if (fstatfs(fd, &sfs))
		return -1;
	ksft_print_msg("B: shm_open(3) and write(2): %ld MiB (%ld bytes) written, then %s; memory.tmpfs.current %s; /dev/shm %ld MiB free of %ld\n",
		       w / MiB, w, err_name(err), tmpfs_str(cgroup),
		       (long)(sfs.f_bavail * sfs.f_bsize / MiB),
		       (long)(sfs.f_blocks * sfs.f_bsize / MiB));
	if (w != want || err != (want < SHM_BYTES ? EDQUOT : 0) ||
	    (long)(sfs.f_bavail * sfs.f_bsize) < SHM_BYTES) {
		ksft_print_msg("expected %ld bytes%s, the mount not full\n", want,
			       want < SHM_BYTES ? ", then EDQUOT" : "");
		return -1;
	}
	events += want < SHM_BYTES;
	if (expect_charged(cgroup, want, "written") ||
	    (have_tmpfs && expect_events(cgroup, events, events, "written")))
		return -1;
	close(fd);
	if (shm_unlink(SHM_NAME) || expect_charged(cgroup, 0, "unlinked"))
		return -1;

	fd = shm_open(SHM_NAME, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, SHM_BYTES))
		return -1;
	p = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	w = store_pages(p, SHM_BYTES, &sigbus);
	ksft_print_msg("B: shm_open(3) and stores through MAP_SHARED: %ld MiB (%ld bytes) stored, then %s; memory.tmpfs.current %s\n",
		       w / MiB, w, sigbus ? "SIGBUS" : "no signal",
		       tmpfs_str(cgroup));
	if (w != want || sigbus != (want < SHM_BYTES)) {
		ksft_print_msg("expected %ld bytes%s\n", want,
			       want < SHM_BYTES ? ", then SIGBUS" : "");
		return -1;
	}
	events += want < SHM_BYTES;
	if (expect_charged(cgroup, want, "stored") ||
	    (have_tmpfs && expect_events(cgroup, events, events, "stored")))
		return -1;
	munmap(p, SHM_BYTES);
	close(fd);
	if (shm_unlink(SHM_NAME) || expect_charged(cgroup, 0, "unlinked"))
		return -1;
	return 0;
}

static int test_posix_shm_in_dev_shm(const char *cg_root)
{
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	if (make_cgroups(&s, "tmpfs_mounts_dev_shm", TMPFS_MAX_STR))
		goto out;
	if (cg_run(s.cg, body_dev_shm, NULL) ||
	    expect_no_oom(s.cg, "/dev/shm") ||
	    expect_charged(s.parent, 0, "end") ||
	    (have_tmpfs && expect_events(s.parent, 2, 2, "parent, propagated")))
		goto out;
	ret = KSFT_PASS;
out:
	shm_unlink(SHM_NAME);
	remove_cgroups(&s);
	return ret;
}

/*
 * B: what a kill frees. The holder writes SHM_BYTES each into a memfd, a
 * shared anonymous mapping, a SysV segment of the host's IPC namespace
 * and one of an IPC namespace of its own (neither removed), and
 * TMPFS_MAX into a file in /dev/shm; it reports the host segment's id
 * through the pipe of ARG and waits to be killed.
 */
static int body_holder(const char *cgroup, void *arg)
{
	int pfd = *(int *)arg;
	int host_id, own_id, fd, err, ready = 0;
	char *host, *own, *anon;
	bool sigbus;

	host_id = shmget(IPC_PRIVATE, SHM_BYTES, IPC_CREAT | 0600);
	if (host_id < 0)
		goto fail;
	/* the id first: the parent removes the segment whatever happens */
	if (write(pfd, &host_id, sizeof(host_id)) != sizeof(host_id))
		goto fail;
	host = shmat(host_id, NULL, 0);
	if (host == (void *)-1 || store_pages(host, SHM_BYTES, &sigbus) != SHM_BYTES)
		goto fail;
	if (unshare(CLONE_NEWIPC))
		goto fail;
	own_id = shmget(IPC_PRIVATE, SHM_BYTES, IPC_CREAT | 0600);
	own = own_id < 0 ? (void *)-1 : shmat(own_id, NULL, 0);
	if (own == (void *)-1 || store_pages(own, SHM_BYTES, &sigbus) != SHM_BYTES)
		goto fail;
	fd = memfd_create("tmpfs_mounts_holder", 0);
	if (fd < 0 || fill(fd, SHM_BYTES, &err) != SHM_BYTES)
		goto fail;
	anon = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED || store_pages(anon, SHM_BYTES, &sigbus) != SHM_BYTES)
		goto fail;
	fd = shm_open(SHM_NAME, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || fill(fd, TMPFS_MAX, &err) != TMPFS_MAX)
		goto fail;
	close(fd);
	if (write(pfd, &ready, sizeof(ready)) != sizeof(ready))
		goto fail;
	for (;;)
		pause();
fail:
	ksft_print_msg("holder: %s\n", strerror(errno));
	return -1;
}

/*
 * Wait, up to 5 s, until memory.current of CG is at most WANT plus
 * HELD_SLACK; returns it, and the milliseconds it took in *MS.
 */
static long wait_memory_down(const char *cg, long want, long *ms)
{
	long cur = cg_read_long(cg, "memory.current");

	for (*ms = 0; *ms < 5000 && cur > want + HELD_SLACK; *ms += 50) {
		drain_lru_batches();
		usleep(50000);
		cur = cg_read_long(cg, "memory.current");
	}
	return cur;
}

static int test_holder_killed(const char *cg_root)
{
	long held, after, removed, ms, ms2, left = TMPFS_MAX + SHM_BYTES;
	struct setup s = { 0 };
	int pfd[2] = { -1, -1 };
	int host_id = -1, ready = -1, status;
	int ret = KSFT_FAIL;
	pid_t pid = -1;

	if (make_cgroups(&s, "tmpfs_mounts_holder", TMPFS_MAX_STR) || pipe(pfd))
		goto out;
	pid = cg_run_nowait(s.cg, body_holder, &pfd[1]);
	if (pid < 0)
		goto out;
	close(pfd[1]);
	pfd[1] = -1;
	if (read(pfd[0], &host_id, sizeof(host_id)) != sizeof(host_id)) {
		host_id = -1;
		goto out;
	}
	if (read(pfd[0], &ready, sizeof(ready)) != sizeof(ready) || ready)
		goto out;
	held = cg_read_long(s.cg, "memory.current");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	pid = -1;
	after = wait_memory_down(s.cg, left, &ms);
	ksft_print_msg("B: a holder of %ld MiB each of memfd, MAP_SHARED|MAP_ANONYMOUS, SysV shm of its own IPC namespace and of the host's, and of %ld MiB in /dev/shm, was killed: memory.current %.1f -> %.1f MiB within %ld ms\n",
		       SHM_BYTES / MiB, TMPFS_MAX / MiB, mib(held), mib(after), ms);
	if (held < 4 * SHM_BYTES + TMPFS_MAX - charge_slack() || after < left ||
	    after > left + HELD_SLACK) {
		ksft_print_msg("expected at least %ld held, and %ld to %ld left: the /dev/shm file and the host's SysV segment\n",
			       4 * SHM_BYTES + TMPFS_MAX, left, left + HELD_SLACK);
		goto out;
	}
	/* the file outlives its writer, and stays charged */
	if (expect_charged(s.cg, TMPFS_MAX, "holder killed"))
		goto out;
	if (shmctl(host_id, IPC_RMID, NULL))
		goto out;
	host_id = -1;
	removed = wait_memory_down(s.cg, TMPFS_MAX, &ms2);
	ksft_print_msg("B: left: the /dev/shm file (memory.tmpfs.current %s) and the host's SysV segment; after IPC_RMID memory.current %.1f MiB\n",
		       tmpfs_str(s.cg), mib(removed));
	if (removed < TMPFS_MAX || removed > TMPFS_MAX + HELD_SLACK) {
		ksft_print_msg("after IPC_RMID: expected %ld to %ld\n",
			       TMPFS_MAX, TMPFS_MAX + HELD_SLACK);
		goto out;
	}
	if (expect_charged(s.cg, TMPFS_MAX, "segment removed") ||
	    shm_unlink(SHM_NAME) || expect_charged(s.cg, 0, "file unlinked") ||
	    expect_charged(s.parent, 0, "file unlinked") ||
	    expect_no_oom(s.cg, "holder") ||
	    (have_tmpfs && expect_events(s.cg, 0, 0, "holder")))
		goto out;
	ret = KSFT_PASS;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (host_id >= 0)
		shmctl(host_id, IPC_RMID, NULL);
	shm_unlink(SHM_NAME);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	remove_cgroups(&s);
	return ret;
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_mounts_size_bounds_no_container),
	TMPFS_TEST(test_mounts_under_tmpfs_max),
	TMPFS_TEST(test_memfd_sysv_shared_anon_on_no_mount),
	TMPFS_TEST(test_posix_shm_in_dev_shm),
	TMPFS_TEST(test_holder_killed),
};

int main(void)
{
	return run_memcg_tests(tests, ARRAY_SIZE(tests));
}
