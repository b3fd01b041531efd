//! `load --watch FILE`: a witness of the ACKs on which the kernel ran BPF for this loader's
//! sockets (bpf/watch.bpf.c), written to FILE as CSV `time_ns,snd_una,snd_nxt,sport,dport`
//! (time from CLOCK_MONOTONIC), ending with `# lost N` (records the ring buffer had no room
//! for). The per-ACK kernel check reads it to tell the ACKs the port never saw.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use libbpf_rs::{MapCore, MapFlags, MapType, ObjectBuilder, RingBufferBuilder};

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
    let _ = writeln!(out.borrow_mut(), "time_ns,snd_una,snd_nxt,sport,dport");
    let ring = obj.maps().find(|m| m.map_type() == MapType::RingBuf).ok_or("watch: no ring buffer")?;
    let mut builder = RingBufferBuilder::new();
    builder
        .add(&ring, |d: &[u8]| {
            // struct seen: u64 time_ns, u32 snd_una, u32 snd_nxt, u16 sport, u16 dport.
            let u64_at = |o: usize| u64::from_ne_bytes(d[o..o + 8].try_into().unwrap());
            let u32_at = |o: usize| u32::from_ne_bytes(d[o..o + 4].try_into().unwrap());
            let u16_at = |o: usize| u16::from_ne_bytes(d[o..o + 2].try_into().unwrap());
            let _ =
                writeln!(out.borrow_mut(), "{},{},{},{},{}", u64_at(0), u32_at(8), u32_at(12), u16_at(16), u16_at(18));
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
    let mut out = out.into_inner();
    writeln!(out, "# lost {lost}").and_then(|_| out.flush()).map_err(|e| format!("watch: {}: {e}", path.display()))
}
