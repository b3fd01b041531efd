//! The kernel's clocks, computed from event time (ns since the time origin): jiffies
//! (`tcp_jiffies32`) at a run-time `HZ`, and the kernel's rounding `usecs_to_jiffies`. Every
//! algorithm that reads jiffies takes them from here.

/// `USEC_PER_SEC`.
pub const USEC_PER_SEC: u64 = 1_000_000;
/// `CONFIG_HZ` of the testbed's kernel: the simulator's host runs its timers (RTO, TLP,
/// RACK) and the min-RTT window on these jiffies, and the kernel checks assume it until
/// they measure the kernel's.
pub const TESTBED_HZ: u32 = 250;
/// One jiffy at [`TESTBED_HZ`], in ns.
pub const TESTBED_JIFFY_NS: u64 = 1_000_000_000 / TESTBED_HZ as u64;
/// `MAX_JIFFY_OFFSET` on 64-bit: `(LONG_MAX >> 1) - 1`.
pub const MAX_JIFFY_OFFSET: u64 = ((i64::MAX as u64) >> 1) - 1;

/// `tcp_jiffies32` at `hz` ticks per second: floor(now_ns * hz / 10^9) modulo 2^32.
#[inline]
pub fn jiffies32(now_ns: u64, hz: u32) -> u32 {
    // Split now_ns into seconds and the rest, so the product cannot overflow.
    let hz = u64::from(hz);
    let (s, r) = (now_ns / 1_000_000_000, now_ns % 1_000_000_000);
    // wraps: jiffies are u32 and wrap like tcp_jiffies32 (the low 32 bits of the exact value).
    s.wrapping_mul(hz).wrapping_add(r * hz / 1_000_000_000) as u32
}

/// `msecs_to_jiffies()` for an `HZ` that divides 1000 or is a multiple of it: ceil(ms * hz
/// / 1000) (`(m + MSEC_PER_SEC/HZ - 1) / (MSEC_PER_SEC/HZ)`, or `m * (HZ/MSEC_PER_SEC)`).
#[inline]
pub fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    // wraps: truncated to the kernel's unsigned long -> u32 jiffies of its callers.
    (u64::from(ms) * u64::from(hz)).div_ceil(1000) as u32
}

/// `usecs_to_jiffies()` for a run-time `HZ`: the kernel's rounding-up conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsecsToJiffies {
    /// `HZ` divides 10^6: `(u + USEC_PER_SEC/HZ - 1) / (USEC_PER_SEC/HZ)`.
    Div { usec_per_jiffy: u64 },
    /// Otherwise `(USEC_TO_HZ_MUL32 * u + USEC_TO_HZ_ADJ32) >> USEC_TO_HZ_SHR32`, with the
    /// constants `kernel/time/timeconst.bc` generates at build time.
    Mul { mul: u64, adj: u64, shr: u32 },
}

/// `!(USEC_PER_SEC % HZ)`: the kernel's test for the exact conversion.
fn divides_usec_per_sec(hz: u64) -> bool {
    USEC_PER_SEC / hz * hz == USEC_PER_SEC
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl UsecsToJiffies {
    pub fn new(hz: u64) -> Self {
        if divides_usec_per_sec(hz) {
            return UsecsToJiffies::Div { usec_per_jiffy: USEC_PER_SEC / hz };
        }
        // timeconst.bc: fmul(b,n,d) = (2^b*n + d - 1)/d; fmuls picks the least shift s with
        // fmul(s,n,d) >= 2^31; fadj(b,n,d) = 2^b*(d'-1)/d' with d' = d/gcd(n,d).
        let (n, d) = (u128::from(hz), u128::from(USEC_PER_SEC));
        let fmul = |s: u32| ((1u128 << s) * n).div_ceil(d);
        let shr = (0..96).find(|&s| fmul(s) >= 1u128 << 31).expect("HZ >= 1 reaches 2^31 below 2^96");
        let d2 = d / gcd(n, d);
        let adj = (1u128 << shr) * (d2 - 1) / d2;
        UsecsToJiffies::Mul { mul: fmul(shr) as u64, adj: adj as u64, shr }
    }

    /// `jiffies_to_usecs(MAX_JIFFY_OFFSET)` on 64-bit, truncated to `unsigned int` as the
    /// kernel's return type does: inputs above it map to `MAX_JIFFY_OFFSET`.
    pub fn max_usecs(hz: u64) -> u32 {
        if divides_usec_per_sec(hz) {
            // wraps: unsigned long product, then truncation to unsigned int.
            (USEC_PER_SEC / hz).wrapping_mul(MAX_JIFFY_OFFSET) as u32
        } else {
            let g = gcd(u128::from(hz), u128::from(USEC_PER_SEC)) as u64;
            // wraps: (j * HZ_TO_USEC_NUM) / HZ_TO_USEC_DEN in unsigned long.
            (MAX_JIFFY_OFFSET.wrapping_mul(USEC_PER_SEC / g) / (hz / g)) as u32
        }
    }

    #[inline]
    pub fn convert(self, u: u32, max_usecs: u32) -> u64 {
        if u > max_usecs {
            return MAX_JIFFY_OFFSET;
        }
        match self {
            UsecsToJiffies::Div { usec_per_jiffy } => u64::from(u).div_ceil(usec_per_jiffy),
            // wraps: u64 arithmetic as in C (it cannot overflow for u32 inputs).
            UsecsToJiffies::Mul { mul, adj, shr } => mul.wrapping_mul(u64::from(u)).wrapping_add(adj) >> shr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_are_the_floor_of_ticks_modulo_2_32() {
        // 10 s + 999_999 ns at HZ 1000 is 10_000.999 ticks: floor 10_000.
        assert_eq!(jiffies32(10_000_999_999, 1000), 10_000);
        // 2^32 ticks at HZ 1000 is 4_294_967.296 s: the counter is back at 0 there.
        assert_eq!(jiffies32(4_294_967_296_000_000, 1000), 0);
        // The exact u128 product gives the same low 32 bits at any time and HZ.
        for (t, hz) in [(u64::MAX, 250), (123_456_789_012_345, 300), (999_999_999, 1000)] {
            assert_eq!(jiffies32(t, hz), ((u128::from(t) * u128::from(hz)) / 1_000_000_000) as u32);
        }
    }
}
