//! `cubic-2.0`: Linux CUBIC v2.0 as shipped in kernels 2.6.19 to 2.6.21, the CUBIC that
//! Leith et al. measured in 2007 (seed 002) and that seed 000 Table 1 lists before v2.1.
//!
//! Sources read (none copied):
//! - `net/ipv4/tcp_cubic.c`, `MODULE_VERSION("2.0")`, the stored copy from the 2.6.15 to
//!   2.6.17 era (still `#include <linux/config.h>`, `bictcp_K()` inline): `max_increment`
//!   16, `beta` 819/1024 (`BICTCP_BETA_SCALE`), `initial_ssthresh` 100, `bic_scale` 41,
//!   `loss_cwnd`, `delayed_ack` (`ACK_RATIO_SHIFT` 4) updated by `pkts_acked`, the
//!   bisection cube root seeded from a table of 65536·∛i, `bictcp_update`, `measure_delay`
//!   (receiver timestamps), `bictcp_recalc_ssthresh`, `bictcp_undo_cwnd`, `bictcp_state`.
//! - The -stable patch "tcp: cubic scaling error" (Stephen Hemminger, patch from Sangtae Ha;
//!   posted to LKML 2006-10-31 as "[PATCH 58/61]" of a -stable review against 2.6.18.1,
//!   tested by its author on 2.6.19-rc3), which shows the 2.6.18 code it fixes: the
//!   constants precomputed in `cubictcp_register` (`beta_scale`, `cube_rtt_scale`,
//!   `cube_factor` = 2^40 / (bic_scale·10)).
//! - Neal Cardwell's commit 5a45f008 "tcp: fix undo after RTO for CUBIC" (2012), which
//!   confirms that until then undo restored `last_max_cwnd`, and that entering Loss reset
//!   everything including `loss_cwnd`.
//!
//! The 2.6.19 file itself is not in the stored corpus: this is the stored v2.0 logic with the
//! precomputed constants of 2.6.18 and the three lines of the fix, which is what 2.6.19 to
//! 2.6.21 ran apart from the cube root of 2.6.21 (below).
//!
//! # The 2.6.19 scaling bug
//!
//! The patch message: "Doug Leith observed a discrepancy between the version of CUBIC
//! described in the papers and the version in 2.6.18. A math error related to scaling causes
//! Cubic to grow too slowly." It changes three lines:
//! 1. `cube_rtt_scale = (bic_scale << 3) / 10` became `bic_scale * 10`. The cubic term is
//!    `cube_rtt_scale·(t−K)³ >> 40` with times in 2^-10 s, so the coefficient C is
//!    `cube_rtt_scale/1024`: 410/1024 = 0.40 fixed, 32/1024 = 0.031 buggy (12.8 times
//!    smaller). The old inline code computed `(bic_scale << 3) * HZ / srtt` with a constant
//!    `srtt = (HZ << 3) / 10` (100 ms), which is `bic_scale * 10`; precomputing it dropped the
//!    `HZ/srtt` factor. K, from `cube_factor`, was right, so the curve started near W_max
//!    (only 7.8 % of the distance below it) and then rose 12.8 times too slowly past it.
//! 2. `measure_delay` stored `delay_min` in plain jiffies, but the increment clamp
//!    `min_cnt = cwnd·HZ·8 / (10·max_increment·delay_min)` expects jiffies << 3 (like
//!    `srtt`). The fix stores `delay << 3`; and 3. `t` adds `delay_min >> 3` accordingly.
//!    With the bug the clamp allowed 2 segments per 100 ms of RTT instead of 16.
//!
//! Together (the default `scaling_bug = 0` is the fixed code; 1 reproduces 2.6.18): after a
//! loss far below the saturation point, with a receiver that ACKs every other segment, the
//! fixed code grows linearly at `max_increment` = 16 segments per 100 ms (160 segments/s,
//! seed 001's S_max = 160), the buggy one at 20/s; and above W_max the buggy curve rises
//! 12.8 times more slowly.
//!
//! # The increment clamp (seed 002: "reverts to a linear increase function at high BDP")
//!
//! `cnt` (ACKs per +1 segment) is raised to at least `min_cnt = cwnd/(16·10·delay_min_s)`:
//! at most `max_increment` segments per 100 ms of minimum RTT, i.e. 160 segments per second
//! whatever the RTT. It applies in both concave and convex regions (v2.1 kept it only in
//! the convex region, v2.2 removed it). `cnt` is then divided by the delayed-ACK ratio
//! (`delayed_ack`/16, packets per ACK, an EWMA with gain 1/16 updated in `pkts_acked`), so
//! the clamp holds per packet for a receiver that ACKs every other segment (ratio 2, the
//! initial value). For a receiver that ACKs every segment the EWMA's integer arithmetic
//! sticks at 31/16 (`31 + 1 − (31 >> 4)` = 31), so the clamp lets through about 31 segments
//! per 100 ms: this may be where seed 000 Table 1's "32 packets per RTT" comes from.
//!
//! # Modelling notes
//!
//! - Time is jiffies, `now_ns·hz/10⁹` (param `hz`, default 1000), with the kernel's 32-bit
//!   wrapping arithmetic; `epoch_start == 0` is "no epoch", as in the kernel. (So RTT
//!   samples taken before the first epoch are kept only from 1 s after time 0; a kernel,
//!   whose jiffies start 5 minutes before wrapping, depended on its uptime here.)
//! - `measure_delay` ran in `cong_avoid` on every data-acking ACK, before the cwnd-limited
//!   check; here it runs in `pkts_acked` (the host calls it for the same ACKs, just before
//!   `cong_avoid`). The delay is the receiver-timestamp echo: jiffies(now) − jiffies(send).
//! - One `cong_avoid` call is one ACK: `snd_cwnd_cnt` counts ACKs, not segments (the
//!   delayed-ACK ratio compensates), and slow start adds one segment per ACK (the kernel's
//!   `tcp_slow_start` without appropriate byte counting). Slow start runs while
//!   cwnd <= ssthresh, as in 2.6.19.
//! - `min_cwnd` (the rate-halving floor, = ssthresh) is not modelled: the host ends recovery
//!   at ssthresh anyway.
//! - The cube root is the one of the stored v2.0 file (bisection from a table; nearest
//!   integer). Seed 000 Table 1 says 2.6.21 replaced it with Newton-Raphson; that code is
//!   not in the stored corpus and is not modelled, so from 2.6.21 on K may differ from
//!   this one's by a few units of 2^-10 s (the later table-plus-one-iteration root of
//!   2.6.22 quotes an average error of 0.195 %).
//!
//! What v2.0 shares with v2.2 (`struct bictcp`, ssthresh, the per-ACK `cong_avoid`, undo,
//! the cubic part of `bictcp_update`) is written once in `cubic_2_6.rs`; this file holds
//! v2.0's cube root, its `bictcp_update` clamps and its `measure_delay`.

