//! `replay-bbr3 FILE [key=value...]`: the per-ACK check of the bbr3 port. FILE is its hook
//! log (`load --hooklog`, hooklog.rs): one `struct bbr3_rec` (bpf/bbr3.bpf.c, read by member
//! name from the object's BTF) per hook call, with the socket's inputs as the hook found
//! them and what it left. Each call is replayed through the library's bbr3 (one instance
//! per socket, created at its `init` record) on the same inputs: the socket's fields are
//! set from the record before the hook, and what the library leaves is compared with what
//! the port left (cong_control: cwnd, ssthresh, sk_pacing_rate and app_limited; init:
//! pacing rate and ssthresh; cwnd_event and set_state: cwnd and pacing rate; ssthresh and
//! undo_cwnd: the value returned), and so is the model's state the port logs after every
//! call (mode, phase, bw, inflight_hi and inflight_lo, rounds_since_probe) with the
//! library's `vars`. Prints one JSON object per socket.
//!
//! The kernel runs cong_control once before init: on the SYN-ACK (tcp_ack runs before
//! tcp_finish_connect initialises the congestion control of a socket that chose it before
//! connecting). The port has no state then and leaves the socket as it is; such calls are
//! counted as `before_init`, matched when the socket is unchanged.
//!
//! The v3 sample fields the port derives (tx_in_flight and lost, from its per-ACK history:
//! bbr3.bpf.c) are derived again here from the log by a plain search of the whole history,
//! and compared (`v3_fields`): a check of the port's bounded binary search.

use std::collections::BTreeMap;

use cubiclab_cc::bbr3::Bbr3;
use cubiclab_cc::{CaEvent, CaState, CongestionControl, Params, RateSample, TcpState};

use crate::ports;

/// `enum` K_* of bbr3.bpf.c.
const KINDS: [&str; 6] = ["cong_control", "init", "ssthresh", "set_state", "cwnd_event", "undo_cwnd"];
/// The library's `vars` and the hook-log member that holds the same after each call.
const STATE: [(&str, &str); 6] = [
    ("mode", "mode"),
    ("phase", "cycle_idx"),
    ("bw", "bw"),
    ("inflight_hi", "inflight_hi"),
    ("inflight_lo", "inflight_lo"),
    ("rounds_since_probe", "rounds_since_probe"),
];

/// What a hook before the socket's init is counted as.
const BEFORE_INIT: &str = "before_init";

struct Layout {
    at: BTreeMap<String, usize>,
    size: usize,
}

impl Layout {
    fn get(&self, rec: &[u8], name: &str) -> u64 {
        let at = self.at[name];
        u64::from_ne_bytes(rec[at..at + 8].try_into().unwrap())
    }
}

/// One socket's replay so far.
#[derive(Default)]
struct Flow {
    alg: Option<Bbr3>,
    calls: BTreeMap<&'static str, (u64, u64)>,
    first_mismatch: Option<String>,
    tx_found: u64,
    modes: BTreeMap<u64, u64>,
    /// PROBE_BW phases (cycle_idx) per ACK, and the ACKs that cut inflight_hi (v3's loss
    /// response through tx_in_flight): what the run exercised.
    phases: BTreeMap<u64, u64>,
    inflight_hi: Option<u64>,
    inflight_hi_cuts: u64,
    /// Per cong_control call: tp->delivered and tp->lost as the ACK found them, and
    /// rs->prior_in_flight (bbr3.bpf.c's `struct history`, kept whole).
    history: Vec<(u32, u32, u32)>,
}

/// bbr3.bpf.c's HIST: how many ACKs back the port looks.
const HIST: usize = 512;

/// The v3 fields the port should have derived for this cong_control record (bbr3.bpf.c
/// `v3_fields`), after pushing its history entry: (tx_in_flight, lost, found).
fn v3_fields(l: &Layout, r: &[u8], history: &mut Vec<(u32, u32, u32)>) -> (u64, u64, u64) {
    let g = |n| l.get(r, n);
    let (acked, losses, prior) = (g("rs_acked_sacked") as u32, g("rs_losses") as u32, g("rs_prior_in_flight"));
    // wraps: u32 counters as the kernel keeps them.
    history.push(((g("delivered") as u32).wrapping_sub(acked), (g("lost") as u32).wrapping_sub(losses), prior as u32));
    let fallback = (prior, u64::from(losses), 0);
    // No packet was sampled (no prior_mstamp), or the sample is invalid.
    if g("rs_prior_mstamp") == 0 || (g("rs_delivered") as i64) < 0 {
        return fallback;
    }
    let want = g("rs_prior_delivered") as u32;
    let recent = &history[history.len().saturating_sub(HIST)..];
    match recent.iter().rev().find(|e| (e.0.wrapping_sub(want) as i32) <= 0) {
        Some(&(d, lost, in_flight)) if d == want => {
            (u64::from(in_flight), u64::from((g("lost") as u32).wrapping_sub(lost) as i32 as u32), 1)
        }
        _ => fallback,
    }
}

