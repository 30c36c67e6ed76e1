/* SPDX-License-Identifier: MIT */
/*
 * A multiboot guest for smoke.sh (QEMU -kernel): a flat 32-bit ring-0
 * environment, an IDT with only a #GP handler, then rdmsr-guest.c's
 * main(); at the end it leaves through isa-debug-exit at port 0xf4.
 */
	.section .multiboot, "a"
	.align 4
	.long 0x1BADB002
	.long 0x0
	.long -(0x1BADB002)

	.text
	.code32
	.globl _start
_start:
	mov $stack_top, %esp
	lidt idt_desc
	call main
	/* isa-debug-exit */
	mov $0xf4, %dx
	mov $0x1, %al
	outb %al, %dx
1:	hlt
	jmp 1b

	/*
	 * #GP handler: skip the 2-byte rdmsr/wrmsr and count it.  It returns
	 * with "ret $8" (EIP, then drop CS and EFLAGS) rather than iret,
	 * which KVM's instruction emulator handles only in real mode.
	 */
	.globl gp_handler
gp_handler:
	addl $4, %esp			/* error code */
	addl $2, (%esp)			/* eip += 2 */
	incl gp_count
	ret $8

	.data
	.align 8
idt:
	.fill 13, 8, 0
	/* vector 13: 32-bit interrupt gate; main() fills offset and selector */
gp_gate:
	.word 0
	.word 0
	.byte 0
	.byte 0x8e
	.word 0
	.fill 2, 8, 0
idt_end:
idt_desc:
	.word idt_end - idt - 1
	.long idt
	.globl gp_count
gp_count:
	.long 0
	.globl gp_gate
	.section .note.GNU-stack, "", @progbits
	.bss
	.align 16
	.space 8192
stack_top:
