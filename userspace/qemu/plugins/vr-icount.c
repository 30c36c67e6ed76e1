// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vr-icount: a QEMU TCG plugin that counts the guest instructions each
 * vCPU executes and reports the counts whenever a guest executes one of
 * vmrapl's marker instructions.
 *
 * A marker is the 7-byte no-op "nopl 0x5652XXYY(%rax)", encoded
 * 0f 1f 80 YY XX 52 56: an architectural no-op that touches no memory.
 * The rig's benchmark (selftests/vmrapl/bench_ctxsw.c) executes one
 * before and one after a fixed amount of work; the host subtracts the
 * counts of the two (bench/rig/collect.sh).  The low 16 bits (XXYY) are
 * the marker's id, free for the guest to choose.
 *
 * Counting: every translated instruction gets an inline add on a
 * per-vCPU scoreboard (no helper call), into one of three counters chosen
 * at translation time by the instruction's address: user (the lower
 * canonical half), modules (x86-64 Linux's module area, where vmrapl's
 * code runs; see "modules=" below) or the rest of the kernel.  A marker
 * also gets a callback, which prints one line:
 *
 *   vr-icount seq=N id=0xXXYY vcpu=V insns=I kinsns=K minsns=M all=I0,I1,...
 *
 * where I, K and M are the executing vCPU's totals so far, all of them,
 * the kernel's (modules included) and the module area's (exact: the
 * callback runs on that vCPU's thread), and all= the totals of every vCPU
 * (the others read while they run, so they are approximate to the
 * instructions they execute during the read).  At exit a line
 * "vr-icount exit all=..." gives the final totals.
 *
 * An instruction is counted when it starts: one that faults (a page
 * fault, say) and is executed again after the handler counts twice.
 *
 * Profile (prof=on): every kernel instruction also gets a counter of its
 * own (a slot of a second, wide scoreboard), and at each marker whose
 * id's low byte is 2 (an "end" marker) the executing vCPU's slots that
 * moved since its previous marker are printed, one line each:
 *
 *   vr-icount-prof seq=N va=0xADDR n=COUNT
 *
 * (seq: the marker's line).  To name the addresses, the guest executes
 * the marker of id VR_SYMS_ID with a buffer's address in %rdi and its
 * length in %rsi: the plugin copies that guest memory, text the guest
 * wrote (its symbol table, say), to the output as it is.
 *
 * Arguments (-plugin path.so,arg=value,...):
 *   out=PATH       append the lines to PATH (default: QEMU's log, stderr)
 *   prof=on        the per-instruction profile above (kernel half only)
 *   modules=LO-HI  the module area, hex addresses [LO, HI); default
 *                  ffffffffc0000000-ffffffffff000000, MODULES_VADDR to
 *                  MODULES_END of an x86-64 kernel with KASLR built in
 *                  (Documentation/arch/x86/x86_64/mm.rst), as Debian's
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define VR_MARKER_LEN	7
#define VR_MARKER_HI	0x5652u		/* "VR", little endian in the disp32 */
#define VR_SYMS_ID	0x5300		/* "S": copy the buffer at %rdi, %rsi bytes */
#define VR_PROF_SLOTS	(1u << 20)	/* distinct kernel instructions profiled */
#define VR_MAX_VCPUS	64

struct vr_count {
	uint64_t user;
	uint64_t kernel;	/* outside the module area */
	uint64_t module;
};

static struct qemu_plugin_scoreboard *vr_sb;
static qemu_plugin_u64 vr_user, vr_kernel, vr_module;
static uint64_t vr_mod_lo = 0xffffffffc0000000ull, vr_mod_hi = 0xffffffffff000000ull;
static FILE *vr_out;
static GMutex vr_lock;
static uint64_t vr_seq;

/* The profile: slot 0 takes what does not fit. */
static bool vr_prof;
static struct qemu_plugin_scoreboard *vr_prof_sb;
static GHashTable *vr_prof_slot;	/* vaddr -> slot */
static uint64_t *vr_prof_va;		/* slot -> vaddr */
static unsigned int vr_prof_n = 1;
static uint64_t *vr_prof_last[VR_MAX_VCPUS];	/* at the vCPU's last marker */

static uint64_t vr_total(unsigned int vcpu)
{
	return qemu_plugin_u64_get(vr_user, vcpu) +
	       qemu_plugin_u64_get(vr_kernel, vcpu) +
	       qemu_plugin_u64_get(vr_module, vcpu);
}

static void vr_emit(GString *s)
{
	if (vr_out) {
		fputs(s->str, vr_out);
		fflush(vr_out);
	} else {
		qemu_plugin_outs(s->str);
	}
}

static void vr_append_all(GString *s)
{
	int n = qemu_plugin_num_vcpus(), i;

	g_string_append(s, " all=");
	for (i = 0; i < n; i++)
		g_string_append_printf(s, "%s%" PRIu64, i ? "," : "", vr_total(i));
	g_string_append_c(s, '\n');
}

/* Print (@print) the slots of @vcpu that moved since its last marker; under vr_lock. */
static void vr_prof_dump(unsigned int vcpu, uint64_t seq, bool print)
{
	uint64_t *cur = qemu_plugin_scoreboard_find(vr_prof_sb, vcpu);
	uint64_t *last;
	unsigned int i;

	if (vcpu >= VR_MAX_VCPUS)
		return;
	if (!vr_prof_last[vcpu])
		vr_prof_last[vcpu] = g_new0(uint64_t, VR_PROF_SLOTS);
	last = vr_prof_last[vcpu];
	for (i = 0; i < vr_prof_n; i++) {
		g_autoptr(GString) s = NULL;

		if (cur[i] == last[i])
			continue;
		if (!print) {
			last[i] = cur[i];
			continue;
		}
		s = g_string_new(NULL);
		g_string_printf(s, "vr-icount-prof seq=%" PRIu64 " va=0x%" PRIx64 " n=%" PRIu64 "\n",
				seq, i ? vr_prof_va[i] : 0, cur[i] - last[i]);
		vr_emit(s);
		last[i] = cur[i];
	}
}

/* The guest's buffer at %rdi, %rsi bytes, to the output. */
static void vr_copy_guest(void)
{
	g_autoptr(GArray) regs = qemu_plugin_get_registers();
	g_autoptr(GByteArray) buf = g_byte_array_new();
	struct qemu_plugin_register *rdi = NULL, *rsi = NULL;
	uint64_t addr = 0, len = 0, off;
	guint i;

	for (i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r =
			&g_array_index(regs, qemu_plugin_reg_descriptor, i);

		if (!strcmp(r->name, "rdi"))
			rdi = r->handle;
		else if (!strcmp(r->name, "rsi"))
			rsi = r->handle;
	}
	if (!rdi || !rsi)
		return;
	if (qemu_plugin_read_register(rdi, buf) == 8)
		memcpy(&addr, buf->data, 8);
	g_byte_array_set_size(buf, 0);
	if (qemu_plugin_read_register(rsi, buf) == 8)
		memcpy(&len, buf->data, 8);
	for (off = 0; off < len; off += 4096) {
		size_t n = MIN(4096, len - off);

		g_byte_array_set_size(buf, 0);
		if (!qemu_plugin_read_memory_vaddr(addr + off, buf, n))
			break;
		if (vr_out)
			fwrite(buf->data, 1, n, vr_out);
	}
	if (vr_out)
		fflush(vr_out);
}

static void vr_marker_hit(unsigned int vcpu, void *udata)
{
	unsigned int id = (unsigned int)(uintptr_t)udata;
	g_autoptr(GString) s = g_string_new(NULL);

	g_mutex_lock(&vr_lock);
	if (id == VR_SYMS_ID) {
		vr_copy_guest();
		g_mutex_unlock(&vr_lock);
		return;
	}
	g_string_printf(s, "vr-icount seq=%" PRIu64 " id=0x%04x vcpu=%u insns=%" PRIu64
			" kinsns=%" PRIu64 " minsns=%" PRIu64, vr_seq++, id, vcpu,
			vr_total(vcpu),
			qemu_plugin_u64_get(vr_kernel, vcpu) +
			qemu_plugin_u64_get(vr_module, vcpu),
			qemu_plugin_u64_get(vr_module, vcpu));
	vr_append_all(s);
	vr_emit(s);
	if (vr_prof)
		vr_prof_dump(vcpu, vr_seq - 1, (id & 0xff) == 2);
	g_mutex_unlock(&vr_lock);
}

/* The profile slot of the kernel instruction at @va. */
static unsigned int vr_prof_slot_of(uint64_t va)
{
	gpointer v;
	unsigned int slot = 0;

	g_mutex_lock(&vr_lock);
	v = g_hash_table_lookup(vr_prof_slot, &va);
	if (v) {
		slot = GPOINTER_TO_UINT(v);
	} else if (vr_prof_n < VR_PROF_SLOTS) {
		uint64_t *key = g_new(uint64_t, 1);

		*key = va;
		slot = vr_prof_n++;
		vr_prof_va[slot] = va;
		g_hash_table_insert(vr_prof_slot, key, GUINT_TO_POINTER(slot));
	}
	g_mutex_unlock(&vr_lock);
	return slot;
}

/* The marker's id, or -1 when @insn is not a marker. */
static int vr_marker_id(struct qemu_plugin_insn *insn)
{
	uint8_t b[VR_MARKER_LEN];

	if (qemu_plugin_insn_size(insn) != VR_MARKER_LEN ||
	    qemu_plugin_insn_data(insn, b, sizeof(b)) != sizeof(b))
		return -1;
	if (b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    b[5] != (VR_MARKER_HI & 0xff) || b[6] != (VR_MARKER_HI >> 8))
		return -1;
	return b[3] | b[4] << 8;
}

static void vr_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		qemu_plugin_u64 ctr = vr_user;
		int mid = vr_marker_id(insn);

		/* x86-64: the kernel lives in the upper canonical half. */
		if (va >= vr_mod_lo && va < vr_mod_hi)
			ctr = vr_module;
		else if (va >> 63)
			ctr = vr_kernel;
		qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, ctr, 1);
		if (vr_prof && (va >> 63)) {
			qemu_plugin_u64 e = { vr_prof_sb,
				sizeof(uint64_t) * vr_prof_slot_of(va) };

			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn,
				QEMU_PLUGIN_INLINE_ADD_U64, e, 1);
		}
		if (mid >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vr_marker_hit,
				mid == VR_SYMS_ID ? QEMU_PLUGIN_CB_R_REGS :
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)mid);
	}
}

