// SPDX-License-Identifier: GPL-2.0
/*
 * The Intel and AMD RAPL sources with the MSR reads replaced: decoding of
 * the unit register and the domains, the fixed DRAM unit of the server
 * parts, and the wrap logic of their 32-bit counters driven through the
 * core the way source_rapl.c drives it.
 */
#include "vr_test.h"

static void test_decode(void)
{
	struct vr_dom_src s[VR_NDOM];
	struct vr_rapl_regs r = { 0 };
	u32 doms;

	/* A client part: ESU 14 (0xA0E03), PKG and PP0, no DRAM. */
	r = (struct vr_rapl_regs){ .unit = 0xA0E03, .pkg = true,
				   .core = true, .family = 6, .model = 0x9e };
	doms = vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(doms, 3, "intel client: PKG and PP0");
	vt_eq(s[0].esu, 14, "intel client: ESU from bits 12:8");
	vt_eq(s[0].width, 32, "intel client: 32-bit counters");

	/* Sandy Bridge: ESU 16. */
	r.unit = 0xA1003;
	vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(s[0].esu, 16, "sandy bridge: ESU 16");

	/* Skylake-X: DRAM in the fixed 15.3 uJ unit whatever the ESU. */
	r = (struct vr_rapl_regs){ .unit = 0xA0E03, .pkg = true,
				   .dram = true, .family = 6, .model = 0x55 };
	doms = vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(doms, 5, "skylake-x: PKG and DRAM");
	vt_eq(s[2].esu, 16, "skylake-x: DRAM unit fixed at 2^-16 J");
	vt_eq(s[0].esu, 14, "skylake-x: PKG keeps the ESU");

	/* A DRAM-capable part outside the list uses the ESU. */
	r.model = 0x8f;
	vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(s[2].esu, 14, "other servers: DRAM in the ESU");
	r.family = 0x19;
	r.model = 0x55;
	vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(s[2].esu, 14, "the model list is for family 6 only");

	/* AMD: package only, ESU 16 typical; core is per core, not used. */
	r = (struct vr_rapl_regs){ .unit = 0xA1003, .pkg = true, .core = true,
				   .dram = true, .family = 0x19 };
	doms = vr_rapl_decode(VR_RAPL_AMD, &r, s);
	vt_eq(doms, 1, "amd: the package domain only");
	vt_eq(s[0].esu, 16, "amd: ESU 16");

	/* No readable package counter: no source. */
	r.pkg = false;
	vt_eq(vr_rapl_decode(VR_RAPL_AMD, &r, s), 0,
	      "no package counter: nothing");
	/* Reserved high bits of the unit register are ignored. */
	r = (struct vr_rapl_regs){ .unit = 0xffffffffffff0e03ULL,
				   .pkg = true, .family = 6 };
	vr_rapl_decode(VR_RAPL_INTEL, &r, s);
	vt_eq(s[0].esu, 14, "ESU is bits 12:8 only");
}

/* The vr_read_fn of the fake counter: its PKG value, *@ctx. */
static u32 read_fake(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = *(u64 *)ctx;
	return BIT(VR_DOM_PKG);
}

/* A forced close at @now, the fake counter showing @val. */
static void close_fake(struct vr_pkg *p, u64 now, u64 val)
{
	vr_lock(&p->close_lock);
	vr_pkg_close_locked(p, now, read_fake, &val);
	vr_unlock(&p->close_lock);
}

/*
 * A fake 32-bit counter at @watts, sampled every @period_ms through the
 * core: what the core sampled must be the true energy across @wraps.
 */
static void test_wraps(enum vr_rapl_vendor v, u64 unit, double watts,
		       u64 period_ms, int min_wraps)
{
	static struct vr_cpu cpu, *cpus[1];
	static struct vr_pkg p;
	struct vr_rapl_regs r = { .unit = unit, .pkg = true, .family = 6 };
	struct vr_dom_src s[VR_NDOM];
	struct vr_pkg_stats st;
	u64 now = 0, ctr, true_units = 0, esu_units;
	double per_ms;
	unsigned int d;
	u32 doms;
	int i;

	memset(&p, 0, sizeof(p));
	memset(&cpu, 0, sizeof(cpu));
	cpus[0] = &cpu;
	vr_pkg_init(&p, cpus, 1, period_ms * VT_MS, 500000000ULL);
	doms = vr_rapl_decode(v, &r, s);
	for (d = 0; d < VR_NDOM; d++)
		if (doms & BIT(d))
			vr_pkg_set_domain(&p, d, s[d].esu, s[d].width);
	vr_cpu_init(&cpu, &p);
	vr_cpu_online(&cpu, now, false);
	esu_units = 1ULL << s[0].esu;
	per_ms = watts * esu_units / 1000.0;
	ctr = 0xffff0000u;	/* start close to a wrap */
	for (i = 0; i < 100000; i++) {
		u64 step = (u64)(per_ms * period_ms);

		close_fake(&p, now, ctr);
		now += period_ms * VT_MS;
		ctr = (ctr + step) & 0xffffffffULL;
		/* Everything after the first (baseline) read is sampled. */
		true_units += step;
		if ((int)p.wraps >= min_wraps && i > 10)
			break;
	}
	close_fake(&p, now, ctr);
	vr_pkg_read_stats(&p, &st, 1);
	vt_ok((int)p.wraps >= min_wraps, "%s: %d wraps seen (%llu)",
	      v == VR_RAPL_AMD ? "amd" : "intel", min_wraps,
	      (unsigned long long)p.wraps);
	vt_eq(p.resets + p.overruns, 0, "%s: no false reset or overrun",
	      v == VR_RAPL_AMD ? "amd" : "intel");
	vt_eq(st.sampled, vr_units_to_eu(true_units, s[0].esu, &(u64){ 0 }),
	      "%s: sampled == the counter's true energy across wraps",
	      v == VR_RAPL_AMD ? "amd" : "intel");
	vt_eq(st.sampled, st.tracked + st.host + st.idle + st.lost,
	      "%s: conservation", v == VR_RAPL_AMD ? "amd" : "intel");
}

int main(void)
{
	vt_start("vmrapl RAPL sources with the MSR reads replaced");
	test_decode();
	/* AMD ESU 16: 2^32 units = 65536 J, 400 W wraps every 164 s. */
	test_wraps(VR_RAPL_AMD, 0xA1003, 400.0, 1000, 3);
	/* Intel ESU 14: 262144 J per wrap; 450 W, 4 s between reads. */
	test_wraps(VR_RAPL_INTEL, 0xA0E03, 450.0, 4000, 2);
	return vt_done();
}
