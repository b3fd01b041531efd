//! The part of Linux `struct tcp_sock` that congestion modules see, and the window helpers
//! of `net/ipv4/tcp_cong.c` (Linux 6.x) that every module shares.

/// Linux `TCP_INFINITE_SSTHRESH`: no threshold yet, slow start until the first loss.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// Linux `TCP_INIT_CWND` (RFC 6928).
pub const TCP_INIT_CWND: u32 = 10;

/// Linux `enum tcp_ca_state`, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

impl CaState {
    /// Every state, in the kernel's order (the index is the `u8` value).
    pub const ALL: [CaState; 5] = [CaState::Open, CaState::Disorder, CaState::Cwr, CaState::Recovery, CaState::Loss];

    /// The state's one spelling in results and traces: the kernel's `TCP_CA_<Name>` in
    /// lower case ("open", "disorder", "cwr", "recovery", "loss").
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// Linux `enum tcp_ca_event`, the events a module may react to in `cwnd_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (restart after idle).
    TxStart,
    /// Congestion window restart after idle (RFC 2861).
    CwndRestart,
    /// End of congestion window reduction (CWR or Recovery completed).
    CompleteCwr,
    /// A retransmission timeout fired (`tcp_enter_loss`).
    Loss,
    /// The receiver got a CE-marked segment (`tcp_ecn_check_ce`, only for an algorithm that
    /// needs ECN).
    EcnIsCe,
    /// The receiver got an ECT segment without CE (`tcp_ecn_check_ce`, likewise).
    EcnNoCe,
}

/// What `pkts_acked` learns from one ACK (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Segments newly acknowledged by this ACK.
    pub pkts_acked: u32,
    /// RTT sample in microseconds from a never-retransmitted segment; negative when none.
    pub rtt_us: i64,
    /// Linux 6.x: bytes delivered since the newest segment this ACK delivered was sent,
    /// `mss_cache * (tp->delivered - rs->prior_delivered)` (`tcp_clean_rtx_queue`), read by
    /// NV as what was in flight. u32: wraps as the kernel's product.
    pub in_flight: u32,
}

/// The flags of `in_ack_event` (Linux `enum tcp_ca_ack_event_flags`, `CA_ACK_*`, which
/// `tcp_in_ack_event` maps from `FLAG_*`) that the host knows; `CA_ACK_WIN_UPDATE` is not
/// modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEvent {
    /// `CA_ACK_SLOWPATH`: the ACK took `tcp_rcv_established`'s slow path (header prediction
    /// failed: SACK blocks or another option length, a window change, ECE), where `tcp_ack`
    /// tags SACKs and counts duplicate ACKs.
    pub slow_path: bool,
    /// `CA_ACK_ECE`: the ACK carried ECE on an ECN connection (`FLAG_ECE`,
    /// `tcp_ecn_rcv_ecn_echo`).
    pub ece: bool,
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`, filled by `tcp_rate.c` and
/// `tcp_ack`), handed to [`crate::CongestionControl::cong_control`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `tp->delivered` when the newest packet this ACK covers was sent.
    pub prior_delivered: u32,
    /// Segments delivered over the sampling interval; -1 when the sample is invalid.
    pub delivered: i32,
    /// The sampling interval, microseconds (max of the send and the ACK phase); -1 if invalid.
    pub interval_us: i64,
    /// RTT of the newest segment ACKed, microseconds; -1 when none.
    pub rtt_us: i64,
    /// Segments newly marked lost by this ACK.
    pub losses: u32,
    /// Segments newly delivered (ACKed or SACKed) by this ACK.
    pub acked_sacked: u32,
    /// `tcp_packets_in_flight()` before this ACK.
    pub prior_in_flight: u32,
    /// The newest packet covered was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// The newest packet covered was a retransmission.
    pub is_retrans: bool,
    /// The ACK was probably delayed by the receiver (`FLAG_ACK_MAYBE_DELAYED`).
    pub is_ack_delayed: bool,
    /// BBRv3's TCP core (google/bbr v3 `tcp_rate.c`): packets in flight just after the
    /// newest packet covered was sent (`tx_in_flight`, from `tcp_set_tx_in_flight`).
    pub tx_in_flight: u32,
    /// Likewise: packets marked lost since that packet was sent (`tp->lost - tx.lost`); 0
    /// when the sample is invalid.
    pub lost: i32,
    /// Likewise: packets delivered with ECE since then (`tp->delivered_ce -
    /// tx.delivered_ce`, 20 bits); 0 when the sample is invalid.
    pub delivered_ce: i32,
    /// Likewise: the ACK carried ECE on an ECN connection (`FLAG_ECE`).
    pub is_ece: bool,
}

