/* The fixed point of the -fixed twins, as cubiclab-cc's intmath.rs writes it once: real
 * parameters in millionths, t and K in 2^-10 s, C and S_max in 2^-10, the cubic term with
 * |t - K| capped at 2^18, and floor(cbrt(a)) bit by bit. */
#ifndef CUBICLAB_BPF_FIXED_H
#define CUBICLAB_BPF_FIXED_H

#define MICRO 1000000ULL
#define Q10 10
/* The largest |t - K| (2^-10 s) for which C |t - K|^3 cannot overflow 64 bits (256 s). */
#define MAX_OFFS (1ULL << 18)

/* A value in millionths, rounded to 2^-10. */
static __always_inline __u64 q10_of_micro(__u64 m)
{
	return (m * 1024 + MICRO / 2) / MICRO;
}

/* C |t - K|^3, c_q in 2^-10, offs in 2^-10 s capped at MAX_OFFS; in 2^-(10 - shift)
 * segments (shift 10: whole segments, 0: 2^-10 segments). */
static __always_inline __u64 cubic_term(__u64 c_q, __u64 offs, __u32 shift)
{
	if (offs > MAX_OFFS)
		offs = MAX_OFFS;
	return (c_q * offs * offs * offs) >> (3 * Q10 + shift);
}

static __always_inline __u64 div_ceil(__u64 a, __u64 b)
{
	return (a + b - 1) / b;
}

/* floor(cbrt(a)), 22 steps as bpf_loop callbacks: as an inline loop every step's two
 * outcomes would multiply the verifier's states (2^22). */

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
