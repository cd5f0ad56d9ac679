// SPDX-License-Identifier: GPL-2.0
/*
 * Races at a limit (the series' Documentation/admin-guide/cgroup-v2.rst,
 * memory.tmpfs.max: no level's current ever exceeds its max, under any
 * concurrency): a charge, a move or a failed charge elsewhere never takes
 * a level over its memory.tmpfs.max, and never makes a charge that fits
 * fail.
 *
 * A removed cgroup's tmpfs charge moves when its data is swapped out (to
 * the nearest live ancestor, which counts it already) and when a sibling
 * reads it back (to the reader). Neither move may change the levels at and
 * above the lowest common ancestor, not even for a moment: a task of
 * another sibling that writes pages in a tight loop while the data moves,
 * under that ancestor filled to its max, must get EDQUOT on every write,
 * and the ancestor must end exactly at its max, its peak too. Three
 * shapes: swap-out of small and of huge folios, and swap-in.
 *
 * A charge that can never fit (the 511 holes of a MADV_COLLAPSE, or the
 * huge folio a huge=always write tries first) must not make a concurrent
 * one-page charge fail while room is left: the small writer fills the room
 * to the page.
 *
 * A truncation by another cgroup's task frees a cgroup's data while that
 * cgroup's writer waits for room at its max: every page is back before
 * ftruncate() returns, and current never exceeds max meanwhile.
 *
 * L (tmpfs_race_...)  memory.tmpfs.max set to its usage d
 * writes 48M, is removed, then its data moves r   max 1M        reads d's
 * swapped data back (swap-in case) w                 the small writer, on
 * CPU 1
 *
 * The mover (reclaim, the reader, the collapser) runs on CPU 0, the small
 * writer on CPU 1; each case repeats its race for a few rounds, each with
 * fresh cgroups.
 */
#include "tmpfs_util.h"

#include <signal.h>
#include <time.h>

#define DATA (48 * MiB)		/* what the removed cgroup leaves */
#define ROOM_PAGES 256		/* room left under L in the squeeze cases */
#define SQUEEZE_ROUNDS 20
#define MOVER_CPU 0
#define WRITER_CPU 1

/*
 * A racing task: a loop in a child process of a cgroup, on one CPU, and
 * its tally, in memory shared with the parent (MAP_SHARED). A try either
 * succeeds (done), fails with the expected errno (refused: EDQUOT for a
 * write, EBUSY for a collapse) or fails otherwise (other, the first errno
 * kept in err).
 */
struct racer {
	char path[PATH_MAX];
	long stride;		/* a writer's next offset after a success */
	int cpu;
	bool until_refused;	/* stop at the first refusal, not at stop */
	pid_t pid;
	volatile int ready, go;	/* at its start line; may leave it */
	volatile int stop;
	volatile long tries, done, refused, other;
	volatile int err;
};

static struct racer *new_racer(const char *path, int cpu, long stride,
			       bool until_refused)
{
	struct racer *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED) {
		ksft_print_msg("mmap: %s\n", strerror(errno));
		return NULL;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->cpu = cpu;
	r->stride = stride;
	r->until_refused = until_refused;
	r->pid = -1;
	r->go = 1;
	return r;
}

/* Count one try; true when the loop ends with it. */
static bool tally(struct racer *r, bool ok, int err, int refused_errno)
{
	r->tries++;
	if (ok) {
		r->done++;
		return false;
	}
	if (err == refused_errno) {
		r->refused++;
		return r->until_refused;
	}
	r->other++;
	if (!r->err)
		r->err = err;
	return true;
}

/*
 * In the child: die with the parent, run on the racer's CPU, and wait
 * at the start line until the parent lets it go (release_racers()).
 */
static int racer_prepare(struct racer *r)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || pin_cpu(r->cpu))
		return -1;
	r->ready = 1;
	while (!r->go)
		sched_yield();	/* pinned: leaves the CPU to the parent */
	return 0;
}

/*
 * The writer loop: 4 KiB pwrites to the racer's file, the offset advanced
 * by the stride after each success only, until stopped, or until the
 * first EDQUOT if so asked. Any other error ends it.
 */
static int body_writer(const char *cgroup, void *arg)
{
	struct racer *r = arg;
	static char page[4096];
	long off = 0;
	int fd;

	memset(page, 0x5a, sizeof(page));
	/*
	 * Locked in memory: reclaim on its parent, the mover of cases 1
	 * and 2, would swap its own pages out and leave them in the swap cache,
	 * and slow it down with faults.
	 */
	if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
		ksft_print_msg("mlockall: %s\n", strerror(errno));
		return 1;
	}
	if (racer_prepare(r))
		return 1;
	fd = open(r->path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		tally(r, false, errno, EDQUOT);
		return 1;
	}
	while (!r->stop) {
		ssize_t n = pwrite(fd, page, sizeof(page), off);

		if (tally(r, n == sizeof(page), n < 0 ? errno : EIO, EDQUOT))
			break;
		if (n == sizeof(page))
			off += r->stride;
	}
	close(fd);
	return 0;
}

