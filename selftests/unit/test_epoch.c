// SPDX-License-Identifier: GPL-2.0
/*
 * Epoch tests of the accounting core on one simulated 16-CPU package,
 * driven exactly like the kernel glue drives it (event, lazy close with
 * fold + read + commit).
 *
 * The lone busy vCPU: P_static = 40 W, one vCPU with 5 W of its own
 * dynamic power runs on one CPU, the 15 others are idle.  Expected charge:
 *   VR_STATIC_OCCUPIED  5 W + 40 W / 16 = 7.5 W
 *   VR_STATIC_BUSY      everything, 45 W
 *   VR_STATIC_NONE      5 W
 * An idle package charges everything to idle.  Conservation is exact in
 * every case: tracked + host + idle + lost == sampled per domain, and the
 * accounts add up to tracked.
 */
#include "vr_test.h"

#define NCPU		16
#define P_STATIC	40000000ULL	/* uW */
#define P_VCPU		5000000ULL
#define P_HOST		3000000ULL
#define DRAM_STATIC	4000000ULL
#define DRAM_VCPU	1000000ULL

enum { RUN_IDLE, RUN_VCPU, RUN_HOST };

struct src_cfg {
	const char *name;
	u32 esu, width;
	u64 step, jitter;
	bool dram;
};

struct host {
	struct vr_pkg p;
	struct vr_cpu cpu[NCPU];
	struct vr_cpu *cpus[NCPU];
	struct vr_acct vcpu;
	struct vrm_rapl pkg_ctr, dram_ctr;
	int run[NCPU];
	bool dram;
	u64 now;		/* of the close in progress */
	u64 closes;
	int bad_conservation;
	int bad_tracked;
};

static u64 pkg_power(const struct host *h)
{
	u64 uw = P_STATIC;
	int i;

	for (i = 0; i < NCPU; i++)
		uw += h->run[i] == RUN_VCPU ? P_VCPU :
		      h->run[i] == RUN_HOST ? P_HOST : 0;
	return uw;
}

static u64 dram_power(const struct host *h)
{
	u64 uw = DRAM_STATIC;
	int i;

	for (i = 0; i < NCPU; i++)
		uw += h->run[i] == RUN_VCPU ? DRAM_VCPU : 0;
	return uw;
}

static void check(struct host *h)
{
	struct vr_pkg_stats st[VR_NDOM];
	unsigned int d;

	vr_pkg_read_stats(&h->p, st, VR_NDOM);
	if (!vt_conserved(st, VR_NDOM))
		h->bad_conservation++;
	/* the only account is the vCPU: it holds all of tracked */
	for (d = 0; d < VR_NDOM; d++)
		if (h->vcpu.energy[d] != st[d].tracked)
			h->bad_tracked++;
}

/* The vr_read_fn of the host: PKG, and DRAM if it has one. */
static u32 read_ctrs(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct host *h = ctx;

	(void)dt;
	(void)busy;
	raw[0] = vrm_read(&h->pkg_ctr, h->now);
	if (h->dram)
		raw[2] = vrm_read(&h->dram_ctr, h->now);
	return h->dram ? 0x5 : 0x1;
}

static void maybe_close(struct host *h, u64 now)
{
	if (!vr_pkg_stale(&h->p, now))
		return;
	h->now = now;
	if (!vr_pkg_try_close(&h->p, now, read_ctrs, h))
		return;
	h->closes++;
	check(h);
}

/* A scheduling event on @cpu: from now on it runs @what. */
static void event(struct host *h, int cpu, u64 now, int what)
{
	bool busy = what != RUN_IDLE;
	struct vr_acct *a = what == RUN_VCPU ? &h->vcpu : NULL;
	struct vr_cpu *c = &h->cpu[cpu];

	/* the truth changes at the same instant */
	h->run[cpu] = what;
	vrm_set_power(&h->pkg_ctr, now, pkg_power(h));
	if (h->dram)
		vrm_set_power(&h->dram_ctr, now, dram_power(h));
	if (vr_cpu_event_needed(c, busy, a))
		vr_cpu_event(c, now, busy, a);
	maybe_close(h, now);
}

static void host_init(struct host *h, const struct src_cfg *s, u8 policy,
		      u64 t0)
{
	int i;

	memset(h, 0, sizeof(*h));
	h->dram = s->dram;
	for (i = 0; i < NCPU; i++)
		h->cpus[i] = &h->cpu[i];
	vr_pkg_init(&h->p, h->cpus, NCPU, VT_MS, 200000000ULL);
	vr_pkg_set_domain(&h->p, 0, s->esu, s->width);
	if (s->dram)
		vr_pkg_set_domain(&h->p, 2, 16, 32);
	vr_pkg_set_static(&h->p, P_STATIC, VR_STATIC_PARAM);
	h->p.policy = policy;
	vt_rapl_init(&h->pkg_ctr, s->esu, s->width, s->step, s->jitter,
		     vt_rand() & vrm_mask(s->width), t0);
	vt_rapl_init(&h->dram_ctr, 16, 32, s->step, s->jitter,
		     vt_rand() & 0xffffffffULL, t0);
	vrm_follow(&h->dram_ctr, &h->pkg_ctr);
	for (i = 0; i < NCPU; i++) {
		vr_cpu_init(&h->cpu[i], &h->p);
		vr_lock(&h->p.close_lock);
		vr_cpu_online(&h->cpu[i], t0, false);
		vr_unlock(&h->p.close_lock);
	}
	vrm_set_power(&h->pkg_ctr, t0, pkg_power(h));
	vrm_set_power(&h->dram_ctr, t0, dram_power(h));
}

