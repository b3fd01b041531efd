//! Results in columns. Each table is declared once, below: its columns, their types and
//! their meaning. The recorder fills the struct the declaration makes; the bindings hand
//! every table to Python column by column through [`Table::into_columns`], and the pandas
//! frames are built from what arrives, so a new column is one line here plus the line in
//! `sim/recording.rs` that fills it.

/// One column of values, as the bindings receive it.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Integers with gaps (e.g. a completion time that never came).
    OptU64(Vec<Option<u64>>),
}

macro_rules! column_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(impl From<Vec<$ty>> for Column {
            fn from(v: Vec<$ty>) -> Self {
                Column::$variant(v)
            }
        })*
    };
}
column_from!(u8 => U8, u32 => U32, u64 => U64, i64 => I64, f64 => F64, bool => Bool, String => Str,
             Option<u64> => OptU64);

/// A table of equal-length columns.
pub trait Table {
    /// Its name in the results (`res.flows`, `flows.parquet`).
    const NAME: &'static str;
    /// (column, meaning) in order.
    const COLUMNS: &'static [(&'static str, &'static str)];
    fn into_columns(self) -> Vec<(&'static str, Column)>;
}

/// Declares a table: a struct of `Vec` columns, its column list and its conversion.
macro_rules! table {
    ($(#[doc = $tdoc:literal])* $name:ident => $key:literal {
        $($(#[doc = $doc:literal])+ $col:ident: $ty:ty,)+
    }) => {
        $(#[doc = $tdoc])*
        #[derive(Default, Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[doc = $doc])+ pub $col: Vec<$ty>,)+
        }

        impl Table for $name {
            const NAME: &'static str = $key;
            const COLUMNS: &'static [(&'static str, &'static str)] =
                &[$((stringify!($col), concat!($($doc),+)),)+];
            fn into_columns(self) -> Vec<(&'static str, Column)> {
                vec![$((stringify!($col), Column::from(self.$col)),)+]
            }
        }
    };
}

table! {
    /// Per-flow samples, one row per long-lived flow per interval.
    FlowSamples => "flows" {
        /// Sample time, ns.
        t_ns: u64,
        /// Flow index (long-lived flows, in plan order).
        flow: u32,
        /// Congestion window, segments.
        cwnd: u32,
        /// Slow-start threshold, segments (0x7fffffff while infinite).
        ssthresh: u32,
        /// Smoothed RTT, us.
        srtt_us: u32,
        /// Bits per second of this flow's data leaving the bottleneck in the interval.
        throughput_bps: f64,
        /// Bits per second of payload delivered in order to the receiver in the interval.
        goodput_bps: f64,
        /// Buffer drops of this flow's data in the interval.
        drops: u32,
        /// Retransmissions in the interval.
        retransmits: u32,
        /// Linux congestion-avoidance state (`CaState` as u8: open, disorder, cwr, recovery, loss).
        ca_state: u8,
    }
}

table! {
    /// Link samples (forward direction), one row per link per interval.
    LinkSamples => "link" {
        /// Sample time, ns.
        t_ns: u64,
        /// The link (its index in the scenario's links; `link_totals` has its name).
        link: u32,
        /// Packets in the buffer.
        queue_packets: u32,
        /// Bytes in the buffer.
        queue_bytes: u64,
        /// Congestion drops in the interval.
        drops: u32,
        /// Packets the queue discipline marked CE in the interval (0 under one that never marks).
        marks: u32,
        /// Random (non-congestion) losses in the interval.
        random_losses: u32,
        /// Fraction of the interval the link spent transmitting.
        utilization: f64,
    }
}

table! {
    /// Every change of a long-lived flow's cwnd or ssthresh (with `record.cwnd = "changes"`).
    CwndChanges => "cwnd" {
        /// Time of the change, ns.
        t_ns: u64,
        /// Flow index.
        flow: u32,
        /// Congestion window after the change, segments.
        cwnd: u32,
        /// Slow-start threshold after the change, segments.
        ssthresh: u32,
    }
}

table! {
    /// Every RTT sample given to a long-lived flow's algorithm (with `record.rtt_samples`).
    RttSamples => "rtt" {
        /// Time of the ACK, ns.
        t_ns: u64,
        /// Flow index.
        flow: u32,
        /// The sample, us.
        rtt_us: i64,
    }
}

table! {
    /// Each long-lived flow's algorithm state per interval (with `record.cc_state`): one row
    /// per variable its algorithm reports (`CongestionControl::vars`, as `cubiclab replay`
    /// shows them: CUBIC's W_max, K, epoch start, target; BBR's mode, bandwidth, min RTT,
    /// gains; ...). ssthresh and ca_state are in the flows table.
    CcState => "cc_state" {
        /// Sample time, ns.
        t_ns: u64,
        /// Flow index.
        flow: u32,
        /// The variable's name, as the algorithm's `vars` reports it.
        var: String,
        /// Its value, as the algorithm's source keeps it: the Linux ports in the kernel's units (CUBIC's K in 1/1024 s and epoch_start in jiffies; BBR's bw in packets/us x 2^24, gains x 256, mode 0-3 as `enum bbr_mode`).
        value: f64,
    }
}

table! {
    /// Congestion events of long-lived flows.
    LossEvents => "losses" {
        /// Time of the event, ns.
        t_ns: u64,
        /// Flow index.
        flow: u32,
        /// Window just before the event, segments.
        cwnd: u32,
        /// Whether a retransmission timeout (else fast retransmit).
        timeout: bool,
    }
}

table! {
    /// Totals of each long-lived flow at the end of the run.
    FlowTotals => "totals" {
        /// Flow index.
        flow: u32,
        /// Group label.
        group: String,
        /// Algorithm name.
        algorithm: String,
        /// Which way its data crosses its links: "forward" or "reverse".
        direction: String,
        /// The links its data crosses, by name, in the order it crosses them, joined by ">".
        route: String,
        /// Two-way propagation delay, ns.
        rtt_ns: u64,
        /// Start time (jitter included), ns.
        start_ns: u64,
        /// Data segments sent, retransmissions included.
        segments_sent: u64,
        /// Retransmitted segments.
        retransmits: u64,
        /// Retransmission timeouts.
        timeouts: u64,
        /// Congestion events (fast recovery or timeout).
        loss_events: u64,
        /// Buffer drops of its data.
        drops: u64,
        /// Random losses of its data.
        random_losses: u64,
        /// Payload bytes delivered in order.
        delivered_bytes: u64,
        /// Completion time of a flow with a byte count (ns after its start), if it completed.
        fct_ns: Option<u64>,
        /// Whether the flow negotiated ECN (the group's `ecn`, or an algorithm that needs it).
        ecn: bool,
        /// ECN reductions: CWR entered on an ACK with ECE.
        ecn_reductions: u64,
        /// CE-marked data segments its receiver got.
        ce_marks: u64,
    }
}

table! {
    /// Completed background web objects.
    WebObjects => "web" {
        /// Time the object was requested, ns.
        t_ns: u64,
        /// Session (flow slot) index.
        session: u32,
        /// Web group label.
        group: String,
        /// Object size, bytes.
        bytes: u64,
        /// Request to last byte acknowledged (one RTT of handshake included), ns.
        fct_ns: u64,
    }
}

table! {
    /// Each link direction over the whole run, one row each (forward, then reverse, per link).
    LinkTotals => "link_totals" {
        /// The link (its index in the scenario's links).
        link: u32,
        /// Its name ("bottleneck" for the `[bottleneck]` shorthand).
        name: String,
        /// "forward" (the data of routes that name it) or "reverse" (their ACKs).
        direction: String,
        /// Bytes that finished serialization.
        tx_bytes: u64,
        /// Bytes it could have carried: its rate, or its schedule's, over the run.
        capacity_bytes: u64,
        /// Congestion drops.
        drops: u64,
        /// Packets the queue discipline marked CE.
        marks: u64,
        /// Random losses.
        random_losses: u64,
    }
}

table! {
    /// Whole-run counters, one row.
    RunTotals => "run" {
        /// Events processed.
        events: u64,
        /// Simulated time reached, ns.
        sim_ns: u64,
        /// Bytes that finished serialization on the first link's forward direction (the bottleneck).
        bottleneck_tx_bytes: u64,
        /// Bytes the forward bottleneck could have carried: its rate, or its schedule's, over the run.
        bottleneck_capacity_bytes: u64,
        /// Congestion drops on the forward bottleneck.
        bottleneck_drops: u64,
        /// Random losses on the forward bottleneck.
        bottleneck_random_losses: u64,
        /// Payload bytes the forward web sessions delivered.
        web_forward_delivered_bytes: u64,
    }
}

/// Everything a run recorded.
#[derive(Default, Debug, Clone)]
pub struct Results {
    pub flows: FlowSamples,
    pub link: LinkSamples,
    pub cwnd: CwndChanges,
    pub rtt: RttSamples,
    pub cc_state: CcState,
    pub losses: LossEvents,
    pub totals: FlowTotals,
    pub web: WebObjects,
    pub link_totals: LinkTotals,
    pub run: RunTotals,
}

impl Results {
    /// Every table by name, column by column (what the bindings hand to Python).
    pub fn into_tables(self) -> Vec<(&'static str, Vec<(&'static str, Column)>)> {
        fn t<T: Table>(table: T) -> (&'static str, Vec<(&'static str, Column)>) {
            (T::NAME, table.into_columns())
        }
        vec![
            t(self.flows),
            t(self.link),
            t(self.cwnd),
            t(self.rtt),
            t(self.cc_state),
            t(self.losses),
            t(self.totals),
            t(self.web),
            t(self.link_totals),
            t(self.run),
        ]
    }

    /// (table, [(column, meaning)]) of every table, for the documentation.
    pub fn schema() -> Vec<(&'static str, &'static [(&'static str, &'static str)])> {
        fn s<T: Table>() -> (&'static str, &'static [(&'static str, &'static str)]) {
            (T::NAME, T::COLUMNS)
        }
        vec![
            s::<FlowSamples>(),
            s::<LinkSamples>(),
            s::<CwndChanges>(),
            s::<RttSamples>(),
            s::<CcState>(),
            s::<LossEvents>(),
            s::<FlowTotals>(),
            s::<WebObjects>(),
            s::<LinkTotals>(),
            s::<RunTotals>(),
        ]
    }
}