/*
 * The collapser loop: MADV_COLLAPSE of [0, 2M) of the racer's file,
 * mapped 2M-aligned, until stopped. Its first page is read first: the
 * collapse needs the range's page tables (see test_tmpfs_collapse.c).
 * Errors other than EBUSY are counted, and the loop goes on.
 */
static int body_collapser(const char *cgroup, void *arg)
{
	struct racer *r = arg;
	char *map;
	int fd;

	if (racer_prepare(r))
		return 1;
	fd = open(r->path, O_RDWR);
	map = fd < 0 ? NULL : map_huge_aligned(fd, PROT_READ | PROT_WRITE);
	if (!map)
		return 1;
	(void)*(volatile char *)map;
	while (!r->stop) {
		int ret = madvise(map, HPAGE, MADV_COLLAPSE);

		tally(r, ret == 0, errno, EBUSY);
	}
	return 0;
}

/* Start BODY for R in CG; with WAIT, return once it made its first try. */
static int start_racer(struct racer *r, const char *cg,
		       int (*body)(const char *, void *), bool wait)
{
	int i;

	r->pid = cg_run_nowait(cg, body, r);
	if (r->pid <= 0) {
		ksft_print_msg("starting a task in %s: %s\n", cg, strerror(errno));
		r->pid = -1;
		return -1;
	}
	for (i = 0; wait && !r->tries && i < 10000; i++)
		usleep(1000);
	if (!wait || r->tries)
		return 0;
	ksft_print_msg("the task in %s made no try in 10 s\n", cg);
	return -1;
}

/* Let the racers A and B, held at the start line, go together. */
static int release_racers(struct racer *a, struct racer *b)
{
	for (int i = 0; i < 10000 && !(a->ready && b->ready); i++)
		usleep(1000);
	a->go = 1;
	b->go = 1;
	if (a->ready && b->ready)
		return 0;
	ksft_print_msg("the racing tasks were not ready after 10 s\n");
	return -1;
}

/*
 * Reap R's task, after telling it to stop (and to leave the start line)
 * when STOP; 0 when it exited with 0 (or was reaped before).
 */
static int reap_racer(struct racer *r, bool stop)
{
	int status;

	if (!r || r->pid <= 0)
		return 0;
	if (stop) {
		r->stop = 1;
		r->go = 1;
	}
	if (waitpid(r->pid, &status, 0) != r->pid)
		status = -1;
	r->pid = -1;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	ksft_print_msg("a racing task of %s ended with status %#x\n", r->path, status);
	return -1;
}

static void free_racer(struct racer *r)
{
	if (r) {
		reap_racer(r, true);
		munmap(r, sizeof(*r));
	}
}

/*
 * Set CG's memory.tmpfs.max to its usage plus ROOM bytes, then open its
 * memory.tmpfs.peak and reset it through that fd (the per-fd watermark of
 * memory.peak): the fd then shows the peak since the limit was set. The
 * limit in *MAX; the fd, or -1.
 */
static int limit_and_reset_peak(const char *cg, long room, long *max)
{
	char buf[32];
	int fd;

	*max = tmpfs_current(cg) + room;
	snprintf(buf, sizeof(buf), "%ld", *max);
	if (cg_write(cg, "memory.tmpfs.max", buf)) {
		ksft_print_msg("%s: memory.tmpfs.max %s: %s\n", cg, buf, strerror(errno));
		return -1;
	}
	fd = reset_peak(cg);
	if (fd < 0)
		ksft_print_msg("%s: resetting memory.tmpfs.peak: %s\n", cg, strerror(errno));
	return fd;
}

/* A tmpfs mounted huge=always on a new directory DIR (of 64 bytes). */
static int mount_huge(char *dir)
{
	snprintf(dir, 64, "/tmp/tmpfs_race_huge.XXXXXX");
	return mount_tmpfs_dir(dir, "huge=always");
}

/*
 * memory.stat shmem_thp of CG, once it reads at least WANT (polled for up
 * to 4 s, though memcg_stat() flushes the stats); the last value read
 * otherwise.
 */
static long shmem_thp_of(const char *cg, long want)
{
	long got = -1;

	for (int i = 0; i < 40; i++) {
		got = memcg_stat(cg, "shmem_thp ");
		if (got >= want)
			break;
		usleep(100000);
	}
	return got;
}

