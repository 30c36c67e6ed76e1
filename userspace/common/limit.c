// SPDX-License-Identifier: MIT
/* A per-VM power limit held through CFS bandwidth control: see limit.h. */
#include <errno.h>

#include "limit.h"

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_USEC	1000ULL

/* Defaults of the tunables (limit.h says what each does). */
#define ALPHA_SHIFT	2
#define KI_SHIFT	2
#define KEEP_SHIFT	2
#define REPAY_SHIFT	0
#define DEADBAND_SHIFT	63
/* A tick shows the gain only if the VM ran for 1/64 of a CPU in it. */
#define MIN_CPU_SHIFT	6

/*
 * floor(@a x @b / @c), the product in 128 bits (two 64-bit halves, so that
 * it stays C99); UINT64_MAX when the quotient does not fit or @c is 0.
 */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t al = a & 0xffffffffULL, ah = a >> 32;
	uint64_t bl = b & 0xffffffffULL, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffULL) +
		       (hl & 0xffffffffULL);
	uint64_t lo = (ll & 0xffffffffULL) | (mid << 32);
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	uint64_t q = 0, r = hi;
	int i;

	if (!c || hi >= c)
		return UINT64_MAX;
	if (!hi)
		return lo / c;
	/* restoring division of hi:lo by c, one bit at a time */
	for (i = 63; i >= 0; i--) {
		uint64_t top = r >> 63;

		r = r << 1 | (lo >> i & 1);
		q <<= 1;
		if (top || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}

/* The limit's energy over @ns, uJ (uW x ns / 10^9). */
static uint64_t limit_uj(uint64_t limit_uw, uint64_t ns)
{
	return mul_div(limit_uw, ns, NSEC_PER_SEC);
}

static bool limit_ok(uint64_t limit_uw)
{
	return limit_uw >= VR_LIMIT_MIN_UW && limit_uw <= VR_LIMIT_MAX_UW;
}

int vr_limit_init(struct vr_limit *l, uint64_t limit_uw, uint64_t window_ns,
		  uint64_t tick_ns, uint64_t period_ns, uint32_t max_cpus)
{
	uint64_t n;
	uint32_t i;

	if (!limit_ok(limit_uw) || !max_cpus || max_cpus > VR_LIMIT_MAX_CPUS)
		return -EINVAL;
	if (period_ns < VR_LIMIT_MIN_PERIOD_NS ||
	    period_ns > VR_LIMIT_MAX_PERIOD_NS || period_ns % NSEC_PER_USEC)
		return -EINVAL;
	if (!tick_ns || tick_ns % period_ns)
		return -EINVAL;
	if (!window_ns || window_ns > VR_LIMIT_MAX_WINDOW_NS ||
	    window_ns % tick_ns)
		return -EINVAL;
	n = window_ns / tick_ns;
	if (n < 2 || n > VR_LIMIT_RING)
		return -EINVAL;

	*l = (struct vr_limit){
		.limit_uw = limit_uw, .window_ns = window_ns,
		.tick_ns = tick_ns, .period_ns = period_ns,
		.max_cpus = max_cpus, .nticks = (uint32_t)n,
		.quota_ns = VR_LIMIT_NO_QUOTA,
		.alpha_shift = ALPHA_SHIFT, .ki_shift = KI_SHIFT,
		.keep_shift = KEEP_SHIFT, .repay_shift = REPAY_SHIFT,
		.deadband_shift = DEADBAND_SHIFT,
	};
	/* a window exactly at the limit before the first tick */
	for (i = 0; i < l->nticks; i++) {
		l->ring_uj[i] = limit_uj(limit_uw, tick_ns);
		l->ring_us[i] = (uint32_t)(tick_ns / NSEC_PER_USEC);
	}
	l->target_uj = (int64_t)limit_uj(limit_uw, tick_ns);
	l->plan_uj = l->target_uj;
	return 0;
}

/* @x / 2^@shift, rounded toward 0 (no shift of a negative number). */
static int64_t sdiv_pow2(int64_t x, unsigned int shift)
{
	if (shift >= 63)
		return 0;
	return x / ((int64_t)1 << shift);
}

/* @x x @num / @den for a signed @x. */
static int64_t smul_div(int64_t x, uint64_t num, uint64_t den)
{
	uint64_t m = mul_div(x < 0 ? (uint64_t)-x : (uint64_t)x, num, den);

	if (m > INT64_MAX)
		m = INT64_MAX;
	return x < 0 ? -(int64_t)m : (int64_t)m;
}

static uint64_t plan_quota(struct vr_limit *l);

int vr_limit_set(struct vr_limit *l, uint64_t limit_uw, uint64_t *quota_ns)
{
	uint32_t i;

	if (!limit_ok(limit_uw))
		return -EINVAL;
	/* a window exactly at the new limit: nothing saved, nothing owed */
	for (i = 0; i < l->nticks; i++)
		l->ring_uj[i] = limit_uj(limit_uw, (uint64_t)l->ring_us[i] *
					 NSEC_PER_USEC);
	l->integ_uj = smul_div(l->integ_uj, limit_uw, l->limit_uw);
	l->limit_uw = limit_uw;
	l->target_uj = (int64_t)limit_uj(limit_uw, l->tick_ns);
	l->plan_uj = l->target_uj + l->integ_uj;
	if (l->plan_uj < 0)
		l->plan_uj = 0;
	if (quota_ns)
		*quota_ns = plan_quota(l);
	else
		plan_quota(l);
	return 0;
}

/* What ring entry @k saved against the limit (negative: overspent), uJ. */
static int64_t saved(const struct vr_limit *l, uint32_t k)
{
	return (int64_t)limit_uj(l->limit_uw, (uint64_t)l->ring_us[k] *
				 NSEC_PER_USEC) - (int64_t)l->ring_uj[k];
}

/*
 * What the last @l->nticks - 1 ticks saved against the limit, uJ: the
 * ticks that stay in the window after the next one (the oldest entry,
 * @head, leaves it then).
 */
static int64_t window_savings(const struct vr_limit *l)
{
	int64_t s = 0;
	uint32_t i;

	for (i = 1; i < l->nticks; i++)
		s += saved(l, (l->head + i) % l->nticks);
	return s;
}

/* A quota in ns per period: whole microseconds, at least cpu.max's least. */
static uint64_t quota_round(uint64_t q)
{
	q -= q % NSEC_PER_USEC;
	return q < VR_LIMIT_MIN_QUOTA_NS ? VR_LIMIT_MIN_QUOTA_NS : q;
}

/* Energy capped at 2^48 uJ (281 MJ a tick): the sums stay in 64 bits. */
static uint64_t energy_of(const struct vr_limit_sample *s)
{
	return s->energy_uj > (1ULL << 48) ? 1ULL << 48 : s->energy_uj;
}

/*
 * The gain from a sample: energy per CPU-second, where the VM ran enough.
 * The gain matters where the quota binds, and a light tick's energy per
 * CPU-second carries whatever part of the VM's power does not go with
 * its CPU time, spread over little CPU time: under a quota, only the
 * ticks it bound teach the gain; released, a tick weighs by the share of
 * all the VM's CPUs it used.
 */
static void learn_gain(struct vr_limit *l, const struct vr_limit_sample *s,
		       bool binding)
{
	uint64_t k, allowed;
	int64_t d;

	if (!s->cpu_ns || s->cpu_ns < s->dt_ns >> MIN_CPU_SHIFT)
		return;
	k = mul_div(energy_of(s), NSEC_PER_SEC, s->cpu_ns);
	if (!l->k_uw) {
		l->k_uw = k ? k : 1;
		return;
	}
	/* one odd tick moves it by at most 4x's share */
	if (k > 4 * l->k_uw)
		k = 4 * l->k_uw;
	if (k < l->k_uw / 4)
		k = l->k_uw / 4;
	d = sdiv_pow2((int64_t)k - (int64_t)l->k_uw, l->alpha_shift);
	if (!binding) {
		if (l->quota_ns != VR_LIMIT_NO_QUOTA)
			return;
		allowed = (uint64_t)l->max_cpus * s->dt_ns;
		if (s->cpu_ns < allowed)
			d = smul_div(d, s->cpu_ns, allowed);
	}
	l->k_uw = (uint64_t)((int64_t)l->k_uw + d);
	if (!l->k_uw)
		l->k_uw = 1;
}

uint64_t vr_limit_prime(struct vr_limit *l, const struct vr_limit_sample *s)
{
	if (!s->dt_ns)
		return l->quota_ns;
	learn_gain(l, s, true);
	l->target_uj = (int64_t)limit_uj(l->limit_uw, l->tick_ns);
	l->plan_uj = l->target_uj + l->integ_uj;
	return plan_quota(l);
}

uint64_t vr_limit_tick(struct vr_limit *l, const struct vr_limit_sample *s)
{
	uint64_t e = energy_of(s), dt = s->dt_ns, ref_next;
	int64_t err, target, plan, save, bound;
	bool binding = false;

	if (!dt)
		return l->quota_ns;

	/* the ring: this tick replaces the oldest */
	l->ring_uj[l->head] = e;
	l->ring_us[l->head] = dt / NSEC_PER_USEC > UINT32_MAX ? UINT32_MAX :
			      (uint32_t)(dt / NSEC_PER_USEC);
	l->head = (l->head + 1) % l->nticks;

	/*
	 * Was the quota in force binding?  Throttled time says so; without
	 * it, CPU time at 15/16 of the quota does.
	 */
	if (l->quota_ns != VR_LIMIT_NO_QUOTA) {
		if (s->throttled_ns != VR_LIMIT_NO_QUOTA)
			binding = s->throttled_ns > 0;
		else
			binding = s->cpu_ns >= mul_div(l->quota_ns, dt,
						       l->period_ns) / 16 * 15;
	}
	learn_gain(l, s, binding);

	/*
	 * Integral action on the model's error: the tick's energy against
	 * the target it was given, for the length it had (not against the
	 * limit: a tick that spends what the window saved is no error).  Only
	 * where it cannot wind up: while the quota binds (a VM that did not
	 * use its quota was not held by it), or when the VM drew more than
	 * its target; frozen while released.
	 */
	ref_next = limit_uj(l->limit_uw, l->tick_ns);
	err = smul_div(l->target_uj, dt, l->tick_ns) - (int64_t)e;
	if (l->quota_ns != VR_LIMIT_NO_QUOTA && (binding || err < 0)) {
		bound = (int64_t)ref_next;
		l->integ_uj += sdiv_pow2(err, l->ki_shift);
		if (l->integ_uj > bound)
			l->integ_uj = bound;
		if (l->integ_uj < -bound)
			l->integ_uj = -bound;
	}

	/*
	 * The next tick's target: the limit's energy, what the window saved
	 * but the part kept back (a quarter), what it overspent repaid (at
	 * once); its plan, what the quota is computed for: the target and the
	 * integral.
	 */
	save = window_savings(l);
	target = (int64_t)ref_next + (save > 0 ?
		 save - sdiv_pow2(save, l->keep_shift) :
		 sdiv_pow2(save, l->repay_shift));
	if (target < 0)
		target = 0;
	l->target_uj = target;
	plan = target + l->integ_uj;
	l->plan_uj = plan < 0 ? 0 : plan;
	return plan_quota(l);
}

/* The quota that spends @l->plan_uj over the next tick at the gain. */
static uint64_t plan_quota(struct vr_limit *l)
{
	uint64_t q, full;

	/* no gain seen yet: nothing to base a quota on */
	if (!l->k_uw)
		return l->quota_ns = VR_LIMIT_NO_QUOTA;

	/* CPU ns for the next tick at the gain, then per period */
	q = mul_div((uint64_t)l->plan_uj, NSEC_PER_SEC, l->k_uw);
	q = mul_div(q, l->period_ns, l->tick_ns);
	full = (uint64_t)l->max_cpus * l->period_ns;

	/* released while the plan exceeds all the CPUs (hysteresis 1/8) */
	if (l->quota_ns == VR_LIMIT_NO_QUOTA ? q >= full :
	    q >= full + full / 8)
		return l->quota_ns = VR_LIMIT_NO_QUOTA;
	if (q > full)
		q = full;
	q = quota_round(q);

	/* a correction under the deadband is not worth a write */
	if (l->quota_ns != VR_LIMIT_NO_QUOTA && l->deadband_shift < 63) {
		uint64_t d = q > l->quota_ns ? q - l->quota_ns :
			     l->quota_ns - q;

		if (d <= l->quota_ns >> l->deadband_shift)
			return l->quota_ns;
	}
	return l->quota_ns = q;
}

uint64_t vr_limit_static_quota(uint64_t uw_per_cpu, uint64_t limit_uw,
			       uint64_t period_ns, uint32_t max_cpus)
{
	uint64_t q, full = (uint64_t)max_cpus * period_ns;

	if (!uw_per_cpu)
		return VR_LIMIT_NO_QUOTA;
	q = mul_div(limit_uw, period_ns, uw_per_cpu);
	if (q >= full)
		return VR_LIMIT_NO_QUOTA;
	return quota_round(q);
}