fn ca_state(v: u64) -> CaState {
    match v {
        0 => CaState::Open,
        1 => CaState::Disorder,
        2 => CaState::Cwr,
        3 => CaState::Recovery,
        _ => CaState::Loss,
    }
}

/// `enum tcp_ca_event` of the kernel, in its order.
fn ca_event(v: u64) -> Option<CaEvent> {
    Some(match v {
        0 => CaEvent::TxStart,
        1 => CaEvent::CwndRestart,
        2 => CaEvent::CompleteCwr,
        3 => CaEvent::Loss,
        4 => CaEvent::EcnNoCe,
        5 => CaEvent::EcnIsCe,
        _ => return None,
    })
}

fn tcp_of(l: &Layout, r: &[u8]) -> TcpState {
    let g = |n| l.get(r, n);
    TcpState {
        cwnd: g("cwnd") as u32,
        ssthresh: g("ssthresh") as u32,
        cwnd_clamp: g("cwnd_clamp") as u32,
        mss: g("mss") as u32,
        srtt_us: g("srtt_us") as u32,
        min_rtt_us: g("min_rtt_us") as u32,
        prior_cwnd: g("prior_cwnd") as u32,
        delivered: g("delivered") as u32,
        delivered_ce: g("delivered_ce") as u32,
        lost: g("lost") as u32,
        in_flight: g("in_flight") as u32,
        is_cwnd_limited: g("is_cwnd_limited") != 0,
        ca_state: ca_state(g("ca_state")),
        app_limited: g("app_limited") as u32,
        delivered_mstamp_us: g("delivered_mstamp"),
        wstamp_ns: g("wstamp_ns"),
        pacing_rate: g("pacing_rate"),
        max_pacing_rate: g("max_pacing_rate"),
        pacing_shift: g("pacing_shift") as u32,
        paced: true,
        ..TcpState::default()
    }
}

fn rate_sample(l: &Layout, r: &[u8]) -> RateSample {
    let g = |n| l.get(r, n);
    RateSample {
        prior_delivered: g("rs_prior_delivered") as u32,
        delivered: g("rs_delivered") as i32,
        interval_us: g("rs_interval_us") as i64,
        rtt_us: g("rs_rtt_us") as i64,
        losses: g("rs_losses") as u32,
        acked_sacked: g("rs_acked_sacked") as u32,
        prior_in_flight: g("rs_prior_in_flight") as u32,
        is_app_limited: g("rs_is_app_limited") != 0,
        is_retrans: false,
        is_ack_delayed: g("rs_is_ack_delayed") != 0,
        tx_in_flight: g("rs_tx_in_flight") as u32,
        lost: g("rs_lost") as i32,
        delivered_ce: g("rs_delivered_ce") as i32,
        is_ece: g("rs_is_ece") != 0,
    }
}

/// Replay one record; `Ok(None)` when everything compared matched, else what differed.
fn step(l: &Layout, r: &[u8], flow: &mut Flow, params: &Params) -> Result<Option<String>, String> {
    let g = |n| l.get(r, n);
    let kind = g("kind") as usize;
    let now_ns = g("now_us") * 1000;
    let mut tcp = tcp_of(l, r);
    if kind == 1 {
        flow.alg = Some(Bbr3::new(params).map_err(|e| e.0)?);
    }
    let Some(alg) = flow.alg.as_mut() else {
        let kept = g("out_cwnd") == g("cwnd") && g("out_pacing_rate") == g("pacing_rate");
        return Ok((!kept).then(|| "the port changed the socket before its init".to_string()));
    };
    let mut ret = None;
    match kind {
        0 => alg.cong_control(&mut tcp, &rate_sample(l, r), now_ns),
        1 => alg.init(&mut tcp, now_ns),
        2 => ret = Some(alg.ssthresh(&tcp, now_ns)),
        3 => alg.set_state(&mut tcp, ca_state(g("arg")), now_ns),
        4 => {
            if let Some(ev) = ca_event(g("arg")) {
                alg.cwnd_event(&mut tcp, ev, now_ns)
            }
        }
        5 => ret = Some(alg.undo_cwnd(&mut tcp, now_ns)),
        k => return Err(format!("record of unknown kind {k}")),
    }
    let mut diff = Vec::new();
    let mut cmp = |what: &str, port: u64, lib: u64| {
        if port != lib {
            diff.push(format!("{what} port {port} library {lib}"));
        }
    };
    if let Some(v) = ret {
        cmp("returned", g("ret"), u64::from(v));
    } else {
        cmp("cwnd", g("out_cwnd"), u64::from(tcp.cwnd));
        cmp("ssthresh", g("out_ssthresh"), u64::from(tcp.ssthresh));
        cmp("pacing_rate", g("out_pacing_rate"), tcp.pacing_rate);
        if kind == 0 {
            cmp("app_limited", g("out_app_limited"), u64::from(tcp.app_limited));
        }
    }
    // The model's state the port logs, against the library's own (its `vars`).
    let mut state = BTreeMap::new();
    alg.vars(&mut |name, v| {
        state.insert(name, v as u64);
    });
    for (name, logged) in STATE {
        cmp(name, g(logged), state[name]);
    }
    Ok((!diff.is_empty()).then(|| diff.join(", ")))
}

