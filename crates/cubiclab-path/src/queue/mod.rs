//! Queue disciplines of a link's buffer. A closed enum, so the per-packet path has no
//! dynamic dispatch.

pub mod codel;
pub mod droptail;
pub mod red;

use crate::rng::Rng;
use crate::{PathPacket, Time};
pub use codel::{CoDel, CoDelSpec};
pub use droptail::DropTail;
pub use red::{Red, RedSpec};

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

/// Which discipline a buffer runs (file: `bottleneck.queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueDiscipline {
    DropTail,
    Red,
    CoDel,
}

/// The settings of every discipline that has some, one table each, named after it (file:
/// `bottleneck.red`, `bottleneck.codel`). Only the running discipline's matter, but all
/// are checked. A new discipline with settings adds its table here and nowhere else: the
/// scenario, the emulator's configuration and the Python edge all carry this struct whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default)]
pub struct QueueSettings {
    pub red: RedSpec,
    pub codel: CoDelSpec,
}

impl QueueSettings {
    /// Check every table, also those of disciplines that are off: a typo there is a typo.
    /// `at` is the key path of the tables' parent (`bottleneck`).
    pub fn validate(&self, at: &str) -> Result<(), String> {
        self.red.validate(&format!("{at}.red"))?;
        self.codel.validate(&format!("{at}.codel"))
    }

    /// The tables' names, as the scenario file spells them.
    pub fn table_names() -> Vec<String> {
        match serde_json::to_value(QueueSettings::default()) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => unreachable!("QueueSettings serialises to a JSON object"),
        }
    }
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

/// A queue discipline with its packets.
pub enum Queue<P> {
    DropTail(DropTail<P>),
    Red(Red<P>),
    CoDel(CoDel<P>),
}

impl<P: PathPacket> Queue<P> {
    /// A buffer running `discipline` with its settings from `settings`.
    pub fn new(discipline: QueueDiscipline, settings: &QueueSettings, b: Buffer) -> Self {
        match discipline {
            QueueDiscipline::DropTail => Queue::DropTail(DropTail::new(b.limit)),
            QueueDiscipline::Red => {
                let packet_ns = b.wire_bytes as f64 * 8e9 / b.rate_bps as f64;
                Queue::Red(Red::new(settings.red, b.limit, packet_ns, b.rng))
            }
            QueueDiscipline::CoDel => Queue::CoDel(CoDel::new(settings.codel, b.limit, b.wire_bytes)),
        }
    }

    /// Offer a packet; false if it was dropped.
    // Always inlined (into `Link::offer`): the compiler kept it out of line, a call per
    // packet offered; only the match and drop-tail's few lines come along.
    #[inline(always)]
    pub fn enqueue(&mut self, now: Time, p: P) -> bool {
        match self {
            Queue::DropTail(q) => q.enqueue(now, p),
            Queue::Red(q) => q.enqueue(now, p),
            Queue::CoDel(q) => q.enqueue(now, p),
        }
    }

    #[inline]
    pub fn dequeue(&mut self, now: Time) -> Option<P> {
        match self {
            Queue::DropTail(q) => q.dequeue(now),
            Queue::Red(q) => q.dequeue(now),
            Queue::CoDel(q) => q.dequeue(now),
        }
    }

    /// Packets the discipline dropped at dequeue since the last call (CoDel), handed to `f`.
    #[inline]
    pub fn drain_dropped(&mut self, mut f: impl FnMut(P)) {
        if let Queue::CoDel(q) = self {
            for p in q.dropped.drain(..) {
                f(p);
            }
        }
    }

    pub fn len_packets(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len_packets(),
            Queue::Red(q) => q.len_packets(),
            Queue::CoDel(q) => q.len_packets(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.len_bytes(),
            Queue::Red(q) => q.len_bytes(),
            Queue::CoDel(q) => q.len_bytes(),
        }
    }

    /// Packets waiting that satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&P) -> bool) -> usize {
        match self {
            Queue::DropTail(q) => q.iter().filter(|p| pred(p)).count(),
            Queue::Red(q) => q.iter().filter(|p| pred(p)).count(),
            Queue::CoDel(q) => q.iter().filter(|p| pred(p)).count(),
        }
    }
}
