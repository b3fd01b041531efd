//! Properties every algorithm of the registry must keep, whatever the events: random ACKs
//! (stretch ACKs up to 10^6 segments, RTT samples up to 100 s or none), losses, timeouts,
//! restarts after idle and undos, windows up to 10^6 segments, clocks up to 10^6 s.
//!
//! Generic over `cubiclab_cc::ALGORITHMS`, so algorithms added later are covered too. Run it in
//! a debug build as well (`cargo test -p cubiclab-cc --test properties`): there, integer
//! overflow panics, so "never panics" also means "wraps only where the code says so".

use cubiclab_cc::replay::{Event, ReplayStart, Replayer, TraceEvent};
use cubiclab_cc::{Algorithm, CongestionControl, Params, ALGORITHMS};
use proptest::prelude::*;

/// 10^6 s, in microseconds.
const MAX_TIME_US: u64 = 1_000_000_000_000;
const INFINITE: u32 = cubiclab_cc::tcp::TCP_INFINITE_SSTHRESH;

#[derive(Clone, Debug)]
enum Op {
    Ack {
        gap_us: u64,
        acked: u32,
        rtt_us: i64,
        cwnd_limited: bool,
    },
    Loss {
        gap_us: u64,
    },
    Rto {
        gap_us: u64,
    },
    TxStart {
        gap_us: u64,
        idle_us: u64,
    },
    Undo {
        gap_us: u64,
    },
    /// The host sets the window directly (e.g. a large BDP path), cwnd and ssthresh.
    SetWindow {
        cwnd: u32,
        ssthresh: u32,
    },
}

/// Mostly ACK-clock gaps, sometimes long silences (up to 10^5 s).
fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..=50_000, 1 => 0u64..=100_000_000_000]
}

fn window() -> impl Strategy<Value = u32> {
    prop_oneof![1u32..=100, 1u32..=1_000_000, Just(1_000_000)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (
            gap(),
            prop_oneof![4 => 1u32..=4, 1 => 0u32..=1_000_000],
            prop_oneof![Just(-1i64), 0i64..=2_000_000, 0i64..=100_000_000],
            prop::bool::weighted(0.9),
        )
            .prop_map(|(gap_us, acked, rtt_us, cwnd_limited)| Op::Ack { gap_us, acked, rtt_us, cwnd_limited }),
        1 => gap().prop_map(|gap_us| Op::Loss { gap_us }),
        1 => gap().prop_map(|gap_us| Op::Rto { gap_us }),
        1 => (gap(), prop_oneof![0u64..=1_000_000, 0u64..=MAX_TIME_US])
            .prop_map(|(gap_us, idle_us)| Op::TxStart { gap_us, idle_us }),
        1 => gap().prop_map(|gap_us| Op::Undo { gap_us }),
        1 => (window(), prop_oneof![window(), Just(INFINITE)])
            .prop_map(|(cwnd, ssthresh)| Op::SetWindow { cwnd, ssthresh }),
    ]
}

/// Start: time (including 0 and the far end), initial window and threshold.
fn start() -> impl Strategy<Value = (u64, u32, u32)> {
    (prop_oneof![Just(0u64), 0u64..=MAX_TIME_US], window(), prop_oneof![window(), Just(INFINITE)])
}

