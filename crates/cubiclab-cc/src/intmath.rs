//! Integer arithmetic the CUBIC family shares: the cube roots (the kernel's, the bisection it
//! replaced, and the exact floor of the BPF ports) and the fixed point in which the `-fixed`
//! twins and their BPF ports compute (crates/cubiclab-bpf/bpf/fixed.h mirrors this part).

/// Millionths: the BPF loader passes every real-valued parameter as `round(v * 10^6)`.
pub const MICRO: u64 = 1_000_000;
/// The fixed-point twins keep t and K in 2^-10 s and C in 2^-10.
pub const Q10: u32 = 10;
/// The largest |t − K| (2^-10 s) for which C·|t − K|³ cannot overflow 64 bits: 2^18 (256 s).
pub const MAX_OFFS: u64 = 1 << 18;

/// A real parameter as the BPF loader passes it: millionths, rounded.
#[inline]
pub fn micro(v: f64) -> u64 {
    (v * 1e6).round() as u64
}

/// A value given in millionths, rounded to 2^-10 (C and S_max of the fixed-point twins).
#[inline]
pub fn q10_of_micro(m: u64) -> u64 {
    (m * 1024 + MICRO / 2) / MICRO
}

/// `C·|t − K|³` of the fixed-point twins, `c_q` in 2^-10 and `offs` in 2^-10 s, with the
/// distance capped at [`MAX_OFFS`]; the result is in 2^-(10 − `shift`) segments (`shift` 10:
/// whole segments; 0: 2^-10 segments).
#[inline]
pub fn cubic_term(c_q: u64, offs: u64, shift: u32) -> u64 {
    let offs = offs.min(MAX_OFFS);
    // wraps: u64 as in the ports (no wrap for C < 16 with |t − K| <= 2^18).
    c_q.wrapping_mul(offs * offs * offs) >> (3 * Q10 + shift)
}

/// The ports' microsecond clock (the low 32 bits of `tcp_mstamp`; differences wrap).
#[inline]
pub fn clock_us(now_ns: u64) -> u32 {
    // wraps: truncation of the u64 microsecond clock, as the ports' and the kernel's u32.
    (now_ns / 1000) as u32
}

/// `v[]` of `cubic_root`: for x in 0..64, `cbrt(x << 18) - 1`, hand-refined (Willy Tarreau).
const CBRT_TABLE: [u8; 64] = [
    0, 54, 54, 54, 118, 118, 118, 118, //
    123, 129, 134, 138, 143, 147, 151, 156, //
    157, 161, 164, 168, 170, 173, 176, 179, //
    181, 185, 187, 190, 192, 194, 197, 199, //
    200, 202, 204, 206, 209, 211, 213, 215, //
    217, 219, 221, 222, 224, 225, 227, 229, //
    231, 232, 234, 236, 237, 239, 240, 242, //
    244, 245, 246, 248, 250, 251, 252, 254, //
];

/// `fls64`: 1-based index of the most significant set bit, 0 for 0.
#[inline]
fn fls64(a: u64) -> u32 {
    64 - a.leading_zeros()
}

