// SPDX-License-Identifier: GPL-2.0
/*
 * Memory failure of every kind of page a task in a child cgroup can hold,
 * on the patched and the unpatched kernel alike (with every
 * memory.tmpfs.max at max, nothing a program can observe differs from the
 * unpatched kernel). Each case puts a page in a known state, proven from
 * /proc/kpageflags, injects the error with madvise(MADV_HWPOISON) or
 * MADV_SOFT_OFFLINE, and checks what a program sees: the signal and its
 * si_code, si_addr and si_addr_lsb, the data, the kernel's "recovery
 * action" message for that page frame, HardwareCorrupted in /proc/meminfo,
 * memory.events, and, where the kernel has them, memory.tmpfs.current.
 * After each case a second memory failure, in a fresh page, must complete:
 * the first one must not leave mf_mutex held.
 *
 * This program runs on both kernels and must pass on both (suite "both").
 */
#include "../tmpfs_util.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

/* bits of /proc/kpageflags (Documentation/admin-guide/mm/pagemap.rst) */
#define KPF_DIRTY	4
#define KPF_LRU		5
#define KPF_ANON	12
#define KPF_SWAPCACHE	13
#define KPF_HWPOISON	19

#define PAGES 4
#define TMPFS_FILE "/tmp/test_memory_failure"

static char root[PATH_MAX];
static bool have_tmpfs;		/* the kernel has memory.tmpfs.* */

static volatile sig_atomic_t sig_count, sig_code, sig_lsb;
static void *volatile sig_addr;
static sigjmp_buf jump;
static volatile sig_atomic_t jump_armed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sig_count++;
	sig_code = si->si_code;
	sig_addr = si->si_addr;
	sig_lsb = si->si_addr_lsb;
	if (jump_armed) {
		jump_armed = 0;
		siglongjmp(jump, 1);
	}
}

static void reset_signal(void)
{
	sig_count = 0;
	sig_code = 0;
	sig_addr = NULL;
	sig_lsb = 0;
}

static uint64_t kpageflags(unsigned long pfn)
{
	uint64_t flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		flags = 0;
	close(fd);
	return flags;
}

#define BIT(b) (1ULL << (b))

/* Require that the page at ADDR has every flag of SET and none of CLEAR. */
static int expect_flags(void *addr, uint64_t set, uint64_t clear, const char *what)
{
	unsigned long pfn = pfn_of(addr);
	uint64_t f = pfn ? kpageflags(pfn) : 0;

	if (!pfn) {
		ksft_print_msg("%s: no page frame behind %p\n", what, addr);
		return -1;
	}
	if ((f & set) != set || (f & clear)) {
		ksft_print_msg("%s: pfn %#lx has kpageflags %#llx, want %#llx set and %#llx clear\n",
			       what, pfn, (unsigned long long)f,
			       (unsigned long long)set, (unsigned long long)clear);
		return -1;
	}
	return 0;
}

static long meminfo_kb(const char *key)
{
	return proc_key_long("/proc/meminfo", key, ':');
}

/* /dev/kmsg, positioned at its end: what the kernel prints from now on. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Find, among the kernel's messages since kmsg_open(), the memory failure
 * "recovery action" line for PFN; copy "TYPE: RESULT" into OUT.
 */
static int kmsg_recovery(int fd, unsigned long pfn, char *out, size_t len)
{
	char rec[2048], want[64];
	ssize_t n;

	snprintf(want, sizeof(want), "Memory failure: %#lx: recovery action for ", pfn);
	out[0] = '\0';
	for (;;) {
		char *msg, *hit;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		hit = msg ? strstr(msg, want) : NULL;
		if (hit) {
			snprintf(out, len, "%s", hit + strlen(want));
			out[strcspn(out, "\n")] = '\0';
		}
	}
	return out[0] ? 0 : -1;
}

