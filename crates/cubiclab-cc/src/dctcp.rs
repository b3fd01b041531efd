//! `dctcp`: Data Center TCP as Linux ships it, `net/ipv4/tcp_dctcp.c` and `tcp_dctcp.h`
//! (Linux 6.x, read at torvalds/linux 01581a2; 6.2 added PLB's rehash bookkeeping, which
//! changes neither alpha nor the window) — RFC 8257, Alizadeh et al. (SIGCOMM 2010).
//!
//! Reno's growth (`tcp_reno_cong_avoid`). Once per window of data (`snd_una` passing the
//! `snd_nxt` of the last update) alpha, in 1/1024, follows the fraction F of segments
//! delivered by ECE-carrying ACKs: alpha = (1 - g) alpha + g F with g = 2^-`shift_g`
//! (`dctcp_update_alpha`, the `in_ack_event` hook, which Linux 6.x calls after the ACK's
//! delivery counts). An ECN reduction (`tcp_enter_cwr`) asks `ssthresh` = cwnd - cwnd alpha
//! / 2048, i.e. cwnd (1 - alpha/2); a loss halves instead: entering Recovery, or a timeout
//! (`CA_EVENT_LOSS`), overrides ssthresh with `max(cwnd >> 1, 2)` (`dctcp_react_to_loss`).
//! Undo restores the window of the last reduction (`loss_cwnd`). Linux 6.x has no
//! `dctcp_clamp_alpha_on_loss` any more: 5.1 replaced it by this halving.
//!
//! `TCP_CONG_NEEDS_ECN`: the connection negotiates ECN whatever `tcp_ecn` says. The
//! receiver's half, `dctcp_ece_ack_update`, is [`CeEcho`]: ECE mirrors the CE state of
//! the last segment instead of latching until CWR. The kernel falls back to `dctcp-reno`
//! when the peer refuses ECN; a Linux peer (`tcp_ecn` = 2, the default) always accepts.

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::reno_cong_avoid;
use crate::seq::before;
use crate::tcp::{AckEvent, CaEvent, CaState, TcpState};
use crate::CongestionControl;

/// `DCTCP_MAX_ALPHA`: alpha 1.0 in its 1/1024 fixed point.
pub const DCTCP_MAX_ALPHA: u32 = 1024;

/// DCTCP's sender state (`struct dctcp` minus the receiver's fields, see [`CeEcho`]).
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// `dctcp_shift_g`: the EWMA gain is 2^-shift_g.
    shift_g: u32,
    /// `dctcp_alpha_on_init`, 1/1024.
    alpha_on_init: u32,
    /// `dctcp_alpha`, 1/1024.
    alpha: u32,
    /// `next_seq`: `snd_nxt` at the last update; the window ends when `snd_una` reaches it.
    next_seq: u32,
    /// `old_delivered`, `old_delivered_ce`: the counts at the last update.
    old_delivered: u32,
    old_delivered_ce: u32,
    /// `loss_cwnd`: cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "shift_g",
            default: 4.0,
            min: 0.0,
            max: 10.0,
            integer: true,
            unit: "2^-n",
            help: "dctcp_shift_g: alpha's EWMA gain g (the module parameter's range)",
            choices: &[],
        },
        ParamSpec {
            name: "alpha_on_init",
            default: 1024.0,
            min: 0.0,
            max: 1024.0,
            integer: true,
            unit: "1/1024 of a window marked",
            help: "dctcp_alpha_on_init: alpha before the first window's update",
            choices: &[],
        },
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("dctcp", Self::PARAMS)?;
        let alpha_on_init = p.u32("alpha_on_init");
        Ok(Dctcp {
            shift_g: p.u32("shift_g"),
            alpha_on_init,
            alpha: alpha_on_init,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        })
    }

    /// `dctcp_alpha`, 1/1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_reset`: a new observation window from here.
    fn reset(&mut self, tcp: &TcpState) {
        self.next_seq = tcp.snd_nxt;
        self.old_delivered = tcp.delivered;
        self.old_delivered_ce = tcp.delivered_ce;
    }

    /// `dctcp_react_to_loss`: a loss halves, whatever alpha says.
    fn react_to_loss(&mut self, tcp: &mut TcpState) {
        self.loss_cwnd = tcp.cwnd;
        tcp.ssthresh = (tcp.cwnd >> 1).max(2);
    }
}

/// `min_not_zero(x, y)`: the smaller, ignoring a zero operand.
fn min_not_zero(x: u32, y: u32) -> u32 {
    match (x, y) {
        (0, y) => y,
        (x, 0) => x,
        (x, y) => x.min(y),
    }
}

