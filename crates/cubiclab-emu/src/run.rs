//! The loop, one per direction, each in a thread of its own: read what the kernel routed
//! into one TUN device, pass it through that direction's emulated path, write what is due
//! into the other device, record, and sleep until the next thing is due or a packet
//! arrives.
//!
//! The directions share nothing but the clock. They run apart because a write into a TUN
//! device runs the receiving kernel's TCP in the writer's context (the receiver's ACKs on
//! the forward side; the sender's ACK processing and its next transmissions on the
//! reverse side): in one thread each waits for the other; in two they use both cores.

use std::fs;
use std::io::Write;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::chain::Chain;
use crate::config::Config;
use crate::path::{Slab, NO_FLOW};
use crate::pcap::{self, Tap};
use crate::record::{self, Io, IoKind, Records, Summary};
use crate::sys::{self, mono_ns, STOP};
use crate::tun::{self, Header, MAX_PACKET};

/// Reads per turn of the loop, so deliveries stay on time under a flood.
const READ_BATCH: usize = 64;

/// The epoch of the interval records, once given (0: not yet): by `epoch_ns` in the
/// configuration or by an `epoch N` line on the control descriptor, which the caller sends
/// once the emulator is up (on a loaded machine its start takes seconds, so the caller
/// fixes the run's time origin only then). Whichever direction reads the line sets it for
/// both.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The first record time after `now` on the grid `epoch + k * step`.
fn next_on_grid(epoch: u64, now: u64, step: u64) -> u64 {
    if epoch > now {
        epoch - (epoch - now) / step * step
    } else {
        epoch + ((now - epoch) / step + 1) * step
    }
}

/// Take `epoch N` lines from the control descriptor's bytes.
fn read_control(bytes: &[u8]) {
    for line in String::from_utf8_lossy(bytes).lines() {
        if let Some(n) = line.strip_prefix("epoch ").and_then(|v| v.trim().parse::<u64>().ok()) {
            EPOCH.store(n, Ordering::SeqCst);
        }
    }
}

/// Run the emulator until SIGTERM/SIGINT, end of file on `ctl_fd`, or `max_duration_ns`.
pub fn run(cfg: &Config) -> Result<Summary, String> {
    sys::enter_netns(&cfg.netns_a)?;
    let fd_a = tun::open(&cfg.tun_a, cfg.offload)?;
    let close = |fd: RawFd| {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(fd) };
    };
    let fd_b =
        sys::enter_netns(&cfg.netns_b).and_then(|_| tun::open(&cfg.tun_b, cfg.offload)).inspect_err(|_| close(fd_a))?;
    let r = match &cfg.netns_home {
        Some(home) => sys::enter_netns(home),
        None => Ok(()),
    }
    .and_then(|_| run_fds(cfg, [fd_a, fd_b]));
    close(fd_a);
    close(fd_b);
    r
}

/// What one direction's loop leaves.
struct Half {
    chain: Chain,
    rec: Records,
    reads: u64,
    rx_errors: u64,
    polls: u64,
    delivered: u64,
    writes: u64,
    write_errors: u64,
    stop: &'static str,
    sched: &'static str,
}

