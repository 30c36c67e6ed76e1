// SPDX-License-Identifier: GPL-2.0
/*
 * KVM guests of the vmrapl selftests.  The guests are a few bytes of
 * 16-bit real-mode code at 0x1000; the vCPU threads run them with KVM_RUN
 * and handle their port I/O and MSR exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "libvmrapl.h"
#include "vr_guest.h"
#include "vr_time.h"

#define GUEST_MEM	(64 * 1024)
#define GUEST_CODE	0x1000
#define GUEST_STACK	0x8000
#define PORT_TICK	0x10	/* spin: every few thousand iterations */
#define PORT_MSR_IDX	0x30	/* rdmsr guest: which MSR (in) */
#define PORT_MSR_LO	0x31	/* rdmsr guest: eax (out) */
#define PORT_MSR_HI	0x32	/* rdmsr guest: edx (out) */
#define PORT_MSR_GP	0x33	/* rdmsr guest: #GP taken (out) */
#define PORT_MSR_WR	0x34	/* wrmsr guest: the write did not fault */
#define PORT_MSR_VLO	0x35	/* wrmsr guest: eax to write (in) */
#define PORT_MSR_VHI	0x36	/* wrmsr guest: edx to write (in) */

/*
 * spin:  mov cx,2000 ; l: loop l ; out 0x10,al ; jmp spin
 * pio:   out 0x10,al ; jmp pio
 * hlt:   hlt ; jmp hlt
 * rdmsr: in eax,0x30 ; mov ecx,eax ; rdmsr ; out 0x31,eax ; mov eax,edx ;
 *        out 0x32,eax ; jmp rdmsr
 *        and at 0x1100 the #GP handler: out 0x33,al ; add sp,6 ; jmp rdmsr
 * wrmsr: in eax,0x30 ; mov ecx,eax ; in eax,0x36 ; mov edx,eax ;
 *        in eax,0x35 ; wrmsr ; out 0x34,al ; jmp wrmsr (the same handler)
 */
static const uint8_t code_spin[] = { 0xb9, 0xd0, 0x07, 0xe2, 0xfe, 0xe6,
				     PORT_TICK, 0xeb, 0xf7 };
static const uint8_t code_pio[] = { 0xe6, PORT_TICK, 0xeb, 0xfc };
static const uint8_t code_hlt[] = { 0xf4, 0xeb, 0xfd };
static const uint8_t code_rdmsr[] = {
	0x66, 0xe5, PORT_MSR_IDX,	/* in eax, 0x30 */
	0x66, 0x89, 0xc1,		/* mov ecx, eax */
	0x0f, 0x32,			/* rdmsr */
	0x66, 0xe7, PORT_MSR_LO,	/* out 0x31, eax */
	0x66, 0x89, 0xd0,		/* mov eax, edx */
	0x66, 0xe7, PORT_MSR_HI,	/* out 0x32, eax */
	0xeb, 0xeb,			/* jmp 0x1000 */
};
static const uint8_t code_rdmsr_spin[] = {
	0xb9, 0xd0, 0x07,		/* mov cx, 2000 */
	0xe2, 0xfe,			/* loop $ */
	0x66, 0xe5, PORT_MSR_IDX,	/* in eax, 0x30 */
	0x66, 0x89, 0xc1,		/* mov ecx, eax */
	0x0f, 0x32,			/* rdmsr */
	0x66, 0xe7, PORT_MSR_LO,	/* out 0x31, eax */
	0xeb, 0xee,			/* jmp 0x1000 */
};
static const uint8_t code_wrmsr[] = {
	0x66, 0xe5, PORT_MSR_IDX,	/* in eax, 0x30 */
	0x66, 0x89, 0xc1,		/* mov ecx, eax */
	0x66, 0xe5, PORT_MSR_VHI,	/* in eax, 0x36 */
	0x66, 0x89, 0xc2,		/* mov edx, eax */
	0x66, 0xe5, PORT_MSR_VLO,	/* in eax, 0x35 */
	0x0f, 0x30,			/* wrmsr */
	0xe6, PORT_MSR_WR,		/* out 0x34, al */
	0xeb, 0xeb,			/* jmp 0x1000 */
};
static const uint8_t code_gp[] = {
	0xe6, PORT_MSR_GP,		/* out 0x33, al */
	0x83, 0xc4, 0x06,		/* add sp, 6 */
	0xe9, 0xf8, 0xfe,		/* jmp 0x1000 (from 0x1108) */
};

