/* SPDX-License-Identifier: MIT */
/*
 * Built-in guest programs of vmrapl-vmm: 32-bit protected mode, flat
 * segments, no paging (see guest.h).  The VMM copies everything between
 * guest_blob_start and guest_blob_end to GUEST_CODE; only relative jumps
 * are used inside the blob, so where it sits in the host does not matter.
 *
 * Register conventions on entry: EDI = this vCPU's mailbox, ESP = top of
 * this vCPU's page.  EDI is never changed.
 */
#include "guest.h"

	.section .rodata.vmrapl_guest, "a"
	.code32
	.balign 16
	.globl guest_blob_start
guest_blob_start:

/*
 * spin: the tightest loop there is.  With MB_RTICKS set (--report-msr) it
 * also reads the mailbox MSRs every MB_RTICKS TSC ticks.
 */
	.globl guest_spin
guest_spin:
	cmpl	$0, MB_RTICKS(%edi)
	jne	2f
1:	jmp	1b
2:	call	report_start
3:	call	maybe_report
	jmp	3b

/*
 * idle: halt forever; the VMM blocks the vCPU thread on each HLT exit.
 * With MB_RTICKS set, read the MSRs after each HLT: the VMM then wakes the
 * vCPU once per report period.
 */
	.globl guest_idle
guest_idle:
	cmpl	$0, MB_RTICKS(%edi)
	jne	2f
1:	hlt
	jmp	1b
2:	call	read_report
	hlt
	jmp	2b

/* pio-loop: one port write (one exit) per iteration. */
	.globl guest_pio
guest_pio:
	xorl	%eax, %eax
1:	incl	%eax
	outl	%eax, $PORT_PIO
	jmp	1b

/*
 * duty:P: spin for MB_CHUNK TSC ticks, then ask the VMM whether the busy
 * part of the period is over (in from PORT_DUTY); if so halt, and the VMM
 * sleeps out the rest of the period before resuming us.
 */
	.globl guest_duty
guest_duty:
	call	report_start
	movl	MB_CHUNK(%edi), %esi
2:	rdtsc
	movl	%eax, %ebx
1:	rdtsc
	subl	%ebx, %eax		/* wrap-safe 32-bit TSC delta */
	cmpl	%esi, %eax
	jb	1b
	call	maybe_report
	inl	$PORT_DUTY, %eax
	testl	%eax, %eax
	jz	2b
	hlt
	jmp	2b

/*
 * rdmsr-loop: read MB_NR_MSRS MSRs into the mailbox, note which faulted
 * (the #GP handler sets bit ESI of EBP and makes rdmsr return 0), then
 * tell the VMM with an out to PORT_REPORT.
 */
	.globl guest_rdmsr
guest_rdmsr:
3:	xorl	%ebp, %ebp
	xorl	%esi, %esi
1:	movl	MB_MSR(%edi,%esi,4), %ecx
	rdmsr
	movl	%eax, MB_VALUE(%edi,%esi,8)
	movl	%edx, MB_VALUE+4(%edi,%esi,8)
	incl	%esi
	cmpl	MB_NR_MSRS(%edi), %esi
	jb	1b
	movl	%ebp, MB_FAULTS(%edi)
	incl	MB_ITER(%edi)
	outb	%al, $PORT_REPORT
	jmp	3b

/*
 * --report-msr helpers for spin, duty and idle; all registers preserved.
 * read_report: read the mailbox MSRs and report them, as rdmsr-loop does.
 */
read_report:
	pushal
	xorl	%ebp, %ebp
	xorl	%esi, %esi
1:	cmpl	MB_NR_MSRS(%edi), %esi
	jae	2f
	movl	MB_MSR(%edi,%esi,4), %ecx
	rdmsr
	movl	%eax, MB_VALUE(%edi,%esi,8)
	movl	%edx, MB_VALUE+4(%edi,%esi,8)
	incl	%esi
	jmp	1b
2:	movl	%ebp, MB_FAULTS(%edi)
	incl	MB_ITER(%edi)
	outb	%al, $PORT_REPORT
	popal
	ret

/* report_start: if reporting, the first read, and start the TSC clock. */
report_start:
	cmpl	$0, MB_RTICKS(%edi)
	je	1f
	pushl	%eax
	pushl	%edx
	rdtsc
	movl	%eax, MB_RLAST(%edi)
	call	read_report
	popl	%edx
	popl	%eax
1:	ret

/* maybe_report: read_report if MB_RTICKS ticks passed since the last. */
maybe_report:
	cmpl	$0, MB_RTICKS(%edi)
	je	2f
	pushl	%eax
	pushl	%edx
	rdtsc
	movl	%eax, %edx
	subl	MB_RLAST(%edi), %eax	/* wrap-safe 32-bit TSC delta */
	cmpl	MB_RTICKS(%edi), %eax
	jb	1f
	movl	%edx, MB_RLAST(%edi)
	call	read_report
1:	popl	%edx
	popl	%eax
2:	ret

/*
 * #GP handler.  Stack: error code, EIP, CS, EFLAGS.  A faulting rdmsr
 * (0f 32) is skipped and reads as 0 (bit ESI of EBP tells the VMM); any
 * other #GP is fatal.
 */
	.globl guest_gp_handler
guest_gp_handler:
	pushl	%eax
	movl	8(%esp), %eax		/* faulting EIP */
	cmpw	$0x320f, (%eax)
	popl	%eax			/* (does not touch the flags) */
	jne	.Lexc_stubs + 13 * GUEST_STUB_SIZE
	addl	$4, %esp		/* drop the error code */
	addl	$2, (%esp)		/* resume after the rdmsr */
	btsl	%esi, %ebp
	xorl	%eax, %eax
	xorl	%edx, %edx
	/*
	 * Same CPL, same CS, IF already 0 and the flags are dead after
	 * rdmsr: a near return that also drops CS and EFLAGS is enough.
	 * Unlike iret it needs no emulation where KVM cannot run the guest
	 * natively (KVM's emulator only handles real-mode iret).
	 */
	ret	$8

/*
 * Exception stubs, one per vector, GUEST_STUB_SIZE bytes apart: push the
 * vector and report it.  The VMM reads EAX (vector) and the stack.
 */
	.balign	GUEST_STUB_SIZE
	.globl guest_exc_stubs
guest_exc_stubs:
.Lexc_stubs:
	.irp	vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.balign	GUEST_STUB_SIZE
	pushl	$\vec
	jmp	.Lfatal
	.endr

.Lfatal:
	movl	(%esp), %eax
	outl	%eax, $PORT_FATAL
1:	hlt
	jmp	1b

	.globl guest_blob_end
guest_blob_end:

	.section .note.GNU-stack, "", @progbits
