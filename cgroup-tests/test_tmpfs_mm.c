// SPDX-License-Identifier: GPL-2.0
/*
 * memory.tmpfs.current through the memory management paths that move or
 * replace tmpfs pages behind the file's back (the series'
 * Documentation/admin-guide/cgroup-v2.rst, memory.tmpfs.current: data is
 * charged from its allocation until it is freed, wherever it moves):
 * userfaultfd copy into shmem, page migration (soft offline) and
 * compaction, hardware poison, swapoff, and swap of a removed cgroup's
 * data, including the forced recharge when it is read back elsewhere, and
 * swap while such removed cgroups exist and after they are gone.
 * Every case checks exact values and ends with memory.tmpfs.current at 0.
 */
#include "tmpfs_util.h"

#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>

/*
 * userfaultfd: UFFDIO_COPY fills missing pages of a shared tmpfs mapping
 * through shmem_mfill_atomic_pte(). It is charged like a write, and at
 * the limit it fails with EDQUOT after the pages that fit. UFFDIO_ZEROPAGE
 * into shmem allocates a zeroed page of the file (shmem has no shared
 * zero page): charged like UFFDIO_COPY. The same two failures for both:
 * a later page of a range (the pages before it are filled, the count
 * reads their bytes, errno EAGAIN) and the first page (the count reads
 * -EDQUOT, errno EDQUOT).
 */
struct uffd_case {
	const char *path;
	const char *name;	/* the ioctl */
	bool zero;		/* UFFDIO_ZEROPAGE, else UFFDIO_COPY */
	long refused_pages;	/* the range whose first page does not fit */
};

/*
 * One fill of LEN bytes at DST: UFFDIO_COPY from SRC, or UFFDIO_ZEROPAGE
 * when SRC is NULL. The ioctl's return, errno as it left it, and its
 * count (copy, zeropage) in *DONE.
 */
static int uffd_fill(int uffd, char *dst, long len, const char *src, long long *done)
{
	struct uffdio_copy copy = { .dst = (unsigned long)dst, .src = (unsigned long)src,
				    .len = len };
	struct uffdio_zeropage zp = { .range = { .start = (unsigned long)dst, .len = len } };
	int ret;

	errno = 0;
	if (src) {
		ret = ioctl(uffd, UFFDIO_COPY, &copy);
		*done = copy.copy;
	} else {
		ret = ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
		*done = zp.zeropage;
	}
	return ret;
}

static int body_uffd(const char *cgroup, void *arg)
{
	const struct uffd_case *u = arg;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	char *map, *src = NULL;
	long max = 3 * page_size, i;
	long long done;
	int fd, uffd;

	if (!u->zero) {
		src = mmap(NULL, 8 * page_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (src == MAP_FAILED)
			return -1;
		memset(src, 0x3c, 8 * page_size);
	}
	fd = open(u->path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, 8 * page_size))
		return -1;
	map = mmap(NULL, 8 * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		ksft_print_msg("userfaultfd: %s\n", strerror(errno));
		return -1;
	}
	reg.range.start = (unsigned long)map;
	reg.range.len = 8 * page_size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		ksft_print_msg("UFFDIO_API/REGISTER on tmpfs: %s\n", strerror(errno));
		return -1;
	}
	if (!(reg.ioctls & (1ULL << (u->zero ? _UFFDIO_ZEROPAGE : _UFFDIO_COPY)))) {
		ksft_print_msg("%s not offered for tmpfs\n", u->name);
		return -1;
	}

	STEP(uffd_fill(uffd, map, page_size, src, &done), page_size);
	if (done != page_size)
		return -1;

	/* 3 pages at a limit of 3, one used: two fit, then the fill stops */
	if (cg_write(cgroup, "memory.tmpfs.max", (char []){ "12K" }) ||
	    expect_long(cgroup, "memory.tmpfs.max", max, "max"))
		return -1;
	if (uffd_fill(uffd, map + page_size, 3 * page_size, src, &done) != -1 ||
	    errno != EAGAIN || done != 2 * page_size) {
		ksft_print_msg("%s of 3 pages with room for 2: %lld bytes (errno %s), expected %ld and EAGAIN\n",
			       u->name, done, strerror(errno), 2 * page_size);
		return -1;
	}
	STEP(0, max);
	/* the first page of a range does not fit: EDQUOT itself */
	if (uffd_fill(uffd, map + 3 * page_size, u->refused_pages * page_size, src, &done) != -1 ||
	    errno != EDQUOT || done != -EDQUOT) {
		ksft_print_msg("%s past the limit: %lld (errno %s), expected -EDQUOT and EDQUOT\n",
			       u->name, done, strerror(errno));
		return -1;
	}
	STEP(0, max);
	if (cg_read_key_long(cgroup, "memory.tmpfs.events", "fail ") != 2 ||
	    cg_read_key_long(cgroup, "memory.tmpfs.events", "max ") != 2 ||
	    cg_read_key_long(cgroup, "memory.events", "oom ") != 0) {
		ksft_print_msg("events after two refused %s: fail %ld max %ld oom %ld, expected 2 2 0\n",
			       u->name, cg_read_key_long(cgroup, "memory.tmpfs.events", "fail "),
			       cg_read_key_long(cgroup, "memory.tmpfs.events", "max "),
			       cg_read_key_long(cgroup, "memory.events", "oom "));
		return -1;
	}
	/* the filled pages hold the source's bytes, or zeros */
	for (i = 0; i < 3 * page_size; i++)
		if (map[i] != (src ? src[i] : 0)) {
			ksft_print_msg("%s: byte %ld of the filled pages is %d, expected %d\n",
				       u->name, i, map[i], src ? src[i] : 0);
			return -1;
		}
	close(uffd);
	STEP(munmap(map, 8 * page_size), max);
	close(fd);
	STEP(unlink(u->path), 0);
	return 0;
}