pub fn run(args: &[String]) -> Result<String, String> {
    let [path, kv @ ..] = args else {
        return Err("replay-bbr3 needs FILE [key=value...]".into());
    };
    let params = crate::parse_params(kv.iter().map(String::as_str))?;
    Bbr3::new(&params).map_err(|e| e.0)?;
    let rec = ports::struct_layout(ports::find("bbr3")?.object, "bbr3_rec")?
        .ok_or("the bbr3 object has no struct bbr3_rec")?;
    let layout = Layout { at: rec.members.into_iter().collect(), size: rec.size };
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if data.len() % layout.size != 0 {
        return Err(format!("{path}: {} bytes is not a whole number of {}-byte records", data.len(), layout.size));
    }
    let mut flows: BTreeMap<u64, Flow> = BTreeMap::new();
    for (i, rec) in data.chunks(layout.size).enumerate() {
        let flow = flows.entry(layout.get(rec, "sk")).or_default();
        let kind = match KINDS.get(layout.get(rec, "kind") as usize) {
            Some(&k) if flow.alg.is_some() || k == "init" => k,
            Some(_) => BEFORE_INIT,
            None => "?",
        };
        let diff = step(&layout, rec, flow, &params)?;
        let count = flow.calls.entry(kind).or_default();
        count.0 += 1;
        match diff {
            None => count.1 += 1,
            Some(d) if flow.first_mismatch.is_none() => {
                flow.first_mismatch = Some(format!("record {i} ({kind}, t {} us): {d}", layout.get(rec, "now_us")))
            }
            Some(_) => {}
        }
        if kind == "cong_control" {
            let (tx, lost, found) = v3_fields(&layout, rec, &mut flow.history);
            let logged = (
                layout.get(rec, "rs_tx_in_flight"),
                layout.get(rec, "rs_lost") as u32 as u64,
                layout.get(rec, "tx_found"),
            );
            let count = flow.calls.entry("v3_fields").or_default();
            count.0 += 1;
            if logged == (tx, lost, found) {
                count.1 += 1;
            } else if flow.first_mismatch.is_none() {
                flow.first_mismatch = Some(format!(
                    "record {i} (v3 fields): port (tx_in_flight, lost, found) {logged:?}, search of the log {:?}",
                    (tx, lost, found)
                ));
            }
            flow.tx_found += layout.get(rec, "tx_found");
            let mode = layout.get(rec, "mode");
            *flow.modes.entry(mode).or_default() += 1;
            if mode == 2 {
                *flow.phases.entry(layout.get(rec, "cycle_idx")).or_default() += 1;
            }
            let hi = layout.get(rec, "inflight_hi");
            flow.inflight_hi_cuts += u64::from(flow.inflight_hi.is_some_and(|before| hi < before));
            flow.inflight_hi = Some(hi);
        }
    }
    let lines: Vec<String> = flows
        .iter()
        .enumerate()
        .map(|(socket, (_, f))| {
            let calls: Vec<String> =
                f.calls.iter().map(|(k, (n, m))| format!("\"{k}\":{{\"calls\":{n},\"matched\":{m}}}")).collect();
            let count =
                |m: &BTreeMap<u64, u64>| m.iter().map(|(k, n)| format!("\"{k}\":{n}")).collect::<Vec<_>>().join(",");
            format!(
                "{{\"socket\":{socket},\"hooks\":{{{}}},\"tx_found\":{},\"modes\":{{{}}},\"phases\":{{{}}},\
                 \"inflight_hi_cuts\":{},\"first_mismatch\":{}}}",
                calls.join(","),
                f.tx_found,
                count(&f.modes),
                count(&f.phases),
                f.inflight_hi_cuts,
                f.first_mismatch.as_deref().map_or("null".to_string(), crate::json_str)
            )
        })
        .collect();
    Ok(lines.join("\n"))
}
