/* SPDX-License-Identifier: GPL-2.0 */
/* floor(cbrt(a)) bit by bit, the fixed-point ports' cube root (the library's
 * cubic_2008_fixed.rs cbrt_floor, which the twins of cubic-2008, cubic-2005 and
 * cubic-rfc9438 share). 22 steps as bpf_loop callbacks: as an inline loop every step's two
 * outcomes would multiply the verifier's states (2^22). */
#ifndef CLK_CBRT_FLOOR_H
#define CLK_CBRT_FLOOR_H

/* The largest root whose cube fits in 64 bits: 2642245^3 < 2^64 <= 2642246^3. */
#define MAX_ROOT 2642245ULL

struct cbrt_ctx {
	__u64 a;
	__u64 x;
};

static long cbrt_step(__u64 i, struct cbrt_ctx *c)
{
	__u64 y = c->x | (1ULL << ((21 - i) & 63));

	if (y <= MAX_ROOT && y * y * y <= c->a)
		c->x = y;
	return 0;
}

static __always_inline __u32 cbrt_floor(__u64 a)
{
	struct cbrt_ctx c = { .a = a, .x = 0 };

	bpf_loop(22, cbrt_step, &c, 0);
	return (__u32)c.x;
}

#endif
