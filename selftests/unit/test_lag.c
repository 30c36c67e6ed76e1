// SPDX-License-Identifier: GPL-2.0
/*
 * The counter-lag share of the accounting core, on hand-computed epochs.
 *
 * A 4-CPU package with an exact, injected counter (1 unit = 1 eu, 64-bit)
 * and P_static = 0, so that every eu is dynamic.  The default lag of
 * vr_pkg_init() is 0.5 ms and most epochs below last 1 ms, so a busy
 * epoch that follows a busy one gives the accounts of that one what its
 * reads have not shown yet (the busy CPU-ns of its lag window, on average
 * over a lag uniform in [0, 1) ms) at the dynamic power of what its
 * delta showed (at most all of the new epoch's dynamic energy), weighted
 * by their busy ns in it; an idle epoch gives all of it, while the list
 * is kept (idle closes within 2 ms of the busy close that made it), and
 * keeps what its own read has still not shown for the next busy epoch.
 * Checked exactly, per account and per bucket: the share, its weights, the
 * DRAM domain following PKG, the window, a lost epoch clearing the list,
 * vr_pkg_forget(), no lag at lag_ns 0, a burst's lagging end read in a
 * mostly idle epoch, where a share of that epoch's own energy went mostly
 * to the one account still running, a burst's end still unseen after a
 * short idle epoch, where a share of the next epoch's energy went mostly
 * to the task that ran then, and a steady load after a late first read,
 * where a power taken from what the last share left made the error flip
 * sides every epoch, and epochs shorter than the counter's step, whose
 * reads showed none of them, before one that shows them.
 *
 * Energies are chosen so that every share is a whole number of eu: the
 * result does not depend on the order of the lists.
 */
#include "vr_test.h"

#define NCPU	4

static struct vr_pkg p;
static struct vr_cpu cpu[NCPU];
static struct vr_cpu *cpus[NCPU];
static struct vr_acct A, B;
static u64 raw[VR_NDOM], t_ms;
static struct vr_pkg_stats prev_st[VR_NDOM];
static u64 prev_a[VR_NDOM], prev_b[VR_NDOM];

static void setup(bool lag)
{
	int i;

	memset(&p, 0, sizeof(p));
	memset(cpu, 0, sizeof(cpu));
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	memset(prev_st, 0, sizeof(prev_st));
	memset(prev_a, 0, sizeof(prev_a));
	memset(prev_b, 0, sizeof(prev_b));
	for (i = 0; i < NCPU; i++)
		cpus[i] = &cpu[i];
	vr_pkg_init(&p, cpus, NCPU, VT_MS, 500000000ULL);
	if (!lag)
		p.lag_ns = 0;
	vr_pkg_set_domain(&p, 0, VR_EU_SHIFT, 64);
	vr_pkg_set_domain(&p, 2, VR_EU_SHIFT, 64);
	vr_pkg_set_static(&p, 0, VR_STATIC_PARAM);
	for (i = 0; i < NCPU; i++) {
		vr_cpu_init(&cpu[i], &p);
		vr_cpu_online(&cpu[i], 0, false);
	}
	raw[0] = 1000;
	raw[2] = 100;
	t_ms = 0;
}

/* At @t_us, CPU @c runs @a (busy), or a host task (!a, busy), or idles. */
static void ev(int c, u64 t_us, bool busy, struct vr_acct *a)
{
	vr_cpu_event(&cpu[c], t_us * 1000, busy, a);
}

/* The vr_read_fn: the injected counters, with *@ctx the domains read. */
static u32 read_raw(void *ctx, u64 *out, u64 dt, u64 busy)
{
	(void)dt;
	(void)busy;
	memcpy(out, raw, sizeof(raw));
	return *(u32 *)ctx;
}

/* Closes the epoch ending at @t_us, @valid domains read. */
static void close_at(u64 t_us, u32 valid)
{
	vr_lock(&p.close_lock);
	vr_pkg_close_locked(&p, t_us * 1000, read_raw, &valid);
	vr_unlock(&p.close_lock);
}

/* Closes the epoch ending at the next ms, @valid domains read. */
static void close_valid(u32 valid)
{
	t_ms++;
	close_at(t_ms * 1000, valid);
}

