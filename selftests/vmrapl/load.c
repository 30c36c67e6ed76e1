// SPDX-License-Identifier: GPL-2.0
/*
 * Load: 32 VMs of 2 vCPUs in a few VMM processes, each attached for about
 * a second, detached for a moment (track_all adopts it meanwhile) and
 * attached again, for LOAD_SECS, next to a context-switch storm of pipe
 * ping-pong thread pairs.
 *
 * Asserted: every attach and GET_STATS works, a VM's counters never go
 * back and never grow faster than the packages can draw; the books of both
 * packages conserve exactly at every sample and none of their totals ever
 * decreases; in every answer a thread of the test reads all the while
 * (LIST_VMS, GET_VM_STATS, GET_PKG_STATS), no part exceeds its whole
 * (vr_whole.h); every VM is gone from debugfs once its VMM exits.  The rig
 * fails the run on any warning, lockup or stall.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"
#include "vr_whole.h"

#define LOAD_SECS	20
#define NR_VMM		4
#define VMS_PER_VMM	8
#define NR_PAIRS	4
#define NR_MSG		4

struct report {
	int created;
	uint64_t attaches;
	uint64_t stats;
	uint64_t roundtrips;
	int bad;
	char msg[NR_MSG][200];
};

static void report_bad(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void report_bad(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->bad < NR_MSG) {
		va_start(ap, fmt);
		vsnprintf(r->msg[r->bad], sizeof(r->msg[0]), fmt, ap);
		va_end(ap);
	}
	r->bad++;
}

struct lvm {
	struct vrg *g;
	int fd;
	bool attached;
	uint64_t t_next;
	uint64_t t_last;
	struct vmrapl_stats last;
};

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One VMM process holding VMS_PER_VMM VMs, churning their attachment. */
static void vmm_child(int k, struct report *r, uint64_t t_end)
{
	static const enum vrg_prog progs[] = { VRG_SPIN, VRG_PIO, VRG_HLT };
	struct lvm v[VMS_PER_VMM] = { { 0 } };
	uint64_t s = 0x1234567ULL * (k + 1), now;
	int dev = vr_open_dev(), i, n = 0, ret;
	uint32_t vpkg[2] = { 0, 1 };

	if (dev < 0) {
		report_bad(r, "vmm %d: open /dev/vmrapl: %s", k, strerror(errno));
		_exit(1);
	}
	for (i = 0; i < VMS_PER_VMM; i++) {
		enum vrg_prog prog = progs[(k * VMS_PER_VMM + i) % 3];

		v[n].g = vrg_create(2, prog);
		if (!v[n].g)
			break;	/* as many as the machine holds */
		vrg_set_duty(v[n].g, prog == VRG_PIO ? 20 : 30, 20);
		if (vrg_start(v[n].g)) {
			vrg_destroy(v[n].g);
			break;
		}
		v[n].fd = -1;
		v[n].t_next = vr_now_ns() + xs(&s) % 500000000ULL;
		n++;
	}
	r->created = n;

	while ((now = vr_now_ns()) < t_end) {
		for (i = 0; i < n; i++) {
			struct lvm *m = &v[i];
			struct vmrapl_stats st;

			if (!m->attached) {
				if (now < m->t_next)
					continue;
				m->fd = vr_attach(dev, vrg_kvm_fd(m->g), 2,
						  i & 1 ? VMRAPL_REGSET_AMD :
						  VMRAPL_REGSET_INTEL, 0);
				if (m->fd < 0) {
					report_bad(r, "vmm %d VM %d: attach: %s",
						   k, i, strerror(-m->fd));
					m->t_next = now + 500000000ULL;
					continue;
				}
				r->attaches++;
				m->attached = true;
				if (i % 4 == 1)
					vr_set_policy(m->fd,
						      VMRAPL_POLICY_F_CHARGE,
						      VMRAPL_CHARGE_GUEST, 0);
				if (i % 4 == 2) {
					struct vmrapl_topology t = {
						.size = sizeof(t),
						.nr_vcpus = 2,
						.vpkg_ptr = (uintptr_t)vpkg,
					};

					ioctl(m->fd, VMRAPL_VM_SET_TOPOLOGY, &t);
				}
				memset(&m->last, 0, sizeof(m->last));
				m->t_last = now;
				m->t_next = now + 800000000ULL +
					    xs(&s) % 400000000ULL;
				continue;
			}
			ret = vr_get_stats(m->fd, &st, NULL, 0);
			now = vr_now_ns();
			r->stats++;
			if (ret) {
				report_bad(r, "vmm %d VM %d: GET_STATS: %s", k,
					   i, strerror(-ret));
			} else {
				uint64_t max = vr_max_eu(now - m->t_last, 2) *
					       1e6 / (1 << 24);

				if (st.energy_uj[0] < m->last.energy_uj[0] ||
				    st.runtime_ns < m->last.runtime_ns ||
				    st.overhead_uj[0] < m->last.overhead_uj[0] ||
				    st.energy_uj[0] - m->last.energy_uj[0] > max)
					report_bad(r, "vmm %d VM %d: energy %llu -> %llu uJ (at most +%llu), runtime %llu -> %llu ns",
						   k, i,
						   (unsigned long long)m->last.energy_uj[0],
						   (unsigned long long)st.energy_uj[0],
						   (unsigned long long)max,
						   (unsigned long long)m->last.runtime_ns,
						   (unsigned long long)st.runtime_ns);
				m->last = st;
				m->t_last = now;
			}
			if (now >= m->t_next) {
				close(m->fd);
				m->fd = -1;
				m->attached = false;
				m->t_next = now + 100000000ULL +
					    xs(&s) % 300000000ULL;
			}
		}
		vr_sleep_ms(50);
	}
	for (i = 0; i < n; i++) {
		if (v[i].attached)
			close(v[i].fd);
		vrg_destroy(v[i].g);
	}
	close(dev);
	_exit(0);
}