struct vrg_vcpu {
	struct vrg *g;
	int idx;
	int id;		/* KVM_CREATE_VCPU's */
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	pid_t tid;
	int cpu;
	uint64_t exits;
	uint64_t period_start;
	uint64_t busy_start;
	struct vrg_msr_log log;
	uint32_t lo;
	bool have_last;
	uint32_t msr_idx;	/* the MSR last handed to the guest */
};

struct vrg {
	int kvm;
	int vm;
	int nr;
	enum vrg_prog prog;
	void *mem;
	int run_size;
	int duty;
	int period_ms;
	volatile int stop;
	volatile uint32_t msr;
	uint64_t msr_val;	/* what the wrmsr guest writes */
	struct vmrapl_vm *vr;
	struct vrg_vcpu vcpu[];
};

static void vrg_sig(int sig)
{
	(void)sig;
}

struct vrg *vrg_create(int nr_vcpus, enum vrg_prog prog)
{
	return vrg_create_ids(nr_vcpus, NULL, prog);
}

struct vrg *vrg_create_ids(int nr_vcpus, const int *ids, enum vrg_prog prog)
{
	struct kvm_userspace_memory_region reg = { 0 };
	struct vrg *g;
	uint16_t *ivt;
	int i;

	g = calloc(1, sizeof(*g) + nr_vcpus * sizeof(g->vcpu[0]));
	if (!g)
		return NULL;
	g->nr = nr_vcpus;
	g->prog = prog;
	g->duty = 100;
	g->period_ms = 20;
	g->msr = VMRAPL_MSR_PKG_ENERGY_STATUS;
	g->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (g->kvm < 0)
		goto err;
	g->vm = ioctl(g->kvm, KVM_CREATE_VM, 0);
	if (g->vm < 0)
		goto err;
	g->mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (g->mem == MAP_FAILED)
		goto err;
	switch (prog) {
	case VRG_SPIN:
		memcpy((char *)g->mem + GUEST_CODE, code_spin, sizeof(code_spin));
		break;
	case VRG_PIO:
		memcpy((char *)g->mem + GUEST_CODE, code_pio, sizeof(code_pio));
		break;
	case VRG_HLT:
		memcpy((char *)g->mem + GUEST_CODE, code_hlt, sizeof(code_hlt));
		break;
	case VRG_RDMSR:
	case VRG_WRMSR:
	case VRG_RDMSR_SPIN:
		if (prog == VRG_RDMSR_SPIN)
			memcpy((char *)g->mem + GUEST_CODE, code_rdmsr_spin,
			       sizeof(code_rdmsr_spin));
		else if (prog == VRG_RDMSR)
			memcpy((char *)g->mem + GUEST_CODE, code_rdmsr,
			       sizeof(code_rdmsr));
		else
			memcpy((char *)g->mem + GUEST_CODE, code_wrmsr,
			       sizeof(code_wrmsr));
		memcpy((char *)g->mem + GUEST_CODE + 0x100, code_gp,
		       sizeof(code_gp));
		/* IVT entry 13 (#GP): 0000:1100 */
		ivt = g->mem;
		ivt[13 * 2] = GUEST_CODE + 0x100;
		ivt[13 * 2 + 1] = 0;
		break;
	}
	reg.memory_size = GUEST_MEM;
	reg.userspace_addr = (uintptr_t)g->mem;
	if (ioctl(g->vm, KVM_SET_USER_MEMORY_REGION, &reg))
		goto err;
	g->run_size = ioctl(g->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (g->run_size <= 0)
		goto err;
	for (i = 0; i < nr_vcpus; i++) {
		struct vrg_vcpu *v = &g->vcpu[i];
		struct kvm_sregs sregs;
		struct kvm_regs regs = { 0 };

		v->g = g;
		v->idx = i;
		v->id = ids ? ids[i] : i;
		v->cpu = -1;
		v->fd = ioctl(g->vm, KVM_CREATE_VCPU, v->id);
		if (v->fd < 0)
			goto err;
		v->run = mmap(NULL, g->run_size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, v->fd, 0);
		if (v->run == MAP_FAILED)
			goto err;
		if (ioctl(v->fd, KVM_GET_SREGS, &sregs))
			goto err;
		sregs.cs.base = 0;
		sregs.cs.selector = 0;
		sregs.ss.base = 0;
		sregs.ss.selector = 0;
		if (ioctl(v->fd, KVM_SET_SREGS, &sregs))
			goto err;
		regs.rip = GUEST_CODE;
		regs.rsp = GUEST_STACK - i * 0x100;
		regs.rflags = 2;
		if (ioctl(v->fd, KVM_SET_REGS, &regs))
			goto err;
	}
	return g;
err:
	vrg_destroy(g);
	return NULL;
}

int vrg_kvm_fd(struct vrg *g)
{
	return g->vm;
}

void vrg_set_duty(struct vrg *g, int pct, int period_ms)
{
	g->duty = pct;
	g->period_ms = period_ms;
}

int vrg_pin(struct vrg *g, int i, int cpu)
{
	cpu_set_t set;

	g->vcpu[i].cpu = cpu;
	if (!g->vcpu[i].tid)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(g->vcpu[i].tid, sizeof(set), &set);
}

int vrg_use_vmrapl(struct vrg *g, struct vmrapl_vm *vm)
{
	int ret;

	ret = vmrapl_install_msr_filter(vm, g->vm);
	if (ret)
		return ret;
	ret = vmrapl_enable_user_msr(g->kvm, g->vm, 0);
	if (ret)
		return ret;
	g->vr = vm;
	return 0;
}

/* Sleep away the idle part of the duty period (VMM-side waits). */
static void vrg_duty(struct vrg_vcpu *v)
{
	struct vrg *g = v->g;
	uint64_t now = vr_now_ns(), period = g->period_ms * 1000000ull;
	uint64_t busy = period * g->duty / 100;

	if (g->duty >= 100)
		return;
	if (!v->period_start)
		v->period_start = now;
	if (now - v->period_start < busy)
		return;
	if (now - v->period_start < period)
		vr_sleep_ms((period - (now - v->period_start)) / 1000000);
	v->period_start = vr_now_ns();
}

static void vrg_msr_seen(struct vrg_vcpu *v, uint32_t lo)
{
	struct vrg_msr_log *l = &v->log;

	if (!l->reads)
		l->first = lo;
	if (v->have_last && lo != v->lo) {
		l->changes++;
		if (lo < v->lo) {
			/* A wrap moves far; a small step back is an error. */
			if (v->lo - lo > 0x80000000u)
				l->wraps++;
			else
				l->backwards++;
		}
	}
	l->reads++;
	l->last = lo;
	v->lo = lo;
	v->have_last = true;
}

static void *vrg_thread(void *arg)
{
	struct vrg_vcpu *v = arg;
	struct vrg *g = v->g;
	struct kvm_run *run = v->run;

	v->tid = syscall(SYS_gettid);
	if (v->cpu >= 0)
		vrg_pin(g, v->idx, v->cpu);
	while (!g->stop) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		v->exits++;
		if (g->vr && vmrapl_handle_exit(g->vr, run, v->id) == 1)
			continue;
		switch (run->exit_reason) {
		case KVM_EXIT_IO: {
			uint8_t *data = (uint8_t *)run + run->io.data_offset;
			uint32_t val;

			memcpy(&val, data, sizeof(val));
			if (run->io.port == PORT_TICK) {
				vrg_duty(v);
			} else if (run->io.port == PORT_MSR_IDX) {
				val = g->msr;
				memcpy(data, &val, sizeof(val));
				/*
				 * A new MSR: its first value is not a step of
				 * the previous one's (a switch from a larger
				 * register read as a step back once the guest's
				 * round outlasted observe()'s 20 ms settling).
				 */
				if (val != v->msr_idx)
					v->have_last = false;
				v->msr_idx = val;
			} else if (run->io.port == PORT_MSR_LO) {
				vrg_msr_seen(v, val);
				if (g->prog == VRG_RDMSR_SPIN)
					vrg_duty(v);
			} else if (run->io.port == PORT_MSR_VLO ||
				   run->io.port == PORT_MSR_VHI) {
				uint64_t w = __atomic_load_n(&g->msr_val,
							     __ATOMIC_RELAXED);

				val = run->io.port == PORT_MSR_VLO ?
				      (uint32_t)w : (uint32_t)(w >> 32);
				memcpy(data, &val, sizeof(val));
			} else if (run->io.port == PORT_MSR_GP) {
				v->log.gp++;
			} else if (run->io.port == PORT_MSR_WR) {
				v->log.writes++;
			}
			break;
		}
		case KVM_EXIT_HLT:
			vr_sleep_ms(5);
			break;
		case KVM_EXIT_X86_RDMSR:
			/* Not vmrapl's: #GP. */
			run->msr.error = 1;
			break;
		case KVM_EXIT_X86_WRMSR:
			run->msr.error = 1;
			break;
		default:
			fprintf(stderr, "vcpu %d: unexpected exit %u\n",
				v->idx, run->exit_reason);
			return NULL;
		}
	}
	return NULL;
}

