//! Whole-simulation checks against the arithmetic of AIMD and the papers.

use cubiclab_sim::{CwndRecording, FlowGroup, Limit, Recovery, Scenario, Sim};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn one_flow(alg: &str, rate_bps: u64, rtt_ns: u64, secs: u64) -> Scenario {
    let mut sc = Scenario::dumbbell(rate_bps, rtt_ns, Limit::Packets(1), secs * S);
    sc.links[0].buffer = Limit::Packets(sc.bdp_packets(rtt_ns));
    sc.record.cwnd = CwndRecording::Changes;
    sc.flows.push(FlowGroup::bulk(alg, rtt_ns));
    sc
}

/// Times of the congestion events of `flow`.
fn loss_times(r: &cubiclab_sim::Results, flow: u32) -> Vec<u64> {
    let t = &r.losses;
    (0..t.t_ns.len()).filter(|&i| t.flow[i] == flow).map(|i| t.t_ns[i]).collect()
}

#[test]
fn reno_alone_fills_a_bdp_buffer_with_the_aimd_period() {
    // 20 Mbps, 40 ms, 1500-byte packets: C = 1666.7 pkt/s, BDP = 66 packets, buffer B = 66.
    // The window peaks at BDP + B = 132 and halves to 66 = BDP, so the queue only just
    // drains: utilisation ~100%. It grows one segment per round, and a round lasts W / C
    // while the queue is non-empty, so one sawtooth lasts
    //   T = sum_{W=66}^{132} W / C ~ (132^2 - 66^2) / (2 C) = 3.92 s.
    let sc = one_flow("reno", 20_000_000, 40 * MS, 60);
    let r = Sim::new(sc).unwrap().run();
    let losses = loss_times(&r, 0);
    assert!(losses.len() >= 10, "expected a regular sawtooth, got {} losses", losses.len());
    let gaps: Vec<f64> = losses.windows(2).skip(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean - 3.92).abs() < 0.4, "sawtooth period {mean:.2} s, expected 3.92 s");
    // Peak window just before each loss: BDP + B (+1 in service, +1 for the arrival that is
    // dropped) = 132..134.
    let peak = *r.cwnd.cwnd.iter().skip(r.cwnd.cwnd.len() / 2).max().unwrap();
    assert!((131..=136).contains(&peak), "peak cwnd {peak}");
    let util: f64 = r.link.utilization[50..].iter().sum::<f64>() / (r.link.utilization.len() - 50) as f64;
    assert!(util > 0.98, "utilisation {util:.3}");
}

/// Run `sc` (long-lived flows only), checking every 37 ms that each flow's data packets sent
/// are arrived, dropped by a buffer, lost at random, or in the network; the (dropped, lost)
/// of each flow at each check.
fn conserved(sc: Scenario) -> Vec<(u64, u64)> {
    let flows = sc.flows.iter().map(|g| g.count).sum::<u32>();
    let mut sim = Sim::new(sc).unwrap();
    let (mut t, mut counts) = (0, Vec::new());
    while !sim.run_until(t) {
        for f in 0..flows {
            let (sent, arrived, dropped, lost) = sim.flow_counts(f);
            assert_eq!(sent, arrived + dropped + lost + sim.in_network(f), "flow {f} at {t} ns");
            counts.push((dropped, lost));
        }
        t += 37 * MS;
    }
    counts
}

#[test]
fn packets_are_conserved_at_every_sample() {
    // Every data packet sent is, at any instant, either arrived, dropped by the buffer,
    // lost at random, or in the network.
    let mut sc = one_flow("reno", 50_000_000, 30 * MS, 5);
    sc.flows.push(FlowGroup::bulk("cubic", 80 * MS));
    sc.links[0].buffer = Limit::Packets(20); // small, so that drops happen
    sc.links[0].loss = cubiclab_sim::LossSpec::Bernoulli { p: 0.001 };
    assert!(conserved(sc).iter().any(|&(dropped, lost)| dropped.min(lost) > 0));
}

#[test]
fn packets_are_conserved_with_many_flows() {
    // 300 flows: enough that the engine fetches flows' state ahead of their packets
    // (sim/prefetch.rs), which must change nothing; a buffer of 100 packets for 300
    // windows, so that drops happen.
    let mut sc = one_flow("cubic", 100_000_000, 40 * MS, 2);
    sc.flows[0].count = 300;
    sc.flows[0].start_spacing_ns = MS;
    sc.links[0].buffer = Limit::Packets(100);
    assert!(conserved(sc).iter().any(|&(dropped, _)| dropped > 0));
}

