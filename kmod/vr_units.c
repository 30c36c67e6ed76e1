// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core: units, counter wrap, RAPL register decoding and
 * the linear estimate.  Pure arithmetic with no state of its own; see
 * vr_core.h.
 */
#include "vr_core.h"

#define VR_UW_MAX	BIT_ULL(39)		/* 550 kW: uw << 24 fits */

/* a * b / c with the remainder, for a quotient that fits in 64 bits. */
static u64 vr_mul_div_rem(u64 a, u64 b, u64 c, u64 *rem)
{
	u64 q = vr_mul_div(a, b, c);

	/* The true remainder is below c, so wrapping arithmetic is exact. */
	*rem = a * b - q * c;
	return q;
}

u64 vr_wrap_delta(u64 old, u64 cur, u32 width)
{
	u32 shift = 64 - width;

	if (!width || width >= 64)
		return cur - old;
	return ((cur << shift) - (old << shift)) >> shift;
}

/* Range of a @width-bit counter of unit 2^-@esu J, in eu (saturated). */
static u64 vr_range_eu(u32 width, u32 esu)
{
	if (width >= 64 || width + VR_EU_SHIFT - esu >= 64)
		return ~0ULL;
	if (width + VR_EU_SHIFT <= esu)
		return 1;
	return 1ULL << (width + VR_EU_SHIFT - esu);
}

/**
 * vr_core_delta() - energy of a per-core counter between two samples
 * @old: raw value at the previous sample.
 * @cur: raw value now.
 * @width: counter bits (32 for MSR_AMD_CORE_ENERGY_STATUS).
 * @esu: unit, 1/2^esu J (the package's RAPL unit).
 * @dt: ns between the two samples.
 * @max_uw: the most the core can draw (the package's max_power).
 * @carry: sub-eu conversion remainder, carried between samples.
 * @eu: out: the energy, in eu; 0 when unknown.
 *
 * Handled like the package counter (vr_dom_delta() in vr_core.c): the
 * counter wraps at 2^@width, a delta more than @max_uw draws in @dt plus
 * two hardware steps is a reset or resume (the register stepped back or
 * jumped), and a window in which @max_uw could cover the whole range may
 * hide more than one wrap.
 *
 * Return: false when the window's energy is unknown: the caller takes
 * @cur as a new baseline and keeps the weight it had.
 */
bool vr_core_delta(u64 old, u64 cur, u32 width, u32 esu, u64 dt,
		   u64 max_uw, u64 *carry, u64 *eu)
{
	u64 max_eu, slack, rem = 0;

	*eu = 0;
	slack = esu <= VR_EU_SHIFT ? 2ULL << (VR_EU_SHIFT - esu) : 2;
	max_eu = vr_energy_eu(max_uw, dt + 2000000ULL, &rem) + slack;
	if (width < 64 && max_eu >= vr_range_eu(width, esu))
		goto unknown;
	*eu = vr_units_to_eu(vr_wrap_delta(old, cur, width), esu, carry);
	if (*eu <= max_eu)
		return true;
	*eu = 0;
unknown:
	*carry = 0;
	return false;
}

/*
 * A core's energy per busy ns, in 2^-VR_CORE_W_SHIFT eu, capped so that
 * vr_cpu.c's product of a fold's ns (below 2^32) and the weight fits in
 * 64 bits: 2^12 eu/ns is 244 kW.
 */
u64 vr_core_weight(u64 eu, u64 busy_ns)
{
	u64 w;

	if (!busy_ns)
		return 0;
	w = vr_mul_div(eu, 1ULL << VR_CORE_W_SHIFT, busy_ns);
	return w < (1ULL << 32) ? w : (1ULL << 32) - 1;
}

