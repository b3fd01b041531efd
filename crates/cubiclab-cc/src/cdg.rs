//! `cdg`: CAIA Delay-Gradient as Linux ships it, `net/ipv4/tcp_cdg.c` (Linux 6.x:
//! `tcp_snd_cwnd()` accessors, `get_random_u32`; read in Kingxukai/linux 0291023e), after
//! Hayes and Armitage, "Revisiting TCP congestion control using delay gradients" (IFIP
//! Networking 2011).
//!
//! Reno's growth and a loss response that keeps a shadow window. Each round (an ACK past
//! the round's `snd_nxt`) closes the round's least and largest RTT; the gradients of both
//! against the previous round are summed over the last `window` rounds (a fixed ring of
//! `window` entries, allocated once; the sum extrapolated to the full window until it
//! fills). A positive gradient `g` (the least's, else the largest's) backs off with
//! probability `1 - exp(-g * backoff_factor / 10^6)` (the module's `nexp_u32`, a draw from
//! the run's seed against it): `tcp_enter_cwr`, ssthresh `backoff_beta`/1024 of the window,
//! unless `use_ineff` backoffs in a row changed nothing (no gradient of -32 us or less).
//! A loss keeps the larger of half the window and the shadow window (halved; it grows with
//! Reno's increments and is raised to the window at each backoff), or with
//! `use_tolerance` the whole window when the gradients say the queue is not full. Slow start
//! ends by HyStart's ACK train (3 ms spacing, half the least RTT) or delay (the round's least
//! RTT above 9/8 of the least seen, after 8 ACKs). `pkts_acked` filters delayed ACKs
//! (Hayes' rule) when nothing is SACKed. Undo is `tcp_reno_undo_cwnd` (the trait's default).
//!
//! Times are the ACK's `tcp_mstamp` in microseconds (`now_ns / 1000`, low 32 bits);
//! `cong_avoid`'s `ack` is `snd_una` after the ACK, in segments (the round test is an order).
//! The kernel allocates the ring at init and falls back to `window = 1` when that fails;
//! here it never fails.

use crate::cubic_frame::HYSTART_DETECT;
use crate::params::{ParamError, ParamSpec, Params};
use crate::random::KernelRandom;
use crate::reno::reno_cong_avoid;
use crate::seq::{after, before};
use crate::tcp::{AckSample, CaEvent, TcpState};
use crate::CongestionControl;

/// `HYSTART_ACK_TRAIN` and `HYSTART_DELAY`: the bits of `hystart_detect`.
const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;

/// `exp(-x) * 65536 - 1` for x = 0, 0.000256, 0.000512, ... (the module's table).
const NEXP: [u16; 17] =
    [65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795, 22965, 8047, 987, 14];

/// `enum cdg_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

/// `struct cdg_minmax`: a round's least and largest RTT, us (both 0: no sample yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    /// `v64 != 0`.
    fn any(self) -> bool {
        self.min != 0 || self.max != 0
    }
}

/// TCP CDG (`struct cdg`).
#[derive(Clone, Debug)]
pub struct Cdg {
    // Parameters (module parameters).
    window: u32,
    backoff_beta: u32,
    backoff_factor: u32,
    hystart_detect: u32,
    use_ineff: u32,
    use_shadow: bool,
    use_tolerance: bool,
    // State.
    rtt: MinMax,
    rtt_prev: MinMax,
    /// `gradients`: the last `window` rounds' gradients (`None`: `window` 1, as the kernel
    /// allocates none); `gsum` their sum; `tail` the next slot.
    gradients: Option<Box<[MinMax]>>,
    gsum: MinMax,
    gfilled: bool,
    tail: u8,
    state: State,
    /// `delack`: the delayed-ACK filter's count (0..=5).
    delack: u8,
    /// `rtt_seq`: the round ends on an ACK past it (segments).
    rtt_seq: u32,
    shadow_wnd: u32,
    backoff_cnt: u16,
    sample_cnt: u16,
    /// `delay_min`: the least round minimum RTT seen in slow start, us.
    delay_min: i32,
    /// `last_ack`, `round_start`: HyStart's ACK train, `tcp_mstamp` us (low 32 bits).
    last_ack: u32,
    round_start: u32,
    random: KernelRandom,
}