/*
 * Cases 1-3: a removed cgroup's data moves while L is at its max.
 */
enum move { SWAPOUT, SWAPOUT_HUGE, SWAPIN };

struct move_round {
	enum move how;
	int round;
	char *l, *d, *r, *w;
	char dir[64];		/* the huge=always mount, SWAPOUT_HUGE */
	char data[PATH_MAX];	/* d's file */
	long max;
	int peak_fd;
	struct racer *wr;	/* w's writer */
};

static const char *const move_name[] = {
	[SWAPOUT] = "tmpfs_race_out",
	[SWAPOUT_HUGE] = "tmpfs_race_out_huge",
	[SWAPIN] = "tmpfs_race_in",
};

/*
 * Rounds of each race. The moves of a round: 12288 small folios, or 24
 * huge ones, whose swap-out met the writer in about half of the rounds
 * on the 2-CPU TCG guest with the bug (the small ones in 8 of 10).
 */
static const int move_rounds_of[] = {
	[SWAPOUT] = 3,
	[SWAPOUT_HUGE] = 8,
	[SWAPIN] = 3,
};

/* The reader: read(2) all of d's file, on the mover's CPU. */
static int body_reader(const char *cgroup, void *arg)
{
	static char buf[1024 * 1024];
	long total = 0;
	ssize_t n;
	int fd;

	if (pin_cpu(MOVER_CPU))
		return 1;
	fd = open(arg, O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	if (total == DATA)
		return 0;
	ksft_print_msg("the reader in %s read %ld bytes of %ld: %s\n", cgroup,
		       total, DATA, n < 0 ? strerror(errno) : "EOF");
	return 1;
}

/* The cgroups, d's data written (swapped out for SWAPIN), d removed. */
static int move_setup(struct move_round *m, const char *root)
{
	m->l = make_parent(root, move_name[m->how]);
	m->d = m->l ? make_child(m->l, "d") : NULL;
	m->w = m->d ? make_child(m->l, "w") : NULL;
	if (m->w && m->how == SWAPIN)
		m->r = make_child(m->l, "r");
	if (!m->w || (m->how == SWAPIN && !m->r)) {
		ksft_print_msg("creating the cgroups of %s: %s\n", move_name[m->how],
			       strerror(errno));
		return -1;
	}
	if (m->how == SWAPOUT_HUGE) {
		if (mount_huge(m->dir))
			return -1;
		snprintf(m->data, sizeof(m->data), "%s/data", m->dir);
	} else {
		snprintf(m->data, sizeof(m->data), "/tmp/%s.data", move_name[m->how]);
	}
	if (write_as(m->d, m->data, 0, DATA, DATA) ||
	    expect_tmpfs(m->d, DATA, "d wrote"))
		return -1;
	if (m->how == SWAPOUT_HUGE) {
		long thp = shmem_thp_of(m->d, DATA / 2);

		if (thp < DATA / 2) {
			ksft_print_msg("d's file on the huge=always tmpfs: memory.stat shmem_thp %ld, expected at least %ld\n",
				       thp, DATA / 2);
			return -1;
		}
	}
	/* the swap entries then name d, which goes away */
	if (m->how == SWAPIN && (push_to_swap(m->d, DATA) ||
				 expect_tmpfs(m->d, DATA, "d swapped out")))
		return -1;
	if (destroy_cgroup(&m->d))
		return -1;
	/* rmdir returns before the memcg goes offline: see test_tmpfs_mm.c */
	sleep(2);
	if (expect_tmpfs(m->l, DATA, "d removed"))
		return -1;
	if (m->how == SWAPIN && cg_write(m->r, "memory.tmpfs.max", "1M"))
		return -1;
	m->peak_fd = limit_and_reset_peak(m->l, 0, &m->max);
	return m->peak_fd < 0 ? -1 : 0;
}

/* Move d's data: swap it out from L (or read it back in r) on CPU 0. */
static int move_data(struct move_round *m)
{
	long thp = vmstat("thp_swpout"), split = vmstat("thp_swpout_fallback");
	int ret;

	if (m->how == SWAPIN)
		return cg_run(m->r, body_reader, m->data) ? -1 : 0;
	if (pin_cpu(MOVER_CPU))
		return -1;
	ret = push_to_swap(m->l, DATA);
	if (pin_cpu(-1))
		ret = -1;
	if (m->how == SWAPOUT_HUGE)
		ksft_print_msg("%s round %d: huge folios swapped out whole: %ld, split first: %ld (/proc/vmstat thp_swpout, thp_swpout_fallback)\n",
			       move_name[m->how], m->round, vmstat("thp_swpout") - thp,
			       vmstat("thp_swpout_fallback") - split);
	return ret;
}

/*
 * At rest after the race: nothing was written, every write refused; L
 * exactly at its max, its peak too; the writer's cgroup holds nothing;
 * each refusal counted once as a "max" event of L and a "fail" event of
 * w (and, propagated, of L).
 */
static int move_check(struct move_round *m)
{
	long cur = tmpfs_current(m->l), peak = cg_read_long_fd(m->peak_fd);
	long max = cg_read_long(m->l, "memory.tmpfs.max");
	long refused = m->wr->refused;
	char when[64];

	snprintf(when, sizeof(when), "%s round %d", move_name[m->how], m->round);
	if (m->wr->done || m->wr->other || !refused || cur != DATA ||
	    max != DATA || peak != DATA) {
		ksft_print_msg("%s: L memory.tmpfs.current %ld, max %ld, peak (reset after max was set) %ld, expected %ld all three; writer in w: %ld writes succeeded (expected 0), %ld EDQUOT (expected > 0), %ld other errors (errno %d)\n",
			       when, cur, max, peak, DATA, m->wr->done, refused,
			       m->wr->other, m->wr->err);
		ksft_print_msg("%s: w memory.tmpfs.current %ld\n", when,
			       tmpfs_current(m->w));
		return -1;
	}
	if (expect_tmpfs(m->w, 0, when) ||
	    expect_events(m->l, refused, refused, when) ||
	    expect_events(m->w, 0, refused, when) ||
	    check_within_memory(m->l, when))
		return -1;
	if (m->how != SWAPIN)
		return 0;
	/* the reader got all of it, forced past its own max, no event */
	if (expect_tmpfs(m->r, DATA, when) ||
	    expect_events(m->r, 0, 0, when) ||
	    check_within_memory(m->r, when) || verify_file(m->data, DATA))
		return -1;
	return 0;
}

static int move_round(const char *root, int how, int round)
{
	struct move_round m = { .how = how, .round = round, .peak_fd = -1 };
	int ret = KSFT_FAIL, moved, stopped;
	char wpath[64];

	snprintf(wpath, sizeof(wpath), "/tmp/%s.w", move_name[how]);
	if (move_setup(&m, root))
		goto out;
	m.wr = new_racer(wpath, WRITER_CPU, page_size, false);
	if (!m.wr || start_racer(m.wr, m.w, body_writer, true))
		goto out;
	/*
	 * A write that got through leaves its page in the writer's CPU's LRU
	 * batch, which reclaim cannot swap out: the values tell more than
	 * push_to_swap()'s failure, so they are checked first.
	 */
	moved = move_data(&m);
	stopped = reap_racer(m.wr, true);
	if (move_check(&m) || moved || stopped)
		goto out;
	if (unlink(m.data) || unlink(wpath) ||
	    expect_tmpfs(m.l, 0, "unlinked") ||
	    (m.r && expect_tmpfs(m.r, 0, "unlinked")))
		goto out;
	ret = KSFT_PASS;
out:
	free_racer(m.wr);
	if (m.peak_fd >= 0)
		close(m.peak_fd);
	unlink(m.data);
	unlink(wpath);
	umount_tmpfs_dir(m.dir);
	/* freed swap slots in the slot caches pin d's memcg */
	if (drain_swap_slots())
		ret = KSFT_FAIL;
	remove_cgroup(m.d);
	remove_cgroup(m.r);
	remove_cgroup(m.w);
	remove_cgroup(m.l);
	if (ret != KSFT_PASS)
		ksft_print_msg("%s: round %d of %d failed\n", move_name[how],
			       round, move_rounds_of[how]);
	return ret;
}

/*
 * ROUNDS rounds ONE_ROUND(root, KIND, round) of a race of the kind KIND
 * (enum move, or squeeze's collapse), up to the first that does not
 * pass; skipped without a CPU for the writer beside the mover's.
 */
static int race_rounds(const char *root, int (*one_round)(const char *, int, int),
		       int kind, int rounds)
{
	int round, ret = KSFT_PASS;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= WRITER_CPU) {
		ksft_print_msg("needs 2 CPUs\n");
		return KSFT_SKIP;
	}
	for (round = 1; round <= rounds && ret == KSFT_PASS; round++)
		ret = one_round(root, kind, round);
	return ret;
}