#[test]
fn packets_are_conserved_under_fq_codel_batch_drops() {
    // FQ-CoDel drops packets already queued, from the fattest flow's head, to make room
    // for an arrival (fq_codel_drop): each must be counted as its flow's drop. 20 packets
    // of buffer hold at most 20 x 0.24 ms = 4.8 ms at 50 Mbit/s, below CoDel's 5 ms
    // target, so every drop here is such an overflow drop.
    let mut sc = one_flow("reno", 50_000_000, 30 * MS, 5);
    sc.flows.push(FlowGroup::bulk("cubic", 80 * MS));
    sc.links[0].buffer = Limit::Packets(20);
    sc.links[0].queue = cubiclab_sim::QueueDiscipline::FqCoDel;
    assert!(conserved(sc).iter().any(|&(dropped, _)| dropped > 0));
}

#[test]
fn identical_flows_share_fairly() {
    // Two Reno flows with the same RTT lose at the same rate and grow at the same rate:
    // Jain's index of their goodput over the second half is close to 1.
    let mut sc = one_flow("reno", 20_000_000, 40 * MS, 120);
    let mut f = FlowGroup::bulk("reno", 40 * MS);
    f.start_ns = 5 * S;
    sc.flows.push(f);
    let r = Sim::new(sc).unwrap().run();
    let (a, b) = goodput_second_half(&r);
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    assert!(jain > 0.97, "Jain index {jain:.3} ({a:.0} vs {b:.0} bit/s)");
}

#[test]
fn reno_favours_the_short_rtt_flow() {
    // Seed 000 Sec. 6.3: TCP-SACK shares in inverse proportion to RTT (or steeper, up to
    // RTT^-2 with synchronised losses). With RTTs of 20 ms and 200 ms the short flow
    // should get well over 3 times the long one's throughput.
    let mut sc = one_flow("reno", 20_000_000, 20 * MS, 120);
    sc.links[0].delay_ns = 5 * MS;
    sc.links[0].buffer = Limit::Packets(100);
    sc.flows.push(FlowGroup::bulk("reno", 200 * MS));
    let r = Sim::new(sc).unwrap().run();
    let (short, long) = goodput_second_half(&r);
    assert!(short > 3.0 * long, "short {short:.0} vs long {long:.0} bit/s");
}

#[test]
fn newreno_recovery_also_works() {
    // Same single-flow setting with NewReno instead of SACK: still no timeouts in steady
    // state and near-full utilisation (one loss per window is easy for NewReno).
    let mut sc = one_flow("reno", 20_000_000, 40 * MS, 40);
    sc.flows[0].recovery = Recovery::NewReno;
    let r = Sim::new(sc).unwrap().run();
    let util: f64 = r.link.utilization[100..].iter().sum::<f64>() / (r.link.utilization.len() - 100) as f64;
    assert!(util > 0.97, "utilisation {util:.3}");
}

#[test]
fn same_seed_same_results() {
    let mut sc = one_flow("reno", 30_000_000, 50 * MS, 10);
    sc.start_jitter_ns = 10 * MS;
    sc.flows.push(FlowGroup::bulk("tahoe", 70 * MS));
    let a = Sim::new(sc.clone()).unwrap().run();
    let b = Sim::new(sc.clone()).unwrap().run();
    assert_eq!(a.flows.goodput_bps, b.flows.goodput_bps);
    assert_eq!(a.cwnd.cwnd, b.cwnd.cwnd);
    sc.seed = 2;
    let c = Sim::new(sc).unwrap().run();
    assert_ne!(a.cwnd.t_ns, c.cwnd.t_ns, "another seed moves the start jitter");
}

#[test]
fn bad_scenarios_are_refused_with_the_field_named() {
    let mut sc = one_flow("reno", 10_000_000, 40 * MS, 1);
    sc.flows[0].rtt_ns = 10 * MS; // bottleneck delay is 10 ms one way
    let e = Sim::new(sc).err().unwrap();
    assert!(e.contains("flows[0]") && e.contains("rtt"), "{e}");
    let mut sc = one_flow("nope", 10_000_000, 40 * MS, 1);
    sc.links[0].rate_bps = 1;
    assert!(Sim::new(sc).err().unwrap().contains("unknown algorithm 'nope'"));
    let mut sc = one_flow("reno", 10_000_000, 40 * MS, 1);
    sc.links[0].buffer = Limit::Packets(0);
    assert!(Sim::new(sc).err().unwrap().contains("bottleneck.buffer"));
}