u64 vr_units_to_eu(u64 units, u32 esu, u64 *carry)
{
	u32 sh;
	u64 t;

	if (esu <= VR_EU_SHIFT)
		return units << (VR_EU_SHIFT - esu);
	/* Finer than eu: keep the sub-eu remainder for the next delta. */
	sh = esu - VR_EU_SHIFT;
	t = units + *carry;
	*carry = t & ((1ULL << sh) - 1);
	return t >> sh;
}

u64 vr_eu_to_units(u64 eu, u32 esu)
{
	if (esu <= VR_EU_SHIFT)
		return eu >> (VR_EU_SHIFT - esu);
	return eu << (esu - VR_EU_SHIFT);
}

/*
 * A guest counter at @cur that the accounts now put at @val: the later of
 * the two, modulo 2^64.  Finer than eu (esu above VR_EU_SHIFT) the count
 * in units wraps at 2^64 (after 2^33 J at esu 31, 155 days of a 640 W
 * VM): a plain "greater" would then freeze the counter for good, where
 * the guest's low 32 bits must go on.  Half the range decides.
 */
u64 vr_gv_advance(u64 cur, u64 val)
{
	return (s64)(val - cur) > 0 ? val : cur;
}

u64 vr_eu_to_uj(u64 eu)
{
	return vr_mul_div(eu, 1000000, 1ULL << VR_EU_SHIFT);
}

/* Energy of @uw over @ns in eu; *rem carries the sub-eu part (in fJ/2^24). */
u64 vr_energy_eu(u64 uw, u64 ns, u64 *rem)
{
	u64 r, q;

	if (uw > VR_UW_MAX)
		uw = VR_UW_MAX;
	q = vr_mul_div_rem(uw << VR_EU_SHIFT, ns, VR_FJ_PER_J, &r);
	*rem += r;
	if (*rem >= VR_FJ_PER_J) {
		*rem -= VR_FJ_PER_J;
		q++;
	}
	return q;
}

/*
 * Server parts whose DRAM domain counts in a fixed 15.3 uJ (2^-16 J) unit
 * whatever the ESU says: Haswell-X, Broadwell-X/D, Skylake-X, Ice Lake-X/D,
 * Knights Landing and Knights Mill (family 6).
 */
static bool vr_intel_fixed_dram_unit(u32 family, u32 model)
{
	static const u8 models[] = { 0x3f, 0x4f, 0x56, 0x55, 0x6a, 0x6c,
				     0x57, 0x85 };
	unsigned int i;

	if (family != 6)
		return false;
	for (i = 0; i < sizeof(models); i++)
		if (model == models[i])
			return true;
	return false;
}

/**
 * vr_rapl_decode() - domains, units and widths of a RAPL package
 * @v: vendor register set.
 * @r: what was read from the hardware.
 * @src: filled per domain.
 *
 * Return: mask of the domains present.  ESU is bits 12:8 of the unit
 * register; the counters are 32 bits wide.  AMD's core counters are per
 * core, not per package, so only its package counter is a domain here.
 */
u32 vr_rapl_decode(enum vr_rapl_vendor v, const struct vr_rapl_regs *r,
		   struct vr_dom_src *src)
{
	u32 esu = (r->unit >> 8) & 0x1f, doms = 0;

	if (!r->pkg)
		return 0;
	doms |= BIT(VR_DOM_PKG);
	if (v == VR_RAPL_INTEL && r->core)
		doms |= BIT(1);
	if (v == VR_RAPL_INTEL && r->dram)
		doms |= BIT(2);
	src[0].esu = esu;
	src[1].esu = esu;
	src[2].esu = vr_intel_fixed_dram_unit(r->family, r->model) ? 16 : esu;
	src[0].width = 32;
	src[1].width = 32;
	src[2].width = 32;
	return doms;
}

u64 vr_estimate_advance(struct vr_estimate *e, u64 dt_ns, u64 busy_ns)
{
	e->counter += vr_energy_eu(e->idle_uw, dt_ns, &e->rem);
	e->counter += vr_energy_eu(e->busy_uw, busy_ns, &e->rem);
	return e->counter;
}
