//! Helpers shared by the tests of the CUBIC variants: drive a `Replayer` with an ACK clock
//! and read the algorithm's variables.

use crate::replay::{Event, ReplayStart, Replayer, TraceEvent};
use crate::tcp::{AckSample, TcpState};
use crate::{Algorithm, CongestionControl, Params};

pub(crate) fn var(r: &Replayer, name: &str) -> f64 {
    var_of(&r.host.alg, name)
}

/// The variable `name` an algorithm reports, NaN if it reports none.
pub(crate) fn var_of(alg: &impl CongestionControl, name: &str) -> f64 {
    let mut v = f64::NAN;
    alg.vars(&mut |k, x| {
        if k == name {
            v = x
        }
    });
    v
}

pub(crate) fn ev(time_us: u64, event: Event) -> TraceEvent {
    TraceEvent { time_us, event, snd_una: None, snd_nxt: None }
}

/// A cumulative ACK in Open: cwnd-limited, not in Disorder, no smoothed RTT or flight given.
pub(crate) fn open_ack(acked: u32, rtt_us: i64) -> Event {
    Event::Ack { acked, rtt_us, cwnd_limited: true, disorder: false, srtt_us: None, in_flight: None }
}

pub(crate) fn ack(time_us: u64, acked: u32, rtt_us: u64) -> TraceEvent {
    ev(time_us, open_ack(acked, rtt_us as i64))
}

/// ACK-clocked sender: every RTT, cwnd/per_ack ACKs of per_ack segments, evenly spaced.
pub(crate) fn ack_clock(r: &mut Replayer, t0_us: u64, rtt_us: u64, per_ack: u32, dur_us: u64) -> u64 {
    let end = t0_us + dur_us;
    let mut t = t0_us;
    while t < end {
        let n = u64::from((r.host.tcp.cwnd / per_ack).max(1));
        for i in 0..n {
            let ti = t + i * rtt_us / n;
            if ti >= end {
                break;
            }
            r.step(&ack(ti, per_ack, rtt_us));
        }
        t += rtt_us;
    }
    end
}

/// The window every 100 ms after a loss at `w` segments: an ACK at `t0_us` (the one RTT
/// sample), the loss 1 us later, then `secs` of an ACK clock at `rtt_us`, one segment per
/// ACK. How the fixed-point twins are held to their real-valued algorithms.
pub(crate) fn windows_after_loss(name: &str, params: &Params, w: u32, rtt_us: u64, secs: u64, t0_us: u64) -> Vec<u32> {
    let alg = Algorithm::new(name, params).unwrap();
    let mut r = Replayer::new(alg, ReplayStart { cwnd: w, ssthresh: w / 2 }, t0_us);
    r.step(&ack(t0_us, 1, rtt_us));
    r.host.tcp.cwnd = w;
    r.step(&ev(t0_us + 1, Event::Loss));
    let mut out = vec![r.host.tcp.cwnd];
    let mut t = t0_us + 1;
    for _ in 0..secs * 10 {
        t = ack_clock(&mut r, t, rtt_us, 1, 100_000);
        out.push(r.host.tcp.cwnd);
    }
    out
}

/// `acks` ACKs of one segment 1 ms apart, each with an RTT sample of `rtt_us`, through the
/// hooks as the host calls them (`pkts_acked`, then `cong_avoid`).
pub(crate) fn plus_plus_acks(
    alg: &mut impl CongestionControl,
    tcp: &mut TcpState,
    rtt_us: i64,
    acks: u32,
    now: &mut u64,
) {
    for _ in 0..acks {
        *now += 1_000_000;
        alg.pkts_acked(tcp, &AckSample { pkts_acked: 1, rtt_us, in_flight: 0 }, *now);
        alg.cong_avoid(tcp, 1, *now);
    }
}

/// A HyStart++ round of `acks` ACKs ([`plus_plus_acks`]): the first acknowledges the last
/// round's `windowEnd` (`snd_nxt` when it began), and `snd_nxt` moves two windows on.
pub(crate) fn plus_plus_round(
    alg: &mut impl CongestionControl,
    tcp: &mut TcpState,
    rtt_us: i64,
    acks: u32,
    now: &mut u64,
) {
    tcp.snd_una = tcp.snd_nxt.wrapping_add(1);
    tcp.snd_nxt = tcp.snd_una + 2 * tcp.cwnd;
    plus_plus_acks(alg, tcp, rtt_us, acks, now);
}
