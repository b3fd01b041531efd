//! Sequence-space comparisons, as Linux's `before()` and `after()` in `include/net/tcp.h`:
//! 32-bit counters that wrap (sequence numbers, `tp->delivered`, TCP timestamps, jiffies)
//! compared by the sign of their difference, so `a` is before `b` when it lies less than
//! 2^31 behind it. The kernel writes the negations as `!before` and `!after`; so do callers.

/// `before(seq1, seq2)`: `seq1` comes strictly before `seq2`.
#[inline(always)]
pub fn before(seq1: u32, seq2: u32) -> bool {
    // Wraps: the difference modulo 2^32, read as signed.
    (seq1.wrapping_sub(seq2) as i32) < 0
}

/// `after(seq2, seq1)`: `seq2` comes strictly after `seq1` (`before(seq1, seq2)`).
#[inline(always)]
pub fn after(seq2: u32, seq1: u32) -> bool {
    before(seq1, seq2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_holds_across_the_wrap() {
        // 2^32 - 1 is one behind 0 once the counter wraps; 2^31 - 1 ahead is still after.
        // Exactly 2^31 apart, the difference reads as i32::MIN either way round, so each is
        // before the other: the order holds only within 2^31, as in the kernel.
        assert!(before(u32::MAX, 0) && after(0, u32::MAX));
        assert!(before(5, 6) && !before(6, 5) && !before(5, 5) && !after(5, 5));
        assert!(before(0, 0x7fff_ffff) && !before(0x7fff_ffff, 0));
        assert!(before(0, 0x8000_0000) && before(0x8000_0000, 0));
    }
}
