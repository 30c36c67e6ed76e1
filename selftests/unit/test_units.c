// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the core's unit helpers: wrap deltas, source units <-> eu
 * with the remainder carried, eu -> uJ, and power x time -> eu with the
 * remainder carried.  Expected values come from 128-bit arithmetic here,
 * never from the helpers under test.
 */
#include "vr_test.h"

#define ROUNDS	20000

static void test_wrap_delta(void)
{
	static const struct {
		u64 old, cur;
		u32 width;
		u64 exp;
	} c[] = {
		/* 32 bits: wraps at 0, 1 and 2^32 - 1 */
		{ 0xffffffffULL, 0, 32, 1 },
		{ 0xffffffffULL, 1, 32, 2 },
		{ 0xfffffffeULL, 0xffffffffULL, 32, 1 },
		{ 0, 0xffffffffULL, 32, 0xffffffffULL },
		{ 1, 0, 32, 0xffffffffULL },
		{ 1, 1, 32, 0 },
		{ 0, 0, 32, 0 },
		{ 0, 1, 32, 1 },
		{ 0x80000000ULL, 0x7fffffffULL, 32, 0xffffffffULL },
		{ 0xfffff000ULL, 0x00000fffULL, 32, 0x1fffULL },
		/* bits above the width are ignored */
		{ 0x1ffffffffULL, 0x300000000ULL, 32, 1 },
		{ 0xabcd00000005ULL, 0x1234000000004ULL, 32, 0xffffffffULL },
		/* 64 bits */
		{ ~0ULL, 0, 64, 1 },
		{ ~0ULL, 1, 64, 2 },
		{ 1, 0, 64, ~0ULL },
		{ 0, ~0ULL, 64, ~0ULL },
		{ 0, 0, 64, 0 },
		{ 0xffffffffULL, 0x100000000ULL, 64, 1 },
		/* other widths */
		{ 0xffff, 0, 16, 1 },
		{ 1, 0, 1, 1 },
		{ 0, 1, 1, 1 },
		{ (1ULL << 63) - 1, 0, 63, 1 },
	};
	unsigned int i, bad;
	u32 w;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		vt_eq(vr_wrap_delta(c[i].old, c[i].cur, c[i].width), c[i].exp,
		      "wrap_delta(%#llx, %#llx, %u)",
		      (unsigned long long)c[i].old,
		      (unsigned long long)c[i].cur, c[i].width);

	/* Random: cur = old + d mod 2^w gives back d, for every width. */
	for (w = 1; w <= 64; w++) {
		u64 m = vrm_mask(w), old = 0, d = 0, got = 0;

		bad = 0;
		for (i = 0; i < ROUNDS / 16 && !bad; i++) {
			old = vt_rand() & m;
			d = vt_rand() & m;
			if (i & 1)	/* around the wrap point */
				old = m - (vt_rand() & 0xff & m);
			got = vr_wrap_delta(old | (vt_rand() & ~m),
					    ((old + d) & m) | (vt_rand() & ~m),
					    w);
			bad = got != d;
		}
		if (!vt_ok(!bad, "wrap_delta random, width %u", w))
			vt_diag("expected %#llx got %#llx (old %#llx)",
				(unsigned long long)d,
				(unsigned long long)got,
				(unsigned long long)old);
	}
}