/// The kernel's integer cube root: a table lookup on the top bits, then one Newton-Raphson
/// step `x' = (2x + a / (x (x - 1))) / 3`, the division by 3 done as `* 341 >> 10`.
/// The kernel comment claims an average error of about 0.195 %.
#[inline]
pub fn cubic_root(a: u64) -> u32 {
    let b = fls64(a);
    if b < 7 {
        // a in 0..64: the table alone, rounded.
        return (u32::from(CBRT_TABLE[a as usize]) + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1; // about fls/3 - 1
    let shift = (a >> (b * 3)) as usize; // < 64 for every fls in 7..=64 (see tests)
    let mut x = ((u32::from(CBRT_TABLE[shift]) + 10) << b) >> 6;
    // wraps: C computes these in u32; x stays far below the wrap point for every u64 input.
    let q = (a / (u64::from(x) * u64::from(x - 1))) as u32;
    x = x.wrapping_mul(2).wrapping_add(q);
    x.wrapping_mul(341) >> 10
}

/// The floor of the cube root by bisection, as CUBIC computed it in Linux 2.6.13-2.6.20
/// before the table + Newton-Raphson `cubic_root` (seed 000 Table 1: 1032 against 79 clocks
/// on average). Exact: the largest `x` with `x^3 <= a`. Kept for that comparison
/// (`benches/cube_root.rs`); the algorithms use `cubic_root`.
pub fn cubic_root_bisection(a: u64) -> u32 {
    // cbrt(2^64) < 2^22: the answer lies in [0, 2^22)
    let (mut lo, mut hi) = (0u64, 1u64 << 22);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if u128::from(mid).pow(3) <= u128::from(a) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo as u32
}

/// ⌊∛a⌋, bit by bit (the BPF port's loop, bounded by 22 steps).
pub fn cbrt_floor(a: u64) -> u32 {
    // ∛(2^64) < 2642246: larger candidates would overflow their cube.
    const MAX_ROOT: u64 = 2_642_245;
    let mut x = 0u64;
    for s in (0..22).rev() {
        let y = x | (1 << s);
        if y <= MAX_ROOT && y * y * y <= a {
            x = y;
        }
    }
    x as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_root_table_values() {
        // a < 64 uses the table alone: (v[a] + 35) >> 6.
        assert_eq!(cubic_root(0), 0); // (0 + 35) >> 6
        assert_eq!(cubic_root(1), 1); // (54 + 35) = 89 >> 6
        assert_eq!(cubic_root(7), 2); // (118 + 35) = 153 >> 6; cbrt 7 = 1.91
        assert_eq!(cubic_root(8), 2); // (123 + 35) = 158 >> 6
        assert_eq!(cubic_root(27), 3); // (190 + 35) = 225 >> 6
        assert_eq!(cubic_root(63), 4); // (254 + 35) = 289 >> 6; cbrt 63 = 3.98
                                       // a = 2681735677 * 30 = 80452070310 (K for W_max - cwnd = 30): fls64 = 37,
                                       // b = (37*84 >> 8) - 1 = 11, shift = a >> 33 = 9, v[9] = 129,
                                       // x = (139 << 11) >> 6 = 4448, a / (4448 * 4447) = 4067,
                                       // (2*4448 + 4067) * 341 >> 10 = 12963 * 341 >> 10 = 4316 (exact root 4316.97).
        assert_eq!(cubic_root(80_452_070_310), 4316);
        // a = 2^60: fls64 = 61, b = 19, shift = 8, x = (133 << 19) >> 6 = 1089536,
        // a / (1089536 * 1089535) = 971218, (2179072 + 971218) * 341 >> 10 = 1049071
        // (exact 2^20 = 1048576: +0.047 %).
        assert_eq!(cubic_root(1 << 60), 1_049_071);
    }

    #[test]
    fn cubic_root_table_index_stays_in_range() {
        // shift = a >> 3b must index v[64] for every bit length: the largest a of each
        // length gives the largest shift; it must stay below 64, and the root must not
        // divide by zero (x >= 2).
        for fls in 7..=64u32 {
            let a = if fls == 64 { u64::MAX } else { (1u64 << fls) - 1 };
            let b = ((fls * 84) >> 8) - 1;
            assert!((a >> (b * 3)) < 64, "fls {fls}");
            assert!(cubic_root(a) > 0);
            assert!(cubic_root(1 << (fls - 1)) > 0);
        }
    }

    #[test]
    fn cubic_root_bisection_is_the_floor() {
        // The largest x with x^3 <= a: exact at cubes, one below them, and at the top of u64
        // (cbrt(2^64 - 1) = 2642245.9...).
        for x in [0u64, 1, 2, 3, 10, 1000, 2_642_245] {
            assert_eq!(cubic_root_bisection(x * x * x), x as u32);
            if x > 0 {
                assert_eq!(cubic_root_bisection(x * x * x - 1), x as u32 - 1);
            }
        }
        assert_eq!(cubic_root_bisection(u64::MAX), 2_642_245);
    }

    #[test]
    fn cubic_root_accuracy() {
        let exact = |a: u64| (a as f64).cbrt();
        // Exhaustively over 1..2^20 the root is within one unit of the real cube root:
        // measured max 0.9959 (a = 551285); a one-step Newton from a table cannot promise
        // rounding, but it never misses by a whole unit.
        let mut max_abs = 0.0f64;
        for a in 1u64..(1 << 20) {
            max_abs = max_abs.max((f64::from(cubic_root(a)) - exact(a)).abs());
        }
        // Log-uniform sample (16384 points per bit length, xorshift) of 2^(n-1)..2^n for
        // n in 7..=60: relative error against the real root.
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let (mut max_all, mut sum_all, mut n_all) = (0.0f64, 0.0f64, 0u32);
        let (mut max_cubic, mut sum_cubic, mut n_cubic) = (0.0f64, 0.0f64, 0u32);
        for bits in 7..=60u32 {
            let lo = 1u64 << (bits - 1);
            for _ in 0..16384 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let a = lo + s % lo;
                let e = ((f64::from(cubic_root(a)) - exact(a)) / exact(a)).abs();
                (max_all, sum_all, n_all) = (max_all.max(e), sum_all + e, n_all + 1);
                // CUBIC's own inputs: a = cube_factor * (W_max - cwnd) >= 2681735677 > 2^31.
                if bits > 31 {
                    (max_cubic, sum_cubic, n_cubic) = (max_cubic.max(e), sum_cubic + e, n_cubic + 1);
                }
            }
        }
        let (mean_all, mean_cubic) = (sum_all / f64::from(n_all), sum_cubic / f64::from(n_cubic));
        println!(
            "cubic_root: max abs error 1..2^20 = {max_abs:.4}; 2^6..2^60: max {:.4} %, mean {:.4} %; \
             2^31..2^60: max {:.4} %, mean {:.4} %",
            max_all * 100.0,
            mean_all * 100.0,
            max_cubic * 100.0,
            mean_cubic * 100.0
        );
        assert!(max_abs < 1.0, "{max_abs}");
        // Small inputs carry the quantisation of an integer root (cbrt 119 = 4.92 -> 4 is
        // -18.7 %); measured max 18.68 %, mean 0.84 %.
        assert!(max_all < 0.19 && mean_all < 0.01, "{max_all} {mean_all}");
        // Over CUBIC's range the kernel's claim (average ~0.195 %) holds with room: measured
        // max 0.155 %, mean 0.030 % (0.188 % max from 2^29 up).
        assert!(max_cubic < 0.0019 && mean_cubic < 0.0005, "{max_cubic} {mean_cubic}");
    }

    #[test]
    fn cube_root_is_the_floor() {
        for a in [0u64, 1, 7, 8, 26, 27, 999, 1000, 1001, u64::MAX] {
            let x = u64::from(cbrt_floor(a));
            assert!(x * x * x <= a && (x + 1).checked_pow(3).is_none_or(|c| c > a), "a {a}: {x}");
        }
        // K for W_last_max 1000, β 0.2, C 0.4: ∛(1000 · 0.5 · 2^30) = 8127.3 → 8127 (7.937 s).
        assert_eq!(cbrt_floor((1000 * (1 << 19)) << 10), 8127);
    }
}