/* Closes the epoch ending at @t_us; the counters moved by @pkg, @dram. */
static void close_us(u64 t_us, u64 pkg, u64 dram)
{
	raw[0] += pkg;
	raw[2] += dram;
	close_at(t_us, BIT(0) | BIT(2));
}

/* Closes the epoch ending at the next ms; the counters moved by @pkg, @dram. */
static void close_ms(u64 pkg, u64 dram)
{
	raw[0] += pkg;
	raw[2] += dram;
	close_valid(BIT(0) | BIT(2));
}

/* What the last close gave: A, B, host, idle, lost (PKG, then DRAM). */
static void expect(const char *what, u64 a, u64 b, u64 host, u64 idle,
		   u64 lost, u64 a2, u64 b2, u64 host2)
{
	struct vr_pkg_stats st[VR_NDOM];
	u64 ga = A.energy[0] - prev_a[0], gb = B.energy[0] - prev_b[0];
	u64 ga2 = A.energy[2] - prev_a[2], gb2 = B.energy[2] - prev_b[2];
	bool ok;

	vr_pkg_read_stats(&p, st, VR_NDOM);
	ok = ga == a && gb == b && st[0].host - prev_st[0].host == host &&
	     st[0].idle - prev_st[0].idle == idle &&
	     st[0].lost - prev_st[0].lost == lost && ga2 == a2 &&
	     gb2 == b2 && st[2].host - prev_st[2].host == host2 &&
	     vt_conserved(st, VR_NDOM);
	if (!vt_ok(ok, "%s", what))
		vt_diag("A %llu B %llu host %llu idle %llu lost %llu, DRAM A "
			"%llu B %llu host %llu", (unsigned long long)ga,
			(unsigned long long)gb,
			(unsigned long long)(st[0].host - prev_st[0].host),
			(unsigned long long)(st[0].idle - prev_st[0].idle),
			(unsigned long long)(st[0].lost - prev_st[0].lost),
			(unsigned long long)ga2, (unsigned long long)gb2,
			(unsigned long long)(st[2].host - prev_st[2].host));
	memcpy(prev_st, st, sizeof(st));
	memcpy(prev_a, A.energy, sizeof(prev_a));
	memcpy(prev_b, B.energy, sizeof(prev_b));
}

/*
 * A fresh package; after an idle epoch, A and B run on CPUs 0 and 1 from
 * 2 ms at 1 eu/ns each, and the 4 ms close reads them until 3.5 ms.
 */
static void burst_after_idle(void)
{
	setup(true);
	close_ms(0, 0);
	close_ms(0, 0);
	ev(0, 2000, true, &A);
	ev(1, 2000, true, &B);
	t_ms++;
	close_ms(3000000, 300);
	expect("a burst after an idle epoch, read 0.5 ms late", 1500000,
	       1500000, 0, 0, 0, 150, 150, 0);
}

