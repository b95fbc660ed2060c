/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pattern-bios: the smallest guest for QEMU tests of poolmem, a 64 KiB raw
 * -bios image (no C, no ROM files needed).
 *
 * THEORY OF OPERATION: the CPU starts in real mode at 0xFFFFFFF0 (the last
 * 16 bytes of this image, mapped just below 4 GiB). We switch to flat
 * 32-bit protected mode, read the RAM size from the CMOS (0x34/0x35: 64 KiB
 * units above 16 MiB), and write into every 4 KiB page from 1 MiB to the
 * top of RAM two words: the page's guest physical address XOR 0x5a5a5a5a
 * and its complement. Guest RAM below 4 GiB is the start of the memory
 * backend, so a test can check every page through a second mapping of the
 * backend's file. Then we print "D" on the debug console (port 0xe9) and
 * wait until the word at 1 MiB + 8 reads 0x600df00d, which the test
 * writes through its own mapping: the exchange proves the mapping is
 * shared both ways and keeps QEMU alive while the test looks at it. Then
 * we exit through isa-debug-exit (port 0xf4): QEMU's exit status is
 * (0x31 << 1) | 1 = 99.
 *
 * Build: as --32, ld -m elf_i386 -Ttext=0, objcopy -O binary -j .text.
 */
	.code16
	.text
	.globl	_start
_start:
	cli
	cld
	/* CS's base is still 0xffff0000 after reset: the image's address */
	lgdtl	%cs:gdt_desc
	movl	%cr0, %eax
	orl	$1, %eax
	movl	%eax, %cr0
	ljmpl	$0x08, $(0xffff0000 + pm32)

	.code32
pm32:
	movw	$0x10, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	movl	$0x90000, %esp

	/* RAM above 16 MiB in 64 KiB units: CMOS 0x35 (high), 0x34 (low) */
	movb	$0x35, %al
	outb	%al, $0x70
	inb	$0x71, %al
	movzbl	%al, %ebx
	shll	$8, %ebx
	movb	$0x34, %al
	outb	%al, $0x70
	inb	$0x71, %al
	movzbl	%al, %eax
	orl	%eax, %ebx
	shll	$16, %ebx
	addl	$0x1000000, %ebx	/* top of RAM */

	movl	$0x100000, %edi
1:	cmpl	%ebx, %edi
	jae	2f
	movl	%edi, %eax
	xorl	$0x5a5a5a5a, %eax
	movl	%eax, (%edi)
	notl	%eax
	movl	%eax, 4(%edi)
	addl	$0x1000, %edi
	jmp	1b

2:	movb	$'D', %al
	outb	%al, $0xe9
	movb	$'\n', %al
	outb	%al, $0xe9
3:	cmpl	$0x600df00d, 0x100008
	je	4f
	pause
	jmp	3b

4:	movl	$0x31, %eax
	outl	%eax, $0xf4
5:	hlt
	jmp	5b

	.p2align 3
gdt:
	.quad	0
	.quad	0x00cf9a000000ffff	/* 0x08: code, flat 4 GiB, 32-bit */
	.quad	0x00cf92000000ffff	/* 0x10: data, flat 4 GiB */
gdt_desc:
	.word	gdt_desc - gdt - 1
	.long	0xffff0000 + gdt

	/* the reset vector: 16 bytes before the end of the image */
	.org	0xfff0
	.code16
	jmp	_start			/* near: CS keeps its reset base */
	.org	0x10000