/// Window state that Linux keeps in `tcp_sock` and that congestion modules read and write.
///
/// The embedding transport owns it and keeps the non-window fields (`snd_una`, `srtt_us`,
/// `cwnd_limited`, ...) current before each hook. Sequence numbers count segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpState {
    /// `snd_cwnd`: congestion window, segments.
    pub cwnd: u32,
    /// `snd_cwnd_cnt`: ACKed segments credited toward the next congestion-avoidance increment.
    pub cwnd_cnt: u32,
    /// `snd_ssthresh`: slow-start threshold, segments.
    pub ssthresh: u32,
    /// `snd_cwnd_clamp`: upper bound of `cwnd`.
    pub cwnd_clamp: u32,
    /// `prior_cwnd`: window when the last congestion event began (for undo).
    pub prior_cwnd: u32,
    /// `prior_ssthresh`: threshold before the last congestion event (for undo).
    pub prior_ssthresh: u32,
    /// `snd_una`: first unacknowledged segment.
    pub snd_una: u32,
    /// `snd_nxt`: next segment to send.
    pub snd_nxt: u32,
    /// Congestion state (`icsk_ca_state`).
    pub ca_state: CaState,
    /// `tcp_is_cwnd_limited()`: the sender used its window in the last round.
    pub cwnd_limited: bool,
    /// `tp->is_cwnd_limited`, the flag itself (`tcp_cwnd_validate`), without
    /// `tcp_is_cwnd_limited`'s slow-start allowance; kept current for `cong_control`.
    pub is_cwnd_limited: bool,
    /// `srtt_us >> 3`: smoothed RTT in microseconds, 0 before the first sample.
    pub srtt_us: u32,
    /// `lsndtime`: time of the last transmission, nanoseconds.
    pub lsndtime_ns: u64,
    /// `sk_pacing_rate`: bytes per second, 0 when unknown.
    pub pacing_rate: u64,
    /// `sk_pacing_status != SK_PACING_NONE`: the qdisc or the stack paces packets.
    pub paced: bool,
    /// `sk_gso_max_size`: bytes.
    pub gso_max_size: u32,
    /// `mss_cache`: bytes of payload per segment.
    pub mss: u32,
    /// `delivered`: segments delivered (cumulatively ACKed or SACKed) so far (`tcp_rate.c`).
    pub delivered: u32,
    /// `lost`: segments marked lost so far.
    pub lost: u32,
    /// `delivered_ce`: segments delivered by ACKs that carried ECE (`tcp_count_delivered`).
    pub delivered_ce: u32,
    /// `app_limited`: 0, or the `delivered` count at which the last application-limited
    /// stretch ends (`tcp_rate_check_app_limited`); an algorithm may set it (BBR's PROBE_RTT).
    pub app_limited: u32,
    /// `delivered_mstamp`: time of the last delivery, microseconds.
    pub delivered_mstamp_us: u64,
    /// `tcp_packets_in_flight()` when the hook runs.
    pub in_flight: u32,
    /// `tcp_wstamp_ns`: earliest departure time of the next packet (EDT pacing), ns.
    pub wstamp_ns: u64,
    /// `tcp_min_rtt()`: the minimum RTT seen, microseconds; `u32::MAX` before any sample.
    pub min_rtt_us: u32,
    /// `sk_pacing_shift`: a TSO burst holds at most `pacing_rate >> shift` bytes (1 ms at 10).
    pub pacing_shift: u32,
    /// `sk_max_pacing_rate`: bytes per second (`SO_MAX_PACING_RATE`), `u64::MAX` when unset.
    pub max_pacing_rate: u64,
    /// `rx_opt.rcv_tsval`: the TSval of the ACK being processed (the peer's clock); 0, with
    /// `rcv_tsecr`, when the host carries no timestamps (the simulator's do not).
    pub rcv_tsval: u32,
    /// `rx_opt.rcv_tsecr`: the TSval of ours that ACK echoes, less the connection's
    /// `tsoffset` (`tcp_parse_aligned_timestamp`): our `tcp_time_stamp_ts` when we sent it.
    pub rcv_tsecr: u32,
    /// `sacked_out`: segments SACKed above `snd_una`, as `pkts_acked` sees it (0 without
    /// SACK, and where the host does not tell: the replay).
    pub sacked_out: u32,
    /// Set by `cong_avoid` to call `tcp_enter_cwr` (CDG's backoff): the host enters CWR
    /// right after the hook, as the kernel does inside it, and clears the flag.
    pub enter_cwr: bool,
}

