// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the memory.tmpfs tests (tmpfs_util.h): cgroups with
 * the memory controller, file I/O that reports errno, the invariants of
 * the spec, and the runner of a test program's cases. Every test is a
 * program of its own, linked with this file: nothing here keeps state of
 * a test.
 */
#include "tmpfs_util.h"

#include <linux/io_uring.h>
#include <poll.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <sys/inotify.h>

long page_size;

long pages_of(long bytes)
{
	return (bytes + page_size - 1) / page_size * page_size;
}

long tmpfs_current(const char *cg)
{
	return cg_read_long(cg, "memory.tmpfs.current");
}

int expect_long(const char *cg, const char *file, long want, const char *when)
{
	long got = cg_read_long(cg, file);

	if (got == want)
		return 0;
	ksft_print_msg("%s: %s/%s is %ld, expected %ld\n", when, cg, file,
		       got, want);
	return -1;
}

/*
 * memory.tmpfs.peak may count the pages CPUs charged ahead of use: at most
 * 64 a CPU above the data's own peak, and never above a limit set before
 * (spec, "Cost and exactness"). GOT, read from FILE, against the data's
 * peak WANT and LIMIT (-1: none).
 */
int expect_peak_value(long got, long want, long limit, const char *file, const char *when)
{
	long hi = want + TMPFS_BATCH_PAGES * sysconf(_SC_NPROCESSORS_ONLN) *
		  page_size;

	if (limit >= 0 && hi > limit)
		hi = limit;
	if (got >= want && got <= hi)
		return 0;
	ksft_print_msg("%s: %s is %ld, expected the data's peak %ld plus at most 64 pages a CPU charged ahead of use, up to %ld\n",
		       when, file, got, want, hi);
	return -1;
}

int expect_peak(const char *cg, long want, long limit, const char *when)
{
	char file[PATH_MAX];

	snprintf(file, sizeof(file), "%s/memory.tmpfs.peak", cg);
	return expect_peak_value(cg_read_long(cg, "memory.tmpfs.peak"), want,
				 limit, file, when);
}

int open_peak(const char *cg, int flags)
{
	char *peak = cg_control(cg, "memory.tmpfs.peak");
	int fd = open(peak, flags | O_CLOEXEC);

	free(peak);
	return fd;
}

/*
 * memory.tmpfs.peak of CG opened, and reset through that fd (the per-fd
 * watermark of memory.peak): the fd, which then shows the peak since the
 * reset, or -1. Another fd still shows the cgroup's own peak.
 */