int vrg_start(struct vrg *g)
{
	struct sigaction sa = { .sa_handler = vrg_sig };
	int i;

	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < g->nr; i++)
		if (pthread_create(&g->vcpu[i].thread, NULL, vrg_thread,
				   &g->vcpu[i]))
			return -1;
	for (i = 0; i < g->nr; i++)
		while (!__atomic_load_n(&g->vcpu[i].tid, __ATOMIC_ACQUIRE))
			vr_sleep_ms(1);
	return 0;
}

void vrg_stop(struct vrg *g)
{
	int i;

	if (g->stop)
		return;
	g->stop = 1;
	for (i = 0; i < g->nr; i++) {
		if (!g->vcpu[i].thread)
			continue;
		g->vcpu[i].run->immediate_exit = 1;
		pthread_kill(g->vcpu[i].thread, SIGUSR1);
		pthread_join(g->vcpu[i].thread, NULL);
		g->vcpu[i].thread = 0;
	}
}

int vrg_restart(struct vrg *g)
{
	int i;

	vrg_stop(g);
	for (i = 0; i < g->nr; i++) {
		g->vcpu[i].run->immediate_exit = 0;
		__atomic_store_n(&g->vcpu[i].tid, 0, __ATOMIC_RELEASE);
	}
	g->stop = 0;
	return vrg_start(g);
}