fn run_fds(cfg: &Config, fds: [RawFd; 2]) -> Result<Summary, String> {
    fs::create_dir_all(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out))?;
    if let Some(fd) = cfg.ctl_fd {
        // Both directions wait on the control descriptor; the one that loses the race for
        // a line must find it empty, not block in read until the run ends.
        // SAFETY: fcntl on a descriptor we were given.
        unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK) };
    }
    let tap = |dir| {
        cfg.pcap
            .as_ref()
            .map(|p| Tap::new(Path::new(p), cfg.pcap_link, dir, cfg.flows.len(), cfg.pcap_flows.as_deref()))
            .transpose()
    };
    let taps = [tap(0)?, tap(1)?];
    let start = mono_ns();
    let (fwd, rev) = std::thread::scope(|s| {
        let [tap_fwd, tap_rev] = taps;
        let rev = s.spawn(|| half(cfg, 1, fds[1], fds[0], start, tap_rev));
        let fwd = half(cfg, 0, fds[0], fds[1], start, tap_fwd);
        (fwd, rev.join())
    });
    let mut rev = rev.map_err(|_| "the reverse direction's thread panicked".to_string())?;
    let mut fwd = fwd;
    let end = mono_ns();
    fwd.rec.finish(&mut fwd.chain.hops);
    rev.rec.finish(&mut rev.chain.hops);
    let out = Path::new(&cfg.out);
    let late = record::write(out, &fwd.rec, &rev.rec)?;
    let mut pcap_records = [0; 2];
    let mut pcap_buffers_made = 0;
    for (i, tap) in [fwd.rec.tap.take(), rev.rec.tap.take()].into_iter().enumerate() {
        if let Some(t) = tap {
            (pcap_records[i], pcap_buffers_made) = (t.records, pcap_buffers_made + t.buffers_made);
            t.finish()?;
        }
    }
    if let Some(p) = &cfg.pcap {
        pcap::merge(Path::new(p))?;
    }
    let (f, r) = (&fwd, &rev);
    let s = |v: &dyn ToString| v.to_string();
    // The first link's counters keep the names they had when it was the only one.
    let (f0, r0) = (&f.chain.hops[0], &r.chain.hops[0]);
    let mut summary = Summary(vec![
        ("start_ns".into(), s(&start)),
        ("end_ns".into(), s(&end)),
        ("stop".into(), f.stop.into()),
        ("offload".into(), s(&(cfg.offload as u8))),
        ("fwd_reads".into(), s(&f.reads)),
        ("fwd_arrivals".into(), s(&f0.arrivals)),
        ("fwd_tx_packets".into(), s(&f0.tx_segments)),
        ("fwd_tx_bytes".into(), s(&f0.link.tx_bytes)),
        ("fwd_drops".into(), s(&f0.link.drops)),
        ("fwd_random_losses".into(), s(&f0.link.loss.losses)),
        ("fwd_marks".into(), s(&f0.link.marks)),
        ("fwd_delivered".into(), s(&f.delivered)),
        ("fwd_writes".into(), s(&f.writes)),
        ("fwd_write_errors".into(), s(&f.write_errors)),
        ("fwd_peak_queue_packets".into(), s(&f.rec.peak_queue(0).0)),
        ("fwd_peak_queue_bytes".into(), s(&f.rec.peak_queue(0).1)),
        ("rev_reads".into(), s(&r.reads)),
        ("rev_arrivals".into(), s(&r0.arrivals)),
        ("rev_tx_packets".into(), s(&r0.tx_segments)),
        ("rev_drops".into(), s(&r0.link.drops)),
        ("rev_random_losses".into(), s(&r0.link.loss.losses)),
        ("rev_marks".into(), s(&r0.link.marks)),
        ("rev_delivered".into(), s(&r.delivered)),
        ("rev_writes".into(), s(&r.writes)),
        ("rev_write_errors".into(), s(&r.write_errors)),
        ("rx_errors".into(), s(&(f.rx_errors + r.rx_errors))),
        ("late_n".into(), s(&late.n)),
        ("late_mean_ns".into(), s(&late.mean_ns())),
        ("late_p50_us".into(), s(&late.quantile_us(0.5))),
        ("late_p99_us".into(), s(&late.quantile_us(0.99))),
        ("late_p999_us".into(), s(&late.quantile_us(0.999))),
        ("late_max_ns".into(), s(&late.max)),
        ("fwd_late_p99_us".into(), s(&f.rec.late.quantile_us(0.99))),
        ("rev_late_p99_us".into(), s(&r.rec.late.quantile_us(0.99))),
        ("polls".into(), s(&(f.polls + r.polls))),
        ("events_lost".into(), s(&(f.rec.events_lost + r.rec.events_lost))),
        ("io_lost".into(), s(&(f.rec.io_lost + r.rec.io_lost))),
        ("scheduling".into(), f.sched.replace(' ', "_")),
        ("fwd_pcap_records".into(), s(&pcap_records[0])),
        ("rev_pcap_records".into(), s(&pcap_records[1])),
        ("pcap_buffers_made".into(), s(&pcap_buffers_made)),
    ]);
    // Every link direction's counters (the simulator's link_totals).
    for (k, (fk, rk)) in f.chain.hops.iter().zip(&r.chain.hops).enumerate() {
        for (way, h, rec) in [("fwd", fk, &f.rec), ("rev", rk, &r.rec)] {
            let peak = rec.peak_queue(k);
            summary.0.extend([
                (format!("link{k}_{way}_arrivals"), s(&h.arrivals)),
                (format!("link{k}_{way}_tx_packets"), s(&h.tx_segments)),
                (format!("link{k}_{way}_tx_bytes"), s(&h.link.tx_bytes)),
                (format!("link{k}_{way}_drops"), s(&h.link.drops)),
                (format!("link{k}_{way}_random_losses"), s(&h.link.loss.losses)),
                (format!("link{k}_{way}_marks"), s(&h.link.marks)),
                (format!("link{k}_{way}_peak_queue_packets"), s(&peak.0)),
                (format!("link{k}_{way}_peak_queue_bytes"), s(&peak.1)),
            ]);
        }
    }
    let mut fh = fs::File::create(out.join("summary.txt")).map_err(|e| e.to_string())?;
    fh.write_all(summary.text().as_bytes()).map_err(|e| e.to_string())?;
    Ok(summary)
}