struct pp {
	int a[2], b[2];
	uint64_t t_end;
	uint64_t n;
};

static void *pp_ping(void *arg)
{
	struct pp *p = arg;
	char c = 0;

	while (vr_now_ns() < p->t_end) {
		if (write(p->a[1], &c, 1) != 1 || read(p->b[0], &c, 1) != 1)
			break;
		p->n++;
	}
	c = 1;
	if (write(p->a[1], &c, 1) != 1)
		return NULL;
	return NULL;
}

static void *pp_pong(void *arg)
{
	struct pp *p = arg;
	char c;

	while (read(p->a[0], &c, 1) == 1 && !c)
		if (write(p->b[1], &c, 1) != 1)
			break;
	return NULL;
}

/* Pipe ping-pong thread pairs: a context switch per message. */
static void storm_child(struct report *r, uint64_t t_end)
{
	struct pp p[NR_PAIRS];
	pthread_t th[2 * NR_PAIRS];
	int i;

	for (i = 0; i < NR_PAIRS; i++) {
		p[i].t_end = t_end;
		p[i].n = 0;
		if (pipe(p[i].a) || pipe(p[i].b) ||
		    pthread_create(&th[2 * i], NULL, pp_ping, &p[i]) ||
		    pthread_create(&th[2 * i + 1], NULL, pp_pong, &p[i])) {
			report_bad(r, "storm: pair %d: %s", i, strerror(errno));
			_exit(1);
		}
	}
	for (i = 0; i < 2 * NR_PAIRS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NR_PAIRS; i++)
		r->roundtrips += p[i].n;
	_exit(0);
}

FIXTURE(load) {
	struct report *rep;
	pid_t pid[NR_VMM + 1];
};

