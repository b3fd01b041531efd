//! A Mahimahi trace read from its file: streamed line by line and kept as runs of equal
//! opportunities per millisecond, so a trace of tens of millions of lines at a steady rate
//! takes a few runs rather than a number per line. One reading serves every later use in
//! the process (the check before the run, the run, the plots): the last few traces read are
//! kept, known by their files' identity (path, device, inode, size, times).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Bytes a run takes in memory: its first ms, its count per ms, its length and the
/// opportunities before it.
pub const RUN_BYTES: u64 = 4 + 2 + 2 + 4;

/// The longest line read: a time in ms has at most 10 digits; the rest is whitespace. (A
/// file without line ends is not read whole into one line.)
const LINE_BYTES: u64 = 256;

/// Bytes read between two calls of the progress callback.
const PROGRESS_BYTES: u64 = 8 << 20;

/// A trace as runs: run `i` has `per_ms[i]` opportunities at each ms of
/// `from_ms[i] .. from_ms[i] + len_ms[i]`; milliseconds in no run have none.
#[derive(Debug, Default)]
pub struct Trace {
    from_ms: Vec<u32>,
    per_ms: Vec<u16>,
    /// Runs longer than `u16::MAX` ms are split.
    len_ms: Vec<u16>,
    /// Opportunities in the runs before run `i` (strictly increasing: every run has some).
    before: Vec<u32>,
    /// See [`Trace::digest`] (computed once, when read).
    digest: u64,
}

