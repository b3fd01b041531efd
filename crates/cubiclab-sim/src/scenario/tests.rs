//! The schema's parsing, checks and plan on small scenarios.

use super::*;

const MS: u64 = 1_000_000;

/// A valid scenario in the JSON layout the Python edge produces, with `edit` applied.
fn json_with(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    sc.flows.push(FlowGroup::bulk("reno", 40 * MS));
    let mut v = serde_json::to_value(&sc).unwrap();
    edit(&mut v);
    v.to_string()
}

#[test]
fn a_scenario_round_trips_through_its_json() {
    let sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    assert_eq!(sc.bottleneck.rate_bps, 10_000_000);
    assert_eq!(sc.bottleneck.buffer, Limit::Packets(33));
    assert_eq!(sc.flows[0].rtt_ns, 40 * MS);
    // The file's key names, not the Rust field names, are the JSON keys.
    assert!(json_with(|_| {}).contains("\"rate\":10000000"));
}

#[test]
fn type_errors_name_the_key_path() {
    let e = Scenario::from_json(&json_with(|v| v["flows"][0]["count"] = "3".into())).unwrap_err();
    assert!(e.starts_with("flows[0].count: invalid type: string"), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["record"]["rtt_samples"] = "false".into())).unwrap_err();
    assert!(e.starts_with("record.rtt_samples: invalid type: string"), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["bottleneck"]["rtts"] = 4.into())).unwrap_err();
    assert!(e.starts_with("bottleneck.rtts: unknown key; allowed: buffer, codel, delay, loss, queue,"), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["bottleneck"]["red"]["min_th"] = "5".into())).unwrap_err();
    assert!(e.starts_with("bottleneck.red.min_th: invalid type: string \"5\""), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["flows"][0]["rtts"] = 4.into())).unwrap_err();
    assert!(e.starts_with("flows[0].rtts: unknown field `rtts`"), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["bottleneck"]["queue"] = "fq".into())).unwrap_err();
    assert!(e.starts_with("bottleneck.queue: unknown variant `fq`"), "{e}");
    let e = Scenario::from_json(&json_with(|v| v["duration"] = (-1).into())).unwrap_err();
    assert!(e.starts_with("duration: invalid value: integer `-1`"), "{e}");
}

#[test]
fn range_errors_name_the_key_and_what_is_allowed() {
    let e = Scenario::from_json(&json_with(|v| v["flows"][0]["rtt"] = (10 * MS).into())).unwrap_err();
    // Bottleneck delay = 40 ms / 4 = 10 ms one way, so an RTT must be at least 20 ms.
    assert_eq!(e, "flows[0].rtt is 10 ms, smaller than twice the bottleneck delay (10 ms one way); allowed: >= 20 ms");
    let e = Scenario::from_json(&json_with(|v| v["bottleneck"]["red"]["max_p"] = 2.0.into())).unwrap_err();
    assert_eq!(e, "bottleneck.red.max_p is 2; allowed: (0, 1]", "the RED table is checked with drop-tail too");
    let e = Scenario::from_json(&json_with(|v| v["flows"][0]["algorithm"] = "cubik".into())).unwrap_err();
    assert!(e.starts_with("flows[0].algorithm: unknown algorithm 'cubik'"), "{e}");
}

#[test]
fn the_plan_names_groups_splits_access_delay_and_spaces_starts() {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    let mut a = FlowGroup::bulk("cubic", 40 * MS);
    a.count = 3;
    a.start_spacing_ns = 100 * MS;
    let mut b = FlowGroup::bulk("cubic", 50 * MS);
    b.start_ns = 7 * MS;
    sc.flows = vec![a, b, FlowGroup::bulk("reno", 40 * MS)];
    let plan = sc.plan();
    let groups: Vec<&str> = plan.flows.iter().map(|f| f.group.as_str()).collect();
    // Two groups share "cubic": each is labelled with its index; "reno" is alone.
    assert_eq!(groups, ["cubic#0", "cubic#0", "cubic#0", "cubic#1", "reno"]);
    // No jitter: flow k of group 0 starts at k x 100 ms; group 1 at its start.
    let starts: Vec<u64> = plan.flows.iter().map(|f| f.start_ns / MS).collect();
    assert_eq!(starts, [0, 100, 200, 7, 0]);
    // RTT 50 ms over a 10 ms bottleneck: access = 50 - 2 x 10 = 30 ms, split 15/15 after
    // each direction's bottleneck: 10 + 15 = 25 ms one way.
    assert_eq!((plan.flows[3].forward_delay_ns, plan.flows[3].reverse_delay_ns), (25 * MS, 25 * MS));
    // An odd access delay (40 ms + 1 ns - 2 x 10 ms) puts its extra nanosecond on the way back.
    assert_eq!(sc.loop_delays(40 * MS + 1), (20 * MS, 20 * MS + 1));
}

#[test]
fn start_jitter_comes_from_the_seed() {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    let mut g = FlowGroup::bulk("reno", 40 * MS);
    g.count = 4;
    sc.flows.push(g);
    sc.start_jitter_ns = 10 * MS;
    let starts = |sc: &Scenario| sc.plan().flows.iter().map(|f| f.start_ns).collect::<Vec<_>>();
    let first = starts(&sc);
    assert!(first.iter().all(|&s| s < 10 * MS), "{first:?}");
    assert_eq!(first, starts(&sc), "the same seed gives the same starts");
    sc.seed = 2;
    assert_ne!(first, starts(&sc), "another seed moves them");
}

#[test]
fn web_groups_split_their_sessions_by_direction() {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    sc.web.push(WebGroup {
        name: None,
        sessions: 5,
        direction: WebDirection::Both,
        mean_size_bytes: 14_480,
        shape: 1.2,
        max_size_ratio: 1000.0,
        think_mean_ns: 1_000 * MS,
        rtt: RttDist::Exp(50 * MS),
        algorithm: "reno".into(),
        params: BTreeMap::new(),
        recovery: Recovery::Sack,
    });
    let plan = sc.plan();
    // 5 sessions both ways: 5 / 2 = 2 per direction (the odd one is dropped, as before).
    assert_eq!(plan.lanes.len(), 2);
    assert_eq!(plan.sessions.len(), 4);
    assert_eq!(plan.lanes[1].direction, Direction::Reverse);
    assert_eq!(plan.lanes[0].group, "web0");
    // Exponential RTTs are floored at 2 x 10 ms + 1 ms and rounded up to whole milliseconds.
    for s in &plan.sessions {
        assert!(s.rtt_ns >= 21 * MS && s.rtt_ns % MS == 0, "{}", s.rtt_ns);
    }
}

#[test]
fn bdp_is_rate_times_rtt_in_whole_bytes() {
    // 100 Mbit/s x 40 ms = 4 Mbit = 500,000 bytes; 1 bit/s x 1 s is an eighth of a byte: 0.
    assert_eq!(bdp_bytes(100_000_000, 40_000_000), 500_000);
    assert_eq!(bdp_bytes(1, 1_000_000_000), 0);
    // 2^64 - 1 bit/s for 10^10 s is over 2^64 bytes: held at u64::MAX.
    assert_eq!(bdp_bytes(u64::MAX, 10_000_000_000), u64::MAX);
    // In packets of the scenario's wire size (1500 bytes): 500,000 / 1500 = 333.3 -> 333.
    let sc = Scenario::dumbbell(100_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    assert_eq!((sc.wire_bytes(), sc.bdp_packets(40 * MS)), (1500, 333));
}
