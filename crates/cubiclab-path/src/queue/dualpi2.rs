//! DualPI2 (RFC 9332, the coupled dual-queue AQM) as Linux 6.18 runs it:
//! `net/sched/sch_dualpi2.c` (merged in 6.17) with its defaults.
//!
//! - Two FIFOs: L4S packets (ECN field ECT(1) or CE, the `l4s_ect` mask; or any ECT and CE,
//!   the `any_ect` mask) join the second, the others the first (Classic). The buffer's limit counts both (Linux's `limit`,
//!   default 10000 packets).
//! - A PI2 controller updates a base probability p' every `tupdate` from the larger of the
//!   two heads' queue delays (`calculate_probability`).
//! - At dequeue (`drop_dequeue`, Linux's default), while 2 MTUs or more wait: a Classic
//!   packet is hit with p_C = p'^2 (two draws), dropped if Not-ECT, marked if ECT(0); an L4S
//!   packet is marked with p_L = k p' (coupling factor k = 2). Overloaded (k p' > 1), an
//!   L4S packet is dropped with p'^2 and marked otherwise (`drop_on_overload`), a Classic
//!   ECT packet dropped instead of marked. Then an L4S packet that waited more than the
//!   step threshold (1 ms) is marked.
//! - The scheduler is Linux's weighted round robin on bytes (`classic_protection`, 10%
//!   for Classic), not RFC 9332's time-shifted FIFO: a credit that L4S departures raise by
//!   10 x their size and Classic ones lower by 90 x, L served while it is not positive.
//!
//! Not modelled: classification by tc filters or priority (so every L4S packet is
//! ECN-capable), `min_qlen_step` (0: the step applies always), a step
//! threshold in packets, `drop_enqueue`, the memory limit (`skb->truesize` is not
//! modelled; the packet limit is), and GSO splitting (the path's packets are single
//! segments already). The MTU is a full packet on the wire.

use super::{mark, Buffer, Fifo, Limit, Scheduler, Table, Verdict};
use crate::rng::Rng;
use crate::{PathPacket, Time};

/// Probability 1: the u32 range.
const MAX_PROB: u32 = u32::MAX;
/// tc gives alpha and beta in 1/256 Hz; the kernel scales them to units of 64 ns of delay.
const ALPHA_BETA_SCALE: f64 = 256.0;
const ALPHA_BETA_SCALING: u32 = 8 - 6;
/// `ALPHA_BETA_GRANULARITY`: 64 ns.
const DELTA_SHIFT: u32 = 6;
/// The netlink range of alpha and beta (x 256): 1 to 2^31 - 1.
const ALPHA_BETA_MAX: u32 = (1 << 31) - 1;
/// `MAX_WC`: the weights are percentages.
const MAX_WC: u32 = 100;

/// DualPI2's settings (file: `[bottleneck.dualpi2]`). Defaults: Linux's
/// `dualpi2_reset_default`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2Spec {
    /// The queue delay PI2 aims at, ns (file: "15ms").
    #[serde(rename = "target")]
    pub target_ns: u64,
    /// Time between probability updates, ns (file: "16ms").
    #[serde(rename = "tupdate")]
    pub tupdate_ns: u64,
    /// The integral gain, Hz (tc's `alpha`; the kernel keeps it x 256, truncated: its
    /// default 41/256 = 0.16015625).
    pub alpha: f64,
    /// The proportional gain, Hz (tc's `beta`; the kernel's default 819/256 = 3.19921875).
    pub beta: f64,
    /// An L4S packet that waited more than this is marked, ns (file: "1ms").
    #[serde(rename = "step_thresh")]
    pub step_thresh_ns: u64,
    /// k: the L4S queue's probability is k p', the Classic one's p'^2. 1 to 255 (a u8 in
    /// the kernel).
    pub coupling_factor: u32,
    /// The Classic queue's share of the scheduler, percent (the L4S queue has the rest).
    pub classic_protection: u32,
    /// Overloaded (k p' > 1), drop L4S packets with p'^2 rather than mark them all and let
    /// the queue grow to the limit (tc's `drop_on_overload` / `overflow`).
    pub drop_on_overload: bool,
    /// Which ECN codepoints go to the L4S queue (tc's `l4s_ect` / `any_ect`): "l4s_ect",
    /// ECT(1) and CE (RFC 9331's identifier, Linux's default); "any_ect", ECT(0) too, so that
    /// a sender that cannot set ECT(1) (DCTCP on Linux 6.18, which sends ECT(0)) is L4S.
    pub ecn_mask: EcnMask,
}

