//! A link's buffer: its packets under a queue discipline. Most disciplines keep one FIFO
//! ([`Fifo`]) and answer each arrival and each departure with a [`Verdict`]
//! ([`Discipline`]); they hold no packets and count nothing: the [`Queue`] enqueues,
//! dequeues and marks as they say, and the link counts what they said. A discipline that
//! sorts packets into queues of its own (FQ-CoDel's flows, DualPI2's two) is a
//! [`Scheduler`] itself. Every
//! discipline is one line of the registry below (a closed enum, so the per-packet path has
//! no dynamic dispatch) and one file.

pub mod fifo;

use crate::rng::Rng;
use crate::{PathPacket, Time};
pub use fifo::Fifo;

/// How a buffer's limit is counted: `{"packets": n}` or `{"bytes": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

impl Limit {
    /// Whether a buffer holding `packets` packets of `bytes` bytes has no room for one more
    /// of `size` bytes.
    #[inline]
    pub fn full(&self, packets: usize, bytes: u64, size: u32) -> bool {
        match *self {
            Limit::Packets(n) => packets >= n as usize,
            Limit::Bytes(b) => bytes + size as u64 > b,
        }
    }
}

/// A discipline's answer on a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Pass with CE set (only for packets that are `ecn_capable`).
    Mark,
    Drop,
}

/// What a buffer knows of its link.
pub struct Buffer {
    pub limit: Limit,
    /// Bytes of a full-sized packet on the wire.
    pub wire_bytes: u32,
    pub rate_bps: u64,
    /// The buffer's own random stream (RED's drops).
    pub rng: Rng,
}

/// A queue discipline: its decisions on the packets passing the FIFO, which it reads but
/// does not change.
pub trait Discipline {
    /// Its settings table (file: `bottleneck.<table>`), or `()` if it has none.
    type Settings;

    fn new(settings: &Self::Settings, buffer: &Buffer) -> Self;

    /// The verdict on `p`, arriving at `now`, before it is enqueued. `full`: the limit has
    /// no room for it, so it is dropped whatever the verdict (a discipline that keeps
    /// state about drops needs to know).
    #[inline]
    fn arrive<P: PathPacket>(&mut self, _now: Time, _p: &P, _fifo: &Fifo<P>, _full: bool) -> Verdict {
        Verdict::Pass
    }

    /// The verdict on `p`, the head just taken out of `fifo` at `now` after `sojourn` ns in
    /// it. After a drop the queue asks again about the next head, within the same `now`.
    #[inline]
    fn depart<P: PathPacket>(&mut self, _now: Time, _p: &P, _sojourn: Time, _fifo: &Fifo<P>) -> Verdict {
        Verdict::Pass
    }

    /// A dequeue at `now` found the FIFO empty.
    #[inline]
    fn idle(&mut self, _now: Time) {}

    /// Its periodic timer (PIE's): run the updates due at or before `now`. The queue calls
    /// it first on each arrival and each dequeue, while the FIFO still holds what it held
    /// since the event before, so an update due in between sees it as a real timer would.
    #[inline]
    fn catch_up<P: PathPacket>(&mut self, _now: Time, _fifo: &Fifo<P>) {}
}

/// A buffer's packets and what is done with them: the interface of [`Queue`], over one FIFO
/// under a [`Discipline`] ([`Single`]) or over queues a discipline keeps itself.
pub trait Scheduler<P: PathPacket> {
    /// Offer `p` arriving at `now`: queued (`Pass`), queued with CE set (`Mark`), or not
    /// (`Drop`). Packets already queued that it drops to make room go to `dropped`.
    fn enqueue(&mut self, now: Time, p: P, dropped: impl FnMut(P)) -> Verdict;

    /// The next packet to send at `now` and its verdict (`Pass` or `Mark`, CE then set);
    /// each packet dropped on the way goes to `dropped`.
    fn dequeue(&mut self, now: Time, dropped: impl FnMut(P)) -> Option<(P, Verdict)>;

    fn len_packets(&self) -> usize;

    fn len_bytes(&self) -> u64;

    /// Packets waiting that satisfy `pred`.
    fn count(&self, pred: impl Fn(&P) -> bool) -> usize;
}

/// One FIFO under a [`Discipline`], with the buffer's limit.
pub struct Single<D, P> {
    pub(crate) fifo: Fifo<P>,
    pub(crate) limit: Limit,
    pub(crate) discipline: D,
}

impl<D: Discipline, P: PathPacket> Single<D, P> {
    fn new(settings: &D::Settings, b: &Buffer) -> Self {
        Self { fifo: Fifo::default(), limit: b.limit, discipline: D::new(settings, b) }
    }
}

