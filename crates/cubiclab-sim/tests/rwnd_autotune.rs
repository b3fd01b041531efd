//! Receive-window autotuning on a whole run, against Linux 6.18 on the testbed
//! (`scripts/rwnd_kernel.py`, `docs/agreement/README.md`): one Reno flow at 50 Mbit/s /
//! 176 ms, buffer one BDP, receiver with `rwnd = "autotune"` reading at once.

use cubiclab_sim::scenario::{Rwnd, RwndMode};
use cubiclab_sim::{FlowGroup, Limit, Scenario, Sim};

const MS: u64 = 1_000_000;
const RTT: u64 = 176 * MS;

/// (advertised window in bytes and cwnd at the start of each RTT 0..=10, slow-start peak).
fn run(rwnd: Option<Rwnd>) -> (Vec<(u64, u32)>, u32) {
    let mut sc = Scenario::dumbbell(50_000_000, RTT, Limit::Packets(1), 3000 * MS);
    sc.links[0].buffer = Limit::Packets(sc.bdp_packets(RTT));
    let mut g = FlowGroup::bulk("reno", RTT);
    g.rwnd = rwnd;
    sc.flows.push(g);
    let mut sim = Sim::new(sc).unwrap();
    let (mut t, mut per_rtt, mut peak) = (0, Vec::new(), 0);
    while !sim.run_until(t) {
        let (cwnd, ..) = sim.cwnd(0);
        peak = peak.max(cwnd);
        if t % RTT == 0 && per_rtt.len() <= 10 {
            per_rtt.push((sim.receive_window(0).advertised(), cwnd));
        }
        t += MS;
    }
    (per_rtt, peak)
}

#[test]
fn autotuned_window_stays_ahead_of_slow_start() {
    let (w, peak) = run(Some(Rwnd::Mode(RwndMode::Autotune)));
    // RTT 0: the SYN-ACK's 65 160 B (45 segments; the kernel's first snd_wnd). RTT 1-2:
    // capped at tcp_win_from_space(tcp_rmem[1]) = 131 072 x 160 / 256 = 81 920 B (the
    // kernel: 77 824-80 896, its sink leaving a few segments unread).
    assert_eq!(w[0].0, 65_160);
    assert_eq!((w[1].0, w[2].0), (81_920, 81_920));
    // RTT 3: the first growth, from 11 segments copied in RTT 1 (rcvq_space 15 928) and 20
    // in RTT 2 (28 960 B): rcvwin = 57 920 + 2 x (57 920 x 13 032 / 15 928 = 47 389) =
    // 152 698, clamp 152 697, advertised ALIGN(152 697, 1024) = 153 600 B = 106 segments
    // (kernel at RTT 5 incl. the handshake: 104.0).
    assert_eq!(w[3].0, 153_600);
    // From then on each RTT's buffer holds twice the bytes copied plus twice their growth:
    // about three times the next flight, and rcv_ssthresh follows at two segments per
    // segment, so the window stays ahead of cwnd (the kernel: 1.3-1.7x through slow start).
    for (k, &(adv, cwnd)) in w.iter().enumerate().skip(2).take(8) {
        let ratio = adv as f64 / 1448.0 / cwnd as f64;
        assert!(ratio >= 1.3, "RTT {k}: window {adv} B, cwnd {cwnd}: {ratio:.2}x");
    }
    // Slow start is never window-limited: its peak is the forced buffer's (the kernel:
    // 2934 with autotuning, 2936-2986 forced; within the matrix's 15%).
    let (_, forced_peak) = run(None);
    assert!(peak.abs_diff(forced_peak) <= 2, "peak {peak} against {forced_peak} with a forced buffer");
    assert!((peak as f64 / 2934.0 - 1.0).abs() < 0.15, "peak {peak} against the kernel's 2934");
}

#[test]
fn a_pinned_window_limits_the_flow_to_it() {
    // rwnd = 64 KiB: the receiver forces SO_RCVBUF 52 429, whose window after the first
    // segment is 2 x 52 429 x 160 / 256 = 65 536 B, reached within the first RTT (from
    // 52 128 B, two segments per segment) and held from then on. The listener's lock
    // limits the scale to its full space, 52 429 < 2^16: no scale, so __tcp_select_window
    // rounds down to whole segments: 45 x 1448 = 65 160 B, the sender's 45 segments.
    let (w, _) = run(Some(Rwnd::Bytes(65_536)));
    assert!(w.iter().skip(1).all(|&(adv, _)| adv == 65_160), "{w:?}");
}