/// `TCA_DUALPI2_ECN_MASK`: the ECN bits that classify a packet as L4S
/// (`dualpi2_skb_classify`: `cb->ect & q->ecn_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMask {
    /// `INET_ECN_ECT_1`: ECT(1) and CE.
    L4sEct,
    /// `INET_ECN_MASK`: ECT(0), ECT(1) and CE.
    AnyEct,
}

impl EcnMask {
    const fn bits(self) -> u8 {
        match self {
            EcnMask::L4sEct => crate::Ecn::Ect1.bits(),
            EcnMask::AnyEct => crate::Ecn::Ce.bits(),
        }
    }
}

impl Default for DualPi2Spec {
    fn default() -> Self {
        Self {
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha: 41.0 / ALPHA_BETA_SCALE,
            beta: 819.0 / ALPHA_BETA_SCALE,
            step_thresh_ns: 1_000_000,
            coupling_factor: 2,
            classic_protection: 10,
            drop_on_overload: true,
            ecn_mask: EcnMask::L4sEct,
        }
    }
}

impl DualPi2Spec {
    /// A gain in Hz as tc sends it: x 256, truncated.
    fn netlink(gain: f64) -> f64 {
        (gain * ALPHA_BETA_SCALE).trunc()
    }

    /// A gain as `dualpi2_scale_alpha_beta` keeps it: probability (of 2^32) per 64 ns of
    /// delay per update.
    fn scaled(gain: f64) -> u32 {
        ((Self::netlink(gain) as u64 * MAX_PROB as u64 >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
    }
}

impl Table for DualPi2Spec {
    fn validate(&self, at: &str) -> Result<(), String> {
        if self.tupdate_ns == 0 {
            return Err(format!("{at}.tupdate is 0; it must be > 0"));
        }
        for (key, gain) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(1.0..=ALPHA_BETA_MAX as f64).contains(&Self::netlink(gain)) {
                return Err(format!(
                    "{at}.{key} is {gain}; allowed: 1/256 to {} Hz (tc's range, in steps of 1/256 Hz)",
                    ALPHA_BETA_MAX as f64 / ALPHA_BETA_SCALE
                ));
            }
        }
        if !(1..=u8::MAX as u32).contains(&self.coupling_factor) {
            return Err(format!("{at}.coupling_factor is {}; allowed: 1 to 255", self.coupling_factor));
        }
        if self.classic_protection > MAX_WC {
            return Err(format!("{at}.classic_protection is {}; allowed: 0 to {MAX_WC} (percent)", self.classic_protection));
        }
        Ok(())
    }

    fn times(&self) -> Vec<(&'static str, Time)> {
        vec![("target", self.target_ns), ("tupdate", self.tupdate_ns), ("step_thresh", self.step_thresh_ns)]
    }
}

/// DualPI2's two FIFOs and its controller: a [`Scheduler`] of its own packets.
pub struct DualPi2<P> {
    classic: Fifo<P>,
    l4s: Fifo<P>,
    /// Of the two FIFOs together.
    limit: Limit,
    spec: DualPi2Spec,
    /// `pi2_alpha`, `pi2_beta`.
    alpha: u32,
    beta: u32,
    /// `psched_mtu`, bytes.
    mtu: u64,
    /// p', of `MAX_PROB`.
    prob: u32,
    /// The delay at the update before, ns.
    last_qdelay: u64,
    next_update: Time,
    /// The scheduler's credit: L4S is served while it is not positive.
    credit: i32,
    /// Its value with both FIFOs empty: mtu x (wc - wl).
    credit_init: i32,
    rng: Rng,
}

impl<P: PathPacket> DualPi2<P> {
    pub(crate) fn new(spec: &DualPi2Spec, b: &Buffer) -> Self {
        let wc = spec.classic_protection as i32;
        let credit_init = b.wire_bytes as i32 * (wc - (MAX_WC as i32 - wc));
        Self {
            classic: Fifo::default(),
            l4s: Fifo::default(),
            limit: b.limit,
            spec: *spec,
            alpha: DualPi2Spec::scaled(spec.alpha),
            beta: DualPi2Spec::scaled(spec.beta),
            mtu: b.wire_bytes as u64,
            prob: 0,
            last_qdelay: 0,
            next_update: spec.tupdate_ns,
            credit: credit_init,
            credit_init,
            rng: b.rng.clone(),
        }
    }