fn goodput_second_half(r: &cubiclab_sim::Results) -> (f64, f64) {
    let n = r.flows.t_ns.len();
    let mut sums = [0.0, 0.0];
    for i in n / 2..n {
        sums[r.flows.flow[i] as usize] += r.flows.goodput_bps[i];
    }
    let k = ((n - n / 2) / 2) as f64;
    (sums[0] / k, sums[1] / k)
}

#[test]
fn cubic_alone_follows_the_cubic_curve_between_losses() {
    // One Linux CUBIC flow, 100 Mbps, 100 ms, buffer one BDP (833 packets): losses come when
    // the window nears BDP + buffer ~ 1667. After a loss at window W the window restarts at
    // 0.7 W (beta 717/1024) and follows W(t) = C (t - K)^3 + L (seed 000 Eqs. 1-2) with
    // C = 410/1024 (bic_scale 41), K = cbrt((L - 0.7 W) / C), and origin L = W, or
    // W (1 + 0.7) / 2 under fast convergence when W fell below the previous L (Sec. 3.7).
    // The epoch starts when recovery ends, ~1.5 RTT after the loss is detected. So the
    // window at the next loss must sit on that curve: within 2% of L + C (gap - d - K)^3.
    // Because the plateau is flat (0.4 x 2^3 = 3 packets in 2 s) and the path holds ~1667,
    // the flow alternates: a loss just before K when L ~ 1685 sits above the path's limit,
    // and a plateau at 0.85 W then convex growth when fast convergence lowered L.
    let sc = one_flow("cubic", 100_000_000, 100 * MS, 120);
    let r = Sim::new(sc).unwrap().run();
    let t = &r.losses;
    let losses: Vec<(f64, f64)> = (0..t.t_ns.len()).map(|i| (t.t_ns[i] as f64 / 1e9, t.cwnd[i] as f64)).collect();
    assert!(losses.len() >= 6, "{} losses", losses.len());
    let c = 410.0 / 1024.0;
    let mut last_max = 0.0;
    let mut saw_plateau_below_w = false;
    for w in losses.windows(2) {
        let ((t0, w0), (t1, w1)) = (w[0], w[1]);
        let origin = if w0 < last_max { w0 * (1024.0 + 717.0) / 2048.0 } else { w0 };
        last_max = origin;
        let start = (w0 * 717.0 / 1024.0).floor();
        let k = ((origin - start) / c).cbrt();
        let d = 0.15;
        let predicted = origin + c * (t1 - t0 - d - k).powi(3);
        assert!((predicted - w1).abs() < 0.02 * w1, "loss at {t1:.2} s: window {w1}, the curve says {predicted:.0}");
        saw_plateau_below_w |= origin < 0.9 * w0;
    }
    assert!(saw_plateau_below_w, "fast convergence never lowered the plateau");
}

#[test]
fn tahoe_restarts_from_one_segment_after_a_fast_retransmit() {
    // RFC 5681 without fast recovery: a loss found by duplicate ACKs halves ssthresh and sets
    // the window to the loss window, one segment, from which slow start climbs again.
    // 50 Mbit/s, 88 ms (seed 003's high-BDP link): BDP = 50e6 / 12000 x 0.088 = 366
    // packets, buffer one BDP. The first loss comes in slow start, the window near 2 x 732.
    let sc = one_flow("tahoe", 50_000_000, 88 * MS, 30);
    let r = Sim::new(sc).unwrap().run();
    let c = &r.cwnd.cwnd;
    let cut = c.windows(2).position(|w| w[1] < w[0]).expect("a loss");
    assert_eq!(c[cut + 1], 1, "window after the first loss (was {})", c[cut]);
    // Every loss restarts from one: as many restarts as congestion events.
    let restarts = c.windows(2).filter(|w| w[1] == 1 && w[0] > 1).count() as u64;
    assert_eq!(restarts, r.totals.loss_events[0]);
    // Going back N resends at most the window at each loss: the retransmissions stay below
    // the sum of the windows at loss (a window kept at the old size resent its whole
    // flight into a full queue again and again: 180 000 retransmissions in 30 s).
    let at_loss: u64 = c.windows(2).filter(|w| w[1] == 1 && w[0] > 1).map(|w| w[0] as u64).sum();
    assert!(
        r.totals.retransmits[0] <= at_loss,
        "{} retransmissions, windows at loss sum to {at_loss}",
        r.totals.retransmits[0]
    );
}