int reset_peak(const char *cg)
{
	int fd = open_peak(cg, O_RDWR), err;

	if (fd < 0 || write(fd, "reset\n", 6) == 6)
		return fd;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

int expect_tmpfs(const char *cg, long want, const char *when)
{
	return expect_long(cg, "memory.tmpfs.current", want, when);
}

/* The N counts KEYS of CG's memory.tmpfs.events must read WANT. */
static int expect_event_counts(const char *cg, const char *const *keys,
			       const long *want, int n, const char *when)
{
	char got_s[256] = "", want_s[128] = "", key[32];
	bool bad = false;
	int i;

	for (i = 0; i < n; i++) {
		long got;

		snprintf(key, sizeof(key), "%s ", keys[i]);
		got = cg_read_key_long(cg, "memory.tmpfs.events", key);
		bad |= got != want[i];
		snprintf(got_s + strlen(got_s), sizeof(got_s) - strlen(got_s),
			 " %s %ld", keys[i], got);
		snprintf(want_s + strlen(want_s), sizeof(want_s) - strlen(want_s),
			 " %ld", want[i]);
	}
	if (!bad)
		return 0;
	ksft_print_msg("%s: %s memory.tmpfs.events%s, expected%s\n", when, cg,
		       got_s, want_s);
	return -1;
}

int expect_events(const char *cg, long max, long fail, const char *when)
{
	static const char *const keys[] = { "max", "fail" };

	return expect_event_counts(cg, keys, (long []){ max, fail }, 2, when);
}

int expect_inode_events(const char *cg, long max, long fail, long imax, long ifail,
			const char *when)
{
	static const char *const keys[] = { "max", "fail", "inodes_max", "inodes_fail" };

	return expect_event_counts(cg, keys, (long []){ max, fail, imax, ifail }, 4, when);
}

int check_within_memory(const char *cg, const char *when)
{
	long tmpfs = tmpfs_current(cg);
	long mem = cg_read_long(cg, "memory.current");
	long swap = cg_read_long(cg, "memory.swap.current");

	if (tmpfs < 0 || mem < 0 || swap < 0 || tmpfs > mem + swap) {
		ksft_print_msg("%s: %s: tmpfs.current %ld > memory.current %ld + swap.current %ld\n",
			       when, cg, tmpfs, mem, swap);
		return -1;
	}
	return 0;
}

int check_parent_sum(const char *parent, const char **children, int n, long own,
		     const char *when)
{
	long sum = own;
	int i;

	for (i = 0; i < n; i++)
		sum += tmpfs_current(children[i]);
	return expect_tmpfs(parent, sum, when);
}

/*
 * Write LEN bytes of a pattern at OFF; returns the bytes written, or
 * -errno when none could be. A write that stops early leaves errno set.
 * The pattern's bytes count from the start of each write: PATTERN_BYTE().
 */
long write_pattern(int fd, long off, long len)
{
	static char chunk[64 * 1024];
	long done = 0;

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = PATTERN_BYTE(i);
	while (done < len) {
		long n = len - done;
		ssize_t w;

		if (n > (long)sizeof(chunk))
			n = sizeof(chunk);
		w = pwrite(fd, chunk, n, off + done);
		if (w < 0)
			return done ? done : -errno;
		if (w == 0)
			break;
		done += w;
	}
	return done;
}

int write_file(const char *path, long len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	long w;

	if (fd < 0) {
		ksft_print_msg("open %s: %s\n", path, strerror(errno));
		return -1;
	}
	w = write_pattern(fd, 0, len);
	close(fd);
	if (w != len) {
		ksft_print_msg("write %s: %ld of %ld bytes (%s)\n", path,
			       w < 0 ? 0 : w, len, w < 0 ? strerror(-w) : "short");
		return -1;
	}
	return 0;
}

int verify_file(const char *path, long len)
{
	char buf[4096];
	long off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);

		if (r <= 0) {
			close(fd);
			return -1;
		}
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != PATTERN_BYTE(off + i)) {
				ksft_print_msg("%s: byte %ld differs\n", path, off + i);
				close(fd);
				return -1;
			}
		}
		off += r;
	}
	close(fd);
	return 0;
}

int write_req_body(const char *cgroup, void *arg)
{
	const struct write_req *r = arg;
	int fd = open(r->path, O_CREAT | O_WRONLY, 0644);
	long w;

	if (fd < 0) {
		ksft_print_msg("open %s: %s\n", r->path, strerror(errno));
		return -1;
	}
	errno = 0;
	w = write_pattern(fd, r->off, r->len);
	if (w < 0) {
		errno = -w;
		w = 0;
	}
	close(fd);
	if (w != r->want || (w < r->len && errno != EDQUOT)) {
		ksft_print_msg("%s: wrote %ld of %ld bytes (errno %d %s), expected %ld%s\n",
			       r->path, w, r->len, errno, strerror(errno), r->want,
			       r->want < r->len ? " then EDQUOT" : "");
		return -1;
	}
	return 0;
}

int write_as(const char *cg, const char *path, long off, long len, long want)
{
	struct write_req r = { path, off, len, want };

	return cg_run(cg, write_req_body, &r);
}

char *make_parent(const char *root, const char *name)
{
	char *cg = cg_name(root, name);

	if (!cg)
		return NULL;
	if (cg_create(cg) || cg_write(cg, "cgroup.subtree_control", "+memory")) {
		cg_destroy(cg);
		free(cg);
		return NULL;
	}
	return cg;
}

char *make_child(const char *parent, const char *name)
{
	char *cg = cg_name(parent, name);

	if (!cg)
		return NULL;
	if (cg_create(cg)) {
		free(cg);
		return NULL;
	}
	return cg;
}

void remove_cgroup(char *cg)
{
	if (cg) {
		cg_destroy(cg);
		free(cg);
	}
}

int destroy_cgroup(char **cg)
{
	if (cg_destroy(*cg))
		return -1;
	free(*cg);
	*cg = NULL;
	return 0;
}

int setup(struct setup *s, const char *root, const char *name, const char *max)
{
	s->parent = make_parent(root, name);
	s->cg = s->parent ? make_child(s->parent, "writer") : NULL;
	if (!s->cg)
		return -1;
	return cg_write(s->cg, "memory.tmpfs.max", (char *)max);
}

