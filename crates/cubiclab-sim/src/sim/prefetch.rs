//! Many flows: their state no longer fits the caches (a `Flow` is about 1.8 KB, its rings
//! some KB more; a core's L2 holds a few hundred flows), and each packet finds its flow's
//! state in memory: at 10,000 flows about 35 cache misses a delivered packet (callgrind's
//! cache model with a 4 MB last level), which cost more than the packet's instructions.
//! The next packet to need a flow is known ahead: a link serializes the packet it will
//! hand over next, and a delay line's packets leave in order. Its flow's state is fetched
//! then, while other events run, and is in the cache when the packet needs it. A hint
//! only: nothing is read or written, and results do not change.

use super::{Flow, Sim};

/// Flows from which the state is fetched ahead: below, it stays in the caches anyway and
/// the hints would only cost instructions.
const PREFETCH_FROM_FLOWS: usize = 256;

impl Sim {
    /// The packet at the head of delay line `id` is the next to leave it: if it reaches
    /// its host there, fetch its flow's state (the receiver's or the sender's work).
    #[inline(always)]
    pub(super) fn prefetch_pipe_head(&self, id: u32) {
        if self.flows.len() < PREFETCH_FROM_FLOWS {
            return;
        }
        if let Some(p) = self.pipes[id as usize].head().filter(|p| p.hops_left() == 0) {
            prefetch::<Flow>(&self.flows[p.flow as usize]);
        }
    }

    /// The packet now in service on `link` is the next it hands over: fetch what
    /// `on_tx_done` reads of its flow.
    #[inline(always)]
    pub(super) fn prefetch_in_service(&self, link: u32) {
        if self.flows.len() < PREFETCH_FROM_FLOWS {
            return;
        }
        if let Some(p) = self.links[link as usize].in_service() {
            let fl = &self.flows[p.flow as usize];
            prefetch(&fl.tx_bytes);
            prefetch(&fl.routes);
        }
    }
}

/// Ask the CPU to bring every cache line of `x` into the cache.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = (x as *const T).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint that loads nothing the program sees and faults
            // on no address; this one stays inside `x`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