static int expect_recovery(int fd, unsigned long pfn, const char *want)
{
	char got[256];

	if (kmsg_recovery(fd, pfn, got, sizeof(got))) {
		ksft_print_msg("no \"recovery action\" message for pfn %#lx, expected \"%s\"\n",
			       pfn, want);
		return -1;
	}
	if (strcmp(got, want)) {
		ksft_print_msg("pfn %#lx: recovery action for \"%s\", expected \"%s\"\n",
			       pfn, got, want);
		return -1;
	}
	return 0;
}

/* HardwareCorrupted must have grown by exactly PAGES pages since BEFORE. */
static int expect_corrupted(long before, long pages, const char *what)
{
	long now = meminfo_kb("HardwareCorrupted");

	if (now - before != pages * page_size / 1024) {
		ksft_print_msg("%s: HardwareCorrupted %ld kB -> %ld kB, expected +%ld kB\n",
			       what, before, now, pages * page_size / 1024);
		return -1;
	}
	return 0;
}

/* The one SIGBUS an access to a poisoned page at ADDR must raise. */
static int expect_sigbus(void *addr, const char *what)
{
	if (sig_count != 1 || sig_code != BUS_MCEERR_AR || sig_addr != addr ||
	    sig_lsb != __builtin_ctzl(page_size)) {
		ksft_print_msg("%s: %d SIGBUS, si_code %d, si_addr %p, si_addr_lsb %d; expected 1, BUS_MCEERR_AR (%d), %p, %d\n",
			       what, (int)sig_count, (int)sig_code, sig_addr, (int)sig_lsb,
			       BUS_MCEERR_AR, addr, __builtin_ctzl(page_size));
		return -1;
	}
	return 0;
}

/*
 * MADV_HWPOISON of the page at ADDR, whose page frame goes to *PFN: the
 * /dev/kmsg fd of kmsg_open() from just before it, or -1 with a message.
 */
static int hwpoison(char *addr, unsigned long *pfn)
{
	int kmsg;

	*pfn = pfn_of(addr);
	kmsg = kmsg_open();
	reset_signal();
	if (kmsg < 0 || madvise(addr, page_size, MADV_HWPOISON)) {
		ksft_print_msg("MADV_HWPOISON: %s\n", strerror(errno));
		if (kmsg >= 0)
			close(kmsg);
		return -1;
	}
	return kmsg;
}

static int expect_nosignal(const char *what)
{
	if (sig_count) {
		ksft_print_msg("%s: %d unexpected SIGBUS (si_code %d)\n", what,
			       (int)sig_count, (int)sig_code);
		return -1;
	}
	return 0;
}

/* Touching the poisoned page at ADDR again raises SIGBUS BUS_MCEERR_AR. */
static int expect_access_sigbus(volatile char *addr, const char *what)
{
	reset_signal();
	if (sigsetjmp(jump, 1) == 0) {
		jump_armed = 1;
		(void)*addr;
		jump_armed = 0;
		ksft_print_msg("%s: reading the poisoned page did not fault\n", what);
		return -1;
	}
	return expect_sigbus((void *)addr, what);
}

static int check_data(const char *p, int seed, const char *what)
{
	for (long i = 0; i < page_size; i++)
		if (p[i] != (char)(seed + i % 251)) {
			ksft_print_msg("%s: byte %ld is %d, expected %d\n", what, i,
				       p[i], (char)(seed + i % 251));
			return -1;
		}
	return 0;
}

static void fill(char *p, int seed)
{
	for (long i = 0; i < page_size; i++)
		p[i] = (char)(seed + i % 251);
}

static char *map_anon(void)
{
	char *p = mmap(NULL, PAGES * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, PAGES * page_size, MADV_NOHUGEPAGE);
	return p;
}

