//! The CUBIC family as a frame: what BIC and every CUBIC version share, written once, over a
//! growth rule that each version gives (as neqo's `ClassicCongestionControl<T:
//! WindowAdjustment>` writes recovery and ACK accounting once and lets only the growth law
//! differ).
//!
//! The frame owns the hooks' shape, as `tcp_bic.c` and every `tcp_cubic.c` share it:
//! `init` forgets the curve and applies the initial ssthresh; `set_state(Loss)` is the
//! timeout rule (by default, forget the curve); `cong_avoid` returns when the sender was not
//! window-limited, runs the version's slow start ([`SlowStart`]) and hands the rest of the
//! ACK to the growth rule. A version whose `hystart` parameter chose HyStart++ (RFC 9406,
//! [`HYSTART`]) has the frame run it in its first slow start instead of `tcp_slow_start`.
//! A version says which kernel, paper or RFC it follows in its own module, with its own
//! tests, and implements [`GrowthRule`]: its curve, its congestion response (`ssthresh`),
//! its RTT sampling, its undo.

use crate::hystart_plus_plus::HyStartPlusPlus;
use crate::params::{ParamSpec, Resolved};
use crate::tcp::{tcp_slow_start, AckSample, CaEvent, CaState, TcpState};
use crate::CongestionControl;

/// The kernel's HZ, for the versions whose clock is jiffies at a settable HZ.
pub(crate) const HZ: ParamSpec = ParamSpec {
    name: "hz",
    default: 1000.0,
    min: 100.0,
    max: 10000.0,
    integer: true,
    unit: "Hz",
    help: "kernel HZ (jiffies per second)",
    choices: &[],
};

/// `cubic`'s `hystart` parameter: RFC 5681's slow start (`off`), Linux's HyStart
/// (`hystart`, the default, with its `hystart_*` parameters) or HyStart++ (`hystart++`, RFC
/// 9406). The names' order keeps the module's former 0/1 switch: `hystart = 0` is `off`,
/// `1` is `hystart`.
pub const HYSTART: ParamSpec = ParamSpec::choice(
    "hystart",
    &["off", "hystart", "hystart++"],
    1,
    "slow start: off (RFC 5681), hystart (Linux HyStart), hystart++ (RFC 9406)",
);

/// Linux HyStart's detectors, a bitmask (`hystart_detect` of `tcp_cubic.c` and of
/// `tcp_cdg.c`, which share the meaning and the default): 0 none, 1 the ACK train, 2 the
/// delay increase, 3 both.
pub const HYSTART_DETECT: ParamSpec = ParamSpec {
    name: "hystart_detect",
    default: 3.0,
    min: 0.0,
    max: 3.0,
    integer: true,
    unit: "bitmask",
    help: "HyStart detectors: 0 none, 1 ACK train, 2 delay increase, 3 both",
    choices: &[],
};

/// The `hystart` parameter of the versions without Linux's HyStart (RFC 9438's, whose Sec
/// 4.10 allows either): standard slow start by default.
pub const HYSTART_PLUS_PLUS_OR_OFF: ParamSpec =
    ParamSpec::choice("hystart", &["off", "hystart++"], 0, "slow start: off (RFC 5681), hystart++ (RFC 9406)");

/// What a `hystart` parameter chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hystart {
    Off,
    Linux,
    PlusPlus,
}

impl Hystart {
    /// The choice of the checked parameters (`hystart` is in the version's table).
    pub fn of(params: &Resolved) -> Self {
        match params.choice("hystart") {
            "off" => Hystart::Off,
            "hystart" => Hystart::Linux,
            "hystart++" => Hystart::PlusPlus,
            other => unreachable!("'{other}' is not among the hystart choices"),
        }
    }

    /// A HyStart++ state when this is the choice (the frame starts it at `init`).
    pub fn plus_plus(self) -> Option<HyStartPlusPlus> {
        (self == Hystart::PlusPlus).then(|| HyStartPlusPlus::new(&TcpState::default()))
    }
}

/// The slow start a version runs before its growth rule, and how an ACK reaches the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// Linux 2.6.29 on (`tcp_slow_start`, RFC 3465 with L = ∞): one segment per segment
    /// acknowledged while `cwnd < ssthresh`; what that leaves of the ACK grows the curve.
    Segments,
    /// Linux 2.6.19 to 2.6.28 without appropriate byte counting: one segment per ACK while
    /// `cwnd <= ssthresh`, and such an ACK does nothing else; every other ACK runs the rule
    /// once (`snd_cwnd_cnt` counts ACKs).
    PerAck,
    /// Seed 000 Algorithm 1 read per segment: the per-ACK body (slow start while
    /// `cwnd <= ssthresh`, else the rule with one segment) once per segment acknowledged,
    /// at most `max` times per ACK.
    PerSegment { max: u32 },
}