impl<D: Discipline, P: PathPacket> Scheduler<P> for Single<D, P> {
    #[inline(always)]
    fn enqueue(&mut self, now: Time, mut p: P, _: impl FnMut(P)) -> Verdict {
        self.discipline.catch_up(now, &self.fifo);
        let full = self.limit.full(self.fifo.len_packets(), self.fifo.len_bytes(), p.wire_bytes());
        // The discipline is asked even when there is no room: RED's average and its random
        // draws see every arrival.
        let verdict = match self.discipline.arrive(now, &p, &self.fifo, full) {
            _ if full => return Verdict::Drop,
            Verdict::Drop => return Verdict::Drop,
            Verdict::Mark => {
                mark(&mut p);
                Verdict::Mark
            }
            Verdict::Pass => Verdict::Pass,
        };
        self.fifo.push(now, p);
        verdict
    }

    #[inline(always)]
    fn dequeue(&mut self, now: Time, mut dropped: impl FnMut(P)) -> Option<(P, Verdict)> {
        self.discipline.catch_up(now, &self.fifo);
        loop {
            let Some((enqueued, mut p)) = self.fifo.pop() else {
                self.discipline.idle(now);
                return None;
            };
            match self.discipline.depart(now, &p, now - enqueued, &self.fifo) {
                Verdict::Drop => dropped(p),
                Verdict::Mark => {
                    mark(&mut p);
                    return Some((p, Verdict::Mark));
                }
                Verdict::Pass => return Some((p, Verdict::Pass)),
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.fifo.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }

    fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        self.fifo.iter().filter(|p| pred(p)).count()
    }
}

/// A discipline's settings table.
pub trait Table {
    /// Check the values; `at` is the table's key path, for messages.
    fn validate(&self, at: &str) -> Result<(), String>;

    /// The durations it holds, ns, by key (the scenario bounds every time it is given).
    fn times(&self) -> Vec<(&'static str, Time)> {
        Vec::new()
    }