impl CongestionControl for Dctcp {
    /// `dctcp_init` on an ECN connection.
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.alpha = self.alpha_on_init.min(DCTCP_MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tcp);
    }

    /// `dctcp_ssthresh`: cwnd - cwnd * alpha / 2048, at least 2. The product is the
    /// kernel's u32 (wraps above 2^22 segments at alpha 1024).
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        self.loss_cwnd = tcp.cwnd;
        (tcp.cwnd - (tcp.cwnd.wrapping_mul(self.alpha) >> 11)).max(2)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, _now_ns: u64) {
        reno_cong_avoid(tcp, acked)
    }

    /// `dctcp_update_alpha`: once `snd_una` passed `next_seq`, alpha -= alpha >> g (all of
    /// it once that is 0: `min_not_zero`), plus (delivered_ce << (10 - g)) / delivered.
    fn in_ack_event(&mut self, tcp: &mut TcpState, _ev: AckEvent, _now_ns: u64) {
        if before(tcp.snd_una, self.next_seq) {
            return;
        }
        // Counters of segments: differences wrap as the kernel's u32 do.
        let mut delivered_ce = tcp.delivered_ce.wrapping_sub(self.old_delivered_ce);
        let mut alpha = self.alpha;
        alpha -= min_not_zero(alpha, alpha >> self.shift_g);
        if delivered_ce != 0 {
            let delivered = tcp.delivered.wrapping_sub(self.old_delivered);
            // u32 shift as in the kernel (wraps past 2^22 marked segments in a window at g = 0).
            delivered_ce = delivered_ce.wrapping_shl(10 - self.shift_g);
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce).min(DCTCP_MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(tcp);
    }

    /// `dctcp_state`: entering Recovery halves.
    fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, _now_ns: u64) {
        if new_state == CaState::Recovery && tcp.ca_state != CaState::Recovery {
            self.react_to_loss(tcp);
        }
    }

    /// `dctcp_cwnd_event`: a timeout halves (once per window, as `tcp_enter_loss` calls
    /// it). The CE events are the receiver's ([`CeEcho`]).
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        if event == CaEvent::Loss {
            self.react_to_loss(tcp);
        }
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, tcp: &mut TcpState, _now_ns: u64) -> u32 {
        tcp.cwnd.max(self.loss_cwnd)
    }

    fn has_in_ack_event(&self) -> bool {
        true
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("alpha", f64::from(self.alpha) / f64::from(DCTCP_MAX_ALPHA));
    }
}

/// The receiver's half of DCTCP (`tcp_dctcp.h` `dctcp_ece_ack_update`, run from
/// `CA_EVENT_ECN_IS_CE` / `CA_EVENT_ECN_NO_CE` after each in-sequence data segment has
/// advanced `rcv_nxt`): ECE (`TCP_ECN_DEMAND_CWR`) is the CE state of the last segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CeEcho {
    /// `ce_state`: the last segment was CE-marked.
    ce: bool,
    /// `prior_rcv_nxt`: `rcv_nxt` after the previous segment.
    prior_rcv_nxt: u32,
}

/// What the receiver sends after a segment's [`CeEcho::update`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CeEchoAcks {
    /// An ACK to send first, acknowledging this `rcv_nxt` with ECE as the previous CE
    /// state: the delayed ACK that was pending, so the sender counts its segments right.
    pub prior_ack: Option<(u32, bool)>,
    /// Acknowledge this segment now (`ICSK_ACK_NOW`): the CE state changed.
    pub ack_now: bool,
}

impl CeEcho {
    /// `dctcp_init` (`prior_rcv_nxt = rcv_nxt`, `ce_state = 0`).
    pub fn new(rcv_nxt: u32) -> Self {
        CeEcho { ce: false, prior_rcv_nxt: rcv_nxt }
    }

    /// Whether the receiver's ACKs carry ECE.
    pub fn ece(&self) -> bool {
        self.ce
    }