/*
 * Runs [t0, t0 + dur): CPU 0 runs the vCPU (if @vcpu) with an exit and
 * re-entry every 0.1-0.9 ms, CPU 1 a host task (if @hosttask), the others
 * wake into their idle loop every 0.5-4 ms.  Energies are measured between
 * the first close after t0 + warm and the last close.
 */
struct result {
	double vcpu_w, host_w, idle_w, sampled_w, dram_vcpu_w, dram_w;
	double window_s;
	u64 closes;
	int bad_conservation, bad_tracked;
};

static void run(const struct src_cfg *s, u8 policy, bool vcpu, bool hosttask,
		u64 dur, struct result *res)
{
	static struct host h;
	struct vr_pkg_stats st0[VR_NDOM], st1[VR_NDOM];
	u64 next[NCPU], t0 = 0, warm = VT_SEC, now, tw0 = 0, tw1 = 0;
	u64 e0 = 0, e1 = 0, d0 = 0, d1 = 0, closes_seen = 0;
	int i;

	host_init(&h, s, policy, t0);
	for (i = 0; i < NCPU; i++)
		next[i] = t0 + vt_range(1000, 500000);
	for (;;) {
		int cpu = 0;

		for (i = 1; i < NCPU; i++)
			if (next[i] < next[cpu])
				cpu = i;
		now = next[cpu];
		if (now >= t0 + dur)
			break;
		if (cpu == 0 && vcpu) {
			event(&h, 0, now, RUN_VCPU);
			next[0] = now + vt_range(100000, 900000);
		} else if (cpu == 1 && hosttask) {
			event(&h, 1, now, RUN_HOST);
			next[1] = now + vt_range(100000, 900000);
		} else {
			event(&h, cpu, now, RUN_IDLE);
			next[cpu] = now + vt_range(500000, 4000000);
		}
		if (h.closes != closes_seen) {
			closes_seen = h.closes;
			if (!tw0 && now >= t0 + warm) {
				tw0 = now;
				vr_pkg_read_stats(&h.p, st0, VR_NDOM);
				e0 = h.vcpu.energy[0];
				d0 = h.vcpu.energy[2];
			}
			tw1 = now;
			vr_pkg_read_stats(&h.p, st1, VR_NDOM);
			e1 = h.vcpu.energy[0];
			d1 = h.vcpu.energy[2];
		}
	}
	res->window_s = (double)(tw1 - tw0) / 1e9;
	res->vcpu_w = vt_eu_j(e1 - e0) / res->window_s;
	res->host_w = vt_eu_j(st1[0].host - st0[0].host) / res->window_s;
	res->idle_w = vt_eu_j(st1[0].idle - st0[0].idle) / res->window_s;
	res->sampled_w = vt_eu_j(st1[0].sampled - st0[0].sampled) /
			 res->window_s;
	res->dram_vcpu_w = vt_eu_j(d1 - d0) / res->window_s;
	res->dram_w = vt_eu_j(st1[2].sampled - st0[2].sampled) / res->window_s;
	res->closes = h.closes;
	res->bad_conservation = h.bad_conservation;
	res->bad_tracked = h.bad_tracked;
}


/*
 * vr_cpu_purge() of the account a CPU charges: its time so far stays the
 * account's, the CPU charges nothing from then on, and its gate says so
 * (a gate left slow would only cost the next switch a lookup; one left
 * quiet with an account would be wrong, but purge only ever clears).
 */
static void test_purge(void)
{
	static const struct src_cfg s = { "purge", 24, 64, 1000, 0, false };
	static struct host h;
	const u64 t0 = VT_SEC;
	struct vr_cpu *c = &h.cpu[0];

	host_init(&h, &s, VR_STATIC_OCCUPIED, t0);
	event(&h, 0, t0 + VT_MS / 10, RUN_VCPU);
	vt_ok(c->cur == &h.vcpu && c->gate == VR_GATE_SLOW,
	      "purge: a CPU that charges an account has a slow gate");
	vr_cpu_purge(c, t0 + VT_MS * 6 / 10, &h.vcpu, &h.vcpu + 1);
	vt_ok(!c->cur && c->busy, "purge: the CPU charges nothing, still busy");
	vt_eq(c->gate, 0, "purge: its gate is a busy, quiet CPU's");
	vt_ok(!vr_cpu_event_needed(c, true, NULL),
	      "purge: a switch to a host task then changes nothing");
	vr_cpu_purge(c, t0 + VT_MS * 7 / 10, &h.vcpu + 1, &h.vcpu + 2);
	vt_eq(c->gate, 0, "purge of another range: nothing changes");
}