/// Direction `d` (0: A → B, 1: B → A) from `in_fd` to `out_fd` until the run stops.
fn half(cfg: &Config, d: usize, in_fd: RawFd, out_fd: RawFd, start: u64, tap: Option<Tap>) -> Half {
    let sched = sys::set_scheduling(cfg.sched_fifo);
    let deadline = start.saturating_add(cfg.max_duration_ns);
    let mut flow_of_port = vec![NO_FLOW; 1 << 16];
    for (i, f) in cfg.flows.iter().enumerate() {
        flow_of_port[f.port as usize] = i as u16;
    }
    let links: Vec<_> = (0..cfg.n_links()).map(|k| cfg.link(k, d)).collect();
    let routes: Vec<_> = cfg.routes.iter().map(|r| r[d].clone()).collect();
    let default_delay = [cfg.default_fwd_delay_ns, cfg.default_rev_delay_ns][d];
    let mut h = Half {
        chain: Chain::new(&links, cfg.seed, &routes, default_delay),
        rec: Records::new(d, start, (cfg.flows.len(), cfg.n_links()), cfg.max_events, tap, cfg.io_trace),
        reads: 0,
        rx_errors: 0,
        polls: 0,
        delivered: 0,
        writes: 0,
        write_errors: 0,
        stop: "deadline",
        sched,
    };
    let mut slab = Slab::default();
    if let Some(e) = cfg.epoch_ns {
        EPOCH.store(e, Ordering::SeqCst);
    }
    let mut epoch = EPOCH.load(Ordering::SeqCst);
    // The schedule's time 0 is the run's (the epoch), not the emulator's start.
    h.chain.set_schedule_origin(epoch.saturating_sub(start));
    let mut next_sample = next_on_grid(if epoch == 0 { start } else { epoch }, start, cfg.sample_ns);
    let mut ctl_buf = [0u8; 64];
    let mut scratch = [0u8; 256];
    loop {
        if STOP.load(Ordering::Relaxed) {
            h.stop = "signal";
            break;
        }
        if mono_ns() >= deadline {
            break;
        }
        let e = EPOCH.load(Ordering::Relaxed);
        if e != epoch {
            epoch = e;
            next_sample = next_on_grid(epoch, mono_ns(), cfg.sample_ns);
            h.chain.set_schedule_origin(epoch.saturating_sub(start));
        }
        // Deliver what is due first (its time has come), read what arrived (up to a
        // batch, each packet entering the path at the time it was read), then deliver
        // again what fell due meanwhile.
        deliver(&mut h, &mut slab, start, out_fd, cfg.max_coalesce, &mut scratch);
        for _ in 0..READ_BATCH {
            let mut buf = slab.read_buffer();
            // SAFETY: buf has MAX_PACKET bytes.
            let n = unsafe { libc::read(in_fd, buf.as_mut_ptr() as *mut libc::c_void, MAX_PACKET) };
            if n <= 0 {
                slab.unused(buf);
                let e = std::io::Error::last_os_error();
                if n < 0 && e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::Interrupted {
                    h.rx_errors += 1;
                }
                break;
            }
            h.reads += 1;
            let t = mono_ns() - start;
            let len = n as usize;
            let header = Header::parse(&buf[..len], cfg.offload);
            // A flow is known by its server's port, the destination or the source (servers
            // live on both sides; clients' ports lie outside the servers' range).
            let flow = match flow_of_port[header.dport as usize] {
                _ if header.hdr_len == 0 || header.udp => NO_FLOW,
                NO_FLOW => flow_of_port[header.sport as usize],
                f => f,
            };
            let slot = slab.insert(buf, len, header);
            let rec = &mut h.rec;
            h.chain.offer(t, slot, flow, &mut slab, |k, f| rec.fate(k, f));
            // io.csv's queue is the first link's.
            let (segments, queue, seq, ack) =
                (header.segments, h.chain.hops[0].queue().0 as u32, header.seq, header.ack);
            h.rec.io(Io { t, kind: IoKind::Read, segments, queue, seq, ack, late: 0, dur: 0 });
        }
        deliver(&mut h, &mut slab, start, out_fd, cfg.max_coalesce, &mut scratch);
        if mono_ns() >= next_sample {
            h.rec.sample(next_sample, &mut h.chain.hops);
            next_sample += cfg.sample_ns;
        }
        // Sleep until the next due event or an arrival.
        let now = mono_ns();
        let due = h.chain.next_due().map_or(u64::MAX, |t| start + t);
        let next = due.max(now + cfg.min_wait_ns).min(deadline).min(next_sample);
        if next <= now {
            continue;
        }
        let wait = next - now;
        let mut pfds = [
            libc::pollfd { fd: in_fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: cfg.ctl_fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
        ];
        let ts = libc::timespec {
            tv_sec: (wait / 1_000_000_000) as libc::time_t,
            tv_nsec: (wait % 1_000_000_000) as libc::c_long,
        };
        h.polls += 1;
        // SAFETY: pfds and ts are valid for the call; fd -1 is ignored by ppoll.
        let r = unsafe { libc::ppoll(pfds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        let woke = mono_ns();
        let segments = (r > 0) as u16;
        h.rec.io(Io {
            t: woke - start,
            kind: IoKind::Wake,
            segments,
            queue: 0,
            seq: 0,
            ack: 0,
            late: woke as i64 - next as i64,
            dur: 0,
        });
        if r > 0 && pfds[1].revents != 0 {
            // Both directions watch the control pipe; only its end (the parent closed it
            // or died) stops them.
            // SAFETY: reading into a local buffer.
            let n = unsafe { libc::read(pfds[1].fd, ctl_buf.as_mut_ptr() as *mut libc::c_void, ctl_buf.len()) };
            if n == 0 {
                h.stop = "control";
                STOP.store(true, Ordering::SeqCst);
                break;
            }
            if n > 0 {
                read_control(&ctl_buf[..n as usize]);
            }
        }
    }
    h
}

/// Finish the transmissions due by now (into their delay lines, or lost) and write what is
/// due, consecutive segments of one packet together.
fn deliver(h: &mut Half, slab: &mut Slab, start: u64, out_fd: RawFd, max_coalesce: u32, scratch: &mut [u8; 256]) {
    let now = mono_ns() - start;
    let rec = &mut h.rec;
    h.chain.advance(now, slab, |k, f| rec.fate(k, f));
    let (delivered, writes, errors) = (&mut h.delivered, &mut h.writes, &mut h.write_errors);
    h.chain.deliver(now, max_coalesce, |seg, n, dues| {
        let (slot, first) = (seg.slot, seg.index);
        let s = &mut slab.slots[slot as usize];
        let t = mono_ns() - start;
        if s.header.write_range(out_fd, &mut s.buf, first, first + n, seg.ecn, scratch) < 0 {
            *errors += 1;
        } else {
            *delivered += n as u64;
            rec.delivered(seg, n);
        }
        *writes += 1;
        let (seq, late, dur) = (s.header.segment_seq(first), t as i64 - dues[0] as i64, mono_ns() - start - t);
        rec.io(Io { t, kind: IoKind::Write, segments: n, queue: 0, seq, ack: s.header.ack, late, dur });
        for &due in dues {
            rec.late.add(t.saturating_sub(due));
        }
        slab.release(slot, n);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fall_on_the_epochs_grid() {
        // Grid 100 + k 30: after 175 comes 190; before the epoch, the grid extends back
        // (100 - 30 k): after 45 comes 70.
        assert_eq!(next_on_grid(100, 175, 30), 190);
        assert_eq!(next_on_grid(100, 45, 30), 70);
        assert_eq!(next_on_grid(100, 100, 30), 130);
    }
}