static int test_uffd_copy(const char *root)
{
	struct uffd_case u = { "/dev/shm/tmpfs_uffd", "UFFDIO_COPY", false, 1 };

	return run_setup_case(root, "tmpfs_uffd", "max", body_uffd, &u, u.path);
}

static int test_uffd_zeropage(const char *root)
{
	struct uffd_case u = { "/dev/shm/tmpfs_uffd_zero", "UFFDIO_ZEROPAGE", true, 2 };
	struct setup s = { 0 };
	int ret = KSFT_FAIL;

	/* the parent counts the child's two refusals too (propagated) */
	if (!setup_run(&s, root, "tmpfs_uffd_zero", "max", body_uffd, &u) &&
	    !expect_events(s.parent, 2, 2, "parent, propagated"))
		ret = KSFT_PASS;
	return teardown(&s, u.path, ret);
}

/*
 * Migration: MADV_SOFT_OFFLINE migrates the chosen pages to new frames
 * (the old ones are taken out of use); compaction migrates whatever it
 * finds. The charge goes with the page cache entry: unchanged throughout,
 * and 0 once the file is gone.
 */
static int body_migrate(const char *cgroup, void *arg)
{
	const char *path = arg;
	unsigned long before[4], after;
	long migrated;
	char *map;
	int fd, i;

	STEP(write_file(path, 1 * MiB), 1 * MiB);
	fd = open(path, O_RDWR);
	map = mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || map == MAP_FAILED)
		return -1;
	for (i = 0; i < 4; i++) {
		if (map[i * page_size] != PATTERN_BYTE(i * page_size))
			return -1;	/* faulted in, with the data written */
		before[i] = pfn_of(map + i * page_size);
	}
	migrated = vmstat("pgmigrate_success");
	STEP(madvise(map, 4 * page_size, MADV_SOFT_OFFLINE), 1 * MiB);
	for (i = 0; i < 4; i++) {
		after = pfn_of(map + i * page_size);
		if (!before[i] || !after || after == before[i]) {
			ksft_print_msg("page %d: pfn %#lx before, %#lx after soft offline: not migrated\n",
				       i, before[i], after);
			return -1;
		}
	}
	if (vmstat("pgmigrate_success") < migrated + 4) {
		ksft_print_msg("pgmigrate_success grew by %ld, expected at least 4\n",
			       vmstat("pgmigrate_success") - migrated);
		return -1;
	}
	if (verify_file(path, 1 * MiB))
		return -1;
	STEP(0, 1 * MiB);

	/* compaction, over all of memory */
	{
		int c = open("/proc/sys/vm/compact_memory", O_WRONLY);

		if (c < 0 || write(c, "1", 1) != 1) {
			ksft_print_msg("compact_memory: %s\n", strerror(errno));
			return -1;
		}
		close(c);
	}
	STEP(verify_file(path, 1 * MiB), 1 * MiB);
	STEP(munmap(map, 1 * MiB), 1 * MiB);
	STEP(ftruncate(fd, 512 * KiB), 512 * KiB);
	close(fd);
	STEP(unlink(path), 0);
	return 0;
}

