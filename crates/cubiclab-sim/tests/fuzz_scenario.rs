//! The scenario parser under proptest (issue 18): whatever JSON arrives, `Scenario::from_json`
//! returns a value or an error whose message starts with the key path at fault, and never
//! panics; a scenario it accepts can be planned. The inputs are a valid scenario with one
//! value replaced by arbitrary JSON, and arbitrary text.

use cubiclab_sim::scenario::{FlowGroup, Scenario};
use cubiclab_sim::Limit;
use proptest::prelude::*;
use serde_json::Value;

/// The top-level keys: every refusal names one of them first (or the scenario as a whole).
const KEYS: &[&str] = &[
    "scenario",
    "seed",
    "duration",
    "mss",
    "start_jitter",
    "min_rto",
    "tcp_rmem",
    "bottleneck",
    "links",
    "flows",
    "web",
    "host",
    "record",
];

fn valid() -> Value {
    let mut sc = Scenario::dumbbell(10_000_000, 40_000_000, Limit::Packets(100), 1_000_000_000);
    sc.flows.push(FlowGroup::bulk("cubic", 40_000_000));
    serde_json::to_value(&sc).expect("a scenario serialises")
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("JSON numbers are finite", |f| f.is_finite()).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["cubic", "reno", "sack", "red", "codel", "poisson", "exp", "both"])
            .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every (path) to a value in `v`, as a list of keys and indices.
fn paths(v: &Value, prefix: Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = prefix.clone();
                p.push(Value::String(k.clone()));
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(Value::from(i));
                out.push(p.clone());
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

fn replace(v: &mut Value, path: &[Value], new: Value) {
    let mut at = v;
    for k in path {
        at = match k {
            Value::String(s) => at.get_mut(s.as_str()).expect("a path of v"),
            _ => at.get_mut(k.as_u64().expect("an index") as usize).expect("a path of v"),
        };
    }
    *at = new;
}

fn check(text: &str) {
    match Scenario::from_json(text) {
        Ok(sc) => {
            sc.plan();
        }
        Err(e) => assert!(KEYS.iter().any(|k| e.starts_with(k)), "does not name a key: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_value_replaced_is_refused_naming_its_key_or_accepted(pick in any::<prop::sample::Index>(), new in arbitrary_json()) {
        let mut sc = valid();
        let mut all = Vec::new();
        paths(&sc, Vec::new(), &mut all);
        let path = pick.get(&all).clone();
        replace(&mut sc, &path, new);
        check(&sc.to_string());
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        check(&text);
    }
}

#[test]
fn the_valid_scenario_is_accepted() {
    Scenario::from_json(&valid().to_string()).expect("valid");
}
