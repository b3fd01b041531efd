//! The process's side of the system: the clock, network namespaces, scheduling and the
//! signals that stop a run.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGTERM, SIGINT and SIGHUP; the loop stops at its next turn.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// CLOCK_MONOTONIC in nanoseconds: the clock of the kernel's `mono` trace clock, so the
/// emulator's records line up with `tcp_probe`, and shared by every namespace.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

/// Move this thread into the network namespace named by the file `path`.
pub fn enter_netns(path: &str) -> Result<(), String> {
    let c = CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: plain syscalls on a path we own.
    unsafe {
        let fd = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("open {path}: {}", errno_str()));
        }
        let r = libc::setns(fd, libc::CLONE_NEWNET);
        let e = errno_str();
        libc::close(fd);
        if r != 0 {
            return Err(format!("setns {path}: {e}"));
        }
    }
    Ok(())
}

/// Timer slack of 1 ns (wake-ups when asked, not up to 50 us later) and, if `fifo_prio` is
/// above 0, SCHED_FIFO at that priority. Returns how the process is scheduled.
pub fn set_scheduling(fifo_prio: i32) -> &'static str {
    // SAFETY: plain prctl / sched_setscheduler on this process.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if fifo_prio > 0 {
            let sp = libc::sched_param { sched_priority: fifo_prio };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &sp) == 0 {
                "fifo"
            } else {
                "normal (SCHED_FIFO refused)"
            }
        } else {
            "normal"
        }
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Stop on SIGTERM, SIGINT and SIGHUP (no SA_RESTART, so a wait returns at once), and
/// when the parent dies.
pub fn install_signal_handlers() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
}