impl Trace {
    /// Read a trace in Mahimahi's format: one whole number of milliseconds per line,
    /// non-decreasing, the last above 0; blank lines, surrounding whitespace and a UTF-8
    /// byte-order mark skipped. `on_progress(bytes read)` is called every few MB and stops
    /// the reading when it returns false. At most `max_bytes` of memory, counting the
    /// growing tables at twice their size. The error names the 1-based line and shows its
    /// start (the caller prefixes the key and the file).
    pub fn read(
        mut input: impl BufRead,
        max_bytes: u64,
        on_progress: &mut dyn FnMut(u64) -> bool,
    ) -> Result<Trace, String> {
        let mut t = Trace::default();
        let (mut line, mut number, mut read, mut reported) = (Vec::new(), 0u64, 0u64, 0u64);
        // The millisecond being counted and its opportunities so far.
        let mut open: Option<(u64, u64)> = None;
        loop {
            line.clear();
            let n = (&mut input)
                .take(LINE_BYTES)
                .read_until(b'\n', &mut line)
                .map_err(|e| format!("cannot be read: {e}"))?;
            if n == 0 {
                break;
            }
            number += 1;
            if n as u64 == LINE_BYTES && line.last() != Some(&b'\n') {
                let shown = String::from_utf8_lossy(&line[..40]).escape_debug().to_string();
                return Err(format!(
                    "line {number} is '{shown}...', longer than {LINE_BYTES} bytes; expected a whole \
                     number of milliseconds per line (Mahimahi's format)"
                ));
            }
            read += n as u64;
            if read - reported >= PROGRESS_BYTES {
                reported = read;
                if !on_progress(read) {
                    return Err("reading stopped".into());
                }
            }
            let text = if number == 1 { line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&line) } else { &line };
            let text = text.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let ms = text
                .iter()
                .try_fold(0u64, |ms, &b| {
                    let digit = b.checked_sub(b'0').filter(|d| *d < 10)?;
                    ms.checked_mul(10)?.checked_add(digit as u64)
                })
                .filter(|&ms| ms <= u32::MAX as u64);
            let Some(ms) = ms else {
                let shown = String::from_utf8_lossy(&text[..text.len().min(40)]).escape_debug().to_string();
                return Err(format!(
                    "line {number} is '{shown}'; expected a whole number of milliseconds per line, at most {} \
                     (about 49.7 days; Mahimahi's format)",
                    u32::MAX
                ));
            };
            open = match open {
                Some((at, count)) if at == ms => Some((at, count + 1)),
                Some((at, _)) if ms < at => {
                    return Err(format!(
                        "line {number} is {ms} ms, before the line above it ({at} ms); times must not decrease"
                    ))
                }
                Some((at, count)) => {
                    t.count(at, count, number - 1, max_bytes)?;
                    Some((ms, 1))
                }
                None => Some((ms, 1)),
            };
        }
        let Some((at, count)) = open else { return Err("has no delivery opportunity".into()) };
        if at == 0 {
            return Err("has its last line at 0 ms; allowed: a last time above 0 ms (it is the trace's period)".into());
        }
        t.count(at, count, number, max_bytes)?;
        for v in [&mut t.from_ms, &mut t.before] {
            v.shrink_to_fit();
        }
        t.per_ms.shrink_to_fit();
        t.len_ms.shrink_to_fit();
        t.digest = t.fnv1a();
        Ok(t)
    }

    /// Add `count` opportunities at `ms` (after every ms so far): they extend the last run
    /// when it ends just before `ms` with the same count, else start a run.
    fn count(&mut self, ms: u64, count: u64, line: u64, max_bytes: u64) -> Result<(), String> {
        let per_ms = u16::try_from(count).map_err(|_| {
            format!("has {count} lines at {ms} ms (by line {line}); allowed: at most {} per ms (786 Gbit/s)", u16::MAX)
        })?;
        let before = u32::try_from(self.opportunities() + count).map_err(|_| {
            format!("has more than {} opportunities by line {line}; allowed: at most that many", u32::MAX)
        })? - per_ms as u32;
        if let Some(i) = self.from_ms.len().checked_sub(1) {
            if self.per_ms[i] == per_ms
                && self.from_ms[i] as u64 + self.len_ms[i] as u64 == ms
                && self.len_ms[i] < u16::MAX
            {
                self.len_ms[i] += 1;
                return Ok(());
            }
        }
        let runs = self.from_ms.len() as u64 + 1;
        if 2 * runs * RUN_BYTES > max_bytes {
            return Err(format!(
                "needs more than {max_bytes} bytes of memory by line {line} ({runs} runs of equal opportunities per \
                 millisecond x {RUN_BYTES} bytes, twice while the tables grow); allowed: at most {max_bytes} bytes, the \
                 memory budget"
            ));
        }
        self.before.push(before);
        self.from_ms.push(ms as u32); // at most u32::MAX: checked when read
        self.per_ms.push(per_ms);
        self.len_ms.push(1);
        Ok(())
    }

    /// Delivery opportunities in one period (the trace's lines but blank ones).
    pub fn opportunities(&self) -> u64 {
        match self.from_ms.len().checked_sub(1) {
            Some(i) => self.before[i] as u64 + self.per_ms[i] as u64 * self.len_ms[i] as u64,
            None => 0,
        }
    }

    /// The period, ms: the last line's time.
    pub fn period_ms(&self) -> u64 {
        let i = self.from_ms.len() - 1;
        self.from_ms[i] as u64 + self.len_ms[i] as u64 - 1
    }

    /// The most opportunities of any millisecond.
    pub fn peak_per_ms(&self) -> u16 {
        self.per_ms.iter().copied().max().unwrap_or(0)
    }

    /// Runs of equal opportunities per millisecond.
    pub fn runs(&self) -> usize {
        self.from_ms.len()
    }

    /// Bytes its tables hold.
    pub fn heap_bytes(&self) -> u64 {
        self.runs() as u64 * RUN_BYTES
    }

    /// Opportunities at milliseconds up to `ms` included.
    pub fn count_through(&self, ms: u64) -> u64 {
        let Some(i) = self.from_ms.partition_point(|&f| f as u64 <= ms).checked_sub(1) else { return 0 };
        self.before[i] as u64 + self.per_ms[i] as u64 * (ms - self.from_ms[i] as u64 + 1).min(self.len_ms[i] as u64)
    }

    /// The millisecond of opportunity `j` (0-based, below [`Trace::opportunities`]).
    pub fn ms_of(&self, j: u64) -> u64 {
        let i = self.before.partition_point(|&b| b as u64 <= j) - 1;
        self.from_ms[i] as u64 + (j - self.before[i] as u64) / self.per_ms[i] as u64
    }

    /// A digest of the opportunities (FNV-1a over the runs), 16 hex digits: what names the
    /// trace in a compiled scenario beside its file, so a changed file is noticed and a
    /// cache key follows the content.
    pub fn digest(&self) -> String {
        format!("{:016x}", self.digest)
    }

    fn fnv1a(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for i in 0..self.runs() {
            let run = [self.from_ms[i] as u64, self.per_ms[i] as u64, self.len_ms[i] as u64];
            for b in run.iter().flat_map(|v| v.to_le_bytes()) {
                h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3); // FNV-1a: wraps by design
            }
        }
        h
    }
}

/// Open `path` to read without waiting (a FIFO is refused, never waited on): only a regular
/// file is accepted.
pub fn open(path: &Path) -> Result<File, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("'{}' cannot be opened: {e}", path.display()))?;
    let meta = file.metadata().map_err(|e| format!("'{}': {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("'{}' is not a regular file; allowed: a regular file", path.display()));
    }
    Ok(file)
}

/// Traces kept after reading: a scenario names a few at most.
const KEPT: usize = 4;