/// `min_not_zero`.
fn min_not_zero(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// `DIV_ROUND_CLOSEST(x, 64)` for a signed `x`: halves away from zero, then C's truncation.
fn div_round_closest_64(x: i32) -> i32 {
    // wraps: the kernel's int arithmetic (|x| near 2^31 only).
    if x > 0 {
        x.wrapping_add(32) / 64
    } else {
        x.wrapping_sub(32) / 64
    }
}

/// `nexp_u32(ux)`: `exp(-ux / 10^6) * U32_MAX`, 0 from `ux >= 2^24` (the module's cut-off):
/// the low 8 bits linearly, then one table factor per set bit above them.
pub(crate) fn nexp_u32(ux: u32) -> u32 {
    let mut msb = ux >> 8;
    if msb > u32::from(u16::MAX) {
        return 0;
    }
    // No wrap: (ux & 0xff) * 4294 <= 1094970.
    let mut res = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    let mut i = 1;
    while msb != 0 {
        // v[i & -(msb & 1)]: v[i] when the bit is set, else v[0] + 1 = 2^16 (a factor 1).
        let y = u64::from(if msb & 1 != 0 { NEXP[i] } else { NEXP[0] }) + 1;
        res = ((u64::from(res) * y) >> 16) as u32;
        i += 1;
        msb >>= 1;
    }
    res
}

impl Cdg {
    pub const PARAMS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "window",
            default: 8.0,
            min: 1.0,
            max: 256.0,
            integer: true,
            unit: "rounds",
            help: "gradient window: rounds whose gradients are summed (a power of two)",
            choices: &[],
        },
        ParamSpec {
            name: "backoff_beta",
            // 0.7071 * 1024 = 724.07, truncated to the module's unsigned int.
            default: 724.0,
            min: 0.0,
            max: 1024.0,
            integer: true,
            // Not a loss decrease ("1/1024" is read as one): what a backoff keeps.
            unit: "1/1024 at backoff",
            help: "window kept at a delay-gradient backoff (a loss keeps half or the shadow window)",
            choices: &[],
        },
        ParamSpec {
            name: "backoff_factor",
            default: 42.0,
            min: 0.0,
            max: 4294967295.0,
            integer: true,
            unit: "1e-6/us",
            help: "backoff probability scale: P = 1 - exp(-gradient * factor / 1e6) (0: never back off)",
            choices: &[],
        },
        HYSTART_DETECT,
        ParamSpec {
            name: "use_ineff",
            default: 5.0,
            min: 0.0,
            max: 65535.0,
            integer: true,
            unit: "backoffs",
            help: "ineffectual backoffs in a row after which CDG stops backing off (0: never stops)",
            choices: &[],
        },
        ParamSpec::switch("use_shadow", true, "shadow window: a loss keeps at least the halved shadow window"),
        ParamSpec::switch(
            "use_tolerance",
            false,
            "loss tolerance: a loss while the queue is not full keeps the window",
        ),
    ];

    pub fn new(params: &Params) -> Result<Self, ParamError> {
        let p = params.check("cdg", Self::PARAMS)?;
        let window = p.u32("window");
        if !window.is_power_of_two() {
            // tcp_cdg_register refuses the module (-EINVAL).
            return Err(ParamError(format!(
                "parameter 'window' of 'cdg' is {window}; allowed: a power of two in [1, 256]"
            )));
        }
        Ok(Cdg {
            window,
            backoff_beta: p.u32("backoff_beta"),
            backoff_factor: p.u32("backoff_factor"),
            hystart_detect: p.u32("hystart_detect"),
            use_ineff: p.u32("use_ineff"),
            use_shadow: p.u32("use_shadow") != 0,
            use_tolerance: p.u32("use_tolerance") != 0,
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: (window > 1).then(|| vec![MinMax::default(); window as usize].into_boxed_slice()),
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: State::Unknown,
            delack: 0,
            rtt_seq: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: 0,
            round_start: 0,
            random: KernelRandom::default(),
        })
    }

    /// `memset(ca, 0, ...)` but the ring, zeroed in place.
    fn clear(&mut self) {
        if let Some(g) = self.gradients.as_deref_mut() {
            g.fill(MinMax::default());
        }
        self.rtt = MinMax::default();
        self.rtt_prev = MinMax::default();
        self.gsum = MinMax::default();
        self.gfilled = false;
        self.tail = 0;
        self.state = State::Unknown;
        self.delack = 0;
        self.rtt_seq = 0;
        self.shadow_wnd = 0;
        self.backoff_cnt = 0;
        self.sample_cnt = 0;
        self.delay_min = 0;
        self.last_ack = 0;
        self.round_start = 0;
    }

    /// `tcp_cdg_hystart_update`, at `now_us` (`tcp_mstamp`, low 32 bits).
    fn hystart_update(&mut self, tcp: &mut TcpState, now_us: u32) {
        self.delay_min = min_not_zero(self.delay_min, self.rtt.min);
        if self.delay_min == 0 {
            return;
        }
        if self.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            // wraps: u32 times, compared as the kernel's before/after.
            if self.last_ack == 0 || !tcp.cwnd_limited {
                self.last_ack = now_us;
                self.round_start = now_us;
            } else if before(now_us, self.last_ack.wrapping_add(3000)) {
                // delay_min / 2U: the int taken as unsigned.
                let base_owd = (self.delay_min as u32 / 2).max(125);
                self.last_ack = now_us;
                if after(now_us, self.round_start.wrapping_add(base_owd)) {
                    tcp.ssthresh = tcp.cwnd;
                    return;
                }
            }
        }
        if self.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                // max(delay_min + delay_min / 8U, 125U) in unsigned, stored in an s32.
                let d = self.delay_min as u32;
                let thresh = d.wrapping_add(d / 8).max(125) as i32;
                if self.rtt.min > thresh {
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }
    }

    /// `tcp_cdg_grad`: the round's gradient, summed over the window (the sum extrapolated
    /// while it fills; the division by the window dropped, as the module does).
    fn grad(&mut self) -> i32 {
        // wraps: s32 differences of RTTs, as the kernel's int arithmetic.
        let mut gmin = self.rtt.min.wrapping_sub(self.rtt_prev.min);
        let mut gmax = self.rtt.max.wrapping_sub(self.rtt_prev.max);
        if let Some(g) = self.gradients.as_deref_mut() {
            let old = &mut g[self.tail as usize];
            self.gsum.min = self.gsum.min.wrapping_add(gmin.wrapping_sub(old.min));
            self.gsum.max = self.gsum.max.wrapping_add(gmax.wrapping_sub(old.max));
            *old = MinMax { min: gmin, max: gmax };
            // No wrap: window <= 256, so tail + 1 <= 256 before the mask.
            self.tail = ((u32::from(self.tail) + 1) & (self.window - 1)) as u8;
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        let mut grad = if gmin > 0 { gmin } else { gmax };
        if !self.gfilled {
            // With window 1 no ring exists and tail stays 0: filled at once.
            if self.tail == 0 {
                self.gfilled = true;
            } else {
                // wraps: int product, as the kernel's.
                grad = grad.wrapping_mul(self.window as i32) / i32::from(self.tail);
            }
        }
        if gmin <= -32 || gmax <= -32 {
            self.backoff_cnt = 0;
        }
        if self.use_tolerance {
            let (gmin, gmax) = (div_round_closest_64(gmin), div_round_closest_64(gmax));
            if gmin > 0 && gmax <= 0 {
                self.state = State::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = State::NonFull;
            }
        }
        grad
    }

    /// `tcp_cdg_backoff`: back off (true) with probability `1 - nexp_u32(grad * factor)`.
    fn backoff(&mut self, tcp: &mut TcpState, grad: u32) -> bool {
        // wraps: u32 product, as the kernel's.
        if self.random.u32() <= nexp_u32(grad.wrapping_mul(self.backoff_factor)) {
            return false;
        }
        if self.use_ineff != 0 {
            // wraps: the kernel's u16 count.
            self.backoff_cnt = self.backoff_cnt.wrapping_add(1);
            if u32::from(self.backoff_cnt) > self.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tcp.cwnd);
        self.state = State::Backoff;
        tcp.enter_cwr = true;
        true
    }
}

