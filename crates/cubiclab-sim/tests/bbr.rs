//! BBR (Linux tcp_bbr.c) on the simulator's paced sender with tcp_rate.c samples.

use cubiclab_sim::{CwndRecording, FlowGroup, Limit, Scenario, Sim};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

#[test]
fn one_bbr_flow_fills_the_link_with_a_small_queue() {
    // 20 Mbps, 40 ms, 1500-byte packets: C = 1666.7 pkt/s, BDP = 66 packets, buffer 66.
    // In PROBE_BW BBR paces at its bandwidth estimate times gains 5/4, 3/4, then 1 for six
    // rounds: the 5/4 round queues at most 0.25 BDP = 16.7 packets and the 3/4 round drains
    // it, so the link stays busy (a loss-based flow would fill the whole buffer) and the
    // mean queue stays under 0.25 BDP. STARTUP's 2.89 gain may overflow the buffer; after
    // it (at most a few seconds at this BDP) nothing is lost.
    let rtt = 40 * MS;
    let mut sc = Scenario::dumbbell(20_000_000, rtt, Limit::Packets(1), 20 * S);
    let bdp = sc.bdp_packets(rtt);
    assert_eq!(bdp, 66);
    sc.links[0].buffer = Limit::Packets(bdp);
    sc.record.cwnd = CwndRecording::Changes;
    sc.flows.push(FlowGroup::bulk("bbr", rtt));
    let r = Sim::new(sc).unwrap().run();
    let n = r.link.utilization.len();
    let util: f64 = r.link.utilization[n / 2..].iter().sum::<f64>() / (n - n / 2) as f64;
    assert!(util > 0.95, "utilisation {util:.3}");
    let queue: f64 = r.link.queue_packets[n / 2..].iter().map(|&q| q as f64).sum::<f64>() / (n - n / 2) as f64;
    assert!(queue < 0.25 * bdp as f64, "mean queue {queue:.1} packets");
    assert!(r.losses.t_ns.iter().all(|&t| t < 3 * S), "losses at {:?} ns", r.losses.t_ns);
}
