//! `load --hooklog DIR`: the hook log of a port that keeps one (a ring buffer map named
//! `hooklog` and its loss counter `hooklog_lost`, as bbr3.bpf.c does): every record as the
//! port wrote it, appended to `DIR/<instance>.bin` on a thread of its own; at the end
//! `DIR/<instance>.lost` holds the number of records the ring buffer had no room for.
//! `replay-bbr3` (bbr3_replay.rs) reads them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use libbpf_rs::{MapCore, MapFlags, MapHandle, Object, RingBufferBuilder};

const POLL: Duration = Duration::from_millis(50);

pub struct HookLog {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), String>>,
}

/// Start copying the hook log of instance `name` (its loaded object `obj`) into `dir`; None
/// when the port keeps no hook log.
pub fn start(name: &str, obj: &Object, dir: &Path) -> Result<Option<HookLog>, String> {
    let handle = |map_name: &str| {
        obj.maps()
            .find(|m| m.name() == map_name)
            .map(|m| MapHandle::try_from(&m).map_err(|e| format!("{name}: {map_name}: {e}")))
            .transpose()
    };
    let (Some(ring), Some(lost)) = (handle("hooklog")?, handle("hooklog_lost")?) else {
        return Ok(None);
    };
    let bin = dir.join(format!("{name}.bin"));
    let lost_path = dir.join(format!("{name}.lost"));
    let file = File::create(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_in = stop.clone();
    let thread = std::thread::spawn(move || -> Result<(), String> {
        let out = std::cell::RefCell::new(BufWriter::new(file));
        let mut builder = RingBufferBuilder::new();
        let sink = &out;
        builder
            .add(&ring, move |d: &[u8]| {
                let _ = sink.borrow_mut().write_all(d);
                0
            })
            .map_err(|e| format!("hooklog: {e}"))?;
        let rb = builder.build().map_err(|e| format!("hooklog: {e}"))?;
        // The port submits without waking anyone (a wake-up per ACK cost more than the hook
        // itself): drain on a clock instead of waiting in poll.
        while !stop_in.load(Ordering::SeqCst) {
            rb.consume().map_err(|e| format!("hooklog: draining: {e}"))?;
            std::thread::sleep(POLL);
        }
        rb.consume().map_err(|e| format!("hooklog: draining: {e}"))?;
        drop(rb);
        out.into_inner().flush().map_err(|e| format!("hooklog: {e}"))?;
        let n = lost
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| format!("hooklog: reading the loss counter: {e}"))?
            .map_or(0, |v| u64::from_ne_bytes(v[..8].try_into().unwrap()));
        std::fs::write(&lost_path, format!("{n}\n")).map_err(|e| format!("{}: {e}", lost_path.display()))
    });
    Ok(Some(HookLog { stop, thread }))
}

impl HookLog {
    /// Drain what is left and write the loss count.
    pub fn finish(self) -> Result<(), String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().map_err(|_| "the hook log thread panicked".to_string())?
    }
}