/* memory.events of CG has no oom and no oom_kill; tmpfs.current is WANT */
static int expect_cgroup(const char *cg, long tmpfs_want, const char *what)
{
	long oom = cg_read_key_long(cg, "memory.events", "oom ");
	long kill = cg_read_key_long(cg, "memory.events", "oom_kill ");

	if (oom != 0 || kill != 0) {
		ksft_print_msg("%s: memory.events oom %ld, oom_kill %ld\n", what, oom, kill);
		return -1;
	}
	if (have_tmpfs) {
		long cur = cg_read_long(cg, "memory.tmpfs.current");

		if (cur != tmpfs_want) {
			ksft_print_msg("%s: memory.tmpfs.current %ld, expected %ld\n",
				       what, cur, tmpfs_want);
			return -1;
		}
	}
	return 0;
}

/*
 * Poison the page at ADDR (which the caller wrote with SEED) with
 * MADV_HWPOISON and check what the caller sees: a SIGBUS for its own
 * access, the kernel's recovery message, HardwareCorrupted, a SIGBUS on
 * the next access.
 */
static int poison_anon(char *addr, const char *recovery, const char *what)
{
	long hc = meminfo_kb("HardwareCorrupted");
	unsigned long pfn = pfn_of(addr);
	int kmsg = kmsg_open();
	int ret = -1;

	if (kmsg < 0 || hc < 0 || !pfn) {
		ksft_print_msg("%s: kmsg %d, HardwareCorrupted %ld, pfn %#lx\n",
			       what, kmsg, hc, pfn);
		goto out;
	}
	reset_signal();
	if (madvise(addr, page_size, MADV_HWPOISON)) {
		ksft_print_msg("%s: MADV_HWPOISON: %s\n", what, strerror(errno));
		goto out;
	}
	if (expect_sigbus(addr, what) || expect_recovery(kmsg, pfn, recovery) ||
	    expect_corrupted(hc, 1, what) ||
	    expect_flags(addr + page_size, 0, BIT(KPF_HWPOISON), what) ||
	    !(kpageflags(pfn) & BIT(KPF_HWPOISON)) ||
	    expect_access_sigbus(addr, what))
		goto out;
	ret = 0;
out:
	if (kmsg >= 0)
		close(kmsg);
	return ret;
}

/*
 * A second memory failure, in a fresh anonymous page of a new process of
 * CG: it must be over within 60 seconds (a first failure that oopsed
 * under mf_mutex leaves every later one hanging).
 */
static int body_second(const char *cg, void *arg)
{
	char *p = map_anon();

	if (!p)
		return 1;
	fill(p, 99);
	reset_signal();
	if (madvise(p, page_size, MADV_HWPOISON))
		return 1;
	return expect_sigbus(p, "second poison") ? 1 : 0;
}

static int second_poison(const char *cg)
{
	long hc = meminfo_kb("HardwareCorrupted");
	int pid = cg_run_nowait(cg, body_second, NULL), status, i;

	if (pid < 0)
		return -1;
	for (i = 0; i < 600; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				ksft_print_msg("second poison: status %#x\n", status);
				return -1;
			}
			return expect_corrupted(hc, 1, "second poison");
		}
		usleep(100000);
	}
	ksft_print_msg("second poison: MADV_HWPOISON still running after 60 s (memory failure hangs)\n");
	return -1;
}

/*
 * A clean anonymous page: written, paged out to zram (MADV_PAGEOUT), read
 * back by a read fault. The swap device is synchronous and nobody else
 * holds the entry, so the page skips the swap cache: an anonymous page
 * whose pte is clean and which is not PG_dirty, whose only copy is this
 * page. The kernel unmaps it without a signal (it was clean), then the
 * next access gets SIGBUS: the data is gone.
 */