impl Default for TcpState {
    fn default() -> Self {
        Self {
            cwnd: TCP_INIT_CWND,
            cwnd_cnt: 0,
            ssthresh: TCP_INFINITE_SSTHRESH,
            cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            snd_una: 0,
            snd_nxt: 0,
            ca_state: CaState::Open,
            cwnd_limited: true,
            is_cwnd_limited: true,
            srtt_us: 0,
            lsndtime_ns: 0,
            pacing_rate: 0,
            paced: false,
            gso_max_size: 65536,
            mss: 1448,
            delivered: 0,
            lost: 0,
            delivered_ce: 0,
            app_limited: 0,
            delivered_mstamp_us: 0,
            in_flight: 0,
            wstamp_ns: 0,
            min_rtt_us: u32::MAX,
            pacing_shift: 10,
            max_pacing_rate: u64::MAX,
            rcv_tsval: 0,
            rcv_tsecr: 0,
            sacked_out: 0,
            enter_cwr: false,
        }
    }
}

impl TcpState {
    /// `tcp_in_slow_start()`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tp->app_limited = (tp->delivered + in_flight) ? : 1`: application-limited until the
    /// `in_flight` packets now in flight are delivered (0 means not limited, so at least 1).
    #[inline]
    pub fn set_app_limited(&mut self, in_flight: u32) {
        // wraps: u32 delivery counts.
        self.app_limited = match self.delivered.wrapping_add(in_flight) {
            0 => 1,
            n => n,
        };
    }

    /// `tcp_current_ssthresh()`: the threshold to restore if the next reduction is undone.
    #[inline]
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
}

/// Linux `tcp_slow_start()`: grow `cwnd` by one per ACKed segment up to `ssthresh`;
/// return the ACKed segments left over for congestion avoidance.
#[inline]
pub fn tcp_slow_start(tcp: &mut TcpState, acked: u32) -> u32 {
    let cwnd = tcp.cwnd.saturating_add(acked).min(tcp.ssthresh);
    let left = acked - (cwnd - tcp.cwnd.min(cwnd));
    tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
    left
}

/// Linux `tcp_cong_avoid_ai()`: add one segment to `cwnd` per `w` ACKed segments,
/// carrying the remainder in `cwnd_cnt`.
#[inline]
pub fn tcp_cong_avoid_ai(tcp: &mut TcpState, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits earned while `w` was larger are applied gently: one segment, not a burst.
    if tcp.cwnd_cnt >= w {
        tcp.cwnd_cnt = 0;
        tcp.cwnd = tcp.cwnd.saturating_add(1);
    }
    tcp.cwnd_cnt = tcp.cwnd_cnt.saturating_add(acked);
    if tcp.cwnd_cnt >= w {
        let delta = tcp.cwnd_cnt / w;
        tcp.cwnd_cnt -= delta * w;
        tcp.cwnd = tcp.cwnd.saturating_add(delta);
    }
    tcp.cwnd = tcp.cwnd.min(tcp.cwnd_clamp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        // cwnd 10, ssthresh 12, 5 ACKed: cwnd reaches 12 using 2, 3 are left for CA.
        let mut tcp = TcpState { ssthresh: 12, ..TcpState::default() };
        assert_eq!(tcp_slow_start(&mut tcp, 5), 3);
        assert_eq!(tcp.cwnd, 12);
    }

    #[test]
    fn cong_avoid_ai_adds_one_per_window() {
        // w = cwnd = 10: ten single ACKs add exactly one segment and clear the credit.
        let mut tcp = TcpState { ssthresh: 5, ..TcpState::default() };
        for _ in 0..9 {
            tcp_cong_avoid_ai(&mut tcp, 10, 1);
        }
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (10, 9));
        tcp_cong_avoid_ai(&mut tcp, 10, 1);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (11, 0));
        // A stretch ACK of 25 with w = 11 adds 2 and keeps 3.
        tcp_cong_avoid_ai(&mut tcp, 11, 25);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (13, 3));
    }

    #[test]
    fn cong_avoid_ai_applies_stale_credit_as_one() {
        // cnt 50 earned under w = 100, now w = 10: one segment, not five (Linux comment).
        let mut tcp = TcpState { cwnd_cnt: 50, ..TcpState::default() };
        tcp_cong_avoid_ai(&mut tcp, 10, 1);
        assert_eq!((tcp.cwnd, tcp.cwnd_cnt), (11, 1));
    }

    #[test]
    fn current_ssthresh_is_three_quarters_cwnd_when_open() {
        let tcp = TcpState { cwnd: 100, ssthresh: 20, ..TcpState::default() };
        assert_eq!(tcp.current_ssthresh(), 75);
    }
}