static int move_rounds(const char *root, enum move how)
{
	return race_rounds(root, move_round, how, move_rounds_of[how]);
}

/*
 * 1. d writes 48M and is removed; L's max is set to its usage. Reclaim
 * on L swaps d's pages out (the swap entries name L, d's nearest live
 * ancestor) while w writes pages in a loop: every write gets EDQUOT.
 */
static int test_removed_swapout_at_max(const char *root)
{
	return move_rounds(root, SWAPOUT);
}

/* 2. The same with d's data in huge folios (a huge=always tmpfs). */
static int test_removed_swapout_at_max_huge(const char *root)
{
	return move_rounds(root, SWAPOUT_HUGE);
}

/*
 * 3. d's data is swapped out while d lives, then d is removed; a task of
 * r reads it all back: the charge moves d -> r, forced past r's max of
 * 1M, while w writes pages in a loop: every write gets EDQUOT.
 */
static int test_removed_swapin_at_max(const char *root)
{
	return move_rounds(root, SWAPIN);
}

/*
 * Cases 4 and 4b: a charge that can never fit under L, over and over,
 * on CPU 0, while s fills the ROOM_PAGES pages left under L on CPU 1.
 */
struct squeeze {
	bool collapse;		/* 4: MADV_COLLAPSE; 4b: huge=always writes */
	int round;
	char *l, *h, *s;
	char dir[64];		/* 4b: the huge=always mount */
	char hpath[PATH_MAX];
	long max;
	int peak_fd;
	struct racer *hr, *sr;
};