impl CongestionControl for Cdg {
    /// `tcp_cdg_init` (the ring zeroed at construction).
    fn init(&mut self, tcp: &mut TcpState, _now_ns: u64) {
        self.rtt_seq = tcp.snd_nxt;
        self.shadow_wnd = tcp.cwnd;
    }

    /// `tcp_cdg_ssthresh`.
    fn ssthresh(&mut self, tcp: &TcpState, _now_ns: u64) -> u32 {
        if self.state == State::Backoff {
            // wraps: u32 product, as the kernel's (past 2^22 segments).
            return (tcp.cwnd.wrapping_mul(self.backoff_beta.min(1024)) >> 10).max(2);
        }
        if self.state == State::NonFull && self.use_tolerance {
            return tcp.cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(tcp.cwnd);
        if self.use_shadow {
            return self.shadow_wnd.max(tcp.cwnd >> 1).max(2);
        }
        (tcp.cwnd >> 1).max(2)
    }

    /// `tcp_cdg_cong_avoid` (not called in CWR or Recovery).
    fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
        if tcp.in_slow_start() && self.hystart_detect != 0 {
            // wraps: tcp_mstamp's low 32 bits.
            self.hystart_update(tcp, (now_ns / 1000) as u32);
        }
        if after(tcp.snd_una, self.rtt_seq) && self.rtt.any() {
            let grad = if self.rtt_prev.any() { self.grad() } else { 0 };
            self.rtt_seq = tcp.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = 0;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(tcp, grad as u32) {
                return;
            }
        }
        if !tcp.cwnd_limited {
            self.shadow_wnd = self.shadow_wnd.min(tcp.cwnd);
            return;
        }
        let prior = tcp.cwnd;
        reno_cong_avoid(tcp, acked);
        let incr = tcp.cwnd.wrapping_sub(prior);
        // max(shadow, shadow + incr): the u32 sum's wrap leaves the shadow as it was.
        self.shadow_wnd = self.shadow_wnd.max(self.shadow_wnd.wrapping_add(incr));
    }

