// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vr-icount: a QEMU TCG plugin that counts the guest instructions each
 * vCPU executes and reports the counts whenever a guest executes one of
 * vmrapl's marker instructions.
 *
 * A marker is the 7-byte no-op "nopl 0x5652XXYY(%rax)", encoded
 * 0f 1f 80 YY XX 52 56: an architectural no-op that touches no memory.
 * The rig's benchmark (selftests/vmrapl/bench_icount.c) executes one
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
 * Arguments (-plugin path.so,arg=value,...):
 *   out=PATH       append the lines to PATH (default: QEMU's log, stderr)
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

static void vr_marker_hit(unsigned int vcpu, void *udata)
{
	unsigned int id = (unsigned int)(uintptr_t)udata;
	g_autoptr(GString) s = g_string_new(NULL);

	g_mutex_lock(&vr_lock);
	g_string_printf(s, "vr-icount seq=%" PRIu64 " id=0x%04x vcpu=%u insns=%" PRIu64
			" kinsns=%" PRIu64 " minsns=%" PRIu64, vr_seq++, id, vcpu,
			vr_total(vcpu),
			qemu_plugin_u64_get(vr_kernel, vcpu) +
			qemu_plugin_u64_get(vr_module, vcpu),
			qemu_plugin_u64_get(vr_module, vcpu));
	vr_append_all(s);
	vr_emit(s);
	g_mutex_unlock(&vr_lock);
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
		if (mid >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, vr_marker_hit,
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
	qemu_plugin_register_vcpu_tb_trans_cb(id, vr_tb_trans);
	qemu_plugin_register_atexit_cb(id, vr_exit, NULL);
	return 0;
}