#define SQUEEZE_S "/tmp/tmpfs_race_squeeze.s"

static const char *squeeze_name(const struct squeeze *q)
{
	return q->collapse ? "tmpfs_race_collapse" : "tmpfs_race_huge_write";
}

/*
 * The cgroups; for 4, page 0 of a 2M file written by h, the rest holes;
 * L's max set to leave ROOM_PAGES pages; the racers ready.
 */
static int squeeze_setup(struct squeeze *q, const char *root)
{
	int fd;

	q->l = make_parent(root, squeeze_name(q));
	q->h = q->l ? make_child(q->l, "h") : NULL;
	q->s = q->h ? make_child(q->l, "s") : NULL;
	if (!q->s)
		return -1;
	if (q->collapse) {
		snprintf(q->hpath, sizeof(q->hpath), "/tmp/%s.h", squeeze_name(q));
		fd = open(q->hpath, O_CREAT | O_TRUNC | O_RDWR, 0644);
		if (fd < 0 || ftruncate(fd, HPAGE)) {
			ksft_print_msg("creating %s: %s\n", q->hpath, strerror(errno));
			return -1;
		}
		close(fd);
		if (write_as(q->h, q->hpath, 0, page_size, page_size) ||
		    expect_tmpfs(q->h, page_size, "h wrote page 0"))
			return -1;
	} else {
		if (mount_huge(q->dir))
			return -1;
		snprintf(q->hpath, sizeof(q->hpath), "%s/h", q->dir);
	}
	q->peak_fd = limit_and_reset_peak(q->l, ROOM_PAGES * page_size, &q->max);
	if (q->peak_fd < 0)
		return -1;
	q->hr = new_racer(q->hpath, MOVER_CPU, HPAGE, !q->collapse);
	q->sr = new_racer(SQUEEZE_S, WRITER_CPU, page_size, true);
	if (!q->hr || !q->sr)
		return -1;
	/* 4b: the two writers start together */
	if (!q->collapse)
		q->hr->go = q->sr->go = 0;
	return 0;
}

/*
 * At rest: s (and, 4b, h's small pages) took the room to the page, L is
 * exactly at its max, its peak too, and each writer's single EDQUOT is
 * the only event; the collapse never went through.
 */
static int squeeze_check(struct squeeze *q)
{
	long cur = tmpfs_current(q->l), peak = cg_read_long_fd(q->peak_fd);
	long h_pages = q->collapse ? 0 : q->hr->done;
	long h_fail = q->collapse ? 0 : 1;
	long thp = memcg_stat(q->h, "shmem_thp ");
	char when[64];

	snprintf(when, sizeof(when), "%s round %d", squeeze_name(q), q->round);
	if (q->round == 1)
		ksft_print_msg("%s: s wrote %ld pages; h's %s: %ld tries, %ld succeeded, %ld %s, %ld other errors (errno %d)\n",
			       when, q->sr->done,
			       q->collapse ? "MADV_COLLAPSE" : "writes",
			       q->hr->tries, q->hr->done, q->hr->refused,
			       q->collapse ? "EBUSY" : "EDQUOT", q->hr->other,
			       q->hr->err);
	if (q->sr->done + h_pages != ROOM_PAGES || q->sr->refused != 1 ||
	    q->sr->other || cur != q->max || peak != q->max) {
		ksft_print_msg("%s: pages written in the %d pages of room: %ld by s, %ld by h, expected %d in all; s got EDQUOT %ld times (expected once), other errors %ld (errno %d); L memory.tmpfs.current %ld, peak %ld, expected both at max %ld\n",
			       when, ROOM_PAGES, q->sr->done, h_pages, ROOM_PAGES,
			       q->sr->refused, q->sr->other, q->sr->err, cur,
			       peak, q->max);
		return -1;
	}
	if (q->collapse ? (q->hr->done || !q->hr->refused)
			: (q->hr->refused != 1 || q->hr->other)) {
		ksft_print_msg("%s: h's %s: %ld succeeded, %ld refused (%s), %ld other errors (errno %d)\n",
			       when, q->collapse ? "MADV_COLLAPSE" : "writes",
			       q->hr->done, q->hr->refused,
			       q->collapse ? "EBUSY, expected every time" : "EDQUOT, expected once",
			       q->hr->other, q->hr->err);
		return -1;
	}
	if (q->collapse && thp != 0) {
		ksft_print_msg("%s: h memory.stat shmem_thp %ld, expected 0\n", when, thp);
		return -1;
	}
	if (expect_events(q->l, 1 + h_fail, 1 + h_fail, when) ||
	    expect_events(q->s, 0, 1, when) ||
	    expect_events(q->h, 0, h_fail, when))
		return -1;
	return 0;
}