    /// `calculate_probability` for a delay of `qdelay` ns: p' moved by alpha (qdelay -
    /// target) + beta (qdelay - last qdelay), kept within 0 and 1 (and, without
    /// drop_on_overload, within 1 / k).
    fn update(&mut self, qdelay: u64) {
        // s64 in the kernel, which overflows only for delays over ~4 s at the largest gains.
        let delta = (qdelay as i64 - self.spec.target_ns as i64)
            .wrapping_mul(self.alpha as i64)
            .wrapping_add((qdelay as i64 - self.last_qdelay as i64).wrapping_mul(self.beta as i64));
        self.last_qdelay = qdelay;
        // The kernel adds in s64 and keeps the low 32 bits (u32 new_prob); a wrap reads as
        // passing the bound.
        let prob = self.prob;
        let next = if delta > 0 {
            let up = ((delta as u64 >> DELTA_SHIFT) as i64).wrapping_add(prob as i64) as u32;
            if up < prob {
                MAX_PROB
            } else {
                up
            }
        } else {
            let down = (prob as i64).wrapping_sub((delta.unsigned_abs() >> DELTA_SHIFT) as i64) as u32;
            if down > prob {
                0
            } else {
                down
            }
        };
        self.prob = if self.spec.drop_on_overload { next } else { next.min(MAX_PROB / self.spec.coupling_factor) };
    }