FIXTURE_SETUP(load)
{
	self->rep = mmap(NULL, sizeof(struct report) * (NR_VMM + 1),
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(MAP_FAILED, self->rep);
	memset(self->rep, 0, sizeof(struct report) * (NR_VMM + 1));
	/*
	 * check_stack on every kernel, not only the debug one: the
	 * stack-end panics the rig has seen came in these programs, mostly
	 * on 7.3.4, and a probe that broke the marker would name itself.
	 */
	ASSERT_EQ(0, vr_reload("check_stack=1"));
}

FIXTURE_TEARDOWN(load)
{
	int i, status;

	for (i = 0; i <= NR_VMM; i++) {
		if (self->pid[i] <= 0)
			continue;
		kill(self->pid[i], SIGKILL);
		waitpid(self->pid[i], &status, 0);
	}
	vr_reload(NULL);
}

#define CHECK_FIELD(f)							\
	do {								\
		if (b[p].f < last[p].f && bad++ < 5)			\
			TH_LOG("pkg %d: " #f " went down %llu -> %llu",	\
			       p, (unsigned long long)last[p].f,	\
			       (unsigned long long)b[p].f);		\
	} while (0)

TEST_F_TIMEOUT(load, churn_and_storm, 150)
{
	struct vr_books b[2], last[2];
	uint64_t t0, t_end, t_last, now, attaches = 0, stats = 0;
	int i, p, status, created = 0, samples = 0, bad = 0, maxvms = 0;
	struct vr_whole_reader whole;

	t0 = vr_now_ns();
	t_end = t0 + LOAD_SECS * 1000000000ULL;
	for (i = 0; i <= NR_VMM; i++) {
		self->pid[i] = fork();
		ASSERT_LE(0, self->pid[i]);
		if (!self->pid[i]) {
			if (i < NR_VMM)
				vmm_child(i, &self->rep[i], t_end);
			storm_child(&self->rep[i], t_end);
		}
	}

	ASSERT_EQ(0, vr_whole_start(&whole));
	ASSERT_EQ(0, vr_read_books2(last));
	t_last = vr_now_ns();
	while ((now = vr_now_ns()) < t_end + 2000000000ULL) {
		uint64_t max;
		int n;

		vr_sleep_ms(200);
		if (vr_read_books2(b)) {
			bad++;
			continue;
		}
		now = vr_now_ns();
		max = vr_max_eu(now - t_last, 1);
		for (p = 0; p < 2; p++) {
			if (!vr_books_conserve(&b[p]) && bad++ < 5)
				TH_LOG("pkg %d: tracked %llu + host %llu + idle %llu + lost %llu != sampled %llu",
				       p, (unsigned long long)b[p].tracked,
				       (unsigned long long)b[p].host,
				       (unsigned long long)b[p].idle,
				       (unsigned long long)b[p].lost,
				       (unsigned long long)b[p].sampled);
			CHECK_FIELD(sampled);
			CHECK_FIELD(tracked);
			CHECK_FIELD(host);
			CHECK_FIELD(idle);
			CHECK_FIELD(lost);
			if (b[p].sampled - last[p].sampled > max && bad++ < 5)
				TH_LOG("pkg %d: sampled %llu eu (%.3g J) in %.2f s, at most %.0f J possible",
				       p, (unsigned long long)(b[p].sampled -
							       last[p].sampled),
				       (b[p].sampled - last[p].sampled) / 16777216.0,
				       (now - t_last) / 1e9, max / 16777216.0);
			last[p] = b[p];
		}
		t_last = now;
		samples++;
		n = vr_vms_count(NULL);
		if (n > maxvms)
			maxvms = n;
	}

	vr_whole_stop(&whole);
	for (i = 0; i <= NR_VMM; i++) {
		ASSERT_EQ(self->pid[i], waitpid(self->pid[i], &status, 0));
		self->pid[i] = 0;
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("child %d: status %#x", i, status);
	}
	for (i = 0; i <= NR_VMM; i++) {
		struct report *r = &self->rep[i];
		int j;

		for (j = 0; j < r->bad && j < NR_MSG; j++)
			TH_LOG("%s", r->msg[j]);
		EXPECT_EQ(0, r->bad) TH_LOG("child %d: %d failed checks", i,
					    r->bad);
		if (i < NR_VMM) {
			created += r->created;
			attaches += r->attaches;
			stats += r->stats;
		}
	}
	TH_LOG("%d VMs x 2 vCPUs, %llu attaches, %llu GET_STATS, %llu ping-pongs, %d samples, up to %d VMs listed, %.1f s",
	       created, (unsigned long long)attaches,
	       (unsigned long long)stats,
	       (unsigned long long)self->rep[NR_VMM].roundtrips, samples,
	       maxvms, (vr_now_ns() - t0) / 1e9);
	EXPECT_GE(created, 16) TH_LOG("only %d VMs could be created", created);
	EXPECT_GE(attaches, (uint64_t)created * 3)
		TH_LOG("%llu attaches for %d VMs: the churn did not run",
		       (unsigned long long)attaches, created);
	EXPECT_GT(self->rep[NR_VMM].roundtrips, 1000);
	EXPECT_GT(samples, 20);
	EXPECT_EQ(0, bad) TH_LOG("%d book samples broke conservation or monotonicity",
				 bad);
	TH_LOG("%lu answers read for their wholes, %lu broke one",
	       whole.c.answers, whole.c.broken);
	EXPECT_EQ(0, whole.err) TH_LOG("reading the books: %s",
				       strerror(-whole.err));
	EXPECT_GT(whole.c.answers, 100);
	EXPECT_EQ(0, whole.c.broken) TH_LOG("first: %s", whole.c.first);
	/* check_stack (loaded with it above): no probe broke a stack-end marker. */
	EXPECT_EQ(0, vr_debugfs_check("stack_end_made_in_probe"));
	TH_LOG("stack-end markers found broken before a probe ran: %lld",
	       vr_debugfs_check("stack_end_seen_on_entry"));

	/* Every VMM is gone: so are its VMs, attached or adopted. */
	for (i = 0; i < 100 && vr_vms_count(NULL) > 0; i++)
		vr_sleep_ms(50);
	EXPECT_EQ(0, vr_vms_count(NULL))
		TH_LOG("VMs still listed after their VMMs exited");
	ASSERT_EQ(0, vr_read_books2(b));
	EXPECT_TRUE(vr_books_conserve(&b[0]) && vr_books_conserve(&b[1]));
	if (!_metadata->passed)
		vr_dump_debugfs();
}

TEST_HARNESS_MAIN