use crate::bic_lineage::{keep_min_delay, update_ack_ratio};
use crate::clock::jiffies32;
use crate::cubic_2_6::{BicTcp, Cubic26, BETA, BIC_SCALE, FAST_CONVERGENCE, INITIAL_SSTHRESH, TCP_FRIENDLINESS};
use crate::cubic_frame::HZ;
use crate::params::{ParamError, ParamSpec, Params};
use crate::tcp::{AckSample, CaState, TcpState};

/// The kernel's table of 65536·∛i for i = 0..7 (as published; entries 4 to 7 are within 2
/// of the exact values, which only moves the bisection bracket).
const CUBIC_TABLE: [u64; 8] = [0, 65536, 82570, 94519, 104030, 112063, 119087, 125367];

/// Integer cube root of 2.6.15–2.6.20: write x = i·8^j, bracket ∛x between
/// 2^j·∛i and 2^j·∛(i+1) with the table, bisect, and return whichever end of the final
/// bracket has the cube nearer to x.
fn cubic_root(a: u64) -> u32 {
    if a == 0 {
        return 0;
    }
    let mut x = a;
    let mut y: u64 = 1;
    while x >= 8 {
        x >>= 3;
        y <<= 1;
    }
    let mut start = (y * CUBIC_TABLE[x as usize]) >> 16;
    let mut end = if x == 7 { y << 1 } else { (y * CUBIC_TABLE[x as usize + 1] + 65535) >> 16 };
    let cube = |v: u64| v.wrapping_mul(v).wrapping_mul(v);
    while start + 1 < end {
        let mid = (start + end) >> 1;
        let c = cube(mid);
        if c < a {
            start = mid;
        } else if c > a {
            end = mid;
        } else {
            return mid as u32;
        }
    }
    let (cs, ce) = (cube(start), cube(end));
    if a.abs_diff(cs) < a.abs_diff(ce) {
        start as u32
    } else {
        end as u32
    }
}

