//! The schema's parsing, checks and plan on small scenarios.

use super::*;

const MS: u64 = 1_000_000;

/// A valid scenario in the JSON layout the Python edge produces, with `edit` applied.
fn json_with(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut sc = Scenario::dumbbell(10_000_000, 40 * MS, Limit::Packets(33), 2_000 * MS);
    sc.flows.push(FlowGroup::bulk("reno", 40 * MS));
    let mut v = serde_json::to_value(&sc).unwrap();
    // As the Python edge writes a one-link path: the `[bottleneck]` shorthand.
    let mut link = v["links"][0].take();
    link.as_object_mut().unwrap().remove("name");
    let top = v.as_object_mut().unwrap();
    top.remove("links");
    top.insert("bottleneck".into(), link);
    edit(&mut v);
    v.to_string()
}

/// Two links "a" (10 Mbit/s, 10 ms) and "b" (5 Mbit/s, 5 ms) instead of the bottleneck,
/// with `edit` applied.
fn two_links_with(edit: impl FnOnce(&mut serde_json::Value)) -> Result<Scenario, String> {
    Scenario::from_json(&json_with(|v| {
        let mut a = v["bottleneck"].take();
        a["name"] = "a".into();
        let mut b = a.clone();
        b["name"] = "b".into();
        b["rate"] = 5_000_000.into();
        b["delay"] = (5 * MS).into();
        let top = v.as_object_mut().unwrap();
        top.remove("bottleneck");
        top.insert("links".into(), serde_json::json!([a, b]));
        v["flows"][0]["route"] = serde_json::json!(["a", "b"]);
        edit(v);
    }))
}

#[test]
fn a_scenario_round_trips_through_its_json() {
    let sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    assert_eq!(sc.links[0].rate_bps, 10_000_000);
    assert_eq!(sc.links[0].buffer, Limit::Packets(33));
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
    // The allowed keys are the bottleneck's own and every discipline's table, whichever
    // disciplines the registry holds.
    let allowed: Vec<&str> = e.strip_prefix("bottleneck.rtts: unknown key; allowed: ").expect(&e).split(", ").collect();
    assert!(["buffer", "codel", "delay", "loss", "queue", "red"].iter().all(|k| allowed.contains(k)), "{e}");
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
    assert_eq!(
        e,
        "flows[0].rtt is 10 ms, smaller than the bottleneck's delays (10 ms one way, 10 ms back); allowed: >= 20 ms"
    );
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
    let (data, acks) = sc.hops(&[0], Direction::Forward, &[0], 40 * MS + 1);
    assert_eq!(data, [PlannedHop { link: 0, delay_ns: 20 * MS }]);
    assert_eq!(acks, [PlannedHop { link: 1, delay_ns: 20 * MS + 1 }]);
}

#[test]
fn the_bottleneck_is_the_one_link_of_links() {
    let short = Scenario::from_json(&json_with(|_| {})).unwrap();
    let long = Scenario::from_json(&json_with(|v| {
        let mut b = v["bottleneck"].take();
        b["name"] = "bottleneck".into();
        v.as_object_mut().unwrap().remove("bottleneck");
        v["links"] = serde_json::json!([b]);
        v["flows"][0]["route"] = serde_json::json!(["bottleneck"]);
    }))
    .unwrap();
    assert_eq!(short.links.len(), 1);
    assert_eq!(short.links[0].name(), BOTTLENECK);
    assert_eq!(serde_json::to_value(short.plan()).unwrap(), serde_json::to_value(long.plan()).unwrap());
    // Messages name the link as the file did.
    assert_eq!(short.link_key(0), "bottleneck");
    assert_eq!(long.link_key(0), "links[0]");
}

#[test]
fn a_route_crosses_its_links_and_its_acks_come_back() {
    let sc = two_links_with(|_| {}).unwrap();
    let f = &sc.plan().flows[0];
    // RTT 40 ms over a (10 ms) and b (5 ms) both ways: access = 40 - 2 x 15 = 10 ms, 5 ms
    // after the data's last link (b) and 5 ms after the ACKs' last (a, backwards).
    // Link directions: a forward 0, a reverse 1, b forward 2, b reverse 3.
    let hop = |link, ms| PlannedHop { link, delay_ns: ms * MS };
    assert_eq!(f.data_hops, [hop(0, 10), hop(2, 5 + 5)]);
    assert_eq!(f.ack_hops, [hop(3, 5), hop(1, 10 + 5)]);
    assert_eq!((f.forward_delay_ns, f.reverse_delay_ns), (20 * MS, 20 * MS));
    // ACKs over b alone: access = 40 - 15 - 5 = 20 ms, 10 ms each way.
    let sc = two_links_with(|v| v["flows"][0]["ack_route"] = serde_json::json!(["b"])).unwrap();
    let f = &sc.plan().flows[0];
    assert_eq!(f.data_hops, [hop(0, 10), hop(2, 5 + 10)]);
    assert_eq!(f.ack_hops, [hop(3, 5 + 10)]);
}

