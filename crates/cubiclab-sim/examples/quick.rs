//! `cargo run --release -p cubiclab-sim --example quick -- ALG RATE_MBPS RTT_MS FLOWS SECONDS`
use cubiclab_sim::{FlowGroup, Limit, Scenario, Sim};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let alg = a.get(1).map_or("reno", |s| s.as_str());
    let rate: f64 = a.get(2).map_or(100.0, |s| s.parse().unwrap());
    let rtt: f64 = a.get(3).map_or(100.0, |s| s.parse().unwrap());
    let n: usize = a.get(4).map_or(2, |s| s.parse().unwrap());
    let secs: f64 = a.get(5).map_or(20.0, |s| s.parse().unwrap());
    let rtt_ns = (rtt * 1e6) as u64;
    let mut sc = Scenario::dumbbell((rate * 1e6) as u64, rtt_ns, Limit::Packets(1), (secs * 1e9) as u64);
    sc.links[0].buffer = Limit::Packets(sc.bdp_packets(rtt_ns).max(10));
    for i in 0..n {
        let mut f = FlowGroup::bulk(alg, rtt_ns);
        f.start_ns = i as u64 * 100_000_000;
        sc.flows.push(f);
    }
    let t0 = std::time::Instant::now();
    let r = Sim::new(sc.clone()).unwrap().run();
    let wall = t0.elapsed().as_secs_f64();
    let delivered: u64 = r.totals.delivered_bytes.iter().sum();
    let pkts = delivered as f64 / sc.mss as f64;
    println!(
        "{alg} {rate}Mbps {rtt}ms flows={n} sim={secs}s util_goodput={:.3} util_link={:.3} pkts={pkts:.0} wall={wall:.3}s pkts_per_s={:.0} events={} loss_events={} timeouts={}",
        delivered as f64 * 8.0 / secs / (rate * 1e6),
        r.run.bottleneck_tx_bytes[0] as f64 * 8.0 / secs / (rate * 1e6),
        pkts / wall,
        r.run.events[0],
        r.totals.loss_events.iter().sum::<u64>(),
        r.totals.timeouts.iter().sum::<u64>(),
    );
}