/// A CUBIC-family version's own rules, which the frame calls from the hooks of
/// [`CongestionControl`]. The names differ from the hooks' so that both read unambiguously.
pub trait GrowthRule {
    /// The slow start of the version's text.
    const SLOW_START: SlowStart;

    /// Forget the curve (Linux `bictcp_reset`, Algorithm 1's `cubic_reset()`): at `init`
    /// and, unless [`Self::on_timeout`] says otherwise, when a timeout enters Loss.
    fn forget(&mut self, tcp: &TcpState, now_ns: u64);

    /// `init`: by default [`Self::forget`].
    #[inline]
    fn start(&mut self, tcp: &TcpState, now_ns: u64) {
        self.forget(tcp, now_ns);
    }

    /// The module's `initial_ssthresh` applied at `init`; 0 leaves ssthresh alone.
    #[inline]
    fn initial_ssthresh(&self) -> u32 {
        0
    }

    /// A congestion event: remember what the curve needs (W_max, the epoch's end) and
    /// return the new ssthresh (the `ssthresh` hook).
    fn on_congestion(&mut self, tcp: &TcpState, now_ns: u64) -> u32;

    /// Congestion avoidance: grow `tcp.cwnd` for `acked` segments (see [`SlowStart`] for
    /// what `acked` counts).
    fn grow(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64);

    /// A timeout entered Loss (`set_state(TCP_CA_Loss)`): by default [`Self::forget`].
    #[inline]
    fn on_timeout(&mut self, tcp: &TcpState, now_ns: u64) {
        self.forget(tcp, now_ns);
    }