static void vr_exit(qemu_plugin_id_t id, void *udata)
{
	g_autoptr(GString) s = g_string_new("vr-icount exit");

	g_mutex_lock(&vr_lock);
	vr_append_all(s);
	vr_emit(s);
	if (vr_out)
		fclose(vr_out);
	vr_out = NULL;
	g_mutex_unlock(&vr_lock);
	qemu_plugin_scoreboard_free(vr_sb);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "vr-icount: x86_64 system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			vr_out = fopen(argv[i] + 4, "a");
			if (!vr_out) {
				fprintf(stderr, "vr-icount: cannot open %s\n", argv[i] + 4);
				return -1;
			}
		} else if (!strcmp(argv[i], "prof=on")) {
			vr_prof = true;
		} else if (!strncmp(argv[i], "modules=", 8)) {
			if (sscanf(argv[i] + 8, "%" SCNx64 "-%" SCNx64, &vr_mod_lo,
				   &vr_mod_hi) != 2 || vr_mod_lo >= vr_mod_hi) {
				fprintf(stderr, "vr-icount: bad %s\n", argv[i]);
				return -1;
			}
		} else {
			fprintf(stderr, "vr-icount: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	vr_sb = qemu_plugin_scoreboard_new(sizeof(struct vr_count));
	vr_user = qemu_plugin_scoreboard_u64_in_struct(vr_sb, struct vr_count, user);
	vr_kernel = qemu_plugin_scoreboard_u64_in_struct(vr_sb, struct vr_count, kernel);
	vr_module = qemu_plugin_scoreboard_u64_in_struct(vr_sb, struct vr_count, module);
	if (vr_prof) {
		vr_prof_sb = qemu_plugin_scoreboard_new(sizeof(uint64_t) * VR_PROF_SLOTS);
		vr_prof_slot = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
		vr_prof_va = g_new0(uint64_t, VR_PROF_SLOTS);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, vr_tb_trans);
	qemu_plugin_register_atexit_cb(id, vr_exit, NULL);
	return 0;
}