static int body_anon_clean(const char *cg, void *arg)
{
	char *p = map_anon(), *page;
	long hc = meminfo_kb("HardwareCorrupted");
	unsigned long pfn;
	int kmsg;

	if (!p)
		return -1;
	page = p + page_size;
	for (int i = 0; i < PAGES; i++)
		fill(p + i * page_size, i + 1);
	if (madvise(p, PAGES * page_size, MADV_PAGEOUT)) {
		ksft_print_msg("MADV_PAGEOUT: %s\n", strerror(errno));
		return -1;
	}
	if (pfn_of(page)) {
		ksft_print_msg("MADV_PAGEOUT left the page in memory (is swap on?)\n");
		return -1;
	}
	if (check_data(page, 2, "read back") ||
	    expect_flags(page, BIT(KPF_ANON), BIT(KPF_DIRTY) | BIT(KPF_SWAPCACHE),
			 "before poison"))
		return -1;
	kmsg = hwpoison(page, &pfn);
	if (kmsg < 0)
		return -1;
	if (expect_nosignal("anon clean") ||
	    expect_recovery(kmsg, pfn, "clean LRU page: Recovered") ||
	    expect_corrupted(hc, 1, "anon clean") ||
	    !(kpageflags(pfn) & BIT(KPF_HWPOISON)) ||
	    expect_access_sigbus(page, "anon clean, next access"))
		return -1;
	close(kmsg);
	/* the other pages are untouched */
	if (check_data(p, 1, "page 0") || check_data(p + 2 * page_size, 3, "page 2"))
		return -1;
	return expect_cgroup(cg, 0, "anon clean");
}

/*
 * A dirty anonymous page: written through its mapping (the pte is dirty;
 * unmapping it makes the folio dirty). The writer gets SIGBUS at once.
 */
static int body_anon_dirty(const char *cg, void *arg)
{
	char *p = map_anon();

	if (!p)
		return -1;
	for (int i = 0; i < PAGES; i++)
		fill(p + i * page_size, i + 1);
	if (expect_flags(p + page_size, BIT(KPF_ANON), BIT(KPF_SWAPCACHE),
			 "before poison"))
		return -1;
	if (poison_anon(p + page_size, "dirty LRU page: Recovered", "anon dirty"))
		return -1;
	if (check_data(p, 1, "page 0") || check_data(p + 2 * page_size, 3, "page 2"))
		return -1;
	return expect_cgroup(cg, 0, "anon dirty");
}

/*
 * A page in the swap cache: written, paged out to zram (MADV_PAGEOUT),
 * then, while a child shares the swap entry (so swap-in goes through the
 * swap cache even from a synchronous device), read back. The kernel keeps
 * the poisoned page in the swap cache unmapped from this process, which
 * is not killed: the next read swaps the data in again from the device.
 */