/// Replay `ops` through `alg`, checking the window after every event.
fn check(alg: Algorithm, (t0, cwnd, ssthresh): (u64, u32, u32), ops: &[Op]) -> Result<(), TestCaseError> {
    let name = alg.name();
    let mut r = Replayer::new(alg, ReplayStart { cwnd, ssthresh }, t0);
    let mut now = t0;
    for op in ops {
        let (gap_us, event) = match *op {
            Op::Ack { gap_us, acked, rtt_us, cwnd_limited } => {
                (gap_us, Event::Ack { acked, rtt_us, cwnd_limited, disorder: false, srtt_us: None, in_flight: None })
            }
            Op::Loss { gap_us } => (gap_us, Event::Loss),
            Op::Rto { gap_us } => (gap_us, Event::Rto),
            Op::TxStart { gap_us, idle_us } => (gap_us, Event::TxStart { idle_us }),
            Op::Undo { gap_us } => (gap_us, Event::Undo),
            Op::SetWindow { cwnd, ssthresh } => {
                r.host.tcp.cwnd = cwnd;
                r.host.tcp.ssthresh = ssthresh;
                continue;
            }
        };
        now = (now + gap_us).min(MAX_TIME_US.max(t0));
        let time_us = now;
        // Idle time cannot reach back before time 0.
        let event = match event {
            Event::TxStart { idle_us } => Event::TxStart { idle_us: idle_us.min(now) },
            e => e,
        };
        let was_in_loss = r.host.tcp.ca_state == cubiclab_cc::CaState::Loss;
        let row = r.step(&TraceEvent { time_us, event, snd_una: None, snd_nxt: None });
        prop_assert!(row.cwnd >= 1, "{name}: cwnd {} after {:?} at {time_us} us", row.cwnd, op);
        // A repeated timeout in Loss keeps the threshold without calling the hook
        // (tcp_enter_loss), and so does a loss in Loss for an algorithm without fast
        // recovery (Tahoe enters Loss for it), so only fresh congestion events are checked.
        // BBR (`cong_control`) is exempt: `bbr_ssthresh` returns the threshold unchanged.
        // CDG is exempt too: tcp_cdg.c's HyStart sets ssthresh = cwnd (1 after a timeout),
        // which a loss during its backoff's CWR keeps, and with use_tolerance its ssthresh
        // returns the window unfloored.
        let floors_ssthresh = !r.host.alg.has_cong_control() && name != "cdg";
        let repeated_in_loss = was_in_loss && (matches!(event, Event::Rto) || !r.host.alg.fast_recovery());
        if floors_ssthresh && matches!(event, Event::Loss | Event::Rto) && !repeated_in_loss {
            // Every Linux ssthresh hook floors the threshold at 2 segments (tcp_reno_ssthresh,
            // cubictcp_recalc_ssthresh, ...): max(..., 2U).
            prop_assert!(row.ssthresh >= 2, "{name}: ssthresh {} after {:?}", row.ssthresh, op);
            if matches!(event, Event::Loss) && r.host.alg.fast_recovery() {
                prop_assert!(row.cwnd >= 2, "{name}: cwnd {} after fast recovery", row.cwnd);
            }
        }
        for (k, v) in &row.vars {
            prop_assert!(v.is_finite(), "{name}: variable {k} = {v}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Default parameters, every algorithm, the same events.
    #[test]
    fn every_algorithm_survives_random_events(s in start(), ops in prop::collection::vec(op(), 1..300)) {
        for info in ALGORITHMS {
            check(Algorithm::new(info.name, &Params::new()).unwrap(), s, &ops)?;
        }
    }

    /// Random parameters anywhere in each algorithm's declared ranges, ends included.
    #[test]
    fn every_algorithm_survives_any_valid_parameters(
        s in start(),
        ops in prop::collection::vec(op(), 1..200),
        fractions in prop::collection::vec(prop_oneof![Just(0.0f64), Just(1.0f64), 0.0f64..=1.0], 32),
    ) {
        for info in ALGORITHMS {
            let mut params = Params::new();
            for (spec, f) in info.params.iter().zip(fractions.iter().cycle()) {
                let mut v = spec.min + f * (spec.max - spec.min);
                if spec.integer {
                    v = v.round().clamp(spec.min, spec.max);
                }
                // Beyond its range, cdg's window must be a power of two (tcp_cdg_register):
                // the largest one not above the drawn value.
                if (info.name, spec.name) == ("cdg", "window") {
                    v = f64::from(1u32 << (v as u32).ilog2());
                }
                params.insert(spec.name, v);
            }
            let alg = Algorithm::new(info.name, &params).map_err(|e| TestCaseError::fail(e.0))?;
            check(alg, s, &ops)?;
        }
    }
}

/// The plain edge cases, run every time: the largest windows and clocks at once.
#[test]
fn extremes_do_not_panic() {
    for info in ALGORITHMS {
        for &(t0, cwnd) in &[(0u64, 1u32), (MAX_TIME_US, 1_000_000), (4_294_967_295, 1_000_000)] {
            let ops = [
                Op::Ack { gap_us: 0, acked: 1_000_000, rtt_us: 100_000_000, cwnd_limited: true },
                Op::Loss { gap_us: 1 },
                Op::Ack { gap_us: 100_000_000_000, acked: 1_000_000, rtt_us: 0, cwnd_limited: true },
                Op::TxStart { gap_us: 100_000_000_000, idle_us: MAX_TIME_US },
                Op::Ack { gap_us: 1, acked: 1, rtt_us: -1, cwnd_limited: true },
                Op::Rto { gap_us: 1 },
                Op::Undo { gap_us: 1 },
                Op::Ack { gap_us: 1, acked: 1_000_000, rtt_us: 1, cwnd_limited: true },
            ];
            check(Algorithm::new(info.name, &Params::new()).unwrap(), (t0, cwnd, cwnd), &ops).unwrap();
        }
    }
}