#[test]
fn bad_routes_name_the_group_and_the_link() {
    let e = |edit: fn(&mut serde_json::Value)| two_links_with(edit).unwrap_err();
    assert_eq!(
        e(|v| v["flows"][0]["route"] = serde_json::json!(["a", "c"])),
        "flows[0].route[1] is \"c\", not a link; allowed: \"a\", \"b\""
    );
    assert_eq!(
        e(|v| v["flows"][0]["route"] = serde_json::json!(["a", "a"])),
        "flows[0].route[1] repeats link \"a\"; allowed: each link once"
    );
    assert_eq!(
        e(|v| v["flows"][0]["route"] = serde_json::json!([])),
        "flows[0].route has 0 links; allowed: 1 to 16 link names"
    );
    assert!(e(|v| v["flows"][0]["route"] = serde_json::Value::Null).starts_with(
        "flows[0].route is missing; a path of 2 links needs each group's route, a list of link names from: \"a\", \"b\""
    ));
    assert_eq!(
        e(|v| v["flows"][0]["ack_route"] = serde_json::json!(["z"])),
        "flows[0].ack_route[0] is \"z\", not a link; allowed: \"a\", \"b\""
    );
    assert_eq!(
        e(|v| v["links"][1]["name"] = "a".into()),
        "links[1].name \"a\" is taken by an earlier link; allowed: a name used once"
    );
    assert!(e(|v| v["links"][1]["red"]["max_p"] = 2.0.into()).starts_with("links[1].red.max_p is 2"));
    assert!(e(|v| v["links"][0]["speed"] = 1.into()).starts_with("links[0].speed: unknown key"));
    // RTT 25 ms cannot cross a and b both ways (30 ms).
    assert_eq!(
        e(|v| v["flows"][0]["rtt"] = (25 * MS).into()),
        "flows[0].rtt is 25 ms, smaller than its links' delays (15 ms one way, 15 ms back); allowed: >= 30 ms"
    );
    let both = Scenario::from_json(&json_with(|v| v["links"] = serde_json::json!([v["bottleneck"].clone()])));
    assert!(both.unwrap_err().contains("either as [bottleneck] (one link) or as [[links]], not both"));
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
        route: None,
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

#[test]
fn ecn_is_a_switch_that_dctcp_cannot_turn_off() {
    let sc = Scenario::from_json(&json_with(|v| v["flows"][0]["ecn"] = true.into())).unwrap();
    assert_eq!(sc.flows[0].ecn, Some(true));
    assert!(sc.plan().flows[0].ecn);
    let e = Scenario::from_json(&json_with(|v| v["flows"][0]["ecn"] = "yes".into())).unwrap_err();
    assert_eq!(e, "flows[0].ecn: invalid type: string \"yes\"; allowed: a boolean");
    // tcp_ecn_send_syn: an algorithm with TCP_CONG_NEEDS_ECN asks for ECN whatever tcp_ecn says.
    let dctcp = |ecn: serde_json::Value| {
        Scenario::from_json(&json_with(|v| {
            v["flows"][0]["algorithm"] = "dctcp".into();
            v["flows"][0]["ecn"] = ecn;
        }))
    };
    assert!(dctcp(serde_json::Value::Null).is_ok() && dctcp(true.into()).is_ok());
    let e = dctcp(false.into()).unwrap_err();
    assert!(e.starts_with("flows[0].ecn is false, but dctcp needs ECN"), "{e}");
}

/// The estimate's entry for `key`.
fn need(sc: &Scenario, key: &str) -> Option<u64> {
    sc.memory_needs().into_iter().find(|n| n.key == key).map(|n| n.bytes)
}

#[test]
fn tables_of_unknown_size_are_bounded_by_what_the_links_carry() {
    // 10 Mbit/s both ways for 2 s, 1500-byte segments: 2 x 10e6 x 2 / 12,000 = 3,333.3,
    // so 3,334 segments. One flow, min_rto 200 ms: 2 s / 200 ms + 1 = 11 timeouts.
    let mut sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    assert_eq!((sc.wire_bytes(), sc.min_rto_ns), (1500, 200 * MS));
    assert_eq!(need(&sc, "record.cwnd"), None);
    sc.record.cwnd = CwndRecording::Changes;
    sc.record.rtt_samples = true;
    // cwnd: (t_ns, flow, cwnd, ssthresh) 4 values x 8 bytes x 2 (simulator and Python);
    // rows: a change per ACK, and per min_rto a timeout, an idle restart and an
    // application-limited reduction: 3,334 + 3 x 11.
    assert_eq!(need(&sc, "record.cwnd"), Some((3_334 + 3 * 11) * 4 * 8 * 2));
    // rtt: (t_ns, flow, rtt_us), a row per ACK.
    assert_eq!(need(&sc, "record.rtt_samples"), Some(3_334 * 3 * 8 * 2));
    // cc_state: reno reports no variable, so nothing; cubic reports some per sample.
    sc.record.cc_state = true;
    assert_eq!(need(&sc, "record.cc_state"), Some(0));
    sc.flows[0].algorithm = "cubic".into();
    let mut vars = 0u64;
    cubiclab_cc::CongestionControl::vars(
        &cubiclab_cc::Algorithm::new("cubic", &cubiclab_cc::Params::default()).unwrap(),
        &mut |_, _| vars += 1,
    );
    let samples = 2_000 * MS / sc.record.interval_ns + 1;
    assert!(vars > 0);
    assert_eq!(need(&sc, "record.cc_state"), Some(samples * vars * (4 * 8 * 2 + (24 + 32 + 8 + 64))));
}

/// A forward web group of Reno sessions thinking 100 ms, 40 ms RTT, 10-packet objects.
fn reno_sessions(sessions: u32) -> WebGroup {
    WebGroup {
        name: None,
        sessions,
        direction: WebDirection::Forward,
        mean_size_bytes: 14_480,
        shape: 1.2,
        max_size_ratio: 1000.0,
        think_mean_ns: 100 * MS,
        rtt: RttDist::Fixed(40 * MS),
        route: None,
        algorithm: "reno".into(),
        params: BTreeMap::new(),
        recovery: Recovery::Sack,
    }
}

#[test]
fn web_objects_are_bounded_by_sessions_and_think_time() {
    // 10 sessions thinking 100 ms on average for 2 s: 2 x (20 + 1) = 42 objects each, 420 in
    // all, under the 3,334 segments the links carry; a row is 5 values x 8 x 2 and a group name.
    let mut sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    sc.web.push(reno_sessions(10));
    assert_eq!(need(&sc, "web[0].sessions"), Some(420 * (5 * 8 * 2 + (24 + 32 + 8 + 64))));
    // Thinking 1 us: the links' 3,334 segments bound the objects instead.
    sc.web[0].think_mean_ns = 1_000;
    assert_eq!(need(&sc, "web[0].sessions"), Some(3_334 * (5 * 8 * 2 + (24 + 32 + 8 + 64))));
}

#[test]
fn every_flow_and_session_counts_its_state() {
    // A flow group of 3 flows with 10 initial segments: 3 x (10 x SEGMENT_BYTES + the Flow
    // struct's size); a web group of 7 sessions: 7 x the Flow struct's size (a session's
    // transfers run on a flow of their own), after its objects' entry.
    let flow = crate::sim::FLOW_STATE_BYTES as u64;
    assert!(flow > 500, "{flow}");
    let mut sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    sc.flows[0].count = 3;
    sc.flows[0].initial_cwnd = 10;
    assert_eq!(need(&sc, "flows[0].initial_cwnd"), Some(3 * (10 * super::validate::SEGMENT_BYTES + flow)));
    sc.web.push(reno_sessions(7));
    let state: Vec<u64> =
        sc.memory_needs().into_iter().filter(|n| n.key == "web[0].sessions").map(|n| n.bytes).collect();
    assert_eq!(state.last(), Some(&(7 * flow)));
}

#[test]
fn fq_codel_buckets_count_in_both_directions() {
    let mut sc = Scenario::from_json(&json_with(|_| {})).unwrap();
    assert_eq!(need(&sc, "bottleneck.fq_codel.flows"), None);
    sc.links[0].queue = QueueDiscipline::FqCoDel;
    sc.links[0].settings.fq_codel.flows = 65_536;
    let bucket = crate::queue::FqCoDel::<crate::packet::Packet>::BUCKET_BYTES as u64;
    assert_eq!(need(&sc, "bottleneck.fq_codel.flows"), Some(2 * 65_536 * bucket));
    // A bucket: a queue (a ring of 32 bytes), CoDel's state, a credit and a flag, and two
    // list places of 4 bytes: about 120 bytes.
    assert!((64..=160).contains(&bucket), "{bucket}");
}
