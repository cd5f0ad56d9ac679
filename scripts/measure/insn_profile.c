// SPDX-License-Identifier: GPL-2.0
/*
 * insn_profile: a QEMU TCG plugin counting the guest instructions executed
 * in the kernel, per translation block. At exit it writes, for each block
 * start address of the kernel, the instructions it executed in all, how
 * often it ran, and the locked instructions it executed in all:
 *   ADDRESS INSNS EXECS LOCKED
 * (hex, then decimal) to the file given as out=PATH. A locked instruction
 * is an x86 instruction with a LOCK prefix (F0 among its legacy prefixes)
 * or an XCHG with a memory operand (86/87 with ModRM mod != 3, locked
 * without the prefix): the read-modify-writes that take a cache line
 * exclusively (atomic_*(), cmpxchg, test_and_set_bit, spin locks). The
 * count is taken from the instruction bytes when the block is translated,
 * so the kernel's alternatives patching, done before, is seen; a guest
 * with one CPU would have its LOCK prefixes patched out to DS (3E) and
 * count none (make profile's guests have two). scripts/measure/insn-profile.sh
 * sums the columns per function with the kernel's System.map.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t vaddr;
	uint64_t n_insns;
	uint64_t n_locked;	/* locked instructions in the block */
	uint64_t execs;		/* bumped inline by the translated code */
};

static struct block **blocks;
static size_t nr_blocks, max_blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_path;

#define KERNEL_START	0xffffffff80000000ULL

/* Whether the x86-64 instruction of N bytes at P is a locked one. */
static int is_locked(const uint8_t *p, size_t n)
{
	size_t i;
	int locked = 0;

	/* the legacy prefixes, in any order */
	for (i = 0; i < n; i++) {
		switch (p[i]) {
		case 0xf0:
			locked = 1;
			continue;
		case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e:
		case 0x26: case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		}
		break;
	}
	if (locked)
		return 1;
	if (i < n && (p[i] & 0xf0) == 0x40)	/* REX */
		i++;
	/* XCHG r/m, r with a memory operand */
	return i + 1 < n && (p[i] == 0x86 || p[i] == 0x87) && (p[i + 1] >> 6) != 3;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;
	size_t i;

	if (vaddr < KERNEL_START)
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->vaddr = vaddr;
	b->n_insns = qemu_plugin_tb_n_insns(tb);
	for (i = 0; i < b->n_insns; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		b->n_locked += is_locked(qemu_plugin_insn_data(insn),
					 qemu_plugin_insn_size(insn));
	}
	pthread_mutex_lock(&lock);
	if (nr_blocks == max_blocks) {
		max_blocks = max_blocks ? 2 * max_blocks : 65536;
		blocks = realloc(blocks, max_blocks * sizeof(*blocks));
		if (!blocks)
			abort();
	}
	blocks[nr_blocks++] = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out_path, "w");
	size_t i;

	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < nr_blocks; i++) {
		struct block *b = blocks[i];

		if (b->execs)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				b->vaddr, b->execs * b->n_insns, b->execs,
				b->execs * b->n_locked);
	}
	fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
	if (!out_path) {
		fprintf(stderr, "insn_profile: give out=PATH\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