    /// `tcp_cdg_acked`.
    fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, _now_ns: u64) {
        if sample.rtt_us <= 0 {
            return;
        }
        // wraps: the s64 sample stored in the s32 fields, as the kernel's assignment.
        let rtt = sample.rtt_us as i32;
        if tcp.sacked_out == 0 {
            if sample.pkts_acked == 1 && self.delack != 0 {
                // A delayed ACK only lowers a non-zero minimum.
                self.rtt.min = self.rtt.min.min(rtt);
                self.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && self.delack < 5 {
                self.delack += 1;
            }
        }
        self.rtt.min = min_not_zero(self.rtt.min, rtt);
        self.rtt.max = self.rtt.max.max(rtt);
    }

    /// `tcp_cdg_cwnd_event`.
    fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, _now_ns: u64) {
        match event {
            CaEvent::CwndRestart => {
                self.clear();
                self.rtt_seq = tcp.snd_nxt;
                self.shadow_wnd = tcp.cwnd;
            }
            CaEvent::CompleteCwr => {
                self.state = State::Unknown;
                self.rtt_seq = tcp.snd_nxt;
                self.rtt_prev = self.rtt;
                self.rtt = MinMax::default();
            }
            _ => {}
        }
    }

    fn seed_random(&mut self, seed: u64) {
        self.random.seed(seed);
    }

    fn takes_run_seed(&self) -> bool {
        true
    }

    fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("shadow_wnd", f64::from(self.shadow_wnd));
        out("gsum_min_us", f64::from(self.gsum.min));
        out("gsum_max_us", f64::from(self.gsum.max));
        out("delay_min_us", f64::from(self.delay_min));
        out("backoff_cnt", f64::from(self.backoff_cnt));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{Host, PrrAck, RttEstimator};
    use crate::tcp::{CaState, RateSample};
    use crate::Algorithm;

    fn cdg(params: Params) -> Cdg {
        Cdg::new(&params).unwrap()
    }

    #[test]
    fn nexp_is_the_modules_table_arithmetic() {
        // ux < 256: U32_MAX - ux * (U32_MAX / 10^6) = 4294967295 - 255 * 4294 at 255.
        assert_eq!(nexp_u32(0), u32::MAX);
        assert_eq!(nexp_u32(255), 4_293_872_325);
        // 256: bit 0 of msb, one factor v[1] + 1 = 65519: (U32_MAX * 65519) >> 16.
        assert_eq!(nexp_u32(256), ((u64::from(u32::MAX) * 65519) >> 16) as u32);
        // The cut-off: ux >> 8 above U16_MAX gives 0; just below it the product of all 16
        // factors, 223 (exp(-16.777215) * 2^32 = 222.4).
        assert_eq!(nexp_u32((1 << 24) - 1), 223);
        assert_eq!(nexp_u32(1 << 24), 0);
        // Everywhere within 10^-4 of exp(-ux / 10^6) relative, up to ux = 10^6.
        for ux in (0..1_000_000).step_by(997) {
            let want = (-(ux as f64) / 1e6).exp() * 4294967296.0;
            assert!((f64::from(nexp_u32(ux)) / want - 1.0).abs() < 1e-4, "{ux}");
        }
    }

    #[test]
    fn gradients_are_summed_over_the_window_and_extrapolated_until_it_fills() {
        let mut c = cdg(Params::new());
        // Round 2 against round 1: gmin 100 (> 0, so it is the gradient), one of 8 slots:
        // 100 * 8 / 1 = 800.
        c.rtt_prev = MinMax { min: 1000, max: 1000 };
        c.rtt = MinMax { min: 1100, max: 1300 };
        assert_eq!(c.grad(), 800);
        // Then gmin 50, gmax -50: sums 150 and 250; 150 * 8 / 2 = 600.
        c.rtt_prev = c.rtt;
        c.rtt = MinMax { min: 1150, max: 1250 };
        assert_eq!((c.grad(), c.gsum), (600, MinMax { min: 150, max: 250 }));
        // Six rounds of gmin 0, gmax 10 fill the ring (tail back to 0): the sum itself,
        // gmin 150 > 0.
        for i in 0..6 {
            c.rtt_prev = c.rtt;
            c.rtt = MinMax { min: 1150, max: 1260 + 10 * i };
            let g = c.grad();
            assert_eq!(g, if i < 5 { 150 * 8 / (3 + i) } else { 150 });
        }
        assert!(c.gfilled && c.tail == 0);
        // The ninth replaces the first (100, 300): gmin sum 150 - 100 + (-200) = -150, gmax
        // sum 310 - 300 + 0 = 10: the gradient is gmax's, and -150 <= -32 makes the last
        // backoff effectual.
        c.backoff_cnt = 3;
        c.rtt_prev = c.rtt;
        c.rtt = MinMax { min: 950, max: c.rtt.max };
        assert_eq!(c.grad(), 10);
        assert_eq!((c.gsum, c.backoff_cnt), (MinMax { min: -150, max: 10 }, 0));
    }

    #[test]
    fn window_one_keeps_no_ring() {
        // tcp_cdg_init allocates nothing for window 1: the round's own gradient, filled at once.
        let mut c = cdg(Params::new().set("window", 1.0));
        c.rtt_prev = MinMax { min: 1000, max: 1000 };
        c.rtt = MinMax { min: 1040, max: 1000 };
        assert_eq!((c.grad(), c.gfilled), (40, true));
    }

    #[test]
    fn window_must_be_a_power_of_two() {
        let e = Cdg::new(&Params::new().set("window", 6.0)).unwrap_err();
        assert!(e.0.contains("'window'") && e.0.contains("power of two"), "{}", e.0);
    }

    #[test]
    fn a_gradient_backs_off_with_probability_one_minus_exp() {
        // grad * factor = 10^6 micro-units: P = 1 - e^-1 = 0.632. 2000 seeded draws land
        // within 0.60..0.66 (4 standard deviations of a binomial).
        let mut c = cdg(Params::new().set("backoff_factor", 1000.0).set("use_ineff", 0.0));
        c.seed_random(5);
        let mut tcp = TcpState::default();
        let n = (0..2000).filter(|_| c.backoff(&mut tcp, 1000)).count();
        assert!((1200..1320).contains(&n), "{n}");
        // factor 0: nexp(0) = U32_MAX, never above a draw.
        let mut never = cdg(Params::new().set("backoff_factor", 0.0));
        assert!((0..1000).all(|_| !never.backoff(&mut tcp, 1000)));
    }

    #[test]
    fn ineffectual_backoffs_stop_after_use_ineff() {
        // Certain backoffs (grad * factor >= 2^24: nexp 0): the 6th in a row without an
        // effectual gradient is refused (backoff_cnt 6 > use_ineff 5).
        let mut c = cdg(Params::new().set("backoff_factor", 16777216.0));
        let mut tcp = TcpState { cwnd: 100, ..TcpState::default() };
        let took: Vec<bool> = (0..7).map(|_| c.backoff(&mut tcp, 1)).collect();
        assert_eq!(took, [true, true, true, true, true, false, false]);
    }

    #[test]
    fn a_backoff_enters_cwr_with_backoff_beta() {
        // Through the host: cong_avoid's backoff asks for tcp_enter_cwr; ssthresh =
        // 100 * 724 >> 10 = 70 (70.7), shadow window raised to 100, state CWR.
        let alg = Algorithm::new("cdg", &Params::new().set("backoff_factor", 16777216.0)).unwrap();
        let tcp = TcpState { cwnd: 100, ssthresh: 50, snd_nxt: 100, ..TcpState::default() };
        let mut h = Host::new(alg, tcp, RttEstimator::new(200_000, 1));
        h.init(0);
        let Algorithm::Cdg(c) = &mut h.alg else { unreachable!() };
        c.rtt_prev = MinMax { min: 1000, max: 1000 };
        c.rtt = MinMax { min: 1100, max: 1100 };
        h.tcp.snd_una = 101;
        let ack = PrrAck { newly_acked_sacked: 1, newly_lost: 0, una_advanced: true };
        h.cong_control(ack, &RateSample::default(), 99, 0);
        assert_eq!((h.tcp.ca_state, h.tcp.ssthresh, h.tcp.cwnd, h.tcp.enter_cwr), (CaState::Cwr, 70, 100, false));
        let Algorithm::Cdg(c) = &h.alg else { unreachable!() };
        assert_eq!((c.shadow_wnd, c.state), (100, State::Backoff));
    }

    #[test]
    fn a_loss_keeps_the_shadow_window_or_half() {
        // shadow 100 at cwnd 60: shadow = min(100 >> 1, 60) = 50; max3(2, 50, 30) = 50.
        let tcp = TcpState { cwnd: 60, ..TcpState::default() };
        let mut c = cdg(Params::new());
        c.shadow_wnd = 100;
        assert_eq!(c.ssthresh(&tcp, 0), 50);
        let mut c = cdg(Params::new().set("use_shadow", 0.0));
        c.shadow_wnd = 100;
        assert_eq!(c.ssthresh(&tcp, 0), 30);
        // use_tolerance with the queue not full: the whole window.
        let mut c = cdg(Params::new().set("use_tolerance", 1.0));
        c.state = State::NonFull;
        assert_eq!(c.ssthresh(&tcp, 0), 60);
    }

    #[test]
    fn delayed_acks_only_lower_a_minimum() {
        let mut c = cdg(Params::new());
        let mut tcp = TcpState::default();
        let s = |pkts_acked, rtt_us| AckSample { pkts_acked, rtt_us, in_flight: 0 };
        // A stretch ACK (2 segments): counted, delack 1.
        c.pkts_acked(&mut tcp, &s(2, 1000), 0);
        assert_eq!((c.rtt, c.delack), (MinMax { min: 1000, max: 1000 }, 1));
        // Then a single-segment ACK is taken for delayed: only a lower minimum, delack 0.
        c.pkts_acked(&mut tcp, &s(1, 3000), 0);
        assert_eq!((c.rtt, c.delack), (MinMax { min: 1000, max: 1000 }, 0));
        c.pkts_acked(&mut tcp, &s(1, 3000), 0);
        assert_eq!(c.rtt, MinMax { min: 1000, max: 3000 });
        // With segments SACKed the filter is off.
        tcp.sacked_out = 1;
        c.delack = 1;
        c.pkts_acked(&mut tcp, &s(1, 4000), 0);
        assert_eq!((c.rtt.max, c.delack), (4000, 1));
    }

    #[test]
    fn hystart_ends_slow_start_by_delay_and_by_ack_train() {
        // Delay: after 8 ACKs of the round, a least RTT above max(1000 + 1000 / 8, 125) =
        // 1125 us ends slow start; 1125 does not.
        let mut c = cdg(Params::new().set("hystart_detect", 2.0));
        let mut tcp = TcpState { cwnd: 20, cwnd_limited: true, ..TcpState::default() };
        c.delay_min = 1000;
        c.rtt.min = 1125;
        for _ in 0..9 {
            c.hystart_update(&mut tcp, 0);
        }
        assert_eq!(tcp.ssthresh, crate::tcp::TCP_INFINITE_SSTHRESH);
        c.rtt.min = 1126;
        c.hystart_update(&mut tcp, 0);
        assert_eq!(tcp.ssthresh, 20);
        // ACK train: ACKs closer than 3 ms; once one comes later than round_start +
        // max(1000 / 2, 125) = 500 us after the train began, slow start ends.
        let mut c = cdg(Params::new().set("hystart_detect", 1.0));
        let mut tcp = TcpState { cwnd: 20, cwnd_limited: true, ..TcpState::default() };
        c.rtt.min = 1000;
        for now in [10_000, 10_200, 10_400] {
            c.hystart_update(&mut tcp, now);
        }
        assert_eq!(tcp.ssthresh, crate::tcp::TCP_INFINITE_SSTHRESH);
        c.hystart_update(&mut tcp, 10_501);
        assert_eq!(tcp.ssthresh, 20);
    }
}