/// Linux CUBIC v2.0 (2.6.19–2.6.21); `scaling_bug = 1` gives the 2.6.18 arithmetic.
#[derive(Clone, Debug)]
pub struct CubicV20 {
    ca: BicTcp,
    max_increment: u32,
    scaling_bug: bool,
}

impl CubicV20 {
    /// v2.2's parameters with v2.0's defaults (beta 819, initial_ssthresh 100), its
    /// `max_increment`, and the 2.6.18 bug as a switch.
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec { default: 819.0, ..BETA },
        BIC_SCALE,
        ParamSpec {
            name: "max_increment",
            default: 16.0,
            min: 1.0,
            max: 1.0e6,
            integer: true,
            unit: "segments/100 ms",
            help: "increment clamp: segments per 100 ms of minimum RTT",
            choices: &[],
        },
        FAST_CONVERGENCE,
        TCP_FRIENDLINESS,
        ParamSpec { default: 100.0, ..INITIAL_SSTHRESH },
        HZ,
        ParamSpec::switch("scaling_bug", false, "1: the 2.6.18 scaling error fixed in 2.6.19"),
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cubic-2.0", Self::PARAMS)?;
        let bic_scale = p.u32("bic_scale");
        let scaling_bug = p.bool("scaling_bug");
        let cube_rtt_scale = if scaling_bug { (bic_scale << 3) / 10 } else { bic_scale * 10 };
        Ok(Self { ca: BicTcp::new(&p, cube_rtt_scale), max_increment: p.u32("max_increment"), scaling_bug })
    }
}

impl Cubic26 for CubicV20 {
    fn bictcp(&self) -> &BicTcp {
        &self.ca
    }

    fn bictcp_mut(&mut self) -> &mut BicTcp {
        &mut self.ca
    }

    /// `bictcp_update`: the curve one minimum RTT ahead, v2.0's increment clamp and gentle
    /// start, TCP friendliness, per ACK.
    fn update(&mut self, cwnd: u32, now: u32) {
        let ca = &mut self.ca;
        let ahead = if self.scaling_bug { ca.delay_min } else { ca.delay_min >> 3 };
        if !ca.curve_count(cwnd, now, ahead, cubic_root) {
            return;
        }

        if ca.delay_min > 0 {
            // At most max_increment segments per 100 ms of minimum RTT (delay_min is
            // jiffies << 3; with the 2.6.18 bug it was plain jiffies, a clamp 8 times tighter).
            let min_cnt = cwnd.wrapping_mul(ca.hz).wrapping_mul(8)
                / (10u32.wrapping_mul(self.max_increment).wrapping_mul(ca.delay_min)).max(1);
            if ca.cnt < min_cnt {
                ca.cnt = min_cnt;
            }
        }

        // No loss yet: grow gently (one segment per 50 ACKs) after slow start.
        if ca.loss_cwnd == 0 {
            ca.cnt = 50;
        }

        // Reno with alpha = 3(1−β)/(1+β): one segment per cwnd·beta_scale/8 ACKs (this
        // version's loop steps by at least one ACK).
        ca.friendly_per_ack(cwnd, 1);
    }