/// The trace of `file`, open on `path`, read unless it is one of the last few read (same
/// path, device, inode, size, and modification and change times: a temporary file whose
/// inode is reused elsewhere is another path).
pub fn load(
    path: &Path,
    file: File,
    max_bytes: u64,
    on_progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Arc<Trace>, String> {
    type FileId = (std::path::PathBuf, u64, u64, u64, (i64, i64), (i64, i64));
    static KEPT_TRACES: Mutex<Vec<(FileId, Arc<Trace>)>> = Mutex::new(Vec::new());
    let m = file.metadata().map_err(|e| e.to_string())?;
    let id = (path.to_path_buf(), m.dev(), m.ino(), m.size(), (m.mtime(), m.mtime_nsec()), (m.ctime(), m.ctime_nsec()));
    if let Some((_, trace)) = KEPT_TRACES.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == id) {
        return Ok(trace.clone());
    }
    let trace = Arc::new(Trace::read(BufReader::with_capacity(1 << 20, file), max_bytes, on_progress)?);
    let mut kept = KEPT_TRACES.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() == KEPT {
        kept.remove(0);
    }
    kept.push((id, trace.clone()));
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> Result<Trace, String> {
        Trace::read(text, u64::MAX, &mut |_| true)
    }

    #[test]
    fn mahimahi_lines() {
        // Mahimahi's format: a whole number of ms per line; blank lines, surrounding
        // whitespace, CRLF endings and a byte-order mark are not opportunities.
        let t = read(b"\xef\xbb\xbf1\n 1 \r\n\n3").unwrap();
        assert_eq!((t.opportunities(), t.period_ms(), t.peak_per_ms()), (3, 3, 2));
        assert!(read(b"1\n2.5\n").unwrap_err().starts_with("line 2 is '2.5'"));
        assert!(read("1\n\u{b2}\n".as_bytes()).unwrap_err().starts_with("line 2 is '\u{b2}'"));
        assert!(read(b"18446744073709551616\n").unwrap_err().starts_with("line 1 is"));
        // The latest time a run holds, u32::MAX ms, and one more.
        assert!(read(b"4294967295\n").is_ok());
        assert!(read(b"4294967296\n").unwrap_err().starts_with("line 1 is"));
        assert!(read(b"-1\n").unwrap_err().starts_with("line 1 is '-1'"));
        assert!(read(b"1\n\xef\xbb\xbf2\n").unwrap_err().starts_with("line 2 is"));
        assert_eq!(read(b"\n \n").unwrap_err(), "has no delivery opportunity");
        assert!(read(b"0\n0\n").unwrap_err().contains("last line at 0 ms"));
        let zeros = [0u8; 10_000];
        assert!(read(&zeros).unwrap_err().contains("longer than 256 bytes"));
        assert!(read(b"1\n3\n2\n").unwrap_err().starts_with("line 3 is 2 ms, before the line above it (3 ms)"));
    }

    #[test]
    fn runs_count_opportunities_per_millisecond() {
        // 1 at 1..=3 ms, 2 at 4 and 5 ms, nothing at 6, 1 at 7: three runs, 8 opportunities.
        let t = read(b"1\n2\n3\n4\n4\n5\n5\n7\n").unwrap();
        assert_eq!((t.runs(), t.opportunities(), t.period_ms(), t.peak_per_ms()), (3, 8, 7, 2));
        let through: Vec<u64> = (0..=8).map(|ms| t.count_through(ms)).collect();
        assert_eq!(through, [0, 1, 2, 3, 5, 7, 7, 8, 8]);
        let at: Vec<u64> = (0..8).map(|j| t.ms_of(j)).collect();
        assert_eq!(at, [1, 2, 3, 4, 4, 5, 5, 7]);
        // A steady trace of a million lines, one per ms (12 Mbit/s): runs of 65,535 ms, the
        // longest a run holds, so ceil(1e6 / 65,535) = 16 runs.
        let steady: String = (1..=1_000_000).map(|ms| format!("{ms}\n")).collect();
        let t = read(steady.as_bytes()).unwrap();
        assert_eq!((t.runs(), t.opportunities(), t.period_ms()), (16, 1_000_000, 1_000_000));
        assert_eq!(t.heap_bytes(), 16 * RUN_BYTES);
        assert_eq!((t.count_through(65_535), t.count_through(65_536), t.ms_of(65_535)), (65_535, 65_536, 65_536));
    }

    #[test]
    fn the_digest_follows_the_opportunities_not_the_text() {
        let d = |text: &[u8]| read(text).unwrap().digest();
        assert_eq!(d(b"1\n1\n3\n"), d(b"\xef\xbb\xbf 1\r\n1\n\n3"));
        assert_ne!(d(b"1\n1\n3\n"), d(b"1\n2\n3\n"));
    }

    #[test]
    fn memory_and_progress_bounds() {
        // Lines 1, 3, 5, ...: every line its own run. Room for 3 runs (x2 while growing):
        // the fourth run, at line 4, is refused.
        let err = Trace::read(&b"1\n3\n5\n7\n9\n"[..], 6 * RUN_BYTES, &mut |_| true).unwrap_err();
        assert!(
            err.starts_with(&format!("needs more than {} bytes of memory by line 4 (4 runs", 6 * RUN_BYTES)),
            "{err}"
        );
        // A steady trace of 8 MiB to 16 MiB (lines "1" to "1500000" average under 8 bytes):
        // one progress call, at the first line end past 8 MiB; stopping there stops the reading.
        let big: String = (1..=1_500_000).map(|ms| format!("{ms}\n")).collect();
        let past = big.match_indices('\n').map(|(i, _)| i as u64 + 1).find(|&n| n >= PROGRESS_BYTES).unwrap();
        let mut calls = Vec::new();
        assert!(Trace::read(big.as_bytes(), u64::MAX, &mut |n| {
            calls.push(n);
            true
        })
        .is_ok());
        assert_eq!(calls, [past]);
        assert_eq!(Trace::read(big.as_bytes(), u64::MAX, &mut |_| false).unwrap_err(), "reading stopped");
    }
}
