//! BBR (Linux tcp_bbr.c) and BBRv3 (google/bbr v3 tcp_bbr.c) on the simulator's paced sender
//! with tcp_rate.c samples.

use cubiclab_sim::{CwndRecording, FlowGroup, Limit, Scenario, Sim};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// One `algorithm` flow alone on 20 Mbps, 40 ms, 1500-byte packets (BDP = 66 packets) with
/// a buffer of one BDP, for 20 s: the link's utilisation and mean queue over the second
/// half, the times of every loss, and the BDP.
fn one_flow(algorithm: &str) -> (f64, f64, Vec<u64>, u32) {
    let rtt = 40 * MS;
    let mut sc = Scenario::dumbbell(20_000_000, rtt, Limit::Packets(1), 20 * S);
    let bdp = sc.bdp_packets(rtt);
    assert_eq!(bdp, 66);
    sc.links[0].buffer = Limit::Packets(bdp);
    sc.record.cwnd = CwndRecording::Changes;
    sc.flows.push(FlowGroup::bulk(algorithm, rtt));
    let r = Sim::new(sc).unwrap().run();
    let n = r.link.utilization.len();
    let util: f64 = r.link.utilization[n / 2..].iter().sum::<f64>() / (n - n / 2) as f64;
    let queue: f64 = r.link.queue_packets[n / 2..].iter().map(|&q| q as f64).sum::<f64>() / (n - n / 2) as f64;
    (util, queue, r.losses.t_ns.clone(), bdp)
}

#[test]
fn one_bbr_flow_fills_the_link_with_a_small_queue() {
    // In PROBE_BW BBR paces at its bandwidth estimate times gains 5/4, 3/4, then 1 for six
    // rounds: the 5/4 round queues at most 0.25 BDP = 16.7 packets and the 3/4 round drains
    // it, so the link stays busy (a loss-based flow would fill the whole buffer) and the
    // mean queue stays under 0.25 BDP. STARTUP's 2.89 gain may overflow the buffer; after
    // it (at most a few seconds at this BDP) nothing is lost.
    let (util, queue, losses, bdp) = one_flow("bbr");
    assert!(util > 0.95, "utilisation {util:.3}");
    assert!(queue < 0.25 * bdp as f64, "mean queue {queue:.1} packets");
    assert!(losses.iter().all(|&t| t < 3 * S), "losses at {losses:?} ns");
}

#[test]
fn one_bbr3_flow_fills_the_link_with_a_bounded_queue() {
    // BBRv3 cruises at gain 1 and probes (REFILL, then UP at 5/4, then DOWN at 0.91 until
    // the queue is drained) once per min(63 rounds, BDP rounds) or 2-3 s; PROBE_RTT every
    // 5 s holds half a BDP for 200 ms (about 2% of the link). STARTUP (gain 2.77) may
    // overflow the buffer, and its losses set inflight_hi; after it the probes, bounded by
    // inflight_hi, lose nothing, and the mean queue stays under 0.25 BDP.
    let (util, queue, losses, bdp) = one_flow("bbr3");
    assert!(util > 0.95, "utilisation {util:.3}");
    assert!(queue < 0.25 * bdp as f64, "mean queue {queue:.1} packets");
    assert!(losses.iter().all(|&t| t < 3 * S), "losses at {losses:?} ns");
}