void vrg_destroy(struct vrg *g)
{
	int i;

	if (!g)
		return;
	vrg_stop(g);
	for (i = 0; i < g->nr; i++) {
		if (g->vcpu[i].run && g->vcpu[i].run != MAP_FAILED)
			munmap(g->vcpu[i].run, g->run_size);
		if (g->vcpu[i].fd > 0)
			close(g->vcpu[i].fd);
	}
	if (g->vm > 0)
		close(g->vm);
	if (g->kvm > 0)
		close(g->kvm);
	if (g->mem && g->mem != MAP_FAILED)
		munmap(g->mem, GUEST_MEM);
	free(g);
}

pid_t vrg_tid(struct vrg *g, int i)
{
	return g->vcpu[i].tid;
}

void vrg_set_msr(struct vrg *g, uint32_t msr)
{
	g->msr = msr;
}

void vrg_set_msr_value(struct vrg *g, uint64_t val)
{
	__atomic_store_n(&g->msr_val, val, __ATOMIC_RELAXED);
}

void vrg_msr_log(struct vrg *g, int i, struct vrg_msr_log *out)
{
	*out = g->vcpu[i].log;
}

uint64_t vrg_exits(struct vrg *g, int i)
{
	return g->vcpu[i].exits;
}

int vrg_close_vm_fd(struct vrg *g)
{
	int fd = g->vm;

	g->vm = -1;
	return fd > 0 ? close(fd) : -1;
}

static volatile sig_atomic_t vrp_term;

static void vrp_on_term(int sig)
{
	(void)sig;
	vrp_term = 1;
}

/* Move the calling process into the cgroup v2 directory @dir. */
static int vrp_join(const char *dir)
{
	char path[512];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write(fd, "0\n", 2) == 2;
	close(fd);
	return ok ? 0 : -EIO;
}

/* The child's other end of vrp_write_pl(). */
struct vrp_req {
	struct vmrapl_vm *vm;
	int wfd;
	int cfd;
};