static int body_swapcache(const char *cg, void *arg)
{
	char *p = map_anon();
	long hc = meminfo_kb("HardwareCorrupted");
	int pipefd[2], kmsg = -1, pid, status, ret = -1;
	unsigned long pfn;
	char c;

	if (!p || pipe(pipefd))
		return -1;
	for (int i = 0; i < PAGES; i++)
		fill(p + i * page_size, i + 1);
	if (madvise(p, PAGES * page_size, MADV_PAGEOUT)) {
		ksft_print_msg("MADV_PAGEOUT: %s\n", strerror(errno));
		return -1;
	}
	if (pfn_of(p + page_size)) {
		ksft_print_msg("MADV_PAGEOUT left the page in memory (is swap on?)\n");
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {		/* holds the swap entries until told to go */
		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	if (check_data(p + page_size, 2, "swapped in"))
		goto out;
	if (expect_flags(p + page_size, BIT(KPF_ANON) | BIT(KPF_SWAPCACHE), BIT(KPF_DIRTY),
			 "before poison"))
		goto out;
	kmsg = hwpoison(p + page_size, &pfn);
	if (kmsg < 0)
		goto out;
	if (expect_nosignal("swap cache") ||
	    expect_recovery(kmsg, pfn, "clean swapcache page: Recovered") ||
	    expect_corrupted(hc, 1, "swap cache") ||
	    !(kpageflags(pfn) & BIT(KPF_HWPOISON)))
		goto out;
	/* the data is still on the swap device: read back, in a new frame */
	if (check_data(p + page_size, 2, "after poison") || expect_nosignal("reread") ||
	    pfn_of(p + page_size) == pfn)
		goto out;
	ret = expect_cgroup(cg, 0, "swap cache");
out:
	close(pipefd[1]);
	waitpid(pid, &status, 0);
	if (kmsg >= 0)
		close(kmsg);
	return ret;
}

/*
 * MADV_SOFT_OFFLINE of the page at ADDR, with HardwareCorrupted at HC
 * before: no signal, one page more corrupted, the old frame poisoned and
 * another one mapped.
 */
static int soft_offline(char *addr, long hc)
{
	unsigned long pfn = pfn_of(addr);

	reset_signal();
	if (madvise(addr, page_size, MADV_SOFT_OFFLINE)) {
		ksft_print_msg("MADV_SOFT_OFFLINE: %s\n", strerror(errno));
		return -1;
	}
	if (expect_nosignal("soft offline") || expect_corrupted(hc, 1, "soft offline") ||
	    !(kpageflags(pfn) & BIT(KPF_HWPOISON)) || pfn_of(addr) == pfn)
		return -1;
	return 0;
}

/* MADV_SOFT_OFFLINE of an anonymous page: migrated, data intact. */
static int body_soft_anon(const char *cg, void *arg)
{
	char *p = map_anon();
	long hc = meminfo_kb("HardwareCorrupted");

	if (!p)
		return -1;
	for (int i = 0; i < PAGES; i++)
		fill(p + i * page_size, i + 1);
	if (soft_offline(p + page_size, hc) || !pfn_of(p + page_size) ||
	    expect_flags(p + page_size, BIT(KPF_ANON), BIT(KPF_HWPOISON), "migrated") ||
	    check_data(p + page_size, 2, "soft offline"))
		return -1;
	return expect_cgroup(cg, 0, "anon soft offline");
}

static char *map_tmpfs(int *fdp, int pages)
{
	int fd = open(TMPFS_FILE, O_CREAT | O_TRUNC | O_RDWR, 0644);
	char *p;

	if (fd < 0 || ftruncate(fd, pages * page_size))
		return NULL;
	p = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (int i = 0; i < pages; i++)
		fill(p + i * page_size, i + 1);
	*fdp = fd;
	return p;
}

/* Unmap and remove the file of map_tmpfs(): its charge goes with it (WHAT). */
static int unmap_tmpfs(char *p, int fd, const char *cg, const char *what)
{
	munmap(p, PAGES * page_size);
	close(fd);
	if (unlink(TMPFS_FILE))
		return -1;
	return expect_cgroup(cg, 0, what);
}

/* MADV_SOFT_OFFLINE of a tmpfs page: migrated, data and charge intact. */
static int body_soft_tmpfs(const char *cg, void *arg)
{
	long hc = meminfo_kb("HardwareCorrupted");
	int fd;
	char *p = map_tmpfs(&fd, PAGES);

	if (!p || expect_cgroup(cg, PAGES * page_size, "tmpfs written"))
		return -1;
	if (soft_offline(p + page_size, hc) || check_data(p + page_size, 2, "soft offline") ||
	    expect_cgroup(cg, PAGES * page_size, "tmpfs soft offline"))
		return -1;
	return unmap_tmpfs(p, fd, cg, "tmpfs soft offline, unlinked");
}

/*
 * MADV_HWPOISON of a dirty tmpfs page: SIGBUS, reads of it get EIO, its
 * data leaves memory.tmpfs at once (patched), the rest stays.
 */
static int body_hwpoison_tmpfs(const char *cg, void *arg)
{
	long hc = meminfo_kb("HardwareCorrupted");
	unsigned long pfn;
	char buf[16];
	int fd, kmsg;
	char *p = map_tmpfs(&fd, PAGES);

	if (!p || expect_cgroup(cg, PAGES * page_size, "tmpfs written"))
		return -1;
	kmsg = hwpoison(p + page_size, &pfn);
	if (kmsg < 0)
		return -1;
	if (expect_sigbus(p + page_size, "tmpfs poison") ||
	    expect_recovery(kmsg, pfn, "dirty LRU page: Recovered") ||
	    expect_corrupted(hc, 1, "tmpfs poison") ||
	    expect_access_sigbus(p + page_size, "tmpfs poison") ||
	    expect_cgroup(cg, (PAGES - 1) * page_size, "tmpfs poison"))
		return -1;
	close(kmsg);
	if (pread(fd, buf, sizeof(buf), page_size) != -1 || errno != EIO) {
		ksft_print_msg("read of the poisoned tmpfs page: not EIO (%s)\n", strerror(errno));
		return -1;
	}
	if (check_data(p + 2 * page_size, 3, "next page"))
		return -1;
	return unmap_tmpfs(p, fd, cg, "tmpfs poison, unlinked");
}

struct mf_case {
	const char *name;
	int (*body)(const char *cg, void *arg);
};

static int run_case(const struct mf_case *c)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	char *parent = make_parent(root, "mf_parent"), *cg = NULL;
	long dying = nr_dying(root);
	int ret = KSFT_FAIL;

	sigaction(SIGBUS, &sa, NULL);
	cg = parent ? make_child(parent, c->name) : NULL;
	if (!cg)
		goto cleanup;
	if (cg_run(cg, c->body, NULL)) {
		ksft_print_msg("%s: the case failed in the cgroup\n", c->name);
		goto cleanup;
	}
	if (second_poison(cg))
		goto cleanup;
	if (have_tmpfs && cg_read_long(parent, "memory.tmpfs.current") != 0) {
		ksft_print_msg("%s: parent memory.tmpfs.current %ld, expected 0\n", c->name,
			       cg_read_long(parent, "memory.tmpfs.current"));
		goto cleanup;
	}
	ret = KSFT_PASS;
cleanup:
	unlink(TMPFS_FILE);
	remove_cgroup(cg);
	remove_cgroup(parent);
	/*
	 * Nothing of the case keeps its cgroups alive: freed swap entries
	 * wait in the swap slot caches with their memcg, so drain those.
	 */
	if (ret == KSFT_PASS && (drain_swap_slots() || wait_dying(root, dying, c->name)))
		ret = KSFT_FAIL;
	return ret;
}

static const struct mf_case cases[] = {
	{ "anon_clean_hwpoison", body_anon_clean },
	{ "anon_dirty_hwpoison", body_anon_dirty },
	{ "swapcache_hwpoison", body_swapcache },
	{ "tmpfs_hwpoison", body_hwpoison_tmpfs },
	{ "anon_soft_offline", body_soft_anon },
	{ "tmpfs_soft_offline", body_soft_tmpfs },
};

int main(void)
{
	size_t i;
	int has;

	page_size = sysconf(_SC_PAGESIZE);
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(cases));
	if (geteuid())
		ksft_exit_skip("needs root (MADV_HWPOISON, /proc/kpageflags)\n");
	if (cg_find_unified_root(root, sizeof(root), NULL))
		ksft_exit_skip("cgroup v2 isn't mounted\n");
	if (cg_read_strstr(root, "cgroup.subtree_control", "memory") &&
	    cg_write(root, "cgroup.subtree_control", "+memory"))
		ksft_exit_skip("the memory controller cannot be enabled\n");
	if (meminfo_kb("HardwareCorrupted") < 0)
		ksft_exit_skip("no HardwareCorrupted in /proc/meminfo: CONFIG_MEMORY_FAILURE is off\n");
	has = has_memory_tmpfs(root, "mf_probe");
	if (has < 0)
		ksft_exit_fail_msg("cannot create a cgroup\n");
	have_tmpfs = has;
	ksft_print_msg("memory.tmpfs: %s\n", have_tmpfs ? "present, checked" : "absent (unpatched kernel)");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (run_case(&cases[i]) == KSFT_PASS)
			ksft_test_result_pass("%s\n", cases[i].name);
		else
			ksft_test_result_fail("%s\n", cases[i].name);
	}
	ksft_finished();
}