int setup_run(struct setup *s, const char *root, const char *name, const char *max,
	      int (*body)(const char *cgroup, void *arg), void *arg)
{
	if (setup(s, root, name, max) || cg_run(s->cg, body, arg))
		return -1;
	return 0;
}

/*
 * Unlink PATH (if any) and remove the cgroups; a case that passed must
 * leave memory.tmpfs.current at 0 in both.
 */
int teardown(struct setup *s, const char *path, int ret)
{
	if (path)
		unlink(path);
	if (ret == KSFT_PASS && s->cg &&
	    (expect_tmpfs(s->cg, 0, "end") || expect_tmpfs(s->parent, 0, "end")))
		ret = KSFT_FAIL;
	remove_cgroup(s->cg);
	remove_cgroup(s->parent);
	return ret;
}

int run_setup_case(const char *root, const char *name, const char *max,
		   int (*body)(const char *cgroup, void *arg), void *arg, const char *path)
{
	struct setup s = { 0 };
	int ret = setup_run(&s, root, name, max, body, arg) ? KSFT_FAIL : KSFT_PASS;

	return teardown(&s, path, ret);
}

/*
 * mkdtemp() of TEMPLATE, and a tmpfs mounted there with OPTS. 0, or -1
 * with a message and TEMPLATE emptied (nothing left to remove).
 */
int mount_tmpfs_dir(char *template, const char *opts)
{
	if (!mkdtemp(template)) {
		ksft_print_msg("mkdtemp %s: %s\n", template, strerror(errno));
		*template = '\0';
		return -1;
	}
	if (!mount("tmpfs", template, "tmpfs", 0, opts))
		return 0;
	ksft_print_msg("mount %s on %s: %s\n", opts, template, strerror(errno));
	rmdir(template);
	*template = '\0';
	return -1;
}

void umount_tmpfs_dir(char *dir)
{
	if (*dir) {
		umount(dir);
		rmdir(dir);
		*dir = '\0';
	}
}

/* Map ID outside to 0 inside a new user namespace (uid_map, gid_map). */
static int write_id_map(const char *file, unsigned int id)
{
	char buf[64];
	int fd = open(file, O_WRONLY);
	int len = snprintf(buf, sizeof(buf), "0 %u 1\n", id);
	int ret = fd >= 0 && write(fd, buf, len) == len ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * As uid and gid ID, enter a new user and mount namespace as a container
 * runtime makes them (setgroups denied, ID mapped to 0 inside) and make
 * / private in it, ready for a mount of its own. 0, or -1 with a
 * message.
 */
int enter_userns(unsigned int id)
{
	int fd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		ksft_print_msg("unshare: %s\n", strerror(errno));
		return -1;
	}
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd < 0 || write(fd, "deny", 4) != 4 ||
	    write_id_map("/proc/self/uid_map", id) ||
	    write_id_map("/proc/self/gid_map", id)) {
		ksft_print_msg("setting up the user namespace: %s\n", strerror(errno));
		return -1;
	}
	close(fd);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		ksft_print_msg("making / private: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int enter_userns_as_nobody(void)
{
	/* dropping root clears "dumpable", which owns /proc/self to root */
	if (setgid(65534) || setuid(65534) || prctl(PR_SET_DUMPABLE, 1)) {
		ksft_print_msg("dropping root: %s\n", strerror(errno));
		return -1;
	}
	return enter_userns(65534);
}

int raw_write(const char *cg, const char *file, const char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t w;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	w = write(fd, buf, len);
	if (w < 0)
		err = errno;
	else if ((size_t)w != len)
		err = -1;	/* a short write: no such case here */
	close(fd);
	return err;
}

/*
 * One IORING_OP_WRITE through a raw io_uring; returns the cqe result:
 * bytes written or -errno (below -1000: the ring itself failed).
 */
long uring_write(int fd, const void *buf, unsigned int len, off_t off)
{
	struct io_uring_params par = { 0 };
	struct io_uring_sqe *sqes, *sqe;
	struct io_uring_cqe *cqe;
	unsigned int *sq_tail, *sq_array, *cq_head;
	size_t sq_len, cq_len;
	void *sq, *cq;
	long res;
	int ring;

	ring = syscall(__NR_io_uring_setup, 1, &par);
	if (ring < 0)
		return -1000 - errno;
	sq_len = par.sq_off.array + par.sq_entries * sizeof(unsigned int);
	cq_len = par.cq_off.cqes + par.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, par.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		close(ring);
		return -2000;
	}
	sq_tail = (unsigned int *)((char *)sq + par.sq_off.tail);
	sq_array = (unsigned int *)((char *)sq + par.sq_off.array);
	cq_head = (unsigned int *)((char *)cq + par.cq_off.head);
	sqe = &sqes[0];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = off;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0) {
		close(ring);
		return -3000 - errno;
	}
	cqe = (struct io_uring_cqe *)((char *)cq + par.cq_off.cqes);
	res = cqe[*cq_head & (par.cq_entries - 1)].res;
	close(ring);
	return res;
}

