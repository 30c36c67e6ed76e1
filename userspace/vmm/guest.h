/* SPDX-License-Identifier: MIT */
/*
 * The contract between vmrapl-vmm and its built-in guest programs
 * (guest.S): guest-physical memory layout, I/O ports and the per-vCPU
 * mailbox.  Shared by C and assembly, so only #defines here.
 *
 * The guest runs in 32-bit protected mode with paging off and flat 4 GiB
 * segments, at CPL 0, interrupts disabled.  That needs no page tables, runs
 * the same on VMX and SVM (with or without nested paging) and under nested
 * KVM, and still lets rdmsr fault with #GP into a handler.
 */
#ifndef VMRAPL_VMM_GUEST_H
#define VMRAPL_VMM_GUEST_H

/* Guest-physical layout. */
#define GUEST_GDT		0x1000	/* null, code 0x08, data 0x10 */
#define GUEST_IDT		0x1800	/* 32 interrupt gates */
#define GUEST_CODE		0x2000	/* the guest.S blob */
#define GUEST_CODE_MAX		0x6000
#define GUEST_VCPU_AREA		0x10000	/* one 4 KiB page per vCPU: */
#define GUEST_VCPU_SIZE		0x1000	/* mailbox at 0, stack at the top */

#define GUEST_SEL_CODE		0x08
#define GUEST_SEL_DATA		0x10
#define GUEST_NR_VECTORS	32
#define GUEST_STUB_SIZE		8	/* exception stubs are 8-byte aligned */

/* I/O ports (all byte or dword accesses). */
#define PORT_REPORT		0xE0	/* out: rdmsr-loop mailbox is full */
#define PORT_DUTY		0xE1	/* in: 0 stay busy, 1 halt now */
#define PORT_PIO		0xE2	/* out: pio-loop */
#define PORT_FATAL		0xE3	/* out: unexpected exception, eax=vector */

/*
 * Mailbox at the start of each vCPU page; EDI points at it on entry and
 * guest programs never change EDI.
 */
#define MB_NR_MSRS		0	/* u32: MSRs to read */
#define MB_MSR			8	/* u32[MB_MAX_MSRS]: their numbers */
#define MB_VALUE		40	/* u64[MB_MAX_MSRS]: values read */
#define MB_FAULTS		104	/* u32: bit i set when MSR i faulted */
#define MB_ITER			108	/* u32: rdmsr-loop iterations */
#define MB_CHUNK		112	/* u32: duty busy chunk in TSC ticks */
#define MB_RTICKS		116	/* u32: spin/duty/idle read the MSRs every
					 * this many TSC ticks (0: never) */
#define MB_RLAST		120	/* u32: low TSC of the last such read */
#define MB_MAX_MSRS		8

#endif
