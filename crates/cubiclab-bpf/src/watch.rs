//! `load --watch FILE`: the per-ACK check's witness for this loader's sockets
//! (bpf/watch.bpf.c), written to FILE as CSV ([`HEADER`]): a `probe` row at every tcp_probe
//! with the socket's sequence numbers, `snd_cwnd_cnt`, the port log (bpf/common.h) as the
//! previous ACK left it, the port's first 24 bytes of state (to explain a difference) and
//! the socket's `tsoffset` (which `rx_opt.rcv_tsecr` has taken off), and a `state` row at every tcp_cong_state_set with the socket's clock. Times are
//! CLOCK_MONOTONIC. It ends with the recorder's trailer (recorder.rs).

use std::path::PathBuf;

use crate::recorder::{u16_at, u32_at, u64_at, Program, Recorder};

/// The CSV columns, one row per record of watch.bpf.c's `struct seen`.
const HEADER: &str = "kind,time_ns,snd_una,snd_nxt,sport,dport,ca_state,mstamp_us,snd_cwnd_cnt,clock_us,rtt_us,\
                      acked_calls,cong_avoid_calls,in_flight,undo_calls,s0,s1,s2,s3,s4,s5,tsoffset";

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/watch.bpf.o"));

/// One record of `struct seen`: u64 time_ns; u32 snd_una, snd_nxt; u16 sport, dport; u8 kind,
/// ca_state; u16 pad; u32 mstamp_us, snd_cwnd_cnt; the port log (u32 clock_us; i32 rtt_us;
/// u32 acked_calls, cong_avoid_calls, in_flight, undo_calls); u32 state[6]; u32 tsoffset.
fn row(d: &[u8]) -> String {
    let kind = if d[20] == 0 { "probe" } else { "state" };
    let mut out = format!(
        "{kind},{},{},{},{},{},{},{},{},{},{}",
        u64_at(d, 0),
        u32_at(d, 8),
        u32_at(d, 12),
        u16_at(d, 16),
        u16_at(d, 18),
        d[21],
        u32_at(d, 24),
        u32_at(d, 28),
        u32_at(d, 32),
        u32_at(d, 36) as i32
    );
    for o in (40..84).step_by(4) {
        out.push_str(&format!(",{}", u32_at(d, o)));
    }
    out
}

/// Attach the witness for congestion controls named `prefix...` and write to `path`.
pub fn start(prefix: &str, path: PathBuf) -> Result<Recorder, String> {
    let prefix = prefix.to_string();
    let configure = move |open: &mut libbpf_rs::OpenObject| -> Result<(), String> {
        for mut map in open.maps_mut() {
            if map.name().to_string_lossy().ends_with("rodata.watch") {
                let data = map.initial_value_mut().ok_or("watch: the prefix section has no data")?;
                // WATCH_PREFIX[16] then WATCH_PREFIX_LEN (u32), in declaration order.
                data[..16].fill(0);
                data[..prefix.len()].copy_from_slice(prefix.as_bytes());
                data[16..20].copy_from_slice(&(prefix.len() as u32).to_ne_bytes());
                return Ok(());
            }
        }
        Err("watch: the object lacks its prefix section".into())
    };
    let program = Program { name: "watch", object: OBJECT, configure: Box::new(configure), header: HEADER, row };
    Recorder::start(program, path)
}