static int test_migration(const char *root)
{
	const char *path = "/tmp/tmpfs_migrate";

	return run_setup_case(root, "tmpfs_migrate", "max", body_migrate, (void *)path, path);
}

static volatile sig_atomic_t mce_code;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	mce_code = si->si_code;
}

/*
 * Hardware poison: memory_failure() keeps a poisoned tmpfs page in the
 * page cache (reads get EIO) but uncharges it from its memcg, since the
 * frame is never freed; its data is gone, so memory.tmpfs lets go of it
 * at once too, and not a second time when it leaves the page cache.
 */
static int body_hwpoison(const char *cgroup, void *arg)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	const char *path = arg;
	char buf[16], *map;
	int fd;

	/* MADV_HWPOISON acts as a consumed error: SIGBUS to the caller */
	if (sigaction(SIGBUS, &sa, NULL))
		return -1;

	STEP(write_file(path, 1 * MiB), 1 * MiB);
	fd = open(path, O_RDWR);
	map = mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || map == MAP_FAILED)
		return -1;
	if (map[3 * page_size] != PATTERN_BYTE(3 * page_size))
		return -1;
	STEP(madvise(map + 3 * page_size, page_size, MADV_HWPOISON), 1 * MiB - page_size);
	if (mce_code != BUS_MCEERR_AR) {
		ksft_print_msg("SIGBUS si_code %d after MADV_HWPOISON, expected BUS_MCEERR_AR\n",
			       (int)mce_code);
		return -1;
	}
	STEP(munmap(map, 1 * MiB), 1 * MiB - page_size);
	if (pread(fd, buf, sizeof(buf), 3 * page_size) != -1 || errno != EIO) {
		ksft_print_msg("read of the poisoned page: not EIO (%s)\n", strerror(errno));
		return -1;
	}
	if (pread(fd, buf, sizeof(buf), 4 * page_size) != sizeof(buf)) {
		ksft_print_msg("read of the next page: %s\n", strerror(errno));
		return -1;
	}
	/* the poisoned page leaves the page cache with the rest */
	STEP(ftruncate(fd, 2 * page_size), 2 * page_size);
	STEP(ftruncate(fd, 0), 0);
	close(fd);
	STEP(unlink(path), 0);
	return 0;
}

static int test_hwpoison(const char *root)
{
	const char *path = "/tmp/tmpfs_hwpoison";

	return run_setup_case(root, "tmpfs_hwpoison", "max", body_hwpoison, (void *)path, path);
}

/* After a swapoff (when OFF), swapon again: RET, or KSFT_FAIL if that fails. */
static int swapon_again(bool off, int ret)
{
	if (off && swapon(SWAP_DEV, 0)) {
		ksft_print_msg("swapon %s again: %s\n", SWAP_DEV, strerror(errno));
		return KSFT_FAIL;
	}
	return ret;
}

/*
 * swapoff brings every swapped tmpfs page back into RAM (shmem_unuse);
 * the charge stays where it was, swap.current drops to 0.
 */
