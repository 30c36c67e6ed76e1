// SPDX-License-Identifier: MIT
/*
 * The guest side of smoke.sh: CPUID 0x80000007 EDX, then rdmsr of the AMD
 * and Intel RAPL unit, core and package MSRs and two wrmsr, each line
 * written to the debugcon port 0xe9 ("guest: ...").  A #GP is caught by
 * rdmsr-guest.S's handler and reported as "#GP".
 */
#include <stdint.h>
extern volatile uint32_t gp_count;
extern uint16_t gp_gate[4];
extern void gp_handler(void);

static void outb(uint16_t p, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(p)); }
static void puts_(const char *s) { while (*s) outb(0xe9, *s++); }
static void hex(uint64_t v) { char b[19]; int i; b[0]='0'; b[1]='x'; for (i = 0; i < 16; i++) b[2+i] = "0123456789abcdef"[(v >> (60 - 4*i)) & 15]; b[18]=0; puts_(b); }
static void cpuid(uint32_t l, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d) { __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(l), "c"(0)); }
static uint64_t rdmsr(uint32_t m, int *gp) { uint32_t lo = 0, hi = 0, before = gp_count; __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(m)); *gp = gp_count != before; return ((uint64_t)hi << 32) | lo; }
static int wrmsr(uint32_t m, uint64_t v) { uint32_t before = gp_count; __asm__ volatile("wrmsr" :: "c"(m), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))); return gp_count != before; }

void main(void)
{
	static const uint32_t msrs[] = { 0xc0010299, 0xc001029a, 0xc001029b, 0x606, 0x611, 0x639 };
	uint32_t a, b, c, d, cs, i;
	int gp;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	gp_gate[0] = (uint32_t)gp_handler & 0xffff;
	gp_gate[1] = cs;
	gp_gate[3] = (uint32_t)gp_handler >> 16;
	cpuid(0x80000000, &a, &b, &c, &d);
	puts_("guest: max ext leaf "); hex(a);
	cpuid(0x80000007, &a, &b, &c, &d);
	puts_(" 80000007.edx "); hex(d); puts_(d & (1u << 14) ? " RAPL bit set\n" : " RAPL bit clear\n");
	for (i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		uint64_t v = rdmsr(msrs[i], &gp);
		puts_("guest: rdmsr "); hex(msrs[i]); puts_(gp ? " #GP\n" : " = "); if (!gp) { hex(v); puts_("\n"); }
	}
	puts_("guest: wrmsr 0xc001029b "); puts_(wrmsr(0xc001029b, 5) ? "#GP\n" : "no fault\n");
	puts_("guest: wrmsr 0x610 "); puts_(wrmsr(0x610, 5) ? "#GP\n" : "no fault\n");
	puts_("guest: wrmsr 0x610 reserved bit "); puts_(wrmsr(0x610, 1ull << 24) ? "#GP\n" : "no fault\n");
}