/*
 * Run the race: 4, the collapser first, then s, until s is done; 4b,
 * both writers at once, until both are done.
 */
static int squeeze_race(struct squeeze *q)
{
	int ret;

	if (start_racer(q->hr, q->h, q->collapse ? body_collapser : body_writer,
			q->collapse))
		return -1;
	ret = start_racer(q->sr, q->s, body_writer, false);
	if (!ret && !q->collapse)
		ret = release_racers(q->hr, q->sr);
	if (reap_racer(q->sr, false))
		ret = -1;
	if (reap_racer(q->hr, q->collapse))
		ret = -1;
	return ret;
}

static int squeeze_round(const char *root, int collapse, int round)
{
	struct squeeze q = { .collapse = collapse, .round = round, .peak_fd = -1 };
	int ret = KSFT_FAIL;

	if (squeeze_setup(&q, root) || squeeze_race(&q) || squeeze_check(&q))
		goto out;
	if (unlink(q.hpath) || unlink(SQUEEZE_S) ||
	    expect_tmpfs(q.l, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	free_racer(q.hr);
	free_racer(q.sr);
	if (q.peak_fd >= 0)
		close(q.peak_fd);
	if (*q.hpath)
		unlink(q.hpath);
	unlink(SQUEEZE_S);
	umount_tmpfs_dir(q.dir);
	remove_cgroup(q.s);
	remove_cgroup(q.h);
	remove_cgroup(q.l);
	if (ret != KSFT_PASS)
		ksft_print_msg("%s: round %d of %d failed\n", squeeze_name(&q),
			       round, SQUEEZE_ROUNDS);
	return ret;
}

static int squeeze_rounds(const char *root, bool collapse)
{
	return race_rounds(root, squeeze_round, collapse, SQUEEZE_ROUNDS);
}

/*
 * 4. h holds page 0 of a 2M range and collapses it in a loop: the 511
 * holes can never fit under L (ROOM_PAGES < 511), so every collapse
 * fails (EBUSY) with no event. Meanwhile s writes pages until its first
 * EDQUOT: it must get exactly ROOM_PAGES of them.
 */
static int test_failing_huge_charge_vs_small_writer(const char *root)
{
	return squeeze_rounds(root, true);
}

/*
 * 4b. h writes a page at each new 2M offset of a huge=always file: each
 * write tries a huge folio first, which never fits, then a small page.
 * s writes small pages. Both stop at their first EDQUOT: together they
 * got exactly ROOM_PAGES pages.
 */
static int test_failing_huge_write_vs_small_writer(const char *root)
{
	return squeeze_rounds(root, false);
}

/*
 * Case 5: a truncation frees a cgroup's data while its writer, at its
 * max, waits for room. a (max TRUNC_MAX) fills it with one file; then a
 * task of its sibling c truncates that file to 0 on CPU 0 while a's
 * writer, on CPU 1, writes 4 KiB pages into a second file until it holds
 * TRUNC_MAX bytes, retrying on EDQUOT (up to TRUNC_RETRY_S seconds). The
 * truncation gives the pages back in batches, all of them before
 * ftruncate() returns: a write begun after that must not fail. A third
 * task samples a's memory.tmpfs.current throughout: never above max.
 */
#define TRUNC_MAX (16 * MiB)	/* see body_filler() */
#define TRUNC_ROUNDS 10
#define TRUNC_RETRY_S 2

struct trunc_race {
	struct racer *wr, *tr;	/* a's writer, c's truncator */
	const char *a;		/* a's cgroup, for the sampler */
	volatile int truncating;	/* the truncator calls ftruncate() */
	volatile int truncated;	/* its ftruncate() returned */
	volatile long during;	/* EDQUOTs of writes begun in between */
	volatile long fitted;	/* and successes of those */
	volatile long late;	/* EDQUOTs of writes begun after that */
	volatile int stop;	/* the sampler's */
	volatile long samples, over, worst, bad;
};

/* The race of the round, shared with its tasks (start_racer() passes the racer). */
static struct trunc_race *trunc;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * a's writer: pages appended until the file holds TRUNC_MAX bytes; an
 * EDQUOT is retried at once, for up to TRUNC_RETRY_S seconds after the
 * first one. On the 2-CPU TCG guest with a 4M max, a writer that slept
 * 100 us after each EDQUOT (or each 64th) met the truncation in progress
 * in at most 2 rounds of 10, one that retried at once in 3; with 16M, in
 * 8. EDQUOTs of writes begun while the truncation ran are counted in
 * during (their successes in fitted), those begun after it returned in
 * late.
 */
static int body_filler(const char *cgroup, void *arg)
{
	struct trunc_race *t = trunc;
	struct racer *r = arg;
	static char page[4096];
	long off = 0, first = 0;
	int fd;

	memset(page, 0x5a, sizeof(page));
	if (mlockall(MCL_CURRENT | MCL_FUTURE) || racer_prepare(r))
		return 1;
	fd = open(r->path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return 1;
	while (off < TRUNC_MAX && !r->stop) {
		int truncating = __atomic_load_n(&t->truncating, __ATOMIC_SEQ_CST);
		int truncated = __atomic_load_n(&t->truncated, __ATOMIC_SEQ_CST);
		ssize_t n = pwrite(fd, page, sizeof(page), off);

		if (tally(r, n == sizeof(page), n < 0 ? errno : EIO, EDQUOT))
			break;
		if (n == sizeof(page)) {
			off += n;
			if (truncating && !truncated)
				t->fitted++;
			continue;
		}
		if (truncated)
			t->late++;
		else if (truncating)
			t->during++;
		if (!first)
			first = now_ms();
		else if (now_ms() - first > TRUNC_RETRY_S * 1000)
			break;
	}
	close(fd);
	return 0;
}

/* c's truncator: the file of a to 0, once. */
static int body_truncator(const char *cgroup, void *arg)
{
	struct trunc_race *t = trunc;
	struct racer *r = arg;
	int fd, ret;

	if (racer_prepare(r))
		return 1;
	fd = open(r->path, O_RDWR);
	if (fd < 0)
		return 1;
	__atomic_store_n(&t->truncating, 1, __ATOMIC_SEQ_CST);
	ret = ftruncate(fd, 0);
	__atomic_store_n(&t->truncated, 1, __ATOMIC_SEQ_CST);
	tally(r, ret == 0, errno, 0);
	close(fd);
	return 0;
}

/* The sampler, in the test's cgroup: a's current against its max. */
static pid_t start_sampler(struct trunc_race *t)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (!t->stop) {
		long cur = tmpfs_current(t->a);

		t->samples++;
		if (cur < 0)
			t->bad++;
		if (cur > TRUNC_MAX)
			t->over++;
		if (cur > t->worst)
			t->worst = cur;
	}
	_exit(0);
}

/* Wait up to 10 s for COND; 0, or -1 with a message naming WHAT. */
#define WAIT_FOR(cond, what) ({					\
	int __i;							\
	for (__i = 0; __i < 10000 && !(cond); __i++)			\
		usleep(1000);						\
	if (!(cond))							\
		ksft_print_msg("no %s after 10 s\n", what);		\
	(cond) ? 0 : -1;						\
})

