//! The kernel's `get_random_u32_below(n)` made reproducible: a xorshift64* generator seeded
//! from the run's seed stands in for the kernel's entropy, and the draw is reduced to
//! `0..n` by the kernel's multiply-shift (`(u64)r * n >> 32`). Algorithms that draw (BBR's
//! PROBE_BW entry phase, BBRv3's probe wait, NV's reset period) own one each. The BPF ports
//! draw the default stream with cubiclab-bpf's `port.h` (`port_random_u32`), so the per-ACK
//! check's unseeded replay draws what the kernel drew.

/// A seeded stand-in for the kernel's random numbers.
#[derive(Clone, Debug)]
pub struct KernelRandom {
    /// xorshift64* state; never zero.
    state: u64,
}

impl Default for KernelRandom {
    fn default() -> Self {
        Self { state: 0x9E37_79B9_7F4A_7C15 }
    }
}

impl KernelRandom {
    /// Restart from `seed` (any value): splitmix64's finalizer spreads nearby seeds, and the
    /// low bit keeps the xorshift state non-zero.
    pub fn seed(&mut self, seed: u64) {
        // wraps: splitmix64 is arithmetic modulo 2^64.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.state = (z ^ (z >> 31)) | 1;
    }

    /// `get_random_u32()`: a 32-bit draw.
    pub fn u32(&mut self) -> u32 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        // wraps: xorshift64*'s multiplier is applied modulo 2^64.
        (self.state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }

    /// `get_random_u32_below(n)`: a 32-bit draw scaled to `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.u32() as u64 * n as u64) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_below_n_and_repeat_per_seed() {
        // The multiply-shift maps a u32 into 0..n; the same seed gives the same draws.
        let (mut a, mut b) = (KernelRandom::default(), KernelRandom::default());
        a.seed(42);
        b.seed(42);
        let da: Vec<u32> = (0..1000).map(|_| a.below(7)).collect();
        let db: Vec<u32> = (0..1000).map(|_| b.below(7)).collect();
        assert_eq!(da, db);
        assert!(da.iter().all(|&d| d < 7));
        // All seven values occur in 1000 draws (each misses with probability (6/7)^1000).
        assert!((0..7).all(|v| da.contains(&v)));
        assert_eq!(a.below(0), 0);
    }
}