    /// The hrtimer, run up to `now` before each arrival and dequeue: the delay is the older
    /// head's, of either FIFO.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let t = self.next_update;
            let delay = |f: &Fifo<P>| f.head_enqueued().map_or(0, |h| t - h);
            let qdelay = delay(&self.classic).max(delay(&self.l4s));
            self.update(qdelay);
            self.next_update += self.spec.tupdate_ns;
        }
    }

    /// `dualpi2_roll`: true with probability (prob + 1) / 2^32.
    fn roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// `must_drop` with the marking it does on the way: the verdict of the PI2 probability
    /// on a head leaving `backlog` bytes behind.
    fn pi2_verdict(&mut self, p: &P, l4s: bool, backlog: u64) -> Verdict {
        if backlog < 2 * self.mtu {
            return Verdict::Pass;
        }
        let prob = self.prob;
        let l_prob = prob as u64 * self.spec.coupling_factor as u64;
        let overload = l_prob > MAX_PROB as u64;
        if !l4s {
            // p_C = p'^2: two draws.
            if self.roll(prob) && self.roll(prob) {
                return if overload || !p.ecn_capable() { Verdict::Drop } else { Verdict::Mark };
            }
            Verdict::Pass
        } else if overload {
            if self.spec.drop_on_overload && self.roll(prob) && self.roll(prob) {
                Verdict::Drop
            } else {
                Verdict::Mark
            }
        } else if self.roll(l_prob as u32) {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

/// Classification by the ECN field (`dualpi2_skb_classify`): any of the mask's bits set.
#[inline]
fn is_l4s<P: PathPacket>(p: &P, mask: EcnMask) -> bool {
    p.ecn().bits() & mask.bits() != 0
}

impl<P: PathPacket> Scheduler<P> for DualPi2<P> {
    /// `dualpi2_enqueue_skb` with `drop_dequeue`: the limit counts both FIFOs; the verdicts
    /// come at dequeue.
    fn enqueue(&mut self, now: Time, p: P, _: impl FnMut(P)) -> Verdict {
        self.catch_up(now);
        if self.limit.full(self.len_packets(), self.len_bytes(), p.wire_bytes()) {
            return Verdict::Drop;
        }
        if is_l4s(&p, self.spec.ecn_mask) {
            self.l4s.push(now, p);
        } else {
            self.classic.push(now, p);
        }
        Verdict::Pass
    }

    /// `dualpi2_qdisc_dequeue`: `dequeue_packet`'s choice (L4S while the credit is not
    /// positive or Classic is empty), `must_drop`, then the step for L4S, then the credit
    /// if the head leaves; both FIFOs empty reset the credit
    /// (`dualpi2_reset_c_protection`).
    fn dequeue(&mut self, now: Time, mut dropped: impl FnMut(P)) -> Option<(P, Verdict)> {
        self.catch_up(now);
        let wc = self.spec.classic_protection as i32;
        loop {
            if self.classic.is_empty() && self.l4s.is_empty() {
                self.credit = self.credit_init;
                return None;
            }
            let l4s = !self.l4s.is_empty() && (self.classic.is_empty() || self.credit <= 0);
            let (served, other) = if l4s { (&mut self.l4s, &self.classic) } else { (&mut self.classic, &self.l4s) };
            // The credit change per byte if it leaves: none while the other FIFO is empty.
            let weight = match (l4s, other.is_empty()) {
                (_, true) => 0,
                (true, false) => wc,
                (false, false) => wc - MAX_WC as i32,
            };
            let Some((enqueued, mut p)) = served.pop() else { unreachable!("the scheduler served an empty FIFO") };
            let backlog = served.len_bytes() + other.len_bytes();
            let mut verdict = self.pi2_verdict(&p, l4s, backlog);
            if verdict == Verdict::Drop {
                dropped(p);
                continue;
            }
            if l4s && now - enqueued > self.spec.step_thresh_ns {
                verdict = Verdict::Mark;
            }
            self.credit += weight * p.wire_bytes() as i32;
            if verdict == Verdict::Mark {
                mark(&mut p);
            }
            return Some((p, verdict));
        }
    }

    fn len_packets(&self) -> usize {
        self.classic.len_packets() + self.l4s.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.classic.len_bytes() + self.l4s.len_bytes()
    }

    fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        self.classic.iter().chain(self.l4s.iter()).filter(|p| pred(p)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Policy, Queue, QueueDiscipline, QueueSettings};
    use crate::test_packet::{ect, ect1, pkt, Pkt};

    fn dualpi2(spec: DualPi2Spec, limit: Limit) -> Queue<Pkt> {
        let b = Buffer { limit, wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(9, 4) };
        Queue::new(QueueDiscipline::DualPi2, &QueueSettings { dualpi2: spec, ..Default::default() }, b)
    }

    fn state(q: &mut Queue<Pkt>) -> &mut DualPi2<Pkt> {
        let Policy::DualPi2(d) = &mut q.policy else { unreachable!() };
        d
    }

    #[test]
    fn the_kernel_defaults_scale_alpha_and_beta_as_it_does() {
        // dualpi2_scale_alpha_beta: alpha 41 (x 256) -> floor(floor(41 (2^32 - 1) / 4) / 1e9)
        // = 44, beta 819 -> 879 (per 64 ns of delay, of 2^32): 44 / 64 x 1e9 / 2^32 =
        // 0.16007 Hz and 3.1978 Hz, RFC 9332's 0.16 and 3.2.
        let s = DualPi2Spec::default();
        assert_eq!((DualPi2Spec::scaled(s.alpha), DualPi2Spec::scaled(s.beta)), (44, 879));
        // tc truncates: 0.16 Hz is 40.96 -> 40.
        assert_eq!(DualPi2Spec::netlink(0.16), 40.0);
    }

    #[test]
    fn pi2_moves_p_by_alpha_and_beta_per_second_of_delay() {
        // RFC 9332 A.1: p' += alpha (qdelay - target) + beta (qdelay - qdelay_prev), alpha
        // and beta in Hz and delays in s. In the kernel's integers from p' = 0: 25 ms after
        // 20 ms, delta = 10e6 x 44 + 5e6 x 879 = 4,835,000,000, / 64 = 75,546,875 (of 2^32:
        // 1.759%; in Hz terms 0.16 x 0.010 + 3.2 x 0.005 = 1.76%).
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(100));
        let d = state(&mut q);
        d.last_qdelay = 20_000_000;
        d.update(25_000_000);
        assert_eq!((d.prob, d.last_qdelay), (75_546_875, 25_000_000));
        // Then 25 ms steady: + 10e6 x 44 / 64 = 6,875,000.
        d.update(25_000_000);
        assert_eq!(d.prob, 75_546_875 + 6_875_000);
        // An empty queue pulls down by 15e6 x 44 + 25e6 x 879 (/ 64) = 353,671,875, more
        // than p': it stops at 0.
        d.update(0);
        assert_eq!(d.prob, 0);
        // Without drop_on_overload p' stops at 1/k.
        let mut q = dualpi2(DualPi2Spec { drop_on_overload: false, ..DualPi2Spec::default() }, Limit::Packets(100));
        let d = state(&mut q);
        d.prob = MAX_PROB - 10;
        d.update(1_000_000_000);
        assert_eq!(d.prob, MAX_PROB / 2);
    }

    #[test]
    fn the_timer_uses_the_older_head_of_either_queue() {
        // First update at tupdate (16 ms), then every 16 ms. An L4S packet waits from 0, a
        // Classic one from 10 ms: at 16 ms the delay is max(16, 6) ms = 16 ms, so p' =
        // (1e6 x 44 + 16e6 x 879) / 64 = 220,437,500.
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(100));
        q.enqueue(0, ect1(1500));
        q.enqueue(10_000_000, pkt(1500));
        q.enqueue(15_999_999, pkt(1500));
        assert_eq!(state(&mut q).prob, 0);
        q.enqueue(16_000_000, pkt(1500));
        assert_eq!(state(&mut q).prob, 220_437_500);
    }

    /// Of the L4S and of the Classic packets through a DualPI2 queue at p' = `prob` (timer
    /// stopped), the fractions marked and dropped: (L marked, L dropped, C marked, C
    /// dropped). One L4S (ECT(1)) and one Classic (`classic`) packet arrive at a time, and
    /// heads leave until 20 packets wait (more than 2 MTUs, and all at time 0 so that none
    /// waits past the step).
    fn rates(prob: f64, classic: fn(u32) -> Pkt) -> [f64; 4] {
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(1000));
        (state(&mut q).prob, state(&mut q).next_update) = ((prob * MAX_PROB as f64) as u32, Time::MAX);
        for _ in 0..10 {
            q.enqueue(0, ect1(1500));
            q.enqueue(0, classic(1500));
        }
        // Per kind (L4S, Classic): [left, marked, dropped].
        let mut n = [[0u32; 3]; 2];
        for _ in 0..200_000 {
            q.enqueue(0, ect1(1500));
            q.enqueue(0, classic(1500));
            while q.len_packets() > 20 {
                let mut dropped = Vec::new();
                if let Some((p, v)) = q.dequeue(0, |p| dropped.push(p)) {
                    let k = &mut n[!p.l4s as usize];
                    k[0] += 1;
                    k[1] += (v == Verdict::Mark) as u32;
                }
                for p in dropped {
                    n[!p.l4s as usize][2] += 1;
                }
            }
        }
        let of = |k: [u32; 3], i: usize| k[i] as f64 / (k[0] + k[2]) as f64;
        [of(n[0], 1), of(n[0], 2), of(n[1], 1), of(n[1], 2)]
    }

    #[test]
    fn the_coupling_marks_l4s_with_k_p_and_classic_with_p_squared() {
        // RFC 9332 Sec. 2.1: p_C = (p_L / k)^2, i.e. p_L = 2 sqrt(p_C) with k = 2. At p' = 0.2:
        // L4S marked with 0.4, Not-ECT Classic dropped with 0.04 and never marked; ECT(0)
        // Classic marked with 0.04 and never dropped. About 200,000 packets of each kind: the
        // standard errors are 0.0011 and 0.0004.
        let [l_marked, l_dropped, c_marked, c_dropped] = rates(0.2, pkt);
        assert!((l_marked - 0.4).abs() < 0.005 && l_dropped == 0.0, "p_L {l_marked}, dropped {l_dropped}");
        assert!((c_dropped - 0.04).abs() < 0.002 && c_marked == 0.0, "p_C {c_dropped}, marked {c_marked}");
        assert!((l_marked - 2.0 * c_dropped.sqrt()).abs() < 0.02, "p_L {l_marked} vs 2 sqrt(p_C)");
        let [_, _, c_marked, c_dropped] = rates(0.2, ect);
        assert!((c_marked - 0.04).abs() < 0.002 && c_dropped == 0.0, "ECT(0) Classic: {c_marked} {c_dropped}");
        // Overload (k p' = 1.2 > 1), drop_on_overload: L4S dropped with p'^2 = 0.36 and
        // marked otherwise; ECT(0) Classic dropped with 0.36 instead of marked.
        let [l_marked, l_dropped, c_marked, c_dropped] = rates(0.6, ect);
        assert!((l_dropped - 0.36).abs() < 0.005 && (l_marked + l_dropped - 1.0).abs() < 1e-12, "{l_marked} {l_dropped}");
        assert!((c_dropped - 0.36).abs() < 0.005 && c_marked == 0.0, "overloaded ECT(0): {c_marked} {c_dropped}");
    }

    #[test]
    fn the_step_marks_l4s_packets_that_waited_over_1ms_and_nothing_below_2_mtus() {
        // p' = 0: only the step acts. An L4S head that waited 1 ms is not marked (not more
        // than the threshold), one that waited 1 ms + 1 ns is; a Classic one is not.
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(100));
        state(&mut q).next_update = Time::MAX;
        q.enqueue(0, ect1(1500));
        q.enqueue(0, ect1(1500));
        q.enqueue(0, ect(1500));
        assert_eq!(q.dequeue(1_000_000, |_| unreachable!()).map(|(_, v)| v), Some(Verdict::Pass));
        assert_eq!(q.dequeue(1_000_001, |_| unreachable!()).map(|(_, v)| v), Some(Verdict::Mark));
        assert_eq!(q.dequeue(5_000_000, |_| unreachable!()).map(|(_, v)| v), Some(Verdict::Pass));
        // At p' = 1 (k p' overloaded, every draw a hit), Classic Not-ECT heads are dropped
        // only while 2 full packets or more remain behind them.
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(100));
        (state(&mut q).prob, state(&mut q).next_update) = (MAX_PROB, Time::MAX);
        for _ in 0..4 {
            q.enqueue(0, pkt(1500));
        }
        let mut drops = 0;
        assert!(q.dequeue(0, |_| drops += 1).is_some());
        // Heads 1 and 2 leave 4500 and 3000 bytes behind: dropped; head 3 leaves 1500: sent.
        assert_eq!((drops, q.len_packets()), (2, 1));
    }

    #[test]
    fn the_scheduler_gives_classic_10_percent_of_the_bytes() {
        // dualpi2_calculate_c_protection with wc = 10: credit from 1500 x (10 - 90) =
        // -120,000; an L4S departure adds 10 x 1500, a Classic one takes 90 x 1500. L4S is
        // served at credit <= 0: nine times (to +15,000), then Classic once (back to
        // -120,000): 9 L4S packets per Classic one while both wait.
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(100));
        state(&mut q).next_update = Time::MAX;
        for _ in 0..20 {
            q.enqueue(0, ect1(1500));
            q.enqueue(0, pkt(1500));
        }
        let order: String =
            (0..20).map(|_| if q.dequeue(0, |_| unreachable!()).unwrap().0.l4s { 'L' } else { 'C' }).collect();
        assert_eq!(order, "LLLLLLLLLCLLLLLLLLLC");
        // The 2 L4S packets left raise the credit by 2 x 15,000; the Classic ones after them,
        // alone, change nothing; both FIFOs empty reset it.
        while q.dequeue(0, |_| unreachable!()).is_some_and(|(p, _)| p.l4s) {}
        assert_eq!(state(&mut q).credit, -90_000);
        while q.dequeue(0, |_| unreachable!()).is_some() {}
        assert_eq!(state(&mut q).credit, -120_000);
    }

    #[test]
    fn the_mask_decides_which_codepoints_are_l4s() {
        // dualpi2_skb_classify: ect & mask. l4s_ect (0b01): ECT(1) 0b01 and CE 0b11 are L4S,
        // ECT(0) 0b10 and Not-ECT are Classic; any_ect (0b11) takes ECT(0) as well.
        let ce = Pkt { ce: true, ..ect(1500) };
        for (mask, l4s) in [(EcnMask::L4sEct, [false, false, true, true]), (EcnMask::AnyEct, [false, true, true, true])] {
            let got = [pkt(1500), ect(1500), ect1(1500), ce].map(|p| is_l4s(&p, mask));
            assert_eq!(got, l4s, "{mask:?}");
        }
        let mut q = dualpi2(DualPi2Spec { ecn_mask: EcnMask::AnyEct, ..DualPi2Spec::default() }, Limit::Packets(10));
        q.enqueue(0, ect(1500));
        q.enqueue(0, pkt(1500));
        let d = state(&mut q);
        assert_eq!((d.classic.len_packets(), d.l4s.len_packets()), (1, 1));
    }

    #[test]
    fn the_limit_counts_both_queues() {
        let mut q = dualpi2(DualPi2Spec::default(), Limit::Packets(3));
        let v: Vec<Verdict> = [ect1(1500), pkt(1500), ect1(1500), pkt(1500)].map(|p| q.enqueue(0, p)).into();
        assert_eq!(v, vec![Verdict::Pass, Verdict::Pass, Verdict::Pass, Verdict::Drop]);
        let d = state(&mut q);
        assert_eq!((d.classic.len_packets(), d.l4s.len_packets()), (1, 2));
    }

    #[test]
    fn out_of_range_settings_are_refused_naming_the_key() {
        let at = "bottleneck.dualpi2";
        let d = DualPi2Spec::default();
        assert!(d.validate(at).is_ok());
        assert_eq!(
            DualPi2Spec { alpha: 0.001, ..d }.validate(at).unwrap_err(),
            "bottleneck.dualpi2.alpha is 0.001; allowed: 1/256 to 8388607.99609375 Hz (tc's range, in steps of 1/256 Hz)"
        );
        assert!(DualPi2Spec { beta: f64::NAN, ..d }.validate(at).unwrap_err().starts_with("bottleneck.dualpi2.beta is NaN"));
        assert_eq!(
            DualPi2Spec { coupling_factor: 0, ..d }.validate(at).unwrap_err(),
            "bottleneck.dualpi2.coupling_factor is 0; allowed: 1 to 255"
        );
        assert!(DualPi2Spec { coupling_factor: 255, ..d }.validate(at).is_ok());
        assert!(DualPi2Spec { coupling_factor: 256, ..d }.validate(at).is_err());
        assert_eq!(
            DualPi2Spec { classic_protection: 101, ..d }.validate(at).unwrap_err(),
            "bottleneck.dualpi2.classic_protection is 101; allowed: 0 to 100 (percent)"
        );
        assert_eq!(DualPi2Spec { tupdate_ns: 0, ..d }.validate(at).unwrap_err(), "bottleneck.dualpi2.tupdate is 0; it must be > 0");
    }
}