    /// The durations it may hold, ns, by key: `None` where unset (a feature that is off).
    /// A key is in `times` or here, never both.
    fn optional_times(&self) -> Vec<(&'static str, Option<Time>)> {
        Vec::new()
    }
}

/// `&settings.<table>` of a discipline with a table, `&()` of one without.
macro_rules! table_of {
    ($settings:ident) => {
        &()
    };
    ($settings:ident $table:ident) => {
        &$settings.$table
    };
}

/// The type a registry line's discipline runs as in [`Policy`]: a [`Discipline`] over one
/// FIFO, or a [`Scheduler`] of its own packets (`Type<P>`).
macro_rules! runs_as {
    ($ty:ident) => { Single<$ty, P> };
    ($ty:ident $p:ident) => { $ty<$p> };
}

/// The settings type of a registry line: its `Discipline::Settings`, or for a `Type<P>` the
/// type its `table key: Type` names.
macro_rules! settings_of {
    ($module:ident $ty:ident) => {
        <$module::$ty as Discipline>::Settings
    };
    ($module:ident $ty:ident $settings:ty) => {
        $settings
    };
}

/// The registry: per discipline, `Variant: module::Type = "name in the file"`, and
/// `, table key` if it has settings (`bottleneck.key` in the file, a field of
/// [`QueueSettings`]). A discipline that keeps its own queues is `module::Type<P>`, a
/// [`Scheduler`] with `fn new(&Settings, &Buffer)`, and names its settings type:
/// `, table key: Settings`. Declares the modules, [`QueueDiscipline`], [`QueueSettings`]
/// and [`Policy`].
macro_rules! disciplines {
    ($( $(#[$attr:meta])* $variant:ident: $module:ident::$ty:ident $(<$p:ident>)? = $name:literal
        $(, table $table:ident $(: $settings:ty)?)?; )*) => {
        $( $(#[$attr])* pub mod $module; )*
        $( $(#[$attr])* pub use $module::$ty; )*

        /// Which discipline a buffer runs (file: `bottleneck.queue`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
        pub enum QueueDiscipline {
            $( $(#[$attr])* #[serde(rename = $name)] $variant, )*
        }

        /// The settings of every discipline that has some, one table each, named after it
        /// (file: `bottleneck.red`, `bottleneck.codel`, `bottleneck.step`, ...). Only the
        /// running discipline's matter, but all are checked. The scenario, the emulator's
        /// configuration and the Python edge all carry this struct whole.
        #[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
        #[serde(default)]
        pub struct QueueSettings {
            $( $( pub $table: settings_of!($module $ty $($settings)?), )? )*
        }

        impl QueueSettings {
            /// Check every table, also those of disciplines that are off: a typo there is a
            /// typo. `at` is the key path of the tables' parent (`bottleneck`).
            pub fn validate(&self, at: &str) -> Result<(), String> {
                $( $( Table::validate(&self.$table, &format!("{at}.{}", stringify!($table)))?; )? )*
                Ok(())
            }

            /// Every duration set in the tables, ns, by key path under `at`.
            pub fn times(&self, at: &str) -> Vec<(String, Time)> {
                self.time_keys(at).into_iter().filter_map(|(key, t)| Some((key, t?))).collect()
            }

            /// Every key of the tables that holds a duration, by key path under `at`, with
            /// its value, `None` if unset: what a file may give as a time ("5ms").
            pub fn time_keys(&self, at: &str) -> Vec<(String, Option<Time>)> {
                let mut keys = Vec::new();
                $( $(
                    let table = &self.$table;
                    let given = Table::times(table).into_iter().map(|(key, t)| (key, Some(t)));
                    for (key, t) in given.chain(Table::optional_times(table)) {
                        keys.push((format!("{at}.{}.{key}", stringify!($table)), t));
                    }
                )? )*
                keys
            }
        }

        /// The running discipline with its state and its packets.
        pub(crate) enum Policy<P> {
            $( $(#[$attr])* $variant(runs_as!($ty $($p)?)), )*
        }

        impl<P: PathPacket> Policy<P> {
            pub fn new(discipline: QueueDiscipline, settings: &QueueSettings, buffer: &Buffer) -> Self {
                match discipline {
                    $( $(#[$attr])* QueueDiscipline::$variant =>
                        Policy::$variant(<runs_as!($ty $($p)?)>::new(table_of!(settings $($table)?), buffer)), )*
                }
            }
        }

        impl<P: PathPacket> Scheduler<P> for Policy<P> {
            #[inline(always)]
            fn enqueue(&mut self, now: Time, p: P, dropped: impl FnMut(P)) -> Verdict {
                match self {
                    $( $(#[$attr])* Policy::$variant(s) => s.enqueue(now, p, dropped), )*
                }
            }

            #[inline(always)]
            fn dequeue(&mut self, now: Time, dropped: impl FnMut(P)) -> Option<(P, Verdict)> {
                match self {
                    $( $(#[$attr])* Policy::$variant(s) => s.dequeue(now, dropped), )*
                }
            }

            fn len_packets(&self) -> usize {
                match self {
                    $( $(#[$attr])* Policy::$variant(s) => s.len_packets(), )*
                }
            }

            fn len_bytes(&self) -> u64 {
                match self {
                    $( $(#[$attr])* Policy::$variant(s) => s.len_bytes(), )*
                }
            }

            fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
                match self {
                    $( $(#[$attr])* Policy::$variant(s) => s.count(pred), )*
                }
            }
        }
    };
}

disciplines! {
    DropTail: droptail::DropTail = "droptail";
    Red: red::Red = "red", table red;
    CoDel: codel::CoDel = "codel", table codel;
    Step: step::Step = "step", table step;
    #[cfg(test)]
    Probe: probe::Probe = "probe";
    FqCoDel: fq_codel::FqCoDel<P> = "fq_codel", table fq_codel: fq_codel::FqCoDelSpec;
    Pie: pie::Pie = "pie", table pie;
    DualPi2: dualpi2::DualPi2<P> = "dualpi2", table dualpi2: dualpi2::DualPi2Spec;
}

impl QueueSettings {
    /// The tables' names, as the scenario file spells them.
    pub fn table_names() -> Vec<String> {
        match serde_json::to_value(QueueSettings::default()) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => unreachable!("QueueSettings serialises to a JSON object"),
        }
    }
}

/// Set CE on a packet a discipline marked (only an ECN-capable one may be).
#[inline]
fn mark<P: PathPacket>(p: &mut P) {
    debug_assert!(p.ecn_capable(), "a discipline marked a packet that is not ECN-capable");
    p.mark_ce();
}

/// A buffer: its packets under the discipline that judges them.
pub struct Queue<P> {
    pub(crate) policy: Policy<P>,
}

impl<P: PathPacket> Queue<P> {
    /// A buffer running `discipline` with its settings from `settings`.
    pub fn new(discipline: QueueDiscipline, settings: &QueueSettings, b: Buffer) -> Self {
        Self { policy: Policy::new(discipline, settings, &b) }
    }

    /// Offer a packet arriving at `now`: queued (`Pass`), queued with CE set (`Mark`), or
    /// not (`Drop`: the discipline's verdict, or no room). Packets already waiting that the
    /// discipline drops to make room (FQ-CoDel's fat flow) go to `dropped`.
    // Always inlined (into `Link::offer`): the compiler kept it out of line, a call per
    // packet offered; only the match and drop-tail's few lines come along.
    #[inline(always)]
    pub fn admit(&mut self, now: Time, p: P, dropped: impl FnMut(P)) -> Verdict {
        self.policy.enqueue(now, p, dropped)
    }

    /// `admit` under a discipline that drops no packet already waiting (the tests' shorthand).
    #[cfg(test)]
    pub fn enqueue(&mut self, now: Time, p: P) -> Verdict {
        self.admit(now, p, |_| panic!("a packet already waiting was dropped"))
    }

    /// The next packet to send at `now` and its verdict (`Pass` or `Mark`, CE then set);
    /// each head the discipline drops on the way goes to `dropped`.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Time, dropped: impl FnMut(P)) -> Option<(P, Verdict)> {
        self.policy.dequeue(now, dropped)
    }

    pub fn len_packets(&self) -> usize {
        self.policy.len_packets()
    }

    pub fn len_bytes(&self) -> u64 {
        self.policy.len_bytes()
    }

    /// Packets waiting that satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        self.policy.count(pred)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_packet::{ect, pkt, Pkt};
    use crate::CoDelSpec;

    /// A buffer of `limit` running `discipline` with default settings, for 1500-byte packets
    /// at 12 Mbit/s (1 ms each).
    pub fn queue(discipline: QueueDiscipline, limit: Limit) -> Queue<Pkt> {
        let buffer = Buffer { limit, wire_bytes: 1500, rate_bps: 12_000_000, rng: Rng::new(0, 0) };
        Queue::new(discipline, &QueueSettings::default(), buffer)
    }

    #[test]
    fn verdicts_decide_what_is_queued_marked_and_sent() {
        // The probe discipline (probe.rs) marks an ECT arrival that finds 2 or more packets
        // waiting and drops any other such arrival; at departure it marks (or drops) a
        // packet that waited 1 ms or more.
        let mut q = queue(QueueDiscipline::Probe, Limit::Packets(3));
        assert_eq!((q.enqueue(0, pkt(100)), q.enqueue(0, ect(100))), (Verdict::Pass, Verdict::Pass));
        // Two waiting: the ECT arrival is queued with CE, the other one is dropped.
        assert_eq!((q.enqueue(0, ect(100)), q.enqueue(0, pkt(100))), (Verdict::Mark, Verdict::Drop));
        assert_eq!(q.count(|p| p.ce), 1);
        // Three waiting fill the limit: the discipline would mark, but there is no room.
        assert_eq!(q.enqueue(0, ect(100)), Verdict::Drop);
        // At 1 ms all three waited 1 ms: the plain head is dropped, the ECT one behind it
        // leaves with CE set.
        let mut dropped = Vec::new();
        assert_eq!(q.dequeue(1_000_000, |p| dropped.push(p)), Some((Pkt { ce: true, ..ect(100) }, Verdict::Mark)));
        assert_eq!(dropped, vec![pkt(100)]);
        // Before 1 ms of waiting a packet passes; an empty queue sends nothing.
        q.enqueue(1_500_000, pkt(100));
        assert_eq!(q.dequeue(1_600_000, |_| panic!("no drop")), Some((Pkt { ce: true, ..ect(100) }, Verdict::Mark)));
        assert_eq!(q.dequeue(1_600_000, |_| panic!("no drop")), Some((pkt(100), Verdict::Pass)));
        assert_eq!(q.dequeue(1_600_000, |_| panic!("no drop")), None);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn settings_name_every_table_and_its_times() {
        let s = QueueSettings::default();
        let names = QueueSettings::table_names();
        assert!(names.contains(&"codel".to_string()) && names.contains(&"red".to_string()), "{names:?}");
        // CoDel's defaults, RFC 8289: target 5 ms, interval 100 ms; RED has no times.
        let times = s.times("bottleneck");
        let of = |table: &str| {
            times.iter().filter(|(k, _)| k.starts_with(&format!("bottleneck.{table}."))).cloned().collect::<Vec<_>>()
        };
        assert_eq!(
            of("codel"),
            vec![
                ("bottleneck.codel.target".to_string(), 5_000_000),
                ("bottleneck.codel.interval".to_string(), 100_000_000)
            ]
        );
        assert!(of("red").is_empty());
        // An optional time (FQ-CoDel's ce_threshold, off by default) is a key a file may
        // give as a time, but no duration until it is set.
        let key = "bottleneck.fq_codel.ce_threshold".to_string();
        assert!(s.time_keys("bottleneck").contains(&(key.clone(), None)));
        assert!(!times.iter().any(|(k, _)| *k == key));
        let on =
            QueueSettings { fq_codel: fq_codel::FqCoDelSpec { ce_threshold_ns: Some(1_000_000), ..s.fq_codel }, ..s };
        assert!(on.time_keys("bottleneck").contains(&(key.clone(), Some(1_000_000))));
        assert!(on.times("bottleneck").contains(&(key, 1_000_000)));
        let bad = QueueSettings { codel: CoDelSpec { interval_ns: 0, ..s.codel }, ..s };
        assert_eq!(
            bad.validate("fwd_link.settings").unwrap_err(),
            "fwd_link.settings.codel.interval is 0; it must be > 0"
        );
    }
}
