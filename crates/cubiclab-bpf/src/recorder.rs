//! A tracing program that writes one CSV row per ring-buffer record, on a thread of its
//! own, until told to stop: the shared machinery of `--watch` (watch.rs) and `probe-bbr`
//! (bbr_probe.rs). The file ends with `# lost N`, the records the ring buffer had no room
//! for (the program counts them in its one-element array map).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use libbpf_rs::{MapCore, MapFlags, MapType, ObjectBuilder, OpenObject, RingBufferBuilder};

/// The ring buffer is drained this often.
const POLL: Duration = Duration::from_millis(50);

/// What a recorder runs: its object, how to set its read-only data before loading, the
/// CSV header and the formatting of one record.
pub struct Program {
    pub name: &'static str,
    pub object: &'static [u8],
    pub configure: Box<dyn FnOnce(&mut OpenObject) -> Result<(), String> + Send>,
    pub header: &'static str,
    pub row: fn(&[u8]) -> String,
}

pub struct Recorder {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), String>>,
}

impl Recorder {
    /// Load and attach `program`, writing to `path`. Returns once it is attached (or why it
    /// could not be).
    pub fn start(program: Program, path: PathBuf) -> Result<Self, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stop_in = stop.clone();
        let thread = std::thread::spawn(move || run(program, path, &stop_in, ready_tx));
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { stop, thread }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(thread.join().map_or("the recorder thread panicked".into(), |r| r.err().unwrap_or_default())),
        }
    }

    /// Drain what is left, write the trailer, detach.
    pub fn finish(self) -> Result<(), String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().map_err(|_| "the recorder thread panicked".to_string())?
    }
}

fn run(
    program: Program,
    path: PathBuf,
    stop: &AtomicBool,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<(), String> {
    let name = program.name;
    let setup = || -> Result<_, String> {
        let mut open =
            ObjectBuilder::default().open_memory(program.object).map_err(|e| format!("{name}: opening: {e}"))?;
        (program.configure)(&mut open)?;
        let obj = open.load().map_err(|e| format!("{name}: the kernel refused the program: {e}"))?;
        let mut links = Vec::new();
        for prog in obj.progs_mut() {
            links.push(prog.attach().map_err(|e| format!("{name}: attaching to tcp_probe: {e}"))?);
        }
        let file = File::create(&path).map_err(|e| format!("{name}: {}: {e}", path.display()))?;
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
    let _ = writeln!(out.borrow_mut(), "{}", program.header);
    let ring = obj.maps().find(|m| m.map_type() == MapType::RingBuf).ok_or(format!("{name}: no ring buffer"))?;
    let mut builder = RingBufferBuilder::new();
    let (row, sink) = (program.row, &out);
    builder
        .add(&ring, move |d: &[u8]| {
            let _ = writeln!(sink.borrow_mut(), "{}", row(d));
            0
        })
        .map_err(|e| format!("{name}: ring buffer: {e}"))?;
    let rb = builder.build().map_err(|e| format!("{name}: ring buffer: {e}"))?;
    let _ = ready.send(Ok(()));
    while !stop.load(Ordering::SeqCst) {
        rb.poll(POLL).map_err(|e| format!("{name}: polling: {e}"))?;
    }
    rb.consume().map_err(|e| format!("{name}: draining: {e}"))?;
    drop(rb);
    let lost_map = obj.maps().find(|m| m.map_type() == MapType::Array).ok_or(format!("{name}: no loss counter"))?;
    let lost = lost_map
        .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
        .map_err(|e| format!("{name}: reading the loss counter: {e}"))?
        .map_or(0, |v| u64::from_ne_bytes(v[..8].try_into().unwrap()));
    let mut out = out.into_inner();
    writeln!(out, "# lost {lost}").and_then(|_| out.flush()).map_err(|e| format!("{name}: {}: {e}", path.display()))
}

/// Little-endian readers of a record's fields at byte offsets.
pub fn u64_at(d: &[u8], o: usize) -> u64 {
    u64::from_ne_bytes(d[o..o + 8].try_into().unwrap())
}

pub fn u32_at(d: &[u8], o: usize) -> u32 {
    u32::from_ne_bytes(d[o..o + 4].try_into().unwrap())
}

pub fn u16_at(d: &[u8], o: usize) -> u16 {
    u16::from_ne_bytes(d[o..o + 2].try_into().unwrap())
}
