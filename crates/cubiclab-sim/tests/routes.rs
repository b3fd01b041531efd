//! Links and routes: a one-link path written as `[[links]]` runs bit for bit as the
//! `[bottleneck]` shorthand, and a route of two links carries its data across both and its
//! ACKs back across their reverse directions.

use cubiclab_sim::{Column, Direction, FlowGroup, Limit, Scenario, Sim, WebDirection, WebGroup};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// Seed 000 Fig. 6 in small: CUBIC against Reno, with web sessions both ways, so that both
/// directions of the link carry data and ACKs.
fn dumbbell() -> Scenario {
    let mut sc = Scenario::dumbbell(20_000_000, 40 * MS, Limit::Packets(66), 6 * S);
    sc.flows = vec![FlowGroup::bulk("cubic", 40 * MS), FlowGroup::bulk("reno", 80 * MS)];
    sc.web.push(WebGroup {
        name: None,
        sessions: 4,
        direction: WebDirection::Both,
        mean_size_bytes: 30_000,
        shape: 1.2,
        max_size_ratio: 100.0,
        think_mean_ns: 200 * MS,
        rtt: cubiclab_sim::RttDist::Exp(40 * MS),
        route: None,
        algorithm: "reno".into(),
        params: Default::default(),
        recovery: cubiclab_sim::Recovery::Sack,
    });
    sc.start_jitter_ns = 10 * MS;
    sc
}

fn tables(sc: Scenario) -> Vec<(&'static str, Vec<(&'static str, Column)>)> {
    Sim::new(sc).unwrap().run().into_tables()
}

#[test]
fn one_link_in_links_gives_the_bits_of_the_bottleneck() {
    let short = dumbbell();
    let mut long = dumbbell();
    long.from_shorthand = false;
    long.links[0].name = Some("access".into());
    for g in &mut long.flows {
        g.route = Some(vec!["access".into()]);
    }
    long.web[0].route = Some(vec!["access".into()]);
    let (a, b) = (tables(short), tables(long));
    assert_eq!(a.len(), b.len());
    for ((name, ca), (_, cb)) in a.iter().zip(&b) {
        for ((col, x), (_, y)) in ca.iter().zip(cb) {
            // The link's name, and each flow's route by it, are all that differ.
            if (*name, *col) == ("link_totals", "name") || (*name, *col) == ("totals", "route") {
                assert_eq!(
                    (x, y),
                    (&Column::Str(vec!["bottleneck".into(); 2]), &Column::Str(vec!["access".into(); 2]))
                );
            } else {
                assert_eq!(x, y, "{name}.{col} differs");
            }
        }
    }
}

/// One Reno flow across link "a" (10 Mbit/s, 10 ms) then "b" (5 Mbit/s, 5 ms), RTT 40 ms,
/// 100-packet buffers, its ACKs over `ack_route`.
fn two_hops(ack_route: Option<&[&str]>) -> cubiclab_sim::Results {
    two_hops_going(ack_route, Direction::Forward)
}

/// The same, its data going `direction` along route a, b.
fn two_hops_going(ack_route: Option<&[&str]>, direction: Direction) -> cubiclab_sim::Results {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(100), 10 * S);
    sc.from_shorthand = false;
    sc.links[0].name = Some("a".into());
    sc.links[0].delay_ns = 10 * MS;
    sc.links[0].reverse_buffer = Limit::Packets(100);
    let mut b = sc.links[0].clone();
    b.name = Some("b".into());
    b.rate_bps = 5_000_000;
    b.delay_ns = 5 * MS;
    sc.links.push(b);
    let mut g = FlowGroup::bulk("reno", 40 * MS);
    g.route = Some(vec!["a".into(), "b".into()]);
    g.ack_route = ack_route.map(|r| r.iter().map(|s| s.to_string()).collect());
    g.direction = direction;
    sc.flows.push(g);
    sc.record.rtt_samples = true;
    Sim::new(sc).unwrap().run()
}