    /// `measure_delay` (see the module notes) and `bictcp_acked`.
    fn sample(&mut self, tcp: &TcpState, sample: &AckSample, now_ns: u64) {
        let ca = &mut self.ca;
        let now = jiffies32(now_ns, ca.hz);
        // Samples in the first second of an epoch (just after recovery) are discarded.
        if sample.pkts_acked > 0 && sample.rtt_us >= 0 && (now.wrapping_sub(ca.epoch_start) as i32) >= ca.hz as i32 {
            let sent = jiffies32(now_ns.saturating_sub(sample.rtt_us as u64 * 1000), ca.hz);
            let delay = now.wrapping_sub(sent);
            keep_min_delay(&mut ca.delay_min, if self.scaling_bug { delay } else { delay << 3 });
        }
        // Packets per ACK, EWMA with gain 1/16 in fixed point << 4 (u32 wrapping arithmetic
        // makes the subtraction signed).
        if sample.pkts_acked > 0 && tcp.ca_state == CaState::Open {
            ca.delayed_ack = update_ack_ratio(ca.delayed_ack, sample.pkts_acked);
        }
    }

    fn delay_min_jiffies(&self) -> u32 {
        if self.scaling_bug {
            self.ca.delay_min
        } else {
            self.ca.delay_min >> 3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bic_lineage::ACK_RATIO_SHIFT;
    use crate::replay::{Event, ReplayStart, Replayer};
    use crate::test_support::{ack, ack_clock, ev, var};
    use crate::Algorithm;
    use crate::CongestionControl;

    const S: u64 = 1_000_000_000;

    fn alg(params: Params) -> CubicV20 {
        CubicV20::new(&params.set("initial_ssthresh", 0.0)).unwrap()
    }

    /// One loss at cwnd `w` after one ACK that sets the minimum RTT, then `secs` seconds of
    /// ACK clock; returns cwnd at the end of each second (index 0: just after the loss).
    fn after_loss(params: Params, w: u32, rtt_us: u64, per_ack: u32, secs: u64) -> Vec<u32> {
        let a = Algorithm::CubicV20(alg(params));
        let mut r = Replayer::new(a, ReplayStart { cwnd: w, ssthresh: w / 2 }, 2_000_000);
        r.step(&ack(2_000_000, per_ack, rtt_us));
        r.host.tcp.cwnd = w;
        r.step(&ev(2_000_001, Event::Loss));
        let mut out = vec![r.host.tcp.cwnd];
        let mut t = 2_000_001;
        for _ in 0..secs {
            t = ack_clock(&mut r, t, rtt_us, per_ack, 1_000_000);
            out.push(r.host.tcp.cwnd);
        }
        out
    }

    #[test]
    fn cube_root_is_nearest_integer() {
        // 8125³ = 536,376,953,125 is the cube nearest 2^40/410·200 = 536,347,135,400
        // (8124³ = 536,178,907,624 is 168 million further).
        assert_eq!(cubic_root(536_347_135_400), 8125);
        assert_eq!(cubic_root(1), 1);
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(1 << 30), 1024);
        for x in [5u64, 1000, 123_456_789, 9_876_543_210_123] {
            let r = cubic_root(x) as f64;
            assert!((r - (x as f64).cbrt()).abs() <= 0.5 + 1e-9, "{x}: {r}");
        }
    }

    #[test]
    fn loss_keeps_819_of_1024_and_fast_convergence_lowers_w_max() {
        // 1000·819/1024 = 799.8 → 799; W_max = 1000.
        let mut a = alg(Params::new());
        let tcp = TcpState { cwnd: 1000, ..TcpState::default() };
        assert_eq!(a.ssthresh(&tcp, 0), 799);
        assert_eq!((a.ca.last_max_cwnd, a.ca.loss_cwnd), (1000, 1000));
        // Next loss at 900 < 1000: W_max = 900·(1024+819)/2048 = 809.9 → 809;
        // ssthresh = 900·819/1024 = 719.8 → 719. Undo returns W_max, 809, not 900.
        let mut tcp = TcpState { cwnd: 900, ..TcpState::default() };
        assert_eq!(a.ssthresh(&tcp, 0), 719);
        assert_eq!(a.ca.last_max_cwnd, 809);
        tcp.cwnd = 719;
        assert_eq!(a.undo_cwnd(&mut tcp, 0), 809);
        // Without fast convergence W_max is the window at the loss.
        let mut b = alg(Params::new().set("fast_convergence", 0.0));
        b.ssthresh(&TcpState { cwnd: 1000, ..TcpState::default() }, 0);
        b.ssthresh(&TcpState { cwnd: 900, ..TcpState::default() }, 0);
        assert_eq!(b.ca.last_max_cwnd, 900);
    }

    /// Loss at cwnd 1000 at time 10 s; the recovery ends at ssthresh 799, one slow-start ACK
    /// (cwnd <= ssthresh) takes it to 800, and the next ACK, at `t0`, starts the epoch.
    fn epoch_at_800(params: Params, t0: u64) -> (CubicV20, TcpState) {
        let mut a = alg(params);
        let mut tcp = TcpState { cwnd: 1000, ssthresh: 500, ..TcpState::default() };
        a.init(&mut tcp, 0);
        tcp.ssthresh = a.ssthresh(&tcp, 10 * S);
        tcp.cwnd = tcp.ssthresh;
        a.cong_avoid(&mut tcp, 1, 10 * S);
        assert_eq!(tcp.cwnd, 800);
        a.cong_avoid(&mut tcp, 1, t0);
        (a, tcp)
    }

    #[test]
    fn k_and_the_curve_from_the_kernel_arithmetic() {
        // K³ = cube_factor·(1000 − 800) = ⌊2^40/410⌋·200 = 536,347,135,400 → K = 8125/1024 s
        // = 7.93 s, ∛(200/C) with C = 410/1024 = 0.4004 (exact: 7.9348 s).
        let t0 = 11 * S;
        let (mut a, mut tcp) = epoch_at_800(Params::new(), t0);
        assert_eq!(a.ca.bic_k, 8125);
        assert!((f64::from(a.ca.bic_k) / 1024.0 - (200.0 / (410.0 / 1024.0f64)).cbrt()).abs() < 1e-3);
        // t = 0 (no RTT sample, delay_min = 0): delta = 410·8125³ >> 40 = 200, W(0) = 800.
        assert_eq!(a.ca.bic_target, 800);
        // Plateau: the first jiffy with ⌊Δj·1024/1000⌋ = K is Δj = 7935 (7935·1.024 =
        // 8125.4); there offs = 0 and the target is W_max exactly.
        let jk = t0 + 7935 * S / 1000;
        a.cong_avoid(&mut tcp, 1, jk);
        assert_eq!(a.ca.bic_target, 1000);
        // Convex side, 10 s past K (Δj = 17935: ⌊17935·1.024⌋ = 18365 = K + 10240):
        // 410·10240³ >> 40 = 410·1000/1024 = 400.4 → 400, W = 1400 (C = 0.4004).
        a.cong_avoid(&mut tcp, 1, t0 + 17935 * S / 1000);
        assert_eq!(a.ca.bic_target, 1400);
    }

    #[test]
    fn scaling_bug_has_c_of_32_over_1024() {
        // 2.6.18: cube_rtt_scale = (41 << 3)/10 = 32. K is unchanged (cube_factor was right),
        // so W(0) = 1000 − (32·8125³ >> 40) = 1000 − 15 = 985 (the curve starts near W_max),
        // and 10 s past K: 32·10240³ >> 40 = 31.25 → 31, W = 1031 instead of 1400.
        let t0 = 11 * S;
        let (mut a, mut tcp) = epoch_at_800(Params::new().set("scaling_bug", 1.0), t0);
        assert_eq!((a.ca.cube_rtt_scale, a.ca.bic_k), (32, 8125));
        assert_eq!(a.ca.bic_target, 985);
        a.cong_avoid(&mut tcp, 1, t0 + 17935 * S / 1000);
        assert_eq!(a.ca.bic_target, 1031);
    }

    #[test]
    fn delayed_ack_ratio_sticks_at_31_sixteenths_with_one_segment_per_ack() {
        // delayed_ack starts at 2 << 4 = 32. One segment per ACK: 32 + 1 − (32 >> 4) = 31,
        // then 31 + 1 − (31 >> 4) = 31 forever: the EWMA's rounding keeps the ratio at 1.94.
        // Two segments per ACK: 32 + 2 − 2 = 32, the ratio stays 2.
        let mut a = alg(Params::new());
        let mut tcp = TcpState::default();
        let one = AckSample { pkts_acked: 1, rtt_us: -1, in_flight: 10 };
        for _ in 0..100 {
            a.pkts_acked(&mut tcp, &one, 0);
        }
        assert_eq!(a.ca.delayed_ack, 31);
        let mut b = alg(Params::new());
        let two = AckSample { pkts_acked: 2, ..one };
        for _ in 0..100 {
            b.pkts_acked(&mut tcp, &two, 0);
        }
        assert_eq!(b.ca.delayed_ack, 32);
        // Eight segments per ACK (a stretch ACK train): fixed point where 8 = d >> 4, d in
        // [128, 143]; from 32 it climbs by 8 − (d >> 4) until d >> 4 = 8, first at d = 128.
        for _ in 0..1000 {
            b.pkts_acked(&mut tcp, &AckSample { pkts_acked: 8, ..one }, 0);
        }
        assert_eq!(b.ca.delayed_ack >> ACK_RATIO_SHIFT, 8);
        // Outside Open the ratio is not updated.
        tcp.ca_state = CaState::Recovery;
        let before = b.ca.delayed_ack;
        b.pkts_acked(&mut tcp, &one, 0);
        assert_eq!(b.ca.delayed_ack, before);
    }

    #[test]
    fn clamp_makes_growth_linear_far_below_w_max_whatever_the_rtt() {
        // Seed 002: "at high BDP Cubic TCP reverts to a linear increase function". Loss at
        // 10000: ssthresh 10000·819/1024 = 7998, K = ∛(2002/0.4) = 17.1 s and the curve
        // first rises at 3CK² = 351 segments/s, above the clamp. Delayed ACKs (2 segments
        // per ACK, ratio stays 2): min_cnt = cwnd·HZ·8/(10·16·delay_min) with delay_min =
        // RTT in jiffies << 3, so cnt = min_cnt·16/32 ACKs per +1. At 100 ms: cwnd/32 ACKs,
        // one increase per cwnd/32 + 1 ACKs, 5·cwnd ACKs/s: 5·cwnd/(cwnd/32 + 1) ≈ 159.4/s
        // at cwnd ≈ 8300. At 50 ms: cnt = cwnd/16, 10·cwnd ACKs/s: ≈ 159.7/s. Linear: each
        // second adds the same ~160 (max_increment per 100 ms), for both RTTs.
        for rtt in [100_000, 50_000] {
            let w = after_loss(Params::new(), 10_000, rtt, 2, 4);
            assert_eq!(w[0], 7998);
            for s in 1..4 {
                let g = w[s + 1] - w[s];
                assert!((155..=161).contains(&g), "rtt {rtt} second {s}: +{g} ({w:?})");
            }
        }
    }

    #[test]
    fn scaling_bug_clamp_is_eight_times_tighter() {
        // 2.6.18: delay_min in plain jiffies (100), so min_cnt = cwnd·8000/(160·100) = cwnd/2,
        // cnt = cwnd/4 ACKs, 5·cwnd ACKs/s: 5·cwnd/(cwnd/4 + 1) ≈ 20 segments/s instead of
        // 160. (The target, 1000 − 0.078·2002 ≈ 9844 at once, is far above cwnd: the
        // clamp binds throughout.)
        let w = after_loss(Params::new().set("scaling_bug", 1.0), 10_000, 100_000, 2, 4);
        for s in 1..4 {
            let g = w[s + 1] - w[s];
            assert!((18..=20).contains(&g), "second {s}: +{g} ({w:?})");
        }
        let fixed = after_loss(Params::new(), 10_000, 100_000, 2, 4);
        assert!(fixed[4] - w[4] > 400, "fixed {fixed:?} buggy {w:?}");
    }

    #[test]
    fn one_segment_per_ack_doubles_the_clamp() {
        // With ratio 31/16 (see above), cnt = min_cnt·16/31: at 100 ms min_cnt = cwnd/16,
        // cnt = cwnd/31, cwnd·10 ACKs/s: 10·cwnd/(cwnd/31 + 1) ≈ 306/s at cwnd ≈ 8500,
        // about 31 segments per 100 ms. (By the third second cwnd meets the curve, whose
        // slope 3C(K − t)² has fallen to ~240/s, so only the first two are clamped.)
        let w = after_loss(Params::new(), 10_000, 100_000, 1, 2);
        for s in 0..2 {
            let g = w[s + 1] - w[s];
            assert!((295..=311).contains(&g), "second {s}: +{g} ({w:?})");
        }
    }

    #[test]
    fn tcp_friendly_window_grows_one_per_23_eighths_cwnd_acks() {
        // beta_scale = 8·(1024+819)/3/(1024−819) = 23 (integer steps): the emulated Reno
        // window grows by one every cwnd·23/8 ACKs, 8/23 = 0.348 per window of ACKs (the
        // ideal 3(1−β)/(1+β) is 1/3). RTT 2 ms, one segment per ACK, loss at 1000: in 2 s
        // (1000 RTTs, cwnd ACKs each) tcp_cwnd ≈ 800 + 348 = 1148, less up to ~6 of ACKs not
        // yet converted (while cwnd is unchanged the update runs at most every HZ/32 = 31 ms,
        // 15 RTTs of ACKs), while the cubic curve is still below W_max
        // (W(2) ≈ 1000 − 0.4·5.9³ ≈ 917): TCP mode, cwnd follows tcp_cwnd. With
        // tcp_friendliness off, the clamp (160/s) and the curve cap it near W(2) ≈ 917.
        let run = |p: Params| {
            let a = Algorithm::CubicV20(alg(p));
            let mut r = Replayer::new(a, ReplayStart { cwnd: 1000, ssthresh: 500 }, 2_000_000);
            r.step(&ack(2_000_000, 1, 2_000));
            r.host.tcp.cwnd = 1000;
            r.step(&ev(2_000_001, Event::Loss));
            ack_clock(&mut r, 2_000_001, 2_000, 1, 2_000_000);
            let tc = var(&r, "tcp_cwnd");
            (r.host.tcp.cwnd, tc)
        };
        let (cwnd, tcp_cwnd) = run(Params::new());
        assert!((1140.0..=1152.0).contains(&tcp_cwnd), "tcp_cwnd {tcp_cwnd}");
        assert!((f64::from(cwnd) - tcp_cwnd).abs() <= 4.0, "cwnd {cwnd} tcp_cwnd {tcp_cwnd}");
        let (cwnd_off, _) = run(Params::new().set("tcp_friendliness", 0.0));
        assert!((900..=925).contains(&cwnd_off), "cwnd without friendliness {cwnd_off}");
    }

    #[test]
    fn timeout_forgets_loss_cwnd_so_undo_cannot_restore() {
        // bictcp_state(Loss) resets everything, last_max_cwnd included: undo returns
        // max(cwnd, 0) = 1 (fixed only in 2012, Linux commit 5a45f008).
        let a = Algorithm::CubicV20(alg(Params::new()));
        let mut r = Replayer::new(a, ReplayStart { cwnd: 1000, ssthresh: 500 }, 2_000_000);
        let row = r.step(&ev(2_000_000, Event::Rto));
        assert_eq!((row.cwnd, row.ssthresh), (1, 799));
        assert_eq!(var(&r, "loss_cwnd"), 0.0);
        let row = r.step(&ev(2_000_001, Event::Undo));
        assert_eq!(row.cwnd, 1);
    }

    #[test]
    fn first_epoch_after_slow_start_grows_one_per_50_acks_until_a_loss() {
        // loss_cwnd = 0 (no loss yet): cnt = 50, divided by the ratio 2: 25, so one segment
        // per 26 ACKs. initial_ssthresh = 100 ends slow start at 101 (cwnd <= ssthresh).
        let a = Algorithm::new("cubic-2.0", &Params::new()).unwrap();
        let mut r = Replayer::new(a, ReplayStart::default(), 2_000_000);
        assert_eq!(r.host.tcp.ssthresh, 100);
        let mut t = 2_000_000;
        while r.host.tcp.cwnd <= 100 {
            r.step(&ack(t, 2, 50_000));
            t += 100;
        }
        assert_eq!(r.host.tcp.cwnd, 101);
        for _ in 0..26 * 4 {
            r.step(&ack(t, 2, 50_000));
            t += 100;
        }
        assert_eq!(r.host.tcp.cwnd, 105);
    }
}