static int test_swapoff(const char *root)
{
	const char *path = "/tmp/tmpfs_swapoff";
	struct setup s = { 0 };
	int ret = KSFT_FAIL;
	bool swapped_off = false;

	if (setup(&s, root, "tmpfs_swapoff", "max") ||
	    write_as(s.cg, path, 0, 4 * MiB, 4 * MiB) ||
	    expect_tmpfs(s.cg, 4 * MiB, "written") || push_to_swap(s.cg, 4 * MiB) ||
	    expect_tmpfs(s.cg, 4 * MiB, "swapped out") ||
	    check_within_memory(s.cg, "swapped out"))
		goto out;
	if (swapoff(SWAP_DEV)) {
		ksft_print_msg("swapoff %s: %s\n", SWAP_DEV, strerror(errno));
		goto out;
	}
	swapped_off = true;
	if (expect_tmpfs(s.cg, 4 * MiB, "after swapoff") ||
	    expect_tmpfs(s.parent, 4 * MiB, "after swapoff, parent") ||
	    expect_long(s.cg, "memory.swap.current", 0, "after swapoff") ||
	    check_within_memory(s.cg, "after swapoff"))
		goto out;
	/* memory.stat is flushed lazily: memory.current is the exact one */
	if (cg_read_long(s.cg, "memory.current") < 4 * MiB) {
		ksft_print_msg("memory.current %ld after swapoff, expected at least %ld\n",
			       cg_read_long(s.cg, "memory.current"), 4 * MiB);
		goto out;
	}
	if (verify_file(path, 4 * MiB) || unlink(path) ||
	    expect_tmpfs(s.cg, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	return teardown(&s, path, swapon_again(swapped_off, ret));
}

static int body_read(const char *cgroup, void *arg)
{
	return verify_file(arg, 2 * MiB);
}

/*
 * *A writes LEN bytes at OFF of PATH (WROTE: what it wrote), pushed to
 * swap with SWAP; then *A is removed, and its data stays. 0, or -1.
 */
static int write_then_remove(char **a, const char *path, long off, long len,
			     const char *wrote, bool swap)
{
	if (write_as(*a, path, off, len, len) || expect_tmpfs(*a, len, wrote) ||
	    (swap && (push_to_swap(*a, len) || expect_tmpfs(*a, len, "swapped out"))))
		return -1;
	return destroy_cgroup(a);
}

/*
 * The end of a case that left a removed cgroup's data: PATH (if any)
 * unlinked; with DRAIN, the swap slot caches drained, whose freed slots
 * still pin the removed memcg; the N cgroups CGS removed, in order. RET,
 * or KSFT_FAIL when the drain failed.
 */
static int end_removed_case(const char *path, int ret, bool drain, char **cgs, int n)
{
	if (path)
		unlink(path);
	if (drain && drain_swap_slots())
		ret = KSFT_FAIL;
	for (int i = 0; i < n; i++)
		remove_cgroup(cgs[i]);
	return ret;
}

/*
 * A removed cgroup's data, swapped out afterwards: swap_cgroup records
 * the nearest online ancestor, the parent, which keeps the charge; a
 * sibling reading it back pays nothing.
 */
static int test_removed_swapout(const char *root)
{
	const char *path = "/tmp/tmpfs_removed_swapout";
	char *parent, *a = NULL, *b = NULL;
	int ret = KSFT_FAIL;

	parent = make_parent(root, "tmpfs_removed_swapout");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b || write_then_remove(&a, path, 0, 2 * MiB, "a wrote", false))
		goto out;
	/*
	 * rmdir returns before the memcg goes offline (an RCU grace period
	 * and a work item later); until then swap-out would still record a.
	 */
	sleep(2);
	if (expect_tmpfs(parent, 2 * MiB, "a removed") ||
	    push_to_swap(parent, 2 * MiB) ||
	    expect_tmpfs(parent, 2 * MiB, "swapped out after a's removal") ||
	    check_within_memory(parent, "swapped out"))
		goto out;
	if (cg_run(b, body_read, (void *)path) ||
	    expect_tmpfs(b, 0, "b read it back: b") ||
	    expect_tmpfs(parent, 2 * MiB, "b read it back: parent"))
		goto out;
	if (memcg_stat(b, "shmem ") != 0) {
		ksft_print_msg("b: memory.stat shmem %ld after reading, expected 0\n",
			       memcg_stat(b, "shmem "));
		goto out;
	}
	if (unlink(path) || expect_tmpfs(parent, 0, "unlinked") ||
	    expect_tmpfs(b, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	return end_removed_case(path, ret, true, (char *[]){ a, b, parent }, 3);
}

/*
 * A cgroup's data swapped out, then the cgroup removed: the swap entries
 * still name it, so a sibling reading the data back is charged for it by
 * memcg, and the tmpfs charge moves along, forced past the sibling's own
 * memory.tmpfs.max (a read never fails for tmpfs.max). The parent's
 * total does not change at any point.
 */
static int test_removed_swapin_forced(const char *root)
{
	const char *path = "/tmp/tmpfs_removed_swapin";
	char *parent, *a = NULL, *b = NULL;
	int ret = KSFT_FAIL;

	parent = make_parent(root, "tmpfs_removed_swapin");
	a = parent ? make_child(parent, "a") : NULL;
	b = parent ? make_child(parent, "b") : NULL;
	if (!a || !b || cg_write(b, "memory.tmpfs.max", "1M") ||
	    write_then_remove(&a, path, 0, 2 * MiB, "a wrote", true))
		goto out;
	if (expect_tmpfs(parent, 2 * MiB, "a removed") ||
	    cg_run(b, body_read, (void *)path))
		goto out;
	if (expect_tmpfs(b, 2 * MiB, "b read it back: b, forced past its max") ||
	    expect_tmpfs(parent, 2 * MiB, "b read it back: parent") ||
	    check_within_memory(b, "b read it back") ||
	    expect_peak(b, 2 * MiB, -1, "b's peak"))
		goto out;
	/* memory.current, not the lazily flushed memory.stat */
	if (cg_read_long(b, "memory.current") < 2 * MiB ||
	    cg_read_key_long(b, "memory.tmpfs.events", "max ") != 0 ||
	    cg_read_key_long(b, "memory.tmpfs.events", "fail ") != 0) {
		ksft_print_msg("b: memory.current %ld (want >= %ld), tmpfs events max %ld fail %ld (want 0 0)\n",
			       cg_read_long(b, "memory.current"), 2 * MiB,
			       cg_read_key_long(b, "memory.tmpfs.events", "max "),
			       cg_read_key_long(b, "memory.tmpfs.events", "fail "));
		goto out;
	}
	/* over its max, b cannot add a page more */
	if (write_as(b, "/tmp/tmpfs_removed_swapin.b", 0, page_size, 0) ||
	    expect_tmpfs(b, 2 * MiB, "b's own write refused"))
		goto out;
	if (unlink(path) || expect_tmpfs(b, 0, "unlinked: b") ||
	    expect_tmpfs(parent, 0, "unlinked: parent"))
		goto out;
	ret = KSFT_PASS;
out:
	unlink("/tmp/tmpfs_removed_swapin.b");
	return end_removed_case(path, ret, true, (char *[]){ a, b, parent }, 3);
}

/* Load every page of PATH (LEN bytes) through a shared mapping: faults. */
static int body_fault_in(const char *cgroup, void *arg)
{
	const char *path = arg;
	long len = 2 * MiB, off;
	char *map;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	for (off = 0; off < len; off++)
		if (map[off] != PATTERN_BYTE(off)) {
			ksft_print_msg("byte %ld differs after the swap-in fault\n", off);
			return -1;
		}
	munmap(map, len);
	close(fd);
	return 0;
}

static int body_swapoff(const char *cgroup, void *arg)
{
	if (swapoff(SWAP_DEV)) {
		ksft_print_msg("swapoff %s from %s: %s\n", SWAP_DEV, cgroup, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Who is charged when a removed cgroup's swapped-out tmpfs data comes
 * back: memcg charges the folio to the task that swaps it in (the swap
 * entry's cgroup is offline), and the tmpfs charge moves with it, out of
 * the removed cgroup's ancestors and into the recipient's. Two
 * recipients: a task that faults the pages in through a mapping, and a
 * task that calls swapoff (shmem_unuse() swaps them in in its context).
 * The recipient sits in another subtree: "from" drops to 0, "to" gains
 * all of it.
 */
static int removed_swapin_to(const char *root, bool by_swapoff)
{
	const char *path = "/tmp/tmpfs_swapin_recipient";
	char *from, *to = NULL, *a = NULL, *c = NULL;
	int ret = KSFT_FAIL;
	bool swapped_off = false;

	from = make_parent(root, "tmpfs_recipient_from");
	to = from ? make_parent(root, "tmpfs_recipient_to") : NULL;
	a = to ? make_child(from, "a") : NULL;
	c = a ? make_child(to, "c") : NULL;
	if (!c || write_then_remove(&a, path, 0, 2 * MiB, "a wrote", true))
		goto out;
	if (expect_tmpfs(from, 2 * MiB, "a removed: its parent keeps the charge") ||
	    expect_tmpfs(c, 0, "before the swap-in: c"))
		goto out;
	if (by_swapoff) {
		if (cg_run(c, body_swapoff, NULL))
			goto out;
		swapped_off = true;
	} else if (cg_run(c, body_fault_in, (void *)path)) {
		goto out;
	}
	if (expect_tmpfs(c, 2 * MiB, by_swapoff ? "swapoff by c: c" : "faulted in by c: c") ||
	    expect_tmpfs(to, 2 * MiB, "the recipient's parent") ||
	    expect_tmpfs(from, 0, "the removed cgroup's parent") ||
	    check_within_memory(c, "recipient"))
		goto out;
	if (verify_file(path, 2 * MiB) || unlink(path) ||
	    expect_tmpfs(c, 0, "unlinked: c") || expect_tmpfs(to, 0, "unlinked: to") ||
	    expect_tmpfs(from, 0, "unlinked: from"))
		goto out;
	ret = KSFT_PASS;
out:
	ret = swapon_again(swapped_off, ret);
	/* a swapoff drained the swap slot caches itself */
	return end_removed_case(path, ret, !swapped_off, (char *[]){ a, c, to, from }, 4);
}

static int test_removed_swapin_fault(const char *root)
{
	return removed_swapin_to(root, false);
}

static int test_removed_swapin_swapoff(const char *root)
{
	return removed_swapin_to(root, true);
}

/*
 * The third recipient: a kernel thread. khugepaged, collapsing a range
 * of a tmpfs file, swaps in the range's swapped pages itself
 * (collapse_file(), SGP_NOALLOC): current->mm is NULL, so memcg charges
 * them to the root cgroup, and the tmpfs charge leaves every non-root
 * cgroup. The range: page 0 written by this task (in the root cgroup:
 * khugepaged needs one page present), pages 1..511 written by a, swapped
 * out, and a removed. A mapping with MADV_HUGEPAGE on a huge=advise
 * tmpfs, never touched, gives khugepaged the range to scan. Nothing in
 * userspace reads the data until the parent's charge is gone.
 */
static int test_removed_swapin_kthread(const char *root)
{
	char dir[] = "/tmp/tmpfs_kthread.XXXXXX", path[PATH_MAX];
	static char back[HPAGE];
	char old_sleep[32] = "", old_swap[32] = "", old_none[32] = "";
	char *from = NULL, *a = NULL, *map = NULL;
	long swapped = HPAGE - page_size, cur = -1, collapsed = vmstat("thp_collapse_alloc");
	int ret = KSFT_FAIL, fd = -1, i;

	if (mount_tmpfs_dir(dir, "huge=advise"))
		return KSFT_FAIL;
	snprintf(path, sizeof(path), "%s/data", dir);
	from = make_parent(root, "tmpfs_kthread");
	a = from ? make_child(from, "a") : NULL;
	if (!a)
		goto out;
	/* page 0 by the root cgroup, not charged to memory.tmpfs */
	fd = open(path, O_CREAT | O_RDWR, 0644);
	if (fd < 0 || write_pattern(fd, 0, page_size) != page_size)
		goto out;
	if (write_then_remove(&a, path, page_size, swapped, "a wrote pages 1..511", true) ||
	    expect_tmpfs(from, swapped, "a removed"))
		goto out;

	if (khugepaged_set("max_ptes_swap", "511", old_swap, sizeof(old_swap)) ||
	    khugepaged_set("max_ptes_none", "511", old_none, sizeof(old_none)) ||
	    khugepaged_set("scan_sleep_millisecs", "100", old_sleep, sizeof(old_sleep))) {
		ksft_print_msg("khugepaged tunables: %s\n", strerror(errno));
		goto out;
	}
	map = map_huge_aligned(fd, PROT_READ);
	if (!map || madvise(map, HPAGE, MADV_HUGEPAGE)) {
		ksft_print_msg("mmap, MADV_HUGEPAGE: %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < 600; i++) {
		cur = tmpfs_current(from);
		if (cur == 0)
			break;
		usleep(100000);
	}
	ksft_print_msg("khugepaged: %s's memory.tmpfs.current %ld after %d.%d s; thp_collapse_alloc +%ld\n",
		       from, cur, i / 10, i % 10, vmstat("thp_collapse_alloc") - collapsed);
	if (expect_tmpfs(from, 0, "khugepaged swapped a's pages in"))
		goto out;
	/* the swap slots it freed may wait in the slot caches, charged */
	if (drain_swap_slots() ||
	    expect_long(from, "memory.swap.current", 0, "khugepaged swapped a's pages in"))
		goto out;
	/* write_pattern()'s bytes count from the start of each write */
	if (pread(fd, back, HPAGE, 0) != HPAGE)
		goto out;
	for (i = 0; i < HPAGE; i++) {
		long rel = i < page_size ? i : i - page_size;

		if (back[i] != PATTERN_BYTE(rel)) {
			ksft_print_msg("byte %d differs after the swap-in by khugepaged\n", i);
			goto out;
		}
	}
	if (expect_tmpfs(from, 0, "read back"))
		goto out;
	ret = KSFT_PASS;
out:
	if (*old_swap)
		khugepaged_set("max_ptes_swap", old_swap, NULL, 0);
	if (*old_none)
		khugepaged_set("max_ptes_none", old_none, NULL, 0);
	if (*old_sleep)
		khugepaged_set("scan_sleep_millisecs", old_sleep, NULL, 0);
	if (map)
		munmap(map, HPAGE);
	if (fd >= 0)
		close(fd);
	unlink(path);
	umount_tmpfs_dir(dir);
	return end_removed_case(NULL, ret, true, (char *[]){ a, from }, 2);
}

/*
 * Swap-out and swap-in look a tmpfs swap entry's swap_cgroup record up
 * only while some memcg, not yet freed, may have a record naming another
 * memcg than its data's: a removed memcg whose page went to swap after
 * its ID (the entries naming the parent), or a dying one whose entry
 * memcg charged elsewhere at swap-in. a's data goes to swap and back, its
 * current exact throughout, three times: before any orphan; while there
 * are two (r, whose data was swapped out before its removal and stays
 * charged to it, and s, whose data was in RAM and is swapped out after
 * it, the entries naming the parent, to which its charge passes), a third
 * (q) having come and gone; and once they are all freed. In between, b
 * reads r's data back: the charge moves to b, forced; then s's: the
 * parent keeps it, b pays nothing.
 */
#define ORPHAN_LEN (2 * MiB)	/* body_read()'s length */

/*
 * a's file pushed to swap, then read back by a task of a: a at
 * ORPHAN_LEN, the parent at P_LEN, after each.
 */
static int a_roundtrip(const char *parent, const char *a, const char *path,
		       long p_len, const char *when)
{
	char step[128];

	snprintf(step, sizeof(step), "%s: a swapped out", when);
	if (push_to_swap(a, ORPHAN_LEN) || expect_tmpfs(a, ORPHAN_LEN, step) ||
	    expect_tmpfs(parent, p_len, step) || check_within_memory(a, step))
		return -1;
	snprintf(step, sizeof(step), "%s: a read it back", when);
	if (cg_run(a, body_read, (void *)path) || expect_tmpfs(a, ORPHAN_LEN, step) ||
	    expect_tmpfs(parent, p_len, step) || check_within_memory(a, step))
		return -1;
	return 0;
}

static int test_orphans_swap_lookup(const char *root)
{
	const char *pa = "/tmp/tmpfs_orphan_a", *pr = "/tmp/tmpfs_orphan_r";
	const char *ps = "/tmp/tmpfs_orphan_s", *pq = "/tmp/tmpfs_orphan_q";
	char *parent, *a = NULL, *b = NULL, *r = NULL, *s = NULL, *q = NULL;
	long len = ORPHAN_LEN, dying = nr_dying(root);
	int ret = KSFT_FAIL;

	if (dying)
		ksft_print_msg("%ld dying cgroups at the start: the lookups may be on already\n", dying);
	parent = make_parent(root, "tmpfs_orphans");
	a = parent ? make_child(parent, "a") : NULL;
	b = a ? make_child(parent, "b") : NULL;
	r = b ? make_child(parent, "r") : NULL;
	s = r ? make_child(parent, "s") : NULL;
	q = s ? make_child(parent, "q") : NULL;
	if (!q)
		goto out;

	/* no orphan */
	if (write_as(a, pa, 0, len, len) || expect_tmpfs(a, len, "a wrote") ||
	    a_roundtrip(parent, a, pa, len, "no orphan"))
		goto out;

	/* r: swapped out, then removed; s: removed with its data in RAM */
	if (write_as(r, pr, 0, len, len) || push_to_swap(r, len) ||
	    expect_tmpfs(r, len, "r swapped out") || destroy_cgroup(&r) ||
	    write_as(s, ps, 0, len, len) || expect_tmpfs(s, len, "s wrote") ||
	    destroy_cgroup(&s))
		goto out;
	/* q: a page, removed, then freed: its memcg goes */
	if (write_as(q, pq, 0, page_size, page_size) || destroy_cgroup(&q))
		goto out;
	/* rmdir returns before the memcg goes offline: see test_removed_swapout */
	sleep(2);
	if (expect_tmpfs(parent, 3 * len + page_size, "r, s and q removed") ||
	    unlink(pq) || expect_tmpfs(parent, 3 * len, "q's page freed") ||
	    wait_dying(parent, 2, "q freed"))
		goto out;
	if (a_roundtrip(parent, a, pa, 3 * len, "orphans r and s"))
		goto out;

	/* s's data to swap: the entries name the parent; no count changes */
	if (push_to_swap(parent, 3 * len) ||
	    expect_tmpfs(parent, 3 * len, "s's data swapped out after its removal") ||
	    expect_tmpfs(a, len, "s's data swapped out: a") ||
	    check_within_memory(parent, "s's data swapped out"))
		goto out;
	if (cg_run(b, body_read, (void *)pr) ||
	    expect_tmpfs(b, len, "b read r's data back: b, forced") ||
	    expect_tmpfs(parent, 3 * len, "b read r's data back: parent") ||
	    check_within_memory(b, "b read r's data back"))
		goto out;
	if (cg_run(b, body_read, (void *)ps) ||
	    expect_tmpfs(b, len, "b read s's data back: b") ||
	    expect_tmpfs(parent, 3 * len, "b read s's data back: parent"))
		goto out;
	if (a_roundtrip(parent, a, pa, 3 * len, "r's and s's data read back"))
		goto out;

	/* r's and s's data freed; their memcgs go, and the lookups with them */
	if (unlink(pr) || expect_tmpfs(b, 0, "r's file unlinked: b") ||
	    expect_tmpfs(parent, 2 * len, "r's file unlinked: parent") ||
	    unlink(ps) || expect_tmpfs(parent, len, "s's file unlinked: parent") ||
	    drain_swap_slots() || wait_dying(parent, 0, "r and s freed"))
		goto out;
	if (a_roundtrip(parent, a, pa, len, "orphans freed"))
		goto out;
	if (unlink(pa) || expect_tmpfs(a, 0, "unlinked") ||
	    expect_tmpfs(parent, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	unlink(pr);
	unlink(ps);
	unlink(pq);
	return end_removed_case(pa, ret, true, (char *[]){ a, b, r, s, q, parent }, 6);
}

/*
 * The first swap-in after a removal: r0's data goes to swap, r0 is
 * removed, and a task of b reads the data back at once. rmdir returns
 * before r0's memcg goes offline, but the swap-in already finds r0 dying
 * and memcg charges the pages to b: the tmpfs charge must move with
 * every page. r0 is not offline yet: the swap-in charge itself must tell
 * shmem's swap-in to look the records up (see test_orphans_swap_lookup).
 */
static int test_orphan_swapin_at_rmdir(const char *root)
{
	const char *path = "/tmp/tmpfs_orphan_r0";
	char *parent, *b = NULL, *r0 = NULL;
	long len = ORPHAN_LEN;
	int ret = KSFT_FAIL;

	parent = make_parent(root, "tmpfs_orphan_rmdir");
	b = parent ? make_child(parent, "b") : NULL;
	r0 = b ? make_child(parent, "r0") : NULL;
	if (!r0)
		goto out;
	if (write_as(r0, path, 0, len, len) || push_to_swap(r0, len) ||
	    expect_tmpfs(r0, len, "r0 swapped out") || destroy_cgroup(&r0) ||
	    cg_run(b, body_read, (void *)path) ||
	    expect_tmpfs(b, len, "b read r0's data back right after its rmdir: b") ||
	    expect_tmpfs(parent, len, "b read r0's data back right after its rmdir: parent") ||
	    check_within_memory(b, "b read r0's data back"))
		goto out;
	if (unlink(path) || expect_tmpfs(b, 0, "unlinked: b") ||
	    expect_tmpfs(parent, 0, "unlinked: parent"))
		goto out;
	ret = KSFT_PASS;
out:
	return end_removed_case(path, ret, true, (char *[]){ r0, b, parent }, 3);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_uffd_copy),
	TMPFS_TEST(test_uffd_zeropage),
	TMPFS_TEST(test_migration),
	TMPFS_TEST(test_hwpoison),
	TMPFS_TEST(test_swapoff),
	TMPFS_TEST(test_removed_swapout),
	TMPFS_TEST(test_removed_swapin_forced),
	TMPFS_TEST(test_removed_swapin_fault),
	TMPFS_TEST(test_removed_swapin_swapoff),
	TMPFS_TEST_NEEDS(test_removed_swapin_kthread, NEEDS_THP),
	TMPFS_TEST(test_orphans_swap_lookup),
	TMPFS_TEST(test_orphan_swapin_at_rmdir),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