    /// An in-sequence segment with CE `ce` brought `rcv_nxt` here; `delayed_ack_pending`:
    /// the delayed-ACK timer runs for earlier segments (`ICSK_ACK_TIMER`).
    pub fn update(&mut self, ce: bool, rcv_nxt: u32, delayed_ack_pending: bool) -> CeEchoAcks {
        let changed = self.ce != ce;
        let acks = CeEchoAcks {
            prior_ack: (changed && delayed_ack_pending).then_some((self.prior_rcv_nxt, self.ce)),
            ack_now: changed,
        };
        self.prior_rcv_nxt = rcv_nxt;
        self.ce = ce;
        acks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dctcp() -> Dctcp {
        Dctcp::new(&Params::new()).unwrap()
    }

    /// One window of `delivered` segments, `marked` of them by ECE ACKs, ending the window.
    fn window(d: &mut Dctcp, tcp: &mut TcpState, delivered: u32, marked: u32) {
        tcp.snd_una = tcp.snd_una.wrapping_add(delivered);
        tcp.snd_nxt = tcp.snd_una.wrapping_add(delivered);
        tcp.delivered = tcp.delivered.wrapping_add(delivered);
        tcp.delivered_ce = tcp.delivered_ce.wrapping_add(marked);
        d.in_ack_event(tcp, AckEvent { ece: true, ..AckEvent::default() }, 0);
    }

    fn started() -> (Dctcp, TcpState) {
        let mut d = dctcp();
        let mut tcp = TcpState { cwnd: 100, snd_nxt: 100, ..TcpState::default() };
        d.init(&mut tcp, 0);
        (d, tcp)
    }

    #[test]
    fn alpha_decays_by_one_sixteenth_per_unmarked_window() {
        // alpha_on_init 1024; g = 1/16: each window without marks takes alpha >> 4.
        // 1024 - 64 = 960, 960 - 60 = 900, 900 - 56 = 844.
        let (mut d, mut tcp) = started();
        assert_eq!(d.alpha(), 1024);
        for want in [960, 900, 844] {
            window(&mut d, &mut tcp, 100, 0);
            assert_eq!(d.alpha(), want);
        }
    }

    #[test]
    fn small_alpha_drops_to_zero() {
        // alpha 15: 15 >> 4 = 0, so min_not_zero(15, 0) = 15 is taken: alpha becomes 0
        // at once (the kernel's integer floor, not an EWMA tail).
        let mut d = Dctcp::new(&Params::new().set("alpha_on_init", 15.0)).unwrap();
        let mut tcp = TcpState { snd_nxt: 10, ..TcpState::default() };
        d.init(&mut tcp, 0);
        window(&mut d, &mut tcp, 10, 0);
        assert_eq!(d.alpha(), 0);
        window(&mut d, &mut tcp, 10, 0);
        assert_eq!(d.alpha(), 0);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // F = 1/4 every window, from alpha 0: alpha' = alpha - (alpha >> 4) + (25 << 6) / 100
        // = alpha - (alpha >> 4) + 16. The integer fixed point is where alpha >> 4 = 16, the
        // smallest such alpha reached from below: 256 = F * 1024 (from 240 on the steps are
        // +1, so it lands on 256 exactly). Window by window: 16, 31 (16 - 1 + 16), 46, 60, 73.
        let mut d = Dctcp::new(&Params::new().set("alpha_on_init", 0.0)).unwrap();
        let mut tcp = TcpState { snd_nxt: 100, ..TcpState::default() };
        d.init(&mut tcp, 0);
        let mut seen = Vec::new();
        for _ in 0..5 {
            window(&mut d, &mut tcp, 100, 25);
            seen.push(d.alpha());
        }
        assert_eq!(seen, [16, 31, 46, 60, 73]);
        for _ in 0..200 {
            window(&mut d, &mut tcp, 100, 25);
        }
        assert_eq!(d.alpha(), 256);
    }

    #[test]
    fn every_segment_marked_keeps_alpha_at_one() {
        // F = 1: 1024 - 64 + (100 << 6) / 100 = 1024, clamped at DCTCP_MAX_ALPHA.
        let (mut d, mut tcp) = started();
        window(&mut d, &mut tcp, 100, 100);
        assert_eq!(d.alpha(), 1024);
    }

    #[test]
    fn alpha_waits_for_the_window_to_end() {
        // snd_una below next_seq (100): no update, however many marks.
        let (mut d, mut tcp) = started();
        tcp.snd_una = 99;
        tcp.delivered = 99;
        d.in_ack_event(&mut tcp, AckEvent { ece: true, ..AckEvent::default() }, 0);
        assert_eq!(d.alpha(), 1024);
        // At 100 the window ends: 99 delivered, none marked: 1024 - 64.
        tcp.snd_una = 100;
        d.in_ack_event(&mut tcp, AckEvent::default(), 0);
        assert_eq!(d.alpha(), 960);
    }

    #[test]
    fn ecn_reduction_keeps_one_minus_half_alpha() {
        // ssthresh = cwnd - (cwnd * alpha) >> 11: alpha 1024 halves (100 -> 50); alpha 256
        // (F = 1/4) keeps 1 - 1/8: 100 - (25600 >> 11) = 100 - 12 = 88; at least 2.
        let (mut d, tcp) = started();
        assert_eq!(d.ssthresh(&tcp, 0), 50);
        d.alpha = 256;
        assert_eq!(d.ssthresh(&tcp, 0), 88);
        d.alpha = 0;
        assert_eq!(d.ssthresh(&tcp, 0), 100);
        d.alpha = 1024;
        assert_eq!(d.ssthresh(&TcpState { cwnd: 3, ..tcp }, 0), 2);
    }

    #[test]
    fn a_loss_halves_whatever_alpha() {
        // tcp_enter_recovery: ssthresh() (alpha 0 keeps 100), then set_state(Recovery) runs
        // dctcp_react_to_loss: max(100 >> 1, 2) = 50. Again in Recovery: no second halving.
        let (mut d, mut tcp) = started();
        d.alpha = 0;
        tcp.ssthresh = d.ssthresh(&tcp, 0);
        d.set_state(&mut tcp, CaState::Recovery, 0);
        assert_eq!(tcp.ssthresh, 50);
        tcp.ca_state = CaState::Recovery;
        tcp.ssthresh = 70;
        d.set_state(&mut tcp, CaState::Recovery, 0);
        assert_eq!(tcp.ssthresh, 70);
        // A timeout (CA_EVENT_LOSS) halves too; CWR does not.
        let mut tcp = TcpState { cwnd: 40, ..TcpState::default() };
        d.cwnd_event(&mut tcp, CaEvent::Loss, 0);
        assert_eq!(tcp.ssthresh, 20);
        d.set_state(&mut tcp, CaState::Cwr, 0);
        assert_eq!(tcp.ssthresh, 20);
    }

    #[test]
    fn undo_restores_the_window_of_the_last_reduction() {
        let (mut d, mut tcp) = started();
        d.ssthresh(&tcp, 0);
        tcp.cwnd = 60;
        assert_eq!(d.undo_cwnd(&mut tcp, 0), 100);
    }

    #[test]
    fn ece_mirrors_ce_with_an_immediate_ack_on_each_change() {
        // dctcp_ece_ack_update: state 0 -> CE: ACK now; with a delayed ACK pending, first an
        // ACK of the previous rcv_nxt (10) without ECE. CE again: no change, no ACK forced.
        // Then not CE: ACK now, the prior ACK (of 12) with ECE.
        let mut r = CeEcho::new(10);
        assert_eq!(r.update(true, 11, true), CeEchoAcks { prior_ack: Some((10, false)), ack_now: true });
        assert!(r.ece());
        assert_eq!(r.update(true, 12, true), CeEchoAcks { prior_ack: None, ack_now: false });
        assert_eq!(r.update(false, 13, true), CeEchoAcks { prior_ack: Some((12, true)), ack_now: true });
        assert!(!r.ece());
        // No delayed ACK pending: only this segment's ACK, at once.
        assert_eq!(r.update(true, 14, false), CeEchoAcks { prior_ack: None, ack_now: true });
    }

    #[test]
    fn needs_ecn() {
        assert!(dctcp().needs_ecn());
        assert!(!crate::Algorithm::new("reno", &Params::new()).unwrap().needs_ecn());
    }

    #[test]
    fn replay_an_ece_ack_enters_cwr_with_half_alpha() {
        // From cwnd 100 in congestion avoidance: the `ece` ACK of 1 segment ends DCTCP's
        // first window (next_seq = snd_nxt at init = 0): 1 of 1 delivered marked, alpha =
        // 1024 - 64 + (1 << 6) = 1024. tcp_enter_cwr: ssthresh = 100 - (100 x 1024) >> 11
        // = 50; PRR with 99 in flight: ceil(50 x 1 / 100) = 1, cwnd 99 + 1 = 100. The
        // receiver's `ce` event changes nothing at the sender.
        use crate::replay::{parse_trace_csv, replay};
        let trace = parse_trace_csv("time_us,event,acked,rtt_us\n0,ece,1,10000\n10,ce,,\n").unwrap();
        let alg = crate::Algorithm::new("dctcp", &Params::new()).unwrap();
        let rows = replay(alg, crate::replay::ReplayStart { cwnd: 100, ssthresh: 100 }, &trace);
        let state = |r: &crate::replay::ReplayRow| (r.event, r.cwnd, r.ssthresh, r.ca_state);
        assert_eq!(state(&rows[0]), ("ece", 100, 50, CaState::Cwr));
        assert_eq!(state(&rows[1]), ("ce", 100, 50, CaState::Cwr));
        assert_eq!(rows[0].vars, [("alpha", 1.0)]);
    }
}