int main(void)
{
	static const struct src_cfg srcs[] = {
		/* like the module's test source: fine, no wrap, 1 us steps */
		{ "test source esu 24/64-bit", 24, 64, 1000, 0, false },
		/* like hardware: 61 uJ, 32 bits, ~1 ms steps, plus DRAM */
		{ "hw-like esu 14/32-bit/1ms", 14, 32, 976563, 50000, true },
	};
	/*
	 * Measured over 10 s: the window edges are off by at most the
	 * counter's update step on each side, plus the static debt carried
	 * across the edge (a few epochs of static power).
	 */
	const u64 dur = 11 * VT_SEC;
	unsigned int si;
	u8 pol;

	vt_start("vmrapl core: epochs, the lone busy vCPU, idle package");
	vt_seed(0x65706f6368ULL);
	test_purge();

	for (si = 0; si < 2; si++) {
		const struct src_cfg *s = &srcs[si];
		double tol = si ? 0.02 : 0.0005;	/* W over 10 s */

		for (pol = 0; pol < VR_STATIC_NR; pol++) {
			static const double exp_w[] = { 7.5, 45.0, 5.0 };
			struct result r;

			run(s, pol, true, false, dur, &r);
			vt_diag("%s, %s: vCPU %.6f W, host %.6f W, idle %.6f W,"
				" sampled %.6f W over %.3f s, %llu closes",
				s->name, vr_policy_names[pol], r.vcpu_w, r.host_w,
				r.idle_w, r.sampled_w, r.window_s,
				(unsigned long long)r.closes);
			vt_near(r.vcpu_w, exp_w[pol], tol,
				"%s, lone vCPU, %s: charged %.1f W", s->name,
				vr_policy_names[pol], exp_w[pol]);
			vt_near(r.idle_w, 45.0 - exp_w[pol], tol,
				"%s, lone vCPU, %s: idle gets the rest",
				s->name, vr_policy_names[pol]);
			vt_near(r.host_w, 0, 1e-9,
				"%s, lone vCPU, %s: nothing to host", s->name,
				vr_policy_names[pol]);
			vt_near(r.sampled_w, 45.0, tol,
				"%s, lone vCPU, %s: sampled 45 W", s->name,
				vr_policy_names[pol]);
			vt_eq(r.bad_conservation, 0,
			      "%s, lone vCPU, %s: conservation after every close",
			      s->name, vr_policy_names[pol]);
			vt_eq(r.bad_tracked, 0,
			      "%s, lone vCPU, %s: account == tracked", s->name,
			      vr_policy_names[pol]);
			if (s->dram) {
				/* DRAM follows the PKG split: 5 W x share */
				double share = exp_w[pol] / 45.0;

				vt_near(r.dram_w, 5.0, tol,
					"%s, %s: DRAM sampled 5 W", s->name,
					vr_policy_names[pol]);
				vt_near(r.dram_vcpu_w, 5.0 * share, tol,
					"%s, %s: DRAM share follows the PKG split",
					s->name, vr_policy_names[pol]);
			}

			/* idle package: everything to idle */
			run(s, pol, false, false, dur, &r);
			vt_near(r.idle_w, 40.0, tol,
				"%s, idle package, %s: all 40 W to idle",
				s->name, vr_policy_names[pol]);
			vt_ok(r.vcpu_w == 0 && r.host_w == 0,
			      "%s, idle package, %s: nothing charged",
			      s->name, vr_policy_names[pol]);
			vt_eq(r.bad_conservation, 0,
			      "%s, idle package, %s: conservation", s->name,
			      vr_policy_names[pol]);
		}

		/*
		 * A 3 W host task next to the 5 W vCPU, occupied: the core
		 * splits dynamic energy by busy time, so each of the two
		 * gets (5 + 3) / 2 W + 2.5 W static.
		 */
		{
			struct result r;

			run(s, VR_STATIC_OCCUPIED, true, true, dur, &r);
			vt_near(r.vcpu_w, 6.5, tol,
				"%s, vCPU + host task, occupied: vCPU 6.5 W",
				s->name);
			vt_near(r.host_w, 6.5, tol,
				"%s, vCPU + host task, occupied: host 6.5 W",
				s->name);
			vt_near(r.idle_w, 35.0, tol,
				"%s, vCPU + host task, occupied: idle 35 W",
				s->name);
			vt_eq(r.bad_conservation + r.bad_tracked, 0,
			      "%s, vCPU + host task: conservation", s->name);
		}
	}
	return vt_done();
}
