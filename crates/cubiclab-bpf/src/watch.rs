//! `load --watch FILE`: the per-ACK check's witness for this loader's sockets
//! (bpf/watch.bpf.c), written to FILE as CSV ([`HEADER`]): a `probe` row at every tcp_probe
//! with the socket's sequence numbers, `snd_cwnd_cnt`, the port log (bpf/common.h) as the
//! previous ACK left it and the port's first 24 bytes of state (to explain a difference),
//! and a `state` row at every tcp_cong_state_set with the socket's clock. Times are
//! CLOCK_MONOTONIC. It ends with `# skipped N` (runs the kernel skipped because the program
//! was already running on that CPU) and `# lost N` (records the ring buffer had no room for).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use std::os::fd::{AsFd, AsRawFd};

use libbpf_rs::{MapCore, MapFlags, MapType, ObjectBuilder, RingBufferBuilder};

/// The CSV columns, one row per record of watch.bpf.c's `struct seen`.
const HEADER: &str =
    "kind,time_ns,snd_una,snd_nxt,sport,dport,ca_state,mstamp_us,snd_cwnd_cnt,clock_us,rtt_us,acked_calls,cong_avoid_calls,pkts_acked,undo_calls,s0,s1,s2,s3,s4,s5";

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/watch.bpf.o"));
/// The ring buffer is drained this often; it holds about 170 000 records.
const POLL: Duration = Duration::from_millis(50);

pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), String>>,
}

impl Watch {
    /// Attach the witness for congestion controls named `prefix...` and write to `path`.
    /// Returns once it is attached (or why it could not be).
    pub fn start(prefix: &str, path: PathBuf) -> Result<Self, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let prefix = prefix.to_string();
        let stop_in = stop.clone();
        let thread = std::thread::spawn(move || run(&prefix, path, &stop_in, ready_tx));
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { stop, thread }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(thread.join().map_or("the watch thread panicked".into(), |r| r.err().unwrap_or_default())),
        }
    }

    /// Drain what is left, write the trailer, detach.
    pub fn finish(self) -> Result<(), String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().map_err(|_| "the watch thread panicked".to_string())?
    }
}

fn run(
    prefix: &str,
    path: PathBuf,
    stop: &AtomicBool,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<(), String> {
    let setup = || -> Result<_, String> {
        let mut open = ObjectBuilder::default().open_memory(OBJECT).map_err(|e| format!("watch: opening: {e}"))?;
        let mut set = false;
        for mut map in open.maps_mut() {
            if map.name().to_string_lossy().ends_with("rodata.watch") {
                let data = map.initial_value_mut().ok_or("watch: the prefix section has no data")?;
                // WATCH_PREFIX[16] then WATCH_PREFIX_LEN (u32), in declaration order.
                data[..16].fill(0);
                data[..prefix.len()].copy_from_slice(prefix.as_bytes());
                data[16..20].copy_from_slice(&(prefix.len() as u32).to_ne_bytes());
                set = true;
            }
        }
        if !set {
            return Err("watch: the object lacks its prefix section".into());
        }
        let obj = open.load().map_err(|e| format!("watch: the kernel refused the program: {e}"))?;
        let mut links = Vec::new();
        for prog in obj.progs_mut() {
            links.push(prog.attach().map_err(|e| format!("watch: attaching to tcp_probe: {e}"))?);
        }
        let file = File::create(&path).map_err(|e| format!("watch: {}: {e}", path.display()))?;
        Ok((obj, links, file))
    };
    let (obj, _links, file) = match setup() {
        Ok(v) => v,
        Err(e) => {
            let _ = ready.send(Err(e.clone()));
            return Err(e);
        }
    };
    let out = std::cell::RefCell::new(BufWriter::new(file));
    let _ = writeln!(out.borrow_mut(), "{HEADER}");
    let ring = obj.maps().find(|m| m.map_type() == MapType::RingBuf).ok_or("watch: no ring buffer")?;
    let mut builder = RingBufferBuilder::new();
    builder
        .add(&ring, |d: &[u8]| {
            // struct seen (watch.bpf.c): u64 time_ns; u32 snd_una, snd_nxt; u16 sport, dport;
            // u8 kind, ca_state; u16 pad; u32 mstamp_us, snd_cwnd_cnt; then the port log:
            // u32 clock_us; i32 rtt_us; u32 acked_calls, cong_avoid_calls, pkts_acked,
            // undo_calls; then the port's first 24 bytes of state.
            let u32_at = |o: usize| u32::from_ne_bytes(d[o..o + 4].try_into().unwrap());
            let u16_at = |o: usize| u16::from_ne_bytes(d[o..o + 2].try_into().unwrap());
            let kind = if d[20] == 0 { "probe" } else { "state" };
            let _ = writeln!(
                out.borrow_mut(),
                "{kind},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                u64::from_ne_bytes(d[0..8].try_into().unwrap()),
                u32_at(8),
                u32_at(12),
                u16_at(16),
                u16_at(18),
                d[21],
                u32_at(24),
                u32_at(28),
                u32_at(32),
                i32::from_ne_bytes(d[36..40].try_into().unwrap()),
                u32_at(40),
                u32_at(44),
                u32_at(48),
                u32_at(52),
                u32_at(56),
                u32_at(60),
                u32_at(64),
                u32_at(68),
                u32_at(72),
                u32_at(76)
            );
            0
        })
        .map_err(|e| format!("watch: ring buffer: {e}"))?;
    let rb = builder.build().map_err(|e| format!("watch: ring buffer: {e}"))?;
    let _ = ready.send(Ok(()));
    while !stop.load(Ordering::SeqCst) {
        rb.poll(POLL).map_err(|e| format!("watch: polling: {e}"))?;
    }
    rb.consume().map_err(|e| format!("watch: draining: {e}"))?;
    drop(rb);
    let lost_map = obj.maps().find(|m| m.map_type() == MapType::Array).ok_or("watch: no loss counter")?;
    let lost = lost_map
        .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
        .map_err(|e| format!("watch: reading the loss counter: {e}"))?
        .map_or(0, |v| u64::from_ne_bytes(v[..8].try_into().unwrap()));
    let skipped: u64 = obj.progs().map(|p| recursion_misses(p.as_fd().as_raw_fd())).sum();
    let mut out = out.into_inner();
    writeln!(out, "# skipped {skipped}")
        .and_then(|_| writeln!(out, "# lost {lost}"))
        .and_then(|_| out.flush())
        .map_err(|e| format!("watch: {}: {e}", path.display()))
}

/// How often the kernel skipped the program because it was already running on that CPU
/// (`bpf_prog_info.recursion_misses`).
pub fn recursion_misses(fd: i32) -> u64 {
    let mut info: libbpf_sys::bpf_prog_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libbpf_sys::bpf_prog_info>() as u32;
    let rc = unsafe { libbpf_sys::bpf_prog_get_info_by_fd(fd, &mut info as *mut _ as *mut _, &mut len) };
    if rc == 0 {
        info.recursion_misses
    } else {
        0
    }
}