/*
 * vrp_write_pl()'s requests, in a thread of their own (SIGTERM blocked,
 * so that it reaches the main thread's pause()), until EOF; the main
 * thread's _exit() ends it.  The parent waits for each answer before it
 * asks again or stops the child, so no request is in flight then.
 */
static void *vrp_requests(void *arg)
{
	const struct vrp_req *q = arg;
	uint64_t val;
	ssize_t n;
	int r;

	for (;;) {
		n = read(q->cfd, &val, sizeof(val));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(val))
			return NULL;
		r = q->vm ? vmrapl_write_msr(q->vm, 0,
					     VMRAPL_MSR_PKG_POWER_LIMIT, val) :
			    -ENODEV;
		if (write(q->wfd, &r, sizeof(r)) != sizeof(r))
			return NULL;
	}
}

static void vrp_child(const struct vrp_opts *o, int wfd, int cfd)
{
	struct sigaction sa = { .sa_handler = vrp_on_term };
	static struct vrp_req req;
	sigset_t term, old;
	pthread_t rt;
	int nr = o->nr_vcpus > 0 ? o->nr_vcpus : 1;
	struct vmrapl_vm *vm = NULL;
	struct vmrapl *dev = NULL;
	struct vrg *g;
	pid_t tid;

	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	/* Into the cgroup first, so that every thread starts there. */
	if (o->cgroup && vrp_join(o->cgroup))
		_exit(16);
	g = vrg_create(nr, o->prog);
	if (!g)
		_exit(10);
	if (o->attach) {
		if (vmrapl_open(NULL, &dev) ||
		    vmrapl_attach(dev, vrg_kvm_fd(g), nr, VMRAPL_REGSET_INTEL,
				  0, &vm))
			_exit(11);
		if (o->charge && vmrapl_set_policy(vm, o->charge, 0))
			_exit(12);
		if (vrg_use_vmrapl(g, vm))
			_exit(13);
	}
	vrg_set_duty(g, o->duty ? o->duty : 100, 20);
	if (o->cpu >= 0)
		vrg_pin(g, 0, o->cpu);
	if (vrg_start(g))
		_exit(14);
	tid = vrg_tid(g, 0);
	if (write(wfd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(15);
	req.vm = vm;
	req.wfd = wfd;
	req.cfd = cfd;
	pthread_sigmask(SIG_BLOCK, &term, &old);
	if (pthread_create(&rt, NULL, vrp_requests, &req))
		_exit(17);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (!vrp_term)
		pause();
	vrg_stop(g);
	if (vm)
		vmrapl_detach(vm);
	if (dev)
		vmrapl_close(dev);
	vrg_destroy(g);
	_exit(0);
}

int vrp_start(struct vrp *p, const struct vrp_opts *o)
{
	int fds[2], cmd[2];

	p->rfd = p->cfd = -1;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	if (pipe2(cmd, O_CLOEXEC)) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	p->pid = fork();
	if (p->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		close(cmd[0]);
		close(cmd[1]);
		return -errno;
	}
	if (!p->pid) {
		close(fds[0]);
		close(cmd[1]);
		vrp_child(o, fds[1], cmd[0]);
	}
	close(fds[1]);
	close(cmd[0]);
	p->rfd = fds[0];
	p->cfd = cmd[1];
	if (read(p->rfd, &p->tid, sizeof(p->tid)) != sizeof(p->tid)) {
		vrp_stop(p);
		return -ECHILD;
	}
	return 0;
}

int vrp_write_pl(struct vrp *p, uint64_t val)
{
	int r;

	if (p->pid <= 0 || p->cfd < 0)
		return -ESRCH;
	if (write(p->cfd, &val, sizeof(val)) != sizeof(val) ||
	    read(p->rfd, &r, sizeof(r)) != sizeof(r))
		return -ECHILD;
	return r;
}

void vrp_stop(struct vrp *p)
{
	int status;

	if (p->pid <= 0)
		return;
	kill(p->pid, SIGTERM);
	waitpid(p->pid, &status, 0);
	p->pid = 0;
	if (p->rfd >= 0)
		close(p->rfd);
	if (p->cfd >= 0)
		close(p->cfd);
	p->rfd = p->cfd = -1;
}