int pin_cpu(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	for (long i = 0; i < n; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	if (!sched_setaffinity(0, sizeof(set), &set))
		return 0;
	ksft_print_msg("sched_setaffinity to cpu %d: %s\n", cpu, strerror(errno));
	return -1;
}

long proc_key_long(const char *file, const char *key, char sep)
{
	char line[256];
	size_t n = strlen(key);
	long val = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == sep) {
			val = atol(line + n + 1);
			break;
		}
	fclose(f);
	return val;
}

long vmstat(const char *key)
{
	return proc_key_long("/proc/vmstat", key, ' ');
}

/* From /proc/self/pagemap: bit 63 "present", bits 0-54 the pfn. */
unsigned long pfn_of(void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent),
		  (unsigned long)addr / page_size * sizeof(ent)) != sizeof(ent))
		ent = 0;
	close(fd);
	if (!(ent & (1ULL << 63)))
		return 0;
	return ent & ((1ULL << 55) - 1);
}

/*
 * A MAP_SHARED mapping of [0, HPAGE) of FD at a HPAGE-aligned address,
 * made in a reservation twice that size; the rest of the reservation is
 * unmapped, so munmap(map, HPAGE) undoes it all. NULL on failure, with
 * errno set.
 */
char *map_huge_aligned(int fd, int prot)
{
	char *area, *aligned;
	int err;

	area = mmap(NULL, 2 * HPAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return NULL;
	aligned = (char *)(((unsigned long)area + HPAGE - 1) & ~(HPAGE - 1));
	if (mmap(aligned, HPAGE, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		err = errno;
		munmap(area, 2 * HPAGE);
		errno = err;
		return NULL;
	}
	if (aligned > area)
		munmap(area, aligned - area);
	munmap(aligned + HPAGE, area + HPAGE - aligned);
	return aligned;
}

int khugepaged_set(const char *name, const char *val, char *old, size_t n)
{
	char path[PATH_MAX];
	int fd, len;

	snprintf(path, sizeof(path), KHUGEPAGED "%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (old) {
		len = read(fd, old, n - 1);
		if (len <= 0) {
			close(fd);
			return -1;
		}
		old[len] = '\0';
	}
	len = pwrite(fd, val, strlen(val), 0);
	close(fd);
	return len == (int)strlen(val) ? 0 : -1;
}

/*
 * cgroup.stat nr_dying_descendants of CG: removed cgroups that something
 * still pins (a charged page, a swap entry, a per-cpu cache).
 */
long nr_dying(const char *cg)
{
	return cg_read_key_long(cg, "cgroup.stat", "nr_dying_descendants ");
}

/*
 * memory.stat flushes the per-cpu stat updates only once they add up to
 * a batch (MEMCG_CHARGE_BATCH a cpu), or every 2 s: it can lag by up to
 * that much either way, and stays behind while nothing changes. Reading
 * cpu.stat of a non-root cgroup flushes every rstat counter of its
 * subtree, memcg's included.
 */
long memcg_stat(const char *cg, const char *key)
{
	char buf[4096];

	if (cg_read(cg, "cpu.stat", buf, sizeof(buf))) {
		ksft_print_msg("%s: cpu.stat: %s\n", cg, strerror(errno));
		return -1;
	}
	return cg_read_key_long(cg, "memory.stat", key);
}

/*
 * lru_add_drain_all(): a freed folio still in a per-cpu LRU batch (of a
 * cpu that went idle) is not freed, and keeps its memcg charged, until
 * that batch drains. Compaction (vm.compact_memory) drains every cpu's
 * batches first.
 */
void drain_lru_batches(void)
{
	int fd = open("/proc/sys/vm/compact_memory", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			ksft_print_msg("vm.compact_memory: %s\n", strerror(errno));
		close(fd);
	}
}

/*
 * memcg's per-cpu charge stock keeps a reference to the last memcg that
 * charged on each cpu, a removed one too, until another memcg charges
 * there (its drain at removal is skipped while another drain runs). A
 * charge from a scratch cgroup on every cpu takes each stock over. The
 * scratch cgroup stays (removed, it would be pinned the same way).
 */
void flush_charge_stocks(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char root[PATH_MAX], *cg;

	if (cg_find_unified_root(root, sizeof(root), NULL))
		return;
	cg = cg_name(root, "tmpfs_stock_flush");
	if (!cg)
		return;
	if (cg_create(cg) && errno != EEXIST) {
		free(cg);
		return;
	}
	for (long cpu = 0; cpu < ncpu; cpu++) {
		int pid = fork(), status;

		if (pid == 0) {
			char buf[32];
			char *p;

			snprintf(buf, sizeof(buf), "%d", getpid());
			if (pin_cpu(cpu) || cg_write(cg, "cgroup.procs", buf))
				_exit(1);
			p = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				_exit(1);
			memset(p, 1, 64 * 4096);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
	}
	free(cg);
}

/*
 * Wait, up to 5 s, for nr_dying_descendants of CG to come back to BEFORE
 * (or below: older ones may go meanwhile). A removed memcg lingers while
 * a page or a swap entry still holds it, and goes (an RCU grace period
 * and a work item later) once the last one is freed: a test that freed
 * its data must see it go. Pages freed into a per-cpu LRU batch are
 * freed when it drains: after 1 s, the batches are drained, and the
 * charge stocks taken over. 0, or -1 with both values printed.
 */
int wait_dying(const char *cg, long before, const char *when)
{
	long now = nr_dying(cg);
	int i;

	for (i = 0; i < 100 && now > before; i++) {
		if (i == 20) {
			drain_lru_batches();
			flush_charge_stocks();
		}
		usleep(50000);
		now = nr_dying(cg);
	}
	if (now >= 0 && now <= before)
		return 0;
	ksft_print_msg("%s: %s cgroup.stat nr_dying_descendants is %ld after 5 s, was %ld before\n",
		       when, cg, now, before);
	return -1;
}

/*
 * Freed swap slots wait in the per-cpu swap slot caches (SWAP_BATCH, 64
 * slots a cpu) until a cache fills up, and each one holds a reference on
 * the memcg id it was charged to: a removed cgroup whose swapped data
 * was freed stays dying until then. swapoff drains the caches; swapon
 * brings the device back. 0, or -1 with the errno printed.
 */
int drain_swap_slots(void)
{
	if (swapoff(SWAP_DEV)) {
		ksft_print_msg("swapoff %s: %s\n", SWAP_DEV, strerror(errno));
		return -1;
	}
	if (swapon(SWAP_DEV, 0)) {
		ksft_print_msg("swapon %s: %s\n", SWAP_DEV, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Return the charges CG's memcg holds ahead of use in the per-cpu stocks
 * (up to 64 pages a cpu, each stock pinning the memcg): memory.high
 * below the usage makes the kernel drain every cpu's stock of the
 * cgroup (drain_all_stock()); no reclaim is left to do once it is only
 * the stock, and nothing is OOM killed. Offlining a memcg drains its
 * stocks too, but skips them when another drain is in progress, and a
 * stock of a cpu that charges nothing else then pins the removed memcg.
 */
int drain_charge_stock(const char *cg)
{
	if (cg_write(cg, "memory.high", "0") || cg_write(cg, "memory.high", "max")) {
		ksft_print_msg("%s: memory.high: %s\n", cg, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * memory.reclaim on CG until none of its tmpfs pages is left in RAM or in
 * the swap cache and memory.swap.current holds at least BYTES: the data
 * is in swap.
 */
int push_to_swap(const char *cg, long bytes)
{
	int i;

	for (i = 0; i < 30; i++) {
		if (memcg_stat(cg, "shmem ") == 0 &&
		    memcg_stat(cg, "swapcached ") == 0 &&
		    cg_read_long(cg, "memory.swap.current") >= bytes)
			return 0;
		cg_write(cg, "memory.reclaim", "16M");	/* EAGAIN is fine */
	}
	ksft_print_msg("%s: after 30 reclaims shmem %ld, swapcached %ld, swap.current %ld (want %ld)\n",
		       cg, memcg_stat(cg, "shmem "), memcg_stat(cg, "swapcached "),
		       cg_read_long(cg, "memory.swap.current"), bytes);
	return -1;
}

int watch_events(struct events_watch *w, const char *cg)
{
	char *events = cg_control(cg, "memory.tmpfs.events"), buf[4096];
	int ret = -1;

	w->ino = inotify_init1(IN_NONBLOCK);
	w->fd = open(events, O_RDONLY);
	/* POLLPRI is raised for changes after a read */
	if (w->ino >= 0 && inotify_add_watch(w->ino, events, IN_MODIFY) >= 0 &&
	    w->fd >= 0 && read(w->fd, buf, sizeof(buf)) > 0)
		ret = 0;
	free(events);
	return ret;
}

int expect_events_wakeup(struct events_watch *w)
{
	struct pollfd p[2] = {
		{ .fd = w->ino, .events = POLLIN },
		{ .fd = w->fd, .events = POLLPRI },
	};

	if (poll(&p[0], 1, 5000) < 0 || poll(&p[1], 1, 5000) < 0)
		return -1;
	if (!(p[0].revents & POLLIN) || !(p[1].revents & POLLPRI)) {
		ksft_print_msg("no wakeup: inotify revents %#x, poll revents %#x\n",
			       p[0].revents, p[1].revents);
		return -1;
	}
	return 0;
}

void unwatch_events(struct events_watch *w)
{
	if (w->ino >= 0)
		close(w->ino);
	if (w->fd >= 0)
		close(w->fd);
	w->ino = w->fd = -1;
}

int has_memory_tmpfs(const char *root, const char *name)
{
	char *probe = make_child(root, name), *file;
	int ret;

	if (!probe)
		return -1;
	file = cg_control(probe, "memory.tmpfs.current");
	ret = !access(file, F_OK);
	free(file);
	remove_cgroup(probe);
	return ret;
}

bool kernel_has_thp(void)
{
	return !access("/sys/kernel/mm/transparent_hugepage", F_OK);
}

bool kernel_is_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/* Why the kernel cannot run a case that NEEDS this, or NULL. */
static const char *unmet_need(unsigned int needs)
{
	if ((needs & NEEDS_THP) && !kernel_has_thp())
		return "no transparent huge pages in this kernel";
	if ((needs & NEEDS_STOCK) && kernel_is_rt())
		return "PREEMPT_RT: the series keeps no per-CPU tmpfs stock";
	return NULL;
}

/*
 * The KTAP plan, then each case, in order, as a result of its own. Every
 * case removes its cgroups: none may stay dying (wait_dying()). With
 * NEED_TMPFS, a kernel without memory.tmpfs fails the whole program.
 */
static int run_tests(struct tmpfs_test *tests, int n, bool need_tmpfs)
{
	char root[PATH_MAX];
	int i;

	page_size = sysconf(_SC_PAGESIZE);
	ksft_print_header();
	ksft_set_plan(n);
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_skip("cgroup v2 isn't mounted\n");
	if (cg_read_strstr(root, "cgroup.subtree_control", "memory"))
		if (cg_write(root, "cgroup.subtree_control", "+memory"))
			ksft_exit_skip("Failed to enable the memory controller\n");
	if (need_tmpfs) {
		int has = has_memory_tmpfs(root, "tmpfs_probe");

		if (has < 0)
			ksft_exit_fail_msg("cannot create a cgroup\n");
		/* these tests are the series' own: a kernel without it fails them */
		if (!has)
			ksft_exit_fail_msg("memory.tmpfs.current does not exist: kernel without memory.tmpfs\n");
	}

	for (i = 0; i < n; i++) {
		long dying = nr_dying(root);
		const char *unmet = unmet_need(tests[i].needs);
		int ret;

		if (unmet) {
			ksft_test_result_skip("%s: %s\n", tests[i].name, unmet);
			continue;
		}
		ret = tests[i].fn(root);

		if (ret == KSFT_PASS && wait_dying(root, dying, tests[i].name))
			ret = KSFT_FAIL;
		switch (ret) {
		case KSFT_PASS:
			ksft_test_result_pass("%s\n", tests[i].name);
			break;
		case KSFT_SKIP:
			ksft_test_result_skip("%s\n", tests[i].name);
			break;
		default:
			ksft_test_result_fail("%s\n", tests[i].name);
			break;
		}
	}
	ksft_finished();
	return 0;
}

int run_memcg_tests(struct tmpfs_test *tests, int n)
{
	return run_tests(tests, n, false);
}

int run_tmpfs_tests(struct tmpfs_test *tests, int n)
{
	return run_tests(tests, n, true);
}