/* Converted parts of a random split add up to the converted whole. */
static void test_units_to_eu(void)
{
	u32 esu;

	for (esu = 0; esu <= 31; esu++) {
		unsigned int i, bad = 0;
		u64 exp_eu = 0, got_eu = 0;

		/* Single values against 128-bit arithmetic, carry 0 in. */
		for (i = 0; i < 1000 && !bad; i++) {
			u64 u = vt_rand() >> (esu <= VR_EU_SHIFT ?
					      VR_EU_SHIFT - esu + 1 : 1);
			u64 carry = 0;
			vt_u128 full = ((vt_u128)u << VR_EU_SHIFT) >> esu;

			got_eu = vr_units_to_eu(u, esu, &carry);
			exp_eu = (u64)full;
			if (got_eu != exp_eu)
				bad = 1;
			/* carry holds exactly what was not converted */
			if (esu > VR_EU_SHIFT &&
			    carry != (u & ((1ULL << (esu - VR_EU_SHIFT)) - 1)))
				bad = 2;
			if (esu <= VR_EU_SHIFT && carry)
				bad = 3;
		}
		if (!vt_ok(!bad, "units_to_eu esu %u single values", esu))
			vt_diag("expected %llu got %llu (case %u)",
				(unsigned long long)exp_eu,
				(unsigned long long)got_eu, bad);

		/* Random splits of a total, carry threaded through. */
		bad = 0;
		for (i = 0; i < 200 && !bad; i++) {
			u64 total = vt_rand() >> 34, left = total, carry = 0;
			u64 sum = 0, c2 = 0, whole;
			unsigned int parts = 0;

			while (left) {
				u64 piece = vt_range(0, left < 5000 ? left :
						     vt_below(2) ? 5000 : left);

				if (parts++ > 100000)
					piece = left;
				sum += vr_units_to_eu(piece, esu, &carry);
				left -= piece;
			}
			whole = vr_units_to_eu(total, esu, &c2);
			if (sum != whole || carry != c2) {
				bad = 1;
				exp_eu = whole;
				got_eu = sum;
			}
			/* and the whole is floor(total * 2^24 / 2^esu) */
			if (whole != (u64)(((vt_u128)total << VR_EU_SHIFT) >>
					   esu)) {
				bad = 2;
				exp_eu = (u64)(((vt_u128)total <<
						VR_EU_SHIFT) >> esu);
				got_eu = whole;
			}
		}
		if (!vt_ok(!bad, "units_to_eu esu %u carry over random splits",
			   esu))
			vt_diag("expected %llu got %llu (case %u)",
				(unsigned long long)exp_eu,
				(unsigned long long)got_eu, bad);
	}

	/* Carry in, exactly one eu comes out when the remainder completes. */
	{
		u64 carry = (1ULL << 6) - 1, got;

		got = vr_units_to_eu(1, 30, &carry);
		vt_ok(got == 1 && carry == 0,
		      "units_to_eu esu 30: carry 63 + 1 unit = 1 eu, carry 0");
	}
}

static void test_eu_to_units(void)
{
	u32 esu;

	for (esu = 0; esu <= 31; esu++) {
		unsigned int i, bad = 0;
		u64 eu = 0, got = 0, exp = 0;

		for (i = 0; i < 2000 && !bad; i++) {
			eu = vt_rand() >> 8;
			got = vr_eu_to_units(eu, esu);
			/* floor(eu * 2^esu / 2^24) */
			exp = (u64)(((vt_u128)eu << esu) >> VR_EU_SHIFT);
			if (got != exp)
				bad = 1;
			/*
			 * Round trip through the finer unit is the identity:
			 * units -> eu -> units when eu is finer, eu -> units
			 * -> eu when the source unit is.
			 */
			if (!bad) {
				u64 v = vt_rand() >> 40, c = 0, back;

				if (esu <= VR_EU_SHIFT)
					back = vr_eu_to_units(
						vr_units_to_eu(v, esu, &c), esu);
				else
					back = vr_units_to_eu(
						vr_eu_to_units(v, esu), esu, &c);
				if (back != v || c) {
					bad = 2;
					exp = v;
					got = back;
				}
			}
		}
		if (!vt_ok(!bad, "eu_to_units esu %u", esu))
			vt_diag("expected %llu got %llu (eu %llu, case %u)",
				(unsigned long long)exp,
				(unsigned long long)got,
				(unsigned long long)eu, bad);
	}
}

static void test_eu_to_uj(void)
{
	unsigned int i, bad = 0;
	u64 e = 0, got = 0, exp = 0;

	vt_eq(vr_eu_to_uj(1ULL << VR_EU_SHIFT), 1000000, "eu_to_uj(1 J)");
	vt_eq(vr_eu_to_uj(0), 0, "eu_to_uj(0)");
	vt_eq(vr_eu_to_uj(16), 0, "eu_to_uj(16 eu) = 0 (0.95 uJ, floor)");
	vt_eq(vr_eu_to_uj(17), 1, "eu_to_uj(17 eu) = 1 (1.01 uJ, floor)");
	vt_eq(vr_eu_to_uj(1ULL << 50), 67108864000000ULL, "eu_to_uj(2^26 J)");
	vt_eq(vr_eu_to_uj(~0ULL), 1099511627775999999ULL,
	      "eu_to_uj(2^64 - 1)");
	for (i = 0; i < ROUNDS && !bad; i++) {
		e = vt_rand() >> vt_below(64);
		got = vr_eu_to_uj(e);
		exp = (u64)((vt_u128)e * 1000000 >> VR_EU_SHIFT);
		bad = got != exp;
	}
	if (!vt_ok(!bad, "eu_to_uj random = floor(eu * 10^6 / 2^24)"))
		vt_diag("expected %llu got %llu (eu %llu)",
			(unsigned long long)exp, (unsigned long long)got,
			(unsigned long long)e);
}

