//! `load --watch FILE`: a witness of the ACKs on which the kernel ran BPF for this loader's
//! sockets (bpf/watch.bpf.c), written to FILE as CSV `time_ns,snd_una,snd_nxt,sport,dport`
//! (time from CLOCK_MONOTONIC), ending with `# lost N` (records the ring buffer had no room
//! for). The per-ACK kernel check reads it to tell the ACKs the port never saw.

use std::path::PathBuf;

use crate::recorder::{u16_at, u32_at, u64_at, Program, Recorder};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/watch.bpf.o"));

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
    let program = Program {
        name: "watch",
        object: OBJECT,
        configure: Box::new(configure),
        header: "time_ns,snd_una,snd_nxt,sport,dport",
        // struct seen: u64 time_ns, u32 snd_una, u32 snd_nxt, u16 sport, u16 dport.
        row: |d| format!("{},{},{},{},{}", u64_at(d, 0), u32_at(d, 8), u32_at(d, 12), u16_at(d, 16), u16_at(d, 18)),
    };
    Recorder::start(program, path)
}