    /// `undo_cwnd`: by default Linux `tcp_reno_undo_cwnd`.
    #[inline]
    fn restore(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// The version's HyStart++, when its `hystart` parameter chose it: the frame runs it
    /// (only with [`SlowStart::Segments`]).
    #[inline(always)]
    fn hystart_plus_plus(&mut self) -> Option<&mut HyStartPlusPlus> {
        None
    }

    /// `pkts_acked`: RTT and ACK-ratio sampling, HyStart.
    #[inline]
    fn on_ack(&mut self, _tcp: &mut TcpState, _sample: &AckSample, _now_ns: u64) {}

    /// `cwnd_event`: e.g. the epoch's shift after idle.
    #[inline]
    fn on_event(&mut self, _tcp: &mut TcpState, _event: CaEvent, _now_ns: u64) {}

    /// The version's variables for traces (`vars`).
    fn trace(&self, out: &mut dyn FnMut(&'static str, f64));
}

/// Add one segment unless the window is at its clamp (the 2.6.2x kernels' `snd_cwnd++`).
#[inline]
pub(crate) fn add_segment(tcp: &mut TcpState) {
    if tcp.cwnd < tcp.cwnd_clamp {
        tcp.cwnd += 1;
    }
}

/// The 2.6.2x per-ACK increase (and Algorithm 1's): when `due`, one segment and a fresh
/// count, else count this ACK in `snd_cwnd_cnt`.
#[inline]
pub(crate) fn count_ack(tcp: &mut TcpState, due: bool) {
    if due {
        add_segment(tcp);
        tcp.cwnd_cnt = 0;
    } else {
        tcp.cwnd_cnt += 1;
    }
}

impl<G: GrowthRule> CongestionControl for G {
    fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
        self.start(tcp, now_ns);
        if let Some(h) = self.hystart_plus_plus() {
            *h = HyStartPlusPlus::new(tcp);
        }
        let ssthresh = self.initial_ssthresh();
        if ssthresh != 0 {
            tcp.ssthresh = ssthresh;
        }
    }

    fn ssthresh(&mut self, tcp: &TcpState, now_ns: u64) -> u32 {
        self.on_congestion(tcp, now_ns)
    }

    // Inlined into the algorithm dispatch (`registry.rs`): a call per ACK otherwise.
    #[inline(always)]
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        if !tcp.cwnd_limited {
            return;
        }
        match G::SLOW_START {
            SlowStart::Segments => {
                let mut acked = acked;
                if tcp.in_slow_start() {
                    if let Some(h) = self.hystart_plus_plus() {
                        if HyStartPlusPlus::applies(tcp) {
                            h.grow(tcp, acked);
                            return;
                        }
                    }
                    acked = tcp_slow_start(tcp, acked);
                    if acked == 0 {
                        return;
                    }
                }
                self.grow(tcp, acked, now_ns);
            }
            SlowStart::PerAck => {
                if tcp.cwnd <= tcp.ssthresh {
                    add_segment(tcp);
                } else {
                    self.grow(tcp, acked, now_ns);
                }
            }
            SlowStart::PerSegment { max } => {
                for _ in 0..acked.min(max) {
                    if tcp.cwnd <= tcp.ssthresh {
                        add_segment(tcp);
                    } else {
                        self.grow(tcp, 1, now_ns);
                    }
                }
            }
        }
    }

    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, now_ns: u64) {
        if new_state == CaState::Loss {
            self.on_timeout(tcp, now_ns);
        }
    }

    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, now_ns: u64) {
        self.on_event(tcp, event, now_ns);
    }

    fn undo_cwnd(&mut self, tcp: &mut TcpState, now_ns: u64) -> u32 {
        self.restore(tcp, now_ns)
    }

    // Inlined into the algorithm dispatch (`registry.rs`): a call per ACK otherwise.
    #[inline(always)]
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
        if let Some(h) = self.hystart_plus_plus() {
            h.on_ack(tcp, sample.rtt_us);
        }
        self.on_ack(tcp, sample, now_ns);
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.trace(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A growth rule that only records what the frame hands it, with slow start `KIND`
    /// (0 Segments, 1 PerAck, 2 PerSegment { max: 3 }): what moves cwnd is the frame's.
    #[derive(Default)]
    struct Probe<const KIND: u8> {
        grown: Vec<u32>,
        forgotten: u32,
    }

    impl<const KIND: u8> GrowthRule for Probe<KIND> {
        const SLOW_START: SlowStart = match KIND {
            0 => SlowStart::Segments,
            1 => SlowStart::PerAck,
            _ => SlowStart::PerSegment { max: 3 },
        };
        fn forget(&mut self, _tcp: &TcpState, _now_ns: u64) {
            self.forgotten += 1;
        }
        fn initial_ssthresh(&self) -> u32 {
            77
        }
        fn on_congestion(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
            tcp.cwnd / 2
        }
        fn grow(&mut self, _tcp: &mut TcpState, acked: u32, _now_ns: u64) {
            self.grown.push(acked);
        }
        fn trace(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
    }

    /// One ACK of `acked` segments at (cwnd, ssthresh) through slow start `KIND`: the window
    /// after it and what the rule was handed.
    fn one_ack<const KIND: u8>(cwnd: u32, ssthresh: u32, acked: u32, cwnd_limited: bool) -> (u32, Vec<u32>) {
        let mut p = Probe::<KIND>::default();
        let mut tcp = TcpState { cwnd, ssthresh, cwnd_limited, ..TcpState::default() };
        p.cong_avoid(&mut tcp, acked, 0);
        (tcp.cwnd, p.grown)
    }

    #[test]
    fn each_slow_start_hands_the_rule_what_its_text_says() {
        // tcp_slow_start: cwnd 10 -> ssthresh 12 takes 2 of 5 segments; 3 grow the curve.
        // An ACK inside slow start leaves nothing for the rule; not window-limited, nothing
        // moves at all.
        assert_eq!(one_ack::<0>(10, 12, 5, true), (12, vec![3]));
        assert_eq!(one_ack::<0>(10, 20, 5, true), (15, vec![]));
        assert_eq!(one_ack::<0>(10, 5, 5, false), (10, vec![]));
        // 2.6.2x: cwnd 12 <= ssthresh 12 still slow-starts, one segment for the whole ACK;
        // at 13 the rule runs once with the ACK as it came.
        assert_eq!(one_ack::<1>(12, 12, 5, true), (13, vec![]));
        assert_eq!(one_ack::<1>(13, 12, 5, true), (13, vec![5]));
        // Per segment, 5 bounded to 3: 11 -> 12 -> 13 in slow start (cwnd <= ssthresh),
        // then the rule once with one segment.
        assert_eq!(one_ack::<2>(11, 12, 5, true), (13, vec![1]));
    }

    #[test]
    fn init_timeout_and_undo() {
        let mut p = Probe::<0>::default();
        let mut tcp = TcpState { cwnd: 50, prior_cwnd: 80, ..TcpState::default() };
        p.init(&mut tcp, 0);
        assert_eq!((p.forgotten, tcp.ssthresh), (1, 77));
        // Only a timeout (Loss) forgets the curve.
        p.set_state(&mut tcp, CaState::Recovery, 0);
        p.set_state(&mut tcp, CaState::Loss, 0);
        assert_eq!(p.forgotten, 2);
        assert_eq!(p.ssthresh(&tcp, 0), 25);
        // tcp_reno_undo_cwnd: max(cwnd, prior_cwnd).
        assert_eq!(p.undo_cwnd(&mut tcp, 0), 80);
    }

    #[test]
    fn count_ack_adds_a_segment_when_due_up_to_the_clamp() {
        let mut tcp = TcpState { cwnd_cnt: 4, cwnd_clamp: 11, ..TcpState::default() };
        count_ack(&mut tcp, false);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (10, 5));
        count_ack(&mut tcp, true);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (11, 0));
        count_ack(&mut tcp, true);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (11, 0));
    }
}