static void test_energy_eu(void)
{
	unsigned int i, bad = 0;
	u64 rem = 0, got = 0, exp = 0;

	vt_eq(vr_energy_eu(1000000, VT_SEC, &rem), 1ULL << VR_EU_SHIFT,
	      "energy_eu(1 W, 1 s) = 2^24 eu");
	vt_eq(rem, 0, "energy_eu(1 W, 1 s) leaves no remainder");
	rem = 0;
	vt_eq(vr_energy_eu(40000000, VT_MS, &rem), 671088,
	      "energy_eu(40 W, 1 ms) = floor(671088.64)");
	rem = 0;
	vt_eq(vr_energy_eu(1, 1, &rem), 0, "energy_eu(1 uW, 1 ns) = 0");
	vt_ok(rem > 0, "energy_eu(1 uW, 1 ns) keeps its remainder");

	/* one value against 128-bit arithmetic */
	for (i = 0; i < ROUNDS && !bad; i++) {
		u64 uw = vt_below(1ULL << 39), ns = vt_below(1ULL << 40);

		rem = 0;
		got = vr_energy_eu(uw, ns, &rem);
		exp = (u64)(((vt_u128)uw << VR_EU_SHIFT) * ns / VT_FJ_PER_J);
		bad = got != exp ||
		      rem != (u64)(((vt_u128)uw << VR_EU_SHIFT) * ns %
				   VT_FJ_PER_J);
	}
	if (!vt_ok(!bad, "energy_eu random = floor(uw * ns * 2^24 / 10^15)"))
		vt_diag("expected %llu got %llu", (unsigned long long)exp,
			(unsigned long long)got);

	/* many small intervals == one big interval, exactly */
	bad = 0;
	for (i = 0; i < 200 && !bad; i++) {
		u64 uw = vt_range(1, 500000000), total = 0, sum = 0;
		u64 r1 = 0, r2 = 0, whole;
		unsigned int k, n = vt_range(1000, 20000);

		for (k = 0; k < n; k++) {
			u64 ns = vt_range(0, k & 1 ? 997 : 2000000);

			total += ns;
			sum += vr_energy_eu(uw, ns, &r1);
		}
		whole = vr_energy_eu(uw, total, &r2);
		if (sum != whole || r1 != r2) {
			bad = 1;
			exp = whole;
			got = sum;
		}
	}
	if (!vt_ok(!bad, "energy_eu: sum over small intervals == one interval"))
		vt_diag("expected %llu got %llu", (unsigned long long)exp,
			(unsigned long long)got);

	/* clamp: above 2^39 uW the power is capped, not wrapped */
	rem = 0;
	got = vr_energy_eu(~0ULL, VT_SEC, &rem);
	rem = 0;
	vt_eq(got, vr_energy_eu(1ULL << 39, VT_SEC, &rem),
	      "energy_eu clamps the power at 2^39 uW");
}

/*
 * Regression: above esu 24 a guest counter in units wraps at 2^64, and
 * vr_gv_compute() kept the larger of the old and the new value: once a
 * virtual package's energy reached 2^(64 - (esu - 24)) eu (2^57 eu,
 * 2^33 J, at esu 31) the counter stopped for good.  It advances modulo
 * 2^64, and the guest's low 32 bits go on by exactly the energy.
 */
static void test_gv_advance(void)
{
	const u64 eu0 = (1ULL << 57) - (1ULL << 20);
	u64 cur, next, eu, stuck = 0, bad = 0;
	unsigned int i;

	cur = 1 + vr_eu_to_units(eu0, 31);
	for (i = 1, eu = eu0; i <= 64; i++) {
		u64 step = 1ULL << 15, val;

		eu += step;
		val = 1 + vr_eu_to_units(eu, 31);
		next = vr_gv_advance(cur, val);
		stuck += next == cur;
		bad += ((next - cur) & 0xffffffffULL) != ((step << 7) &
							  0xffffffffULL);
		cur = next;
	}
	vt_ok(eu > 1ULL << 57, "the energy crossed 2^57 eu at esu 31");
	vt_eq(stuck, 0, "the counter never stops");
	vt_eq(bad, 0, "its low 32 bits move by the energy at every step");
	vt_eq(vr_gv_advance(10, 5), 10, "it never steps back");
	vt_eq(vr_gv_advance(5, 10), 10, "it steps forward");
	vt_eq(vr_gv_advance(~0ULL - 3, 2), 2, "across 2^64 forward");
	vt_eq(vr_gv_advance(2, ~0ULL - 3), 2, "across 2^64 back: held");
}

int main(void)
{
	vt_start("vmrapl core: unit helpers");
	vt_seed(0x756e697473ULL);
	test_wrap_delta();
	test_units_to_eu();
	test_eu_to_units();
	test_eu_to_uj();
	test_energy_eu();
	test_gv_advance();
	return vt_done();
}