int main(void)
{
	vt_start("vmrapl core: the counter-lag share, exact");

	setup(true);
	vt_eq(p.lag_ns, 500000, "vr_pkg_init(): lag of half a 1 ms step");
	close_ms(0, 0);
	expect("first sample: a baseline, lost", 0, 0, 0, 0, 0, 0, 0, 0);

	/*
	 * [1, 2) ms: A runs 1 ms on CPU 0, to the close; B 0.5 ms on CPU 1,
	 * idle from 1.5 ms.  Unseen at the close, on average over the lag
	 * (uniform over [0, 1) ms): A's last 0.5 ms, and of B's run what a
	 * lag over 0.5 ms reaches back, 0.125 ms: 0.625 ms.
	 */
	ev(0, 1000, true, &A);
	ev(1, 1000, true, &B);
	ev(1, 1500, false, NULL);
	close_ms(2100000, 210);
	expect("busy epoch, no list yet: all to its accounts by ns",
	       1400000, 700000, 0, 0, 0, 140, 70, 0);
	vt_ok(p.prev_busy == 1500000 && p.prev_t == 2 * VT_MS,
	      "the lag list: 1.5 ms of busy time, closed at 2 ms");
	vt_ok(p.prev_tail == 625000 && p.prev_seen == 875000 &&
	      p.prev_dyn == 2100000,
	      "its unseen busy time: 0.625 ms, the rest seen at 2.4 eu/ns");

	/* [2, 3) ms: a host task on CPU 2, A and B idle */
	ev(0, 2000, false, NULL);
	ev(2, 2000, true, NULL);
	close_ms(6000000, 600);
	expect("busy after busy: the 0.625 ms unseen at the last epoch's "
	       "power to the list, 2:1", 1000000, 500000, 4500000, 0, 0,
	       100, 50, 450);

	/* [3, 4) .. [6, 7) ms: idle; the list (host time only) is kept */
	ev(2, 3000, false, NULL);
	close_ms(500000, 50);
	expect("idle 1 ms after: all to the list (host time: host)",
	       0, 0, 500000, 0, 0, 0, 0, 50);
	close_ms(500000, 50);
	expect("idle 2 ms after: all to the list", 0, 0, 500000, 0, 0,
	       0, 0, 50);
	/* the list was kept at the 5 ms close (2 ms after the busy one) */
	close_ms(500000, 50);
	expect("idle epoch starting 2 ms after: still to the list",
	       0, 0, 500000, 0, 0, 0, 0, 50);
	close_ms(500000, 50);
	expect("idle epoch starting 3 ms after: idle", 0, 0, 0, 500000, 0,
	       0, 0, 0);

	/* [7, 8) ms: A alone; [8, 9) idle: its tail; then A is freed */
	ev(0, 7000, true, &A);
	ev(0, 8000, false, NULL);
	close_ms(2000000, 200);
	expect("A alone, the list was cleared: all to A", 2000000, 0, 0, 0,
	       0, 200, 0, 0);
	close_ms(1000000, 100);
	expect("idle tail: to A", 1000000, 0, 0, 0, 0, 100, 0, 0);
	vr_lock(&p.close_lock);
	vr_pkg_forget(&p, &A, &A + 1);
	vr_unlock(&p.close_lock);
	vt_ok(!p.prev && !A.pprev && !A.prev_ns,
	      "vr_pkg_forget(): A off the lag list");
	close_ms(1000000, 100);
	expect("after vr_pkg_forget(A): its share goes to the host", 0, 0,
	       1000000, 0, 0, 0, 0, 100);

	/* [10, 11) ms: A, B; vr_pkg_forget(B) keeps A */
	close_ms(0, 0);	/* 3 ms after: the list is cleared */
	expect("nothing moved", 0, 0, 0, 0, 0, 0, 0, 0);
	ev(0, 11000, true, &A);
	ev(1, 11000, true, &B);
	ev(0, 12000, false, NULL);
	ev(1, 12000, false, NULL);
	close_ms(4000000, 400);
	expect("A and B 1 ms each", 2000000, 2000000, 0, 0, 0, 200, 200, 0);
	vr_lock(&p.close_lock);
	vr_pkg_forget(&p, &B, &B + 1);
	vr_unlock(&p.close_lock);
	vt_ok(p.prev == &A && !A.pprev && A.prev_ns == VT_MS &&
	      !B.prev_ns && p.prev_busy == 2 * VT_MS,
	      "vr_pkg_forget(B): A stays, with its ns and the busy total");
	close_ms(1000000, 100);
	expect("idle tail: A its half, B's half to the host", 500000, 0,
	       500000, 0, 0, 50, 0, 50);

	/* a lost epoch clears the list */
	close_ms(0, 0);	/* [13, 14): 2 ms after, kept */
	close_ms(0, 0);	/* [14, 15): 3 ms after, cleared */
	vt_ok(!p.prev && !p.prev_busy && !A.prev_ns,
	      "idle closes more than 2 ms after: the list is cleared");
	ev(0, 15000, true, &A);
	ev(0, 16000, false, NULL);
	close_ms(2000000, 200);
	expect("A alone", 2000000, 0, 0, 0, 0, 200, 0, 0);
	vr_pkg_rebaseline(&p);
	close_ms(1000000, 100);
	expect("re-baselined: lost", 0, 0, 0, 0, 1000000, 0, 0, 0);
	vt_ok(!p.prev && !p.prev_busy && !A.prev_ns,
	      "a lost epoch clears the lag list");
	close_ms(1000000, 100);
	expect("idle after a lost epoch: idle", 0, 0, 0, 1000000, 0, 0, 0,
	       0);

	/* an unreadable PKG, then its baseline: both lost, no list */
	ev(0, 18000, true, &A);
	close_ms(2000000, 200);
	expect("A alone", 2000000, 0, 0, 0, 0, 200, 0, 0);
	close_valid(BIT(2));
	vt_ok(!p.prev && !p.prev_busy, "unreadable PKG: lost, list cleared");
	close_ms(2000000, 200);
	vt_ok(!p.prev && !p.prev_busy && A.energy[0] == prev_a[0],
	      "the baseline after it: lost, no list, nothing given");
	expect("(the two lost closes: PKG unread, then its baseline)", 0, 0,
	       0, 0, 0, 0, 0, 0);
	close_ms(2000000, 200);
	expect("then A alone again, no lag share from before", 2000000, 0,
	       0, 0, 0, 200, 0, 0);

	/*
	 * A and B on CPUs 0 and 1 from 2 ms, 1 eu/ns each, after an idle
	 * epoch.  The 4 ms close reads them until 3.5 ms: 3e6 eu, spent in
	 * the 1.5 ms of its 2 ms that were busy.  A stops at 4 ms, B at
	 * 4.25 ms; the 5 ms close reads [3.5, 4.5) ms: their last 0.5 ms
	 * (1e6 eu) and B's 0.25 ms alone (250000 eu).  A share lag / dt of
	 * that epoch's energy gave B 937500 and A 312500.
	 */
	burst_after_idle();
	vt_ok(p.prev_dyn == 3000000 && p.prev_seen == 3000000 &&
	      p.prev_tail == 1000000,
	      "its power: 3e6 eu over 3 CPU-ms seen, 1 CPU-ms unseen");
	ev(0, 4000, false, NULL);
	ev(1, 4250, false, NULL);
	close_ms(1250000, 125);
	expect("the burst's end, read in a mostly idle epoch: 0.5 ms of it "
	       "to A and B, 1:1, B's own 0.25 ms to B", 500000, 750000, 0,
	       0, 0, 50, 75, 0);

	/*
	 * A short idle epoch between: A and B run [2, 4) ms at 1 eu/ns each,
	 * read until 3.5 ms, so 1 CPU-ms is unseen at the 4 ms close.  The
	 * 4.1 ms close reads [3.5, 3.6) ms, their 0.2e6 eu, all to them; of
	 * the lag window, a lag over 0.1 ms still reaches back into their
	 * runs: 0.81 ms unseen (2 x 0.9^2 / 2).  A host task then runs from
	 * 4.1 ms; the 8.1 ms close reads [3.6, 7.6) ms: A's and B's last
	 * 0.4 ms (0.8e6) and the host's 3.5 ms.  The list gets the 0.81 ms
	 * at 1 eu/ns; a share lag_ns / dt of that epoch's energy gave it
	 * 537500 (A and B 268750 each, for 400000).
	 */
	burst_after_idle();
	ev(0, 4000, false, NULL);
	ev(1, 4000, false, NULL);
	close_us(4100, 200000, 40);
	expect("its end, 0.1 ms of idle after it: all to A and B", 100000,
	       100000, 0, 0, 0, 20, 20, 0);
	vt_ok(p.prev_tail == 810000 && p.prev_seen == 3000000,
	      "still unseen after the idle epoch: 0.81 ms");
	ev(2, 4100, true, NULL);
	close_us(8100, 4300000, 860);
	expect("a host task's 4 ms after it: the 0.81 ms unseen to A and B, "
	       "the rest to the host", 405000, 405000, 3490000, 0, 0, 81, 81,
	       698);

	/*
	 * A steady load after a first read that was late by only 0.25 ms: A
	 * and B on CPUs 0 and 1 from 2 ms, 1 eu/ns each; the 3 ms close
	 * reads [.., 2.75) ms, the others lag 0.5 ms.  The first power is
	 * 1.5 eu/ns (1.5e6 over the 1 CPU-ms it deems seen), so the 4 ms close
	 * gives the list 1.5e6, all of its delta.  Priced from what was left
	 * after the lag share, the next power would be 0, the one after 2,
	 * and so on: with 1 ms epochs the unseen time equals the seen, and
	 * that error flipped sides every epoch.  From the whole delta it is
	 * 0.75, then 1.  A and B stop at 6 ms, a host task runs; the 7 ms
	 * close reads their last 0.5 ms (1e6) and its first 0.5 ms.
	 */
	setup(true);
	close_ms(0, 0);
	close_ms(0, 0);
	ev(0, 2000, true, &A);
	ev(1, 2000, true, &B);
	close_ms(1500000, 300);
	expect("a late-read first epoch", 750000, 750000, 0, 0, 0, 150, 150,
	       0);
	close_ms(1500000, 300);
	expect("its lag share takes the whole next delta", 750000, 750000,
	       0, 0, 0, 150, 150, 0);
	close_ms(2000000, 400);
	expect("then 0.75 eu/ns x 1 CPU-ms to the list", 1000000, 1000000, 0,
	       0, 0, 200, 200, 0);
	vt_ok(p.prev_dyn == 2000000 && p.prev_seen == 2000000 &&
	      p.prev_tail == 1000000, "the power is back to 1 eu/ns");
	close_ms(2000000, 400);
	expect("steady", 1000000, 1000000, 0, 0, 0, 200, 200, 0);
	ev(0, 6000, false, NULL);
	ev(1, 6000, false, NULL);
	ev(2, 6000, true, NULL);
	close_ms(1500000, 300);
	expect("A and B stop, a host task runs: their last 0.5 ms to them",
	       500000, 500000, 500000, 0, 0, 100, 100, 100);

	/*
	 * Epochs shorter than the counter's step (250 us closes): A runs on
	 * CPU 0 over [1, 1.5) ms, and the counter does not step in either
	 * of its two epochs; B runs on CPU 1 from 1.5 ms, and the 1.75 ms
	 * close reads A's 0.5 ms (5e5).  Epochs no read showed join the
	 * list whole (vr_lag_merge()), A once with both: 0.5 ms unseen.
	 * B's epoch shows 0.125 ms of its own (its 0.25 ms run, unseen at
	 * most half), and with no delta before A's to price it by, the
	 * share goes by time: 0.5 of 0.625 ms, 4e5 to A, the rest to B.
	 * Before such epochs joined the list, A got nothing and B all.
	 */
	setup(true);
	close_ms(0, 0);
	ev(0, 1000, true, &A);
	close_us(1250, 0, 0);
	expect("a busy epoch the counter did not show: nothing yet", 0, 0,
	       0, 0, 0, 0, 0, 0);
	vt_ok(p.prev == &A && A.prev_ns == 250000 && p.prev_tail == 250000 &&
	      !p.prev_seen, "it joined the lag list, all of it unseen");
	close_us(1500, 0, 0);
	expect("a second one: nothing yet", 0, 0, 0, 0, 0, 0, 0, 0);
	vt_ok(p.prev == &A && !A.pprev && A.prev_ns == 500000 &&
	      p.prev_busy == 500000, "A on the list once, with both epochs");
	ev(0, 1500, false, NULL);
	ev(1, 1500, true, &B);
	close_us(1750, 500000, 50);
	expect("the read that shows them: by unseen time, A 4:1", 400000,
	       100000, 0, 0, 0, 40, 10, 0);

	/* lag_ns 0: no list at all */
	setup(false);
	close_ms(0, 0);
	ev(0, 1000, true, &A);
	ev(1, 1000, true, &B);
	ev(1, 1500, false, NULL);
	close_ms(3000000, 300);
	expect("lag_ns 0: busy epoch", 2000000, 1000000, 0, 0, 0, 200, 100,
	       0);
	vt_ok(!p.prev && !p.prev_busy && !A.prev_ns && !B.prev_ns,
	      "lag_ns 0: no lag list");
	ev(0, 2000, false, NULL);
	ev(2, 2000, true, NULL);
	close_ms(6000000, 600);
	expect("lag_ns 0: busy after busy: all to the host task", 0, 0,
	       6000000, 0, 0, 0, 0, 600);
	ev(2, 3000, false, NULL);
	close_ms(500000, 50);
	expect("lag_ns 0: idle after busy: idle", 0, 0, 0, 500000, 0, 0, 0,
	       0);
	return vt_done();
}
