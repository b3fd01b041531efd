//! Results in columns: interval samples per flow and for the bottleneck, optional traces
//! of every cwnd change and every RTT sample, and per-flow totals.

/// Per-flow samples, one row per flow per interval.
#[derive(Default, Debug, Clone)]
pub struct FlowSamples {
    pub t_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<u32>,
    pub ssthresh: Vec<u32>,
    pub srtt_us: Vec<u32>,
    /// Bits per second of this flow's data leaving the bottleneck in the interval.
    pub throughput_bps: Vec<f64>,
    /// Bits per second of payload delivered in order to the receiver in the interval.
    pub goodput_bps: Vec<f64>,
    pub drops: Vec<u32>,
    pub retransmits: Vec<u32>,
    pub ca_state: Vec<u8>,
}

/// Bottleneck samples, one row per interval.
#[derive(Default, Debug, Clone)]
pub struct LinkSamples {
    pub t_ns: Vec<u64>,
    pub queue_packets: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub drops: Vec<u32>,
    /// Random (non-congestion) losses in the interval.
    pub random_losses: Vec<u32>,
    /// Fraction of the interval the link spent transmitting.
    pub utilization: Vec<f64>,
}

/// Optional event traces.
#[derive(Default, Debug, Clone)]
pub struct Traces {
    pub cwnd_t_ns: Vec<u64>,
    pub cwnd_flow: Vec<u32>,
    pub cwnd: Vec<u32>,
    pub cwnd_ssthresh: Vec<u32>,
    pub rtt_t_ns: Vec<u64>,
    pub rtt_flow: Vec<u32>,
    pub rtt_us: Vec<i64>,
    /// Congestion events: time, flow, window just before, and whether a timeout.
    pub loss_t_ns: Vec<u64>,
    pub loss_flow: Vec<u32>,
    pub loss_cwnd: Vec<u32>,
    pub loss_timeout: Vec<bool>,
}

/// Totals of one flow at the end of the run.
#[derive(Default, Debug, Clone)]
pub struct FlowTotals {
    pub flow: u32,
    pub group: String,
    pub algorithm: String,
    pub rtt_ns: u64,
    pub start_ns: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub loss_events: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub delivered_bytes: u64,
    /// Completion time of a flow with a byte count (ns after its start), if it completed.
    pub fct_ns: Option<u64>,
}

/// Completed background web objects.
#[derive(Default, Debug, Clone)]
pub struct WebObjects {
    /// Time the object was requested.
    pub t_ns: Vec<u64>,
    pub session: Vec<u32>,
    pub group: Vec<u32>,
    pub bytes: Vec<u64>,
    /// Request to last byte acknowledged (includes one RTT of handshake).
    pub fct_ns: Vec<u64>,
}

#[derive(Default, Debug, Clone)]
pub struct Results {
    pub flows: FlowSamples,
    pub link: LinkSamples,
    pub traces: Traces,
    pub totals: Vec<FlowTotals>,
    pub web: WebObjects,
    /// Payload bytes the forward web sessions delivered.
    pub web_forward_delivered_bytes: u64,
    pub events: u64,
    pub sim_ns: u64,
    /// Bytes that finished serialization on the bottleneck over the run.
    pub bottleneck_tx_bytes: u64,
    pub bottleneck_drops: u64,
    pub bottleneck_random_losses: u64,
}