static int trunc_round(const char *root, int kind, int round)
{
	const char *fill = "/tmp/tmpfs_race_trunc.fill", *data = "/tmp/tmpfs_race_trunc.data";
	char *p, *a = NULL, *c = NULL, when[64];
	struct trunc_race *t;
	int ret = KSFT_FAIL, status;
	pid_t sampler = -1;
	long refused;

	snprintf(when, sizeof(when), "tmpfs_race_trunc round %d", round);
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return KSFT_FAIL;
	memset(t, 0, sizeof(*t));
	trunc = t;
	p = make_parent(root, "tmpfs_race_trunc");
	a = p ? make_child(p, "a") : NULL;
	c = a ? make_child(p, "c") : NULL;
	if (!c || cg_write(a, "memory.tmpfs.max", "16M") ||
	    write_as(a, fill, 0, TRUNC_MAX, TRUNC_MAX) ||
	    expect_tmpfs(a, TRUNC_MAX, "a filled its max"))
		goto out;
	t->a = a;
	t->wr = new_racer(data, WRITER_CPU, page_size, false);
	t->tr = new_racer(fill, MOVER_CPU, 0, false);
	if (!t->wr || !t->tr)
		goto out;
	t->wr->go = t->tr->go = 0;
	sampler = start_sampler(t);
	if (sampler < 0 || start_racer(t->wr, a, body_filler, false) ||
	    start_racer(t->tr, c, body_truncator, false))
		goto out;
	/* the writer first, until it met the limit; then the truncation */
	if (WAIT_FOR(t->wr->ready && t->tr->ready, "start of the writer and the truncator"))
		goto out;
	t->wr->go = 1;
	if (WAIT_FOR(t->wr->refused || t->wr->other, "EDQUOT for the writer at a's max"))
		goto out;
	t->tr->go = 1;
	if (reap_racer(t->tr, false) | reap_racer(t->wr, false))
		goto out;
	t->stop = 1;
	waitpid(sampler, &status, 0);
	sampler = -1;

	refused = t->wr->refused;
	ksft_print_msg("%s: the writer wrote %ld pages (%ld during the truncation), got EDQUOT %ld times (%ld during the truncation, %ld after it); %ld samples of a's current, at most %ld\n",
		       when, t->wr->done, t->fitted, refused, t->during, t->late,
		       t->samples, t->worst);
	if (t->wr->done * page_size != TRUNC_MAX || t->wr->other || t->late ||
	    t->tr->done != 1 || t->tr->other) {
		ksft_print_msg("%s: the writer wrote %ld bytes (expected %ld), got EDQUOT %ld times, %ld of them after the truncation returned (expected none), other errors %ld (errno %d); the truncation %s (errno %d)\n",
			       when, t->wr->done * page_size, TRUNC_MAX, refused, t->late,
			       t->wr->other, t->wr->err,
			       t->tr->done ? "succeeded" : "failed", t->tr->err);
		goto out;
	}
	if (t->over || t->bad || !t->samples) {
		ksft_print_msg("%s: %ld of %ld samples of a's memory.tmpfs.current above its max %ld (at most %ld), %ld unreadable\n",
			       when, t->over, t->samples, TRUNC_MAX, t->worst, t->bad);
		goto out;
	}
	if (expect_tmpfs(a, TRUNC_MAX, when) || expect_tmpfs(p, TRUNC_MAX, when) ||
	    expect_tmpfs(c, 0, when) || expect_peak(a, TRUNC_MAX, TRUNC_MAX, when) ||
	    expect_events(a, refused, refused, when) ||
	    expect_events(p, refused, refused, when) ||
	    expect_events(c, 0, 0, when) || check_within_memory(a, when))
		goto out;
	if (cg_read_key_long(p, "memory.events", "oom ") ||
	    cg_read_key_long(p, "memory.events", "oom_kill ")) {
		ksft_print_msg("%s: OOM events under the race: oom %ld, oom_kill %ld\n", when,
			       cg_read_key_long(p, "memory.events", "oom "),
			       cg_read_key_long(p, "memory.events", "oom_kill "));
		goto out;
	}
	if (unlink(data) || expect_tmpfs(a, 0, "unlinked") || expect_tmpfs(p, 0, "unlinked"))
		goto out;
	ret = KSFT_PASS;
out:
	if (sampler > 0) {
		t->stop = 1;
		waitpid(sampler, &status, 0);
	}
	free_racer(t->wr);
	free_racer(t->tr);
	munmap(t, sizeof(*t));
	unlink(fill);
	unlink(data);
	remove_cgroup(a);
	remove_cgroup(c);
	remove_cgroup(p);
	if (ret != KSFT_PASS)
		ksft_print_msg("tmpfs_race_trunc: round %d of %d failed\n", round,
			       TRUNC_ROUNDS);
	return ret;
}

static int test_truncate_vs_writer_at_max(const char *root)
{
	return race_rounds(root, trunc_round, 0, TRUNC_ROUNDS);
}

static struct tmpfs_test tests[] = {
	TMPFS_TEST(test_removed_swapout_at_max),
	TMPFS_TEST_NEEDS(test_removed_swapout_at_max_huge, NEEDS_THP),
	TMPFS_TEST(test_removed_swapin_at_max),
	TMPFS_TEST_NEEDS(test_failing_huge_charge_vs_small_writer, NEEDS_THP),
	TMPFS_TEST_NEEDS(test_failing_huge_write_vs_small_writer, NEEDS_THP),
	TMPFS_TEST(test_truncate_vs_writer_at_max),
};

int main(void)
{
	return run_tmpfs_tests(tests, ARRAY_SIZE(tests));
}