#[test]
fn data_crosses_both_links_and_acks_come_back() {
    let r = two_hops(None);
    let t = &r.link_totals;
    // Rows: a forward, a reverse, b forward, b reverse.
    assert_eq!(t.name, ["a", "a", "b", "b"]);
    assert_eq!(t.direction, ["forward", "reverse", "forward", "reverse"]);
    let packets = |row: usize| t.tx_bytes[row] / 1500;
    // a is twice as fast as b and its buffer never fills: every data packet that leaves a
    // reaches b, where it is sent, dropped, or still on its way at the end (in a's delay line,
    // 10 ms x 10 Mbit/s = 8.3 packets, or in b's buffer and transmitter, 101).
    assert_eq!(t.drops[0], 0);
    let reached_b = t.tx_bytes[2] / 1500 + t.drops[2];
    assert!(packets(0) >= reached_b && packets(0) - reached_b <= 8 + 101, "{} vs {reached_b}", packets(0));
    assert!(t.drops[2] > 0, "b is the bottleneck and drops");
    // Both reverse directions carry the ACKs (52 to 80 bytes each): b's first, then a's,
    // less those still between them at the end (in b's 5 ms delay line at about 200 ACKs
    // per second, one or two, and one on a: at most 4 of 80 bytes).
    assert!(t.tx_bytes[1] > 0 && t.tx_bytes[3] - t.tx_bytes[1] <= 4 * 80, "{:?}", t.tx_bytes);
    // No RTT is shorter than the propagation (40 ms) plus a data packet's serialization on
    // both links (1500 x 8 bits at 10 and at 5 Mbit/s: 1.2 + 2.4 ms).
    let min_rtt = *r.rtt.rtt_us.iter().min().unwrap();
    assert!((43_600..43_600 + 2_400 + 200).contains(&min_rtt), "min RTT {min_rtt} us");
    // One row per link per sample, a's and b's side by side.
    assert_eq!(&r.link.link[..4], [0, 1, 0, 1]);
    assert_eq!(
        (&r.totals.route[..], &r.totals.direction[..]),
        (&["a>b".to_string()][..], &["forward".to_string()][..])
    );
}

#[test]
fn acks_take_their_own_route() {
    let r = two_hops(Some(&["b"]));
    let t = &r.link_totals;
    // The ACKs cross only b's reverse direction; a's carries nothing.
    assert_eq!(t.tx_bytes[1], 0);
    assert!(t.tx_bytes[3] > 0);
}

#[test]
fn a_reverse_flow_sends_its_data_back_along_its_route() {
    let r = two_hops_going(None, Direction::Reverse);
    let t = &r.link_totals;
    // Rows: a forward, a reverse, b forward, b reverse. The data crosses b's reverse
    // direction, then a's; b's (5 Mbit/s) is the bottleneck and drops, a's (10 Mbit/s)
    // never does.
    assert!(t.drops[3] > 0 && t.drops[1] == 0, "{:?}", t.drops);
    assert_eq!(
        (&r.totals.route[..], &r.totals.direction[..]),
        (&["b>a".to_string()][..], &["reverse".to_string()][..])
    );
    // Every data packet that leaves b reaches a, less those between them at the end: in b's
    // 5 ms delay line (5 Mbit/s x 5 ms / 12,000 bits = 2.1 packets) or on a's transmitter (1).
    let (left_b, left_a) = (t.tx_bytes[3] / 1500, t.tx_bytes[1] / 1500);
    assert!(left_b >= left_a && left_b - left_a <= 3, "{left_b} vs {left_a}");
    // The ACKs take the forward directions, a's first, then b's (at most 4 ACKs of 80
    // bytes between them at the end, as in the forward case).
    assert!(t.tx_bytes[0] > 0 && t.tx_bytes[0] - t.tx_bytes[2] <= 4 * 80, "{:?}", t.tx_bytes);
    // The same propagation and serialization as forward: 40 ms + 1.2 + 2.4 ms.
    let min_rtt = *r.rtt.rtt_us.iter().min().unwrap();
    assert!((43_600..43_600 + 2_400 + 200).contains(&min_rtt), "min RTT {min_rtt} us");
}

#[test]
fn one_flow_each_way_mirror_each_other() {
    // A congested reverse path: one CUBIC flow each way across a 10 Mbit/s dumbbell with
    // 100-packet buffers both ways (RTT 40 ms), starting together. Each flow's ACKs queue
    // behind the other's data. The path is symmetric and so are the flows, so the run is its
    // own mirror image: both directions carry the same bytes, drop the same packets, and the
    // two flows see the same RTT samples at the same times. A direction mixed up anywhere
    // (a reverse flow's data or ACKs on the wrong way, its access delay on the wrong leg)
    // breaks the symmetry.
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(100), 20 * S);
    sc.links[0].reverse_buffer = Limit::Packets(100);
    sc.flows.push(FlowGroup::bulk("cubic", 40 * MS));
    let mut back = FlowGroup::bulk("cubic", 40 * MS);
    back.direction = Direction::Reverse;
    sc.flows.push(back);
    sc.record.rtt_samples = true;
    let r = Sim::new(sc).unwrap().run();
    let t = &r.link_totals;
    assert_eq!((t.tx_bytes[0], t.drops[0]), (t.tx_bytes[1], t.drops[1]));
    // Each direction carries its flow's data near the link rate: over 20 s at 10 Mbit/s,
    // 16,667 packets of 1500 bytes; after slow start each flow keeps its direction busy.
    assert!(t.tx_bytes[0] / 1500 > 14_000 && t.drops[0] > 0, "{:?} {:?}", t.tx_bytes, t.drops);
    let samples = |f: u32| -> Vec<(u64, i64)> {
        (0..r.rtt.rtt_us.len()).filter(|&i| r.rtt.flow[i] == f).map(|i| (r.rtt.t_ns[i], r.rtt.rtt_us[i])).collect()
    };
    let (fwd, rev) = (samples(0), samples(1));
    assert!(fwd.len() > 1000);
    assert_eq!(fwd, rev);
}
