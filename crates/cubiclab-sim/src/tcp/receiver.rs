//! The receiving end as Linux 6.x acknowledges (`net/ipv4/tcp_input.c`): cumulative ACKs
//! with up to three SACK blocks, the most recently changed first, and a D-SACK for a
//! duplicate (see [`Receiver::sack_option`]); the timestamp echo of RFC 7323 (`ts_recent`
//! from the segment at the left edge, `tcp_replace_ts_recent`); in order, an ACK once
//! more than one full segment is unacknowledged (`__tcp_ack_snd_check`) or while in
//! quick-ACK mode, else a delayed ACK after `ato`. Quick-ACK mode holds for
//! `rcv_wnd / (2 rcv_mss)` ACKs (at most 16) at the first data, after a gap longer than the
//! RTO (`tcp_event_data_recv`) and after a duplicate (`tcp_enter_quickack_mode`), and for
//! one more ACK whenever a segment grows the receive window (`tcp_grow_window`'s
//! `quick |= 1`, see `rcv_window`): while the window grows, every segment is ACKed. `ato`
//! follows the arrival gaps (`tcp_event_data_recv`), doubles when the delayed-ACK timer
//! fires (`tcp_delack_timer_handler`) and the timer waits at most max(RTT, `ato_min`)
//! (`tcp_send_delayed_ack`). Out-of-order arrivals and hole fills are acknowledged at once,
//! and so is a full-sized segment with PSH once the application has read it (Linux 6.6+:
//! `tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED, kept until an ACK leaves, and
//! `__tcp_cleanup_rbuf` ACKs when a read empties the receive queue while an ACK is
//! scheduled). The application reads at each segment, or once `read_lowat` bytes wait
//! (`SO_RCVLOWAT`, as the testbed's sink: [`Receiver::set_read_lowat`]); between reads a
//! PSH segment waits for the next segment or the timer as any other.
//!
//! With ECN (RFC 3168, negotiated: [`Receiver::set_ecn`]) a CE mark is echoed as ECE on
//! every ACK until a segment with CWR arrives (`tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`);
//! the first CE after a CWR, and a segment with CWR, are acknowledged at once
//! (`tcp_enter_quickack_mode(sk, 2)`, `ICSK_ACK_NOW`); a Not-ECT segment after ECT ones (a
//! retransmission) enters quick-ACK mode too. For an algorithm that needs ECN (DCTCP) ECE
//! follows [`CeEcho`] instead.
//!
//! With SACK compression on ([`Receiver::set_sack_compression`], Linux 4.18+) the ACKs of
//! out-of-order data past the first three of one `rcv_nxt` are held and sent as one per
//! timer (see `comp_sack`); the sender learns the same segments from fewer ACKs, which
//! matters to an algorithm counting ACKs (Westwood+). Off, every out-of-order segment is
//! ACKed at once, as Linux 2.6 to 4.17 did.
//!
//! Not modelled: PAWS (the simulated paths never deliver an older timestamp after a newer
//! one).

use cubiclab_cc::dctcp::CeEcho;
use cubiclab_cc::seq::{after, before};
use cubiclab_path::Ecn;

use crate::engine::Time;
use crate::packet::SackBlocks;
use crate::tcp::comp_sack::{self, Compressed, SackCompression};
use crate::tcp::rcv_window::RcvWindow;

/// What the receiver wants done after a segment arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Send an ACK now (with [`Receiver::sack_option`] and [`Receiver::ts_echo`]).
    Now,
    /// Hold the ACK; arm the delayed-ACK timer if it is not armed.
    Delay,
    /// Hold the ACK (SACK compression); arm the compressed-ACK timer for this time if
    /// given ([`Receiver::sack_timer_fired`]).
    Compress(Option<Time>),
    /// Send the ACK that SACK compression sent before this segment changed the blocks
    /// ([`Receiver::take_flushed`]), then this segment's now.
    FlushThenNow,
    /// The same, then hold this segment's under a new timer at this time.
    FlushThenCompress(Time),
}

/// Linux `TCP_MAX_QUICKACKS`.
const TCP_MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_NUM_SACKS`: SACK blocks the receiver remembers (three fit in an ACK).
const TCP_NUM_SACKS: usize = 4;
/// Linux `TCP_SACK_BLOCKS_EXPECTED`: the blocks a sender is counted on to see (SACK
/// compression sends what it holds before a change beyond them).
const TCP_SACK_BLOCKS_EXPECTED: usize = 2;

/// `tcp_sack_extend`: merge `[seq, end)` into `block` if they overlap or touch.
#[inline]
fn sack_extend(block: &mut (u32, u32), seq: u32, end: u32) -> bool {
    if !after(seq, block.1) && !after(block.0, end) {
        if after(block.0, seq) {
            block.0 = seq;
        }
        if after(end, block.1) {
            block.1 = end;
        }
        return true;
    }
    false
}

pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    /// `icsk_ack.quick`: ACKs still to send at once.
    quick: u32,
    /// `icsk_ack.ato`: the delayed-ACK timeout (0 before the first data).
    ato: Time,
    /// `icsk_ack.lrcvtime`: arrival of the last in-order segment.
    lrcvtime: Time,
    /// `TCP_ATO_MIN` (also `TCP_DELACK_MIN`).
    ato_min: Time,
    /// The path's RTT as the receiver measured it in the handshake, and its RTO.
    rtt: Time,
    rto: Time,
    /// The advertised window (`rcv_ssthresh`): it sizes the quick-ACK count, and its
    /// growth asks for an immediate ACK. `window0` is a new connection's.
    window: RcvWindow,
    window0: RcvWindow,
    /// Received segments above `rcv_nxt`, as a ring of bits indexed by segment number; how
    /// many, and one past the highest (meaningful while any are held).
    ooo: Vec<u64>,
    ooo_count: u32,
    ooo_end: u32,
    /// In-order segments not yet acknowledged.
    pending: u32,
    /// Segments per ACK when delaying (2 in Linux); 1 disables delayed ACKs.
    ack_every: u32,
    /// Time of the pending heap entry of the delayed-ACK timer, 0 when none.
    pub delack_deadline: Time,
    /// Arrival time of the oldest segment held for a delayed ACK.
    held_at: Time,
    /// Segments that arrived (including duplicates).
    pub arrived: u64,
    /// `selective_acks[]`, `num_sacks`: blocks above `rcv_nxt`, most recently changed first.
    sacks: [(u32, u32); TCP_NUM_SACKS],
    num_sacks: usize,
    /// `duplicate_sack[0]` while `rx_opt.dsack` is set: sent with the next ACK only.
    dsack: Option<(u32, u32)>,
    /// `rcv_wup`: `rcv_nxt` when the last ACK left; `ts_recent`: the TSval to echo.
    rcv_wup: u32,
    ts_recent: u32,
    /// `TCP_ECN_OK`: the connection negotiated ECN.
    ecn_ok: bool,
    /// `TCP_ECN_DEMAND_CWR`: ACKs carry ECE.
    demand_cwr: bool,
    /// `TCP_ECN_SEEN`: an ECT or CE segment arrived.
    ecn_seen: bool,
    /// The algorithm needs ECN (`tcp_ca_needs_ecn`): DCTCP's CE state sets ECE.
    ce_echo: Option<CeEcho>,
    /// An ACK to send before this segment's: (`rcv_nxt`, ECE) of the delayed ACK that
    /// [`CeEcho`] flushes when the CE state changes.
    prior_ack: Option<(u32, bool)>,
    /// CE-marked segments that arrived.
    pub ce_received: u64,
    /// In-order segments that wake the application (`SO_RCVLOWAT` in segments, at least
    /// 1), those delivered since its last read, and `ICSK_ACK_PUSHED`: a PSH segment
    /// arrived since the last ACK.
    read_lowat: u32,
    unread: u32,
    pushed: bool,
    /// SACK compression's state; None: off.
    comp: Option<SackCompression>,
    /// The SACK option of an ACK that SACK compression sent before this segment's blocks
    /// changed (`tcp_sack_compress_send_ack`), for the sim to send.
    flushed: Option<SackBlocks>,
}

impl Receiver {
    /// `ack_every` segments per ACK when delaying (1: no delayed ACKs), `ato_min` the
    /// shortest delayed-ACK timeout, `rtt` the path's round trip, `window` the receive
    /// window of a new connection.
    pub fn new(ack_every: u32, ato_min: Time, rtt: Time, window: RcvWindow) -> Self {
        Self {
            rcv_nxt: 0,
            quick: 0,
            ato: 0,
            lrcvtime: 0,
            ato_min,
            rtt,
            // tcp_rtt_estimator's first sample: rto = rtt + max(2 rtt, 200 ms).
            rto: rtt + (2 * rtt).max(200_000_000),
            window,
            window0: window,
            ooo: vec![0; 16],
            ooo_count: 0,
            ooo_end: 0,
            pending: 0,
            ack_every: ack_every.max(1),
            delack_deadline: 0,
            held_at: 0,
            arrived: 0,
            sacks: [(0, 0); TCP_NUM_SACKS],
            num_sacks: 0,
            dsack: None,
            rcv_wup: 0,
            ts_recent: 0,
            ecn_ok: false,
            demand_cwr: false,
            ecn_seen: false,
            ce_echo: None,
            prior_ack: None,
            ce_received: 0,
            read_lowat: 1,
            unread: 0,
            pushed: false,
            comp: None,
            flushed: None,
        }
    }

    /// Compress SACKs as Linux 4.18+ does (`tcp_comp_sack_*` at their defaults).
    pub fn set_sack_compression(&mut self) {
        self.comp = Some(SackCompression::default());
    }

    /// The application reads once `segments` in-order segments wait (its `SO_RCVLOWAT`;
    /// 1: at each segment, the default).
    pub fn set_read_lowat(&mut self, segments: u32) {
        self.read_lowat = segments.max(1);
    }

    /// The handshake negotiated ECN (`ok`); `needs_ecn`: the algorithm needs it (DCTCP's
    /// receiver then follows [`CeEcho`]).
    pub fn set_ecn(&mut self, ok: bool, needs_ecn: bool) {
        self.ecn_ok = ok;
        self.ce_echo = (ok && needs_ecn).then(|| CeEcho::new(self.rcv_nxt));
    }

    /// Whether the connection negotiated ECN.
    #[inline]
    pub fn ecn_ok(&self) -> bool {
        self.ecn_ok
    }

    /// Whether the ACK about to leave carries ECE.
    #[inline]
    pub fn ece(&self) -> bool {
        self.demand_cwr
    }

    /// The ECN field of the receiver's ACKs: Not-ECT (RFC 3168 Sec. 6.1.4), but ECT(0) for
    /// an algorithm that needs ECN (`tcp_ecn_send` leaves the socket's ECT set for it).
    #[inline]
    pub fn ack_ecn(&self) -> Ecn {
        if self.ce_echo.is_some() {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// The ACK [`CeEcho`] asks to send before this segment's, if any: (`rcv_nxt`, ECE).
    #[inline]
    pub fn take_prior_ack(&mut self) -> Option<(u32, bool)> {
        self.prior_ack.take()
    }

    /// A new connection in the same slot (all earlier data was delivered in order, so the
    /// out-of-order ring is already clear).
    pub fn reset(&mut self) {
        self.rcv_nxt = 0;
        self.pending = 0;
        self.quick = 0;
        self.ato = 0;
        self.window = self.window0;
        self.num_sacks = 0;
        self.dsack = None;
        self.rcv_wup = 0;
        self.ts_recent = 0;
        self.demand_cwr = false;
        self.ecn_seen = false;
        self.prior_ack = None;
        self.unread = 0;
        self.pushed = false;
        if self.comp.is_some() {
            self.comp = Some(SackCompression::default());
        }
        self.flushed = None;
        if self.ce_echo.is_some() {
            self.ce_echo = Some(CeEcho::new(0));
        }
        debug_assert_eq!(self.ooo_count, 0);
    }

    #[inline]
    fn bit(&self, seq: u32) -> bool {
        let i = (seq as usize) % (self.ooo.len() * 64);
        self.ooo[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline]
    fn set_bit(&mut self, seq: u32, on: bool) {
        let i = (seq as usize) % (self.ooo.len() * 64);
        if on {
            self.ooo[i / 64] |= 1 << (i % 64);
        } else {
            self.ooo[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Grow the ring so that `span` segments above `rcv_nxt` fit (rare; only while windows grow).
    fn reserve(&mut self, span: u32) {
        let cap = self.ooo.len() * 64;
        if (span as usize) < cap {
            return;
        }
        let mut new_len = self.ooo.len();
        while new_len * 64 <= span as usize {
            new_len *= 2;
        }
        let old = std::mem::replace(&mut self.ooo, vec![0; new_len]);
        let old_cap = old.len() * 64;
        for off in 0..old_cap as u32 {
            let seq = self.rcv_nxt.wrapping_add(off);
            let i = (seq as usize) % old_cap;
            if old[i / 64] >> (i % 64) & 1 == 1 {
                self.set_bit(seq, true);
            }
        }
    }

    /// A data segment `seq` arrived with TSval `tsval` (the sender's clock) echoing
    /// `tsecr` (ours), with the PSH flag if `psh`, Not-ECT and without CWR. Returns the
    /// in-order segments it delivered and the ACK to send.
    #[inline]
    pub fn on_data(&mut self, seq: u32, tsval: u32, tsecr: u16, psh: bool, now: Time) -> (u32, AckAction) {
        self.on_data_ecn(seq, tsval, tsecr, psh, Ecn::NotEct, false, now)
    }

    /// [`Receiver::on_data`] for a segment with ECN field `ecn` and the CWR flag if `cwr`.
    // Inlined into both callers: without ECN the constants leave one test of `ecn_ok`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // the segment's header fields, each its own argument
    pub fn on_data_ecn(
        &mut self,
        seq: u32,
        tsval: u32,
        tsecr: u16,
        psh: bool,
        ecn: Ecn,
        cwr: bool,
        now: Time,
    ) -> (u32, AckAction) {
        self.arrived += 1;
        // tcp_data_queue: tcp_ecn_accept_cwr first; a data segment with CWR is ACKed now.
        let mut ack_now = self.ecn_ok && cwr;
        if ack_now {
            self.demand_cwr = false;
        }
        // tcp_rcv_established: tcp_rcv_rtt_measure_ts for every segment.
        self.window.measure_rtt_ts(tsecr, now);
        // tcp_replace_ts_recent: a segment starting at or below rcv_wup (the left edge of
        // the last ACK) updates the echo, so an ACK echoes the oldest segment it answers.
        if !after(seq, self.rcv_wup) && !before(tsval, self.ts_recent) {
            self.ts_recent = tsval;
        }
        // tcp_data_queue: a D-SACK lives until the next data segment.
        self.dsack = None;
        let ahead = seq.wrapping_sub(self.rcv_nxt) as i32;
        if ahead < 0 {
            // Duplicate of delivered data (a spurious retransmission): tcp_dsack_set, and
            // tcp_enter_quickack_mode ACKs at once.
            self.dsack_set(seq, seq.wrapping_add(1));
            self.enter_quickack_mode(TCP_MAX_QUICKACKS);
            return (0, AckAction::Now);
        }
        if ahead > 0 {
            // tcp_data_queue_ofo: tcp_ecn_check_ce first.
            ack_now |= self.check_ce(ecn);
            self.reserve(ahead as u32);
            if self.bit(seq) {
                // tcp_data_queue_ofo: all its bits are present, a D-SACK; its block still
                // moves to the front (add_sack).
                self.dsack_set(seq, seq.wrapping_add(1));
            } else {
                self.set_bit(seq, true);
                if self.ooo_count == 0 || after(seq.wrapping_add(1), self.ooo_end) {
                    self.ooo_end = seq.wrapping_add(1);
                }
                self.ooo_count += 1;
                // tcp_data_queue_ofo grows the window and the buffer by the span held.
                self.grow_window();
                self.window.ofo_grow(self.rcv_nxt, self.ooo_end);
            }
            self.sack_new_ofo(seq, seq.wrapping_add(1));
            return (0, self.ofo_ack_check(ack_now, now));
        }
        // In order: deliver it (tcp_queue_rcv, then tcp_event_data_recv) and any run of
        // buffered segments behind it (tcp_ofo_queue); the application reads it all at once
        // (tcp_recvmsg -> tcp_rcv_space_adjust).
        let start = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        ack_now |= self.event_data_recv(ecn, now);
        let filled_hole = self.ooo_count > 0;
        while self.ooo_count > 0 && self.bit(self.rcv_nxt) {
            self.set_bit(self.rcv_nxt, false);
            self.ooo_count -= 1;
            self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        }
        let delivered = self.rcv_nxt.wrapping_sub(start);
        // tcp_measure_rcv_mss: ICSK_ACK_PUSHED; the application reads everything in order
        // once read_lowat segments wait (tcp_data_ready's SO_RCVLOWAT test).
        self.pushed |= psh;
        self.unread += delivered;
        let read = self.unread >= self.read_lowat;
        if read {
            self.unread = 0;
        }
        if self.num_sacks > 0 {
            self.sack_remove();
        }
        let ooo_end = if self.ooo_count > 0 { self.ooo_end } else { self.rcv_nxt };
        self.window.space_adjust(self.rcv_nxt, ooo_end, now);
        if filled_hole {
            // RFC 5681 4.2: an ACK at once when a gap is filled (ICSK_ACK_NOW once the
            // out-of-order queue is empty; before that, rcv_nxt moved, and SACK
            // compression's duplicate count starts again with this ACK).
            self.pending = 0;
            if self.ooo_count > 0 {
                let first = ack_now || (self.pushed && read);
                let action = self.ofo_ack_check(first, now);
                debug_assert_eq!(action, AckAction::Now);
            }
            return (delivered, AckAction::Now);
        }
        if self.pending == 0 {
            self.held_at = now;
        }
        self.pending += 1;
        // __tcp_ack_snd_check: more than one full segment unacknowledged, or quick-ACK mode.
        // Or a full-sized segment with PSH since the last ACK (ICSK_ACK_PUSHED) and a read
        // that leaves nothing in the receive queue (no out-of-order data here):
        // __tcp_cleanup_rbuf ACKs now.
        // ECN: a CWR, or a change of DCTCP's CE state, asks for an ACK now (ICSK_ACK_NOW).
        if self.pending >= self.ack_every || self.quick > 0 || (self.pushed && read) || ack_now {
            self.pending = 0;
            (delivered, AckAction::Now)
        } else {
            (delivered, AckAction::Delay)
        }
    }

    /// `__tcp_ack_snd_check` for a segment that leaves out-of-order data held: at once if
    /// `ack_now` (ICSK_ACK_NOW, or an application read of a PSH segment), in quick-ACK mode
    /// (always, without delayed ACKs) or with `ack_every` segments unacknowledged ("more
    /// than one full frame"); else as SACK compression decides (off: at once).
    #[inline]
    fn ofo_ack_check(&mut self, ack_now: bool, now: Time) -> AckAction {
        if self.comp.is_none() {
            return AckAction::Now;
        }
        let unacked = self.rcv_nxt.wrapping_sub(self.rcv_wup);
        let action = if ack_now || self.quick > 0 || self.ack_every == 1 || unacked >= self.ack_every {
            AckAction::Now
        } else {
            let delay = comp_sack::timer_delay(self.window.rtt_us8(), self.rtt / 1000 * 8);
            match self.comp.as_mut().map(|c| c.ack_check(self.rcv_nxt, now, delay)) {
                Some(Compressed::Hold(at)) => AckAction::Compress(at),
                Some(Compressed::Send) | None => AckAction::Now,
            }
        };
        self.after_flush(action)
    }

    /// [`Receiver::ofo_ack_check`]'s `action` for a segment after whose arrival SACK
    /// compression may have sent what it held ([`Receiver::take_flushed`]).
    #[inline]
    fn after_flush(&self, action: AckAction) -> AckAction {
        match (self.flushed.is_some(), action) {
            (true, AckAction::Now) => AckAction::FlushThenNow,
            // The flush cancelled the timer: this segment's hold armed a new one.
            (true, AckAction::Compress(Some(at))) => AckAction::FlushThenCompress(at),
            _ => action,
        }
    }

    /// `tcp_sack_compress_send_ack`: with ACKs held, one leaves now, with the blocks as
    /// they are before this segment changes them ([`Receiver::take_flushed`]).
    #[inline]
    fn sack_compress_send_ack(&mut self) {
        if self.comp.is_some_and(|c| c.holding()) {
            self.flushed = Some(self.sack_option());
            self.acked_now();
        }
    }

    /// The SACK option of an ACK SACK compression sent before this segment's, if any (the
    /// receiver's state already counts it as sent).
    #[inline]
    pub fn take_flushed(&mut self) -> Option<SackBlocks> {
        self.flushed.take()
    }

    /// The compressed-ACK timer entry for `now` fired: whether an ACK is to be sent
    /// (`tcp_compressed_ack_kick`).
    pub fn sack_timer_fired(&mut self, now: Time) -> bool {
        self.comp.as_mut().is_some_and(|c| c.fired(now))
    }

    /// `tcp_dsack_set` (or `tcp_dsack_extend` with one pending: the same block grown).
    #[inline]
    fn dsack_set(&mut self, seq: u32, end: u32) {
        if let Some(mut b) = self.dsack {
            if sack_extend(&mut b, seq, end) {
                self.dsack = Some(b);
                return;
            }
        }
        self.dsack = Some((seq, end));
    }

    /// `tcp_sack_new_ofo_skb`: the block that `[seq, end)` extends moves to the front (and
    /// swallows any it now touches, `tcp_sack_maybe_coalesce`); else a new block goes in
    /// front and, with all four in use, the oldest is forgotten. A change beyond the first
    /// two blocks (TCP_SACK_BLOCKS_EXPECTED) first sends the ACKs SACK compression holds.
    #[inline]
    fn sack_new_ofo(&mut self, seq: u32, end: u32) {
        let n = self.num_sacks;
        if let Some(i) = (0..n).find(|&i| sack_extend(&mut self.sacks[i], seq, end)) {
            // (The block is extended already: that ACK carries it where it was.)
            if i >= TCP_SACK_BLOCKS_EXPECTED {
                self.sack_compress_send_ack();
            }
            self.sacks[..=i].rotate_right(1);
            let mut k = 1;
            while k < self.num_sacks {
                let (s, e) = self.sacks[k];
                if sack_extend(&mut self.sacks[0], s, e) {
                    self.sacks.copy_within(k + 1..self.num_sacks, k);
                    self.num_sacks -= 1;
                } else {
                    k += 1;
                }
            }
            return;
        }
        if n >= TCP_SACK_BLOCKS_EXPECTED {
            self.sack_compress_send_ack();
        }
        let kept = n.min(TCP_NUM_SACKS - 1);
        self.sacks.copy_within(..kept, 1);
        self.sacks[0] = (seq, end);
        self.num_sacks = kept + 1;
    }

    /// `tcp_sack_remove`: `rcv_nxt` advanced; blocks it reached are gone (all of them once
    /// nothing is held out of order).
    #[inline]
    fn sack_remove(&mut self) {
        if self.ooo_count == 0 {
            self.num_sacks = 0;
            return;
        }
        let mut k = 0;
        while k < self.num_sacks {
            if !after(self.sacks[k].0, self.rcv_nxt) {
                self.sacks.copy_within(k + 1..self.num_sacks, k);
                self.num_sacks -= 1;
            } else {
                k += 1;
            }
        }
    }

    /// The SACK option of the ACK about to leave (`tcp_established_options`,
    /// `tcp_options_write`): the D-SACK first if one is pending, then the remembered blocks,
    /// three in all; the D-SACK is sent once.
    #[inline]
    pub fn sack_option(&mut self) -> SackBlocks {
        let mut opt = SackBlocks::NONE;
        if let Some((s, e)) = self.dsack.take() {
            opt.push(s, e);
        }
        for &(s, e) in &self.sacks[..self.num_sacks] {
            opt.push(s, e);
        }
        opt
    }

    /// The TSecr of the ACK about to leave (`ts_recent`).
    #[inline]
    pub fn ts_echo(&self) -> u32 {
        self.ts_recent
    }

    /// `tcp_grow_window`: a grown window is advertised at once (`icsk_ack.quick |= 1`).
    #[inline]
    fn grow_window(&mut self) {
        if self.window.grow(self.ooo_count) {
            self.quick |= 1;
        }
    }

    /// `tcp_incr_quickack`: at least `rcv_wnd / (2 rcv_mss)` quick ACKs (2 if that is 0),
    /// at most `max`.
    fn incr_quickack(&mut self, max: u32) {
        let n = match self.window.quickacks() {
            0 => 2,
            n => n,
        };
        self.quick = self.quick.max(n.min(max));
    }

    /// `tcp_enter_quickack_mode`: up to `max` quick ACKs, `ato` back to its minimum.
    fn enter_quickack_mode(&mut self, max: u32) {
        self.incr_quickack(max);
        self.ato = self.ato_min;
    }

    /// `tcp_ecn_check_ce` for a segment with ECN field `ecn`, on an ECN connection; whether
    /// the segment is to be ACKed now (`ICSK_ACK_NOW`, DCTCP's CE state changed). With
    /// DCTCP the pending delayed ACK, if any, goes first with the previous CE state
    /// ([`Receiver::take_prior_ack`]).
    #[inline]
    fn check_ce(&mut self, ecn: Ecn) -> bool {
        if !self.ecn_ok {
            return false;
        }
        let ce = match ecn {
            Ecn::NotEct => {
                // "If ECT is not set on a segment, and we already seen ECT on a previous
                // segment, it is probably a retransmit": ACK quickly.
                if self.ecn_seen {
                    self.enter_quickack_mode(2);
                }
                return false;
            }
            Ecn::Ce => true,
            Ecn::Ect0 | Ecn::Ect1 => false,
        };
        self.ecn_seen = true;
        self.ce_received += ce as u64;
        let mut ack_now = false;
        if let Some(echo) = &mut self.ce_echo {
            // CA_EVENT_ECN_IS_CE / _NO_CE: dctcp_ece_ack_update sets DEMAND_CWR to the state.
            let acks = echo.update(ce, self.rcv_nxt, self.pending > 0);
            self.prior_ack = acks.prior_ack;
            ack_now = acks.ack_now;
            self.demand_cwr = echo.ece();
        }
        if ce && !self.demand_cwr {
            // "Better not delay acks, sender can have a very low cwnd".
            self.enter_quickack_mode(2);
            self.demand_cwr = true;
        }
        ack_now
    }

    /// `tcp_event_data_recv` for an in-order segment with ECN field `ecn` arriving at
    /// `now`; whether `tcp_ecn_check_ce` asks for an ACK now.
    // Inlined into `on_data_ecn`, its one caller: a call per delivered segment otherwise.
    #[inline(always)]
    fn event_data_recv(&mut self, ecn: Ecn, now: Time) -> bool {
        if self.ato == 0 {
            // The first data: the connection is established (tcp_init_buffer_space) and
            // its first full segment measured (tcp_measure_rcv_mss); the delayed-ACK engine
            // starts in quick-ACK mode.
            self.window.established(now);
            self.incr_quickack(TCP_MAX_QUICKACKS);
            self.ato = self.ato_min;
        } else {
            let m = now - self.lrcvtime;
            if m <= self.ato_min / 2 {
                self.ato = self.ato / 2 + self.ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.rto);
            } else if m > self.rto {
                // The sender was idle longer than an RTO: ACK quickly again.
                self.incr_quickack(TCP_MAX_QUICKACKS);
            }
        }
        self.lrcvtime = now;
        self.window.measure_rtt_window(self.rcv_nxt, now);
        let ack_now = self.check_ce(ecn);
        self.grow_window();
        ack_now
    }

    /// The window field of an ACK sent now (`tcp_select_window`).
    #[inline]
    pub fn select_window(&mut self) -> u16 {
        self.window.select(self.rcv_nxt, self.ooo_count)
    }

    /// The receive window's state (for tests and recording).
    pub fn window(&self) -> &RcvWindow {
        &self.window
    }

    /// `tcp_send_delayed_ack`: how long an ACK may wait now, min(ato, max(RTT, ato_min)).
    pub fn delack_delay(&self) -> Time {
        if self.ato > self.ato_min {
            self.ato.min(self.rtt.max(self.ato_min))
        } else {
            self.ato_min
        }
    }

    /// `tcp_delack_timer_handler`: the timer had to fire, so `ato` doubles (up to the RTO).
    pub fn delack_fired(&mut self) {
        self.ato = (self.ato * 2).min(self.rto);
    }

    /// Arrival time of the oldest segment waiting for a delayed ACK, if any.
    pub fn held_since(&self) -> Option<Time> {
        (self.pending > 0).then_some(self.held_at)
    }

    /// An ACK was just sent for everything received: nothing is pending, and one quick
    /// ACK is used up (`tcp_dec_quickack_mode`; leaving the mode resets `ato`).
    pub fn acked_now(&mut self) {
        self.pending = 0;
        // tcp_event_ack_sent: the ACKs SACK compression held left with it.
        if let Some(c) = &mut self.comp {
            c.sent();
        }
        // inet_csk_clear_xmit_timer(ICSK_TIME_DACK) clears icsk_ack.pending, PUSHED too.
        self.pushed = false;
        // tcp_select_window: the window is advertised up to here.
        self.rcv_wup = self.rcv_nxt;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::rcv_window::ts_ms;

    const MS: Time = 1_000_000;

    /// Feed in-order segments `from..to` one `gap` apart from `t`; return which were ACKed at
    /// once (the sim sends the ACK and calls `acked_now`).
    fn feed(r: &mut Receiver, from: u32, to: u32, t: Time, gap: Time) -> Vec<u32> {
        let mut acked = Vec::new();
        for (k, s) in (from..to).enumerate() {
            if let (_, AckAction::Now) = r.on_data(s, 0, 0, false, t + k as Time * gap) {
                r.acked_now();
                acked.push(s);
            }
        }
        acked
    }

    /// A receiver of 1448-byte segments whose window stays at `segments`.
    fn fixed(ack_every: u32, rtt: Time, segments: u64) -> Receiver {
        Receiver::new(ack_every, 40 * MS, rtt, RcvWindow::fixed(segments * 1448, 1448))
    }

    #[test]
    fn quick_acks_at_the_start_then_every_second_segment() {
        // tcp_event_data_recv on the first data: tcp_incr_quickack with a window of 10
        // segments -> 10 / 2 = 5 quick ACKs (segments 0..=4), then __tcp_ack_snd_check's
        // "more than one full frame": 6, 8, 10, ...
        let mut r = fixed(2, 100 * MS, 10);
        assert_eq!(feed(&mut r, 0, 12, 0, MS), [0, 1, 2, 3, 4, 6, 8, 10]);
        assert_eq!(r.delack_delay(), 40 * MS);
    }

    #[test]
    fn a_pushed_segment_is_acked_at_once() {
        // After the 5 quick ACKs (segments 0..=4, as above), segment 5 waits for a second
        // one (__tcp_ack_snd_check). A full-sized segment with PSH does not: Linux 6.6+'s
        // tcp_measure_rcv_mss sets ICSK_ACK_PUSHED, and __tcp_cleanup_rbuf, run when the
        // application reads it (the queue then empty), sends the ACK. Segment 6 (no PSH)
        // waits again; 7 makes two unacknowledged and is ACKed as before.
        let mut r = fixed(2, 100 * MS, 10);
        assert_eq!(feed(&mut r, 0, 5, 0, MS), [0, 1, 2, 3, 4]);
        assert_eq!(r.on_data(5, 0, 0, false, 5 * MS), (1, AckAction::Delay));
        assert_eq!(r.on_data(6, 0, 0, true, 6 * MS), (1, AckAction::Now));
        r.acked_now();
        assert_eq!(r.on_data(7, 0, 0, false, 7 * MS), (1, AckAction::Delay));
        assert_eq!(r.on_data(8, 0, 0, false, 8 * MS), (1, AckAction::Now));
    }

    #[test]
    fn a_pushed_segment_is_acked_at_the_applications_read() {
        // The application reads once 3 segments wait (SO_RCVLOWAT): __tcp_cleanup_rbuf runs
        // at its reads only, so a PSH segment is ACKed alone only when a read follows it
        // before the next segment. Reads at segments 2, 5, 8, 11 (3 unread each time).
        let mut r = fixed(2, 100 * MS, 10);
        r.set_read_lowat(3);
        assert_eq!(feed(&mut r, 0, 5, 0, MS), [0, 1, 2, 3, 4]);
        assert_eq!(r.on_data(5, 0, 0, false, 5 * MS), (1, AckAction::Delay));
        assert_eq!(r.on_data(6, 0, 0, false, 6 * MS), (1, AckAction::Now));
        r.acked_now();
        // PSH, 2 unread: no read, so it waits (with a read per segment: Now, as above).
        assert_eq!(r.on_data(7, 0, 0, true, 7 * MS), (1, AckAction::Delay));
        assert_eq!(r.on_data(8, 0, 0, false, 8 * MS), (1, AckAction::Now));
        r.acked_now(); // the ACK clears ICSK_ACK_PUSHED
        assert_eq!(r.on_data(9, 0, 0, false, 9 * MS), (1, AckAction::Delay));
        assert_eq!(r.on_data(10, 0, 0, true, 10 * MS), (1, AckAction::Now));
        r.acked_now();
        // PSH and the read at segment 11: ACKed alone.
        assert_eq!(r.on_data(11, 0, 0, true, 11 * MS), (1, AckAction::Now));
    }

    #[test]
    fn every_segment_is_acked_while_the_window_grows() {
        // The testbed's receiver: SO_RCVBUF 8 MB, window 8 388 264 -> 10 485 760 bytes in
        // 725 steps of at most 2 x 1448 (rcv_window's test). First data: tcp_incr_quickack
        // -> min(8 388 264 / 2896, 16) = 16 quick ACKs; each growing segment sets
        // quick |= 1 (16 -> 17) and its ACK takes one back (tcp_dec_quickack_mode): 16
        // again, so segments 0..=724 are each ACKed. Then the 16 quick ACKs left are spent
        // on 725..=740, and from 741 on every second segment is ACKed: 742, 744, ...
        let mut r = Receiver::new(
            2,
            40 * MS,
            100 * MS,
            RcvWindow::new(Some(8 << 20), crate::tcp::rcv_window::TCP_RMEM_DEFAULT, 1448),
        );
        let acked = feed(&mut r, 0, 750, 0, MS);
        let expect: Vec<u32> = (0..=740).chain([742, 744, 746, 748]).collect();
        assert_eq!(acked, expect);
    }

    #[test]
    fn quick_acks_again_after_an_idle_gap_longer_than_the_rto() {
        // Receiver RTO from the handshake RTT 100 ms: 100 + max(200, 200) = 300 ms. A gap of
        // 400 ms > 300 ms after the start: tcp_incr_quickack again, with a window of 50
        // segments -> min(25, 16) = 16 quick ACKs, then every second segment (12 of 24).
        let mut r = fixed(2, 100 * MS, 50);
        feed(&mut r, 0, 20, 0, MS);
        let acked = feed(&mut r, 20, 60, 420 * MS, MS);
        assert_eq!(acked.len(), 16 + 12, "{acked:?}");
        assert_eq!(acked[..16], (20..36).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn ato_doubles_when_the_timer_fires_and_follows_arrivals() {
        // tcp_delack_timer_handler: ato = min(2 ato, rto) = 80 ms; the timer then waits
        // min(ato, max(rtt 50 ms, 40 ms)) = 50 ms. A segment 10 ms later (<= ato_min / 2):
        // ato = 80 / 2 + 20 = 60 ms (tcp_event_data_recv).
        let mut r = fixed(2, 50 * MS, 10);
        feed(&mut r, 0, 5, 0, MS);
        r.delack_fired();
        assert_eq!(r.delack_delay(), 50 * MS);
        r.on_data(5, 0, 0, false, 14 * MS);
        assert_eq!(r.ato, 60 * MS);
    }

    #[test]
    fn hole_then_fill_delivers_the_run() {
        // 0 arrives, 1 is lost, 2..=4 arrive out of order (each SACKed at once), then 1
        // fills the hole and releases 1..=4: four segments, rcv_nxt = 5.
        let mut r = fixed(2, 100 * MS, 10);
        r.on_data(0, 0, 0, false, 0);
        for s in 2..=4 {
            assert_eq!(r.on_data(s, 0, 0, false, 0), (0, AckAction::Now));
            assert_eq!(r.sack_option(), SackBlocks::of(&[(2, s + 1)]));
        }
        assert_eq!(r.on_data(1, 0, 0, false, 0), (4, AckAction::Now));
        assert_eq!(r.sack_option(), SackBlocks::NONE);
        assert_eq!(r.rcv_nxt, 5);
    }

    #[test]
    fn three_blocks_most_recent_first_and_the_fourth_kept_unsent() {
        // tcp_sack_new_ofo_skb: holes at 1, 3, 5, 7 with 2, 4, 6, 8 arriving: each new
        // segment starts a block in front -> [8,9) [6,7) [4,5), and [2,3) is remembered
        // (TCP_NUM_SACKS 4) but not sent (three fit with timestamps). 5 then arrives: it
        // touches [4,5) and [6,7), which move to the front as [4,7) (tcp_sack_maybe_coalesce).
        // Segment 1 fills the first hole: rcv_nxt 3, tcp_sack_remove drops [2,3).
        let mut r = fixed(2, 100 * MS, 50);
        r.on_data(0, 0, 0, false, 0);
        for s in [2, 4, 6, 8] {
            r.on_data(s, 0, 0, false, 0);
        }
        assert_eq!(r.sack_option(), SackBlocks::of(&[(8, 9), (6, 7), (4, 5)]));
        r.on_data(5, 0, 0, false, 0);
        assert_eq!(r.sack_option(), SackBlocks::of(&[(4, 7), (8, 9), (2, 3)]));
        r.on_data(1, 0, 0, false, 0);
        assert_eq!(r.rcv_nxt, 3);
        assert_eq!(r.sack_option(), SackBlocks::of(&[(4, 7), (8, 9)]));
    }

    #[test]
    fn duplicates_are_reported_once_as_d_sack_in_front() {
        // tcp_data_queue: a segment below rcv_nxt -> tcp_dsack_set(seq, end), ACKed at once,
        // the D-SACK alone (no block above rcv_nxt) and only on that ACK. A duplicate of a
        // segment held out of order (tcp_data_queue_ofo, "all the bits are present") ->
        // D-SACK [6,7) in front of its own block [5,7), which RFC 2883's sender reads as a
        // D-SACK because the first block lies inside the second.
        let mut r = fixed(2, 100 * MS, 50);
        for s in 0..3 {
            r.on_data(s, 0, 0, false, 0);
        }
        assert_eq!(r.on_data(1, 0, 0, false, 0), (0, AckAction::Now));
        assert_eq!(r.sack_option(), SackBlocks::of(&[(1, 2)]));
        assert_eq!(r.sack_option(), SackBlocks::NONE);
        r.on_data(5, 0, 0, false, 0);
        r.on_data(6, 0, 0, false, 0);
        r.on_data(9, 0, 0, false, 0);
        assert_eq!(r.on_data(6, 0, 0, false, 0), (0, AckAction::Now));
        assert_eq!(r.sack_option(), SackBlocks::of(&[(6, 7), (5, 7), (9, 10)]));
    }

    #[test]
    fn the_echo_is_the_timestamp_of_the_segment_at_the_left_edge() {
        // tcp_replace_ts_recent: only a segment at or below rcv_wup (rcv_nxt when the last
        // ACK left) sets ts_recent. Quick ACKs: 0 (ts 10) is ACKed, rcv_wup = 1; 2 (ts 12)
        // arrives out of order and is not the left edge: the echo stays 10. The hole fill 1
        // (ts 30, a retransmission) is: echo 30. So an ACK of a retransmission echoes the
        // retransmission, and one of a late original its original time (Eifel).
        let mut r = fixed(2, 100 * MS, 50);
        r.on_data(0, 10, 0, false, 0);
        r.acked_now();
        r.on_data(2, 12, 0, false, 0);
        r.acked_now();
        assert_eq!(r.ts_echo(), 10);
        r.on_data(1, 30, 0, false, 0);
        assert_eq!(r.ts_echo(), 30);
    }

    #[test]
    fn ring_grows_for_far_segments() {
        let mut r = fixed(1, 100 * MS, 10);
        r.on_data(5000, 0, 0, false, 0);
        assert_eq!(r.on_data(0, 0, 0, false, 0).0, 1);
        for s in 1..5000 {
            r.on_data(s, 0, 0, false, 0);
        }
        assert_eq!(r.rcv_nxt, 5001);
    }

    /// Segment `seq` with ECN field `ecn` (CWR if `cwr`) at `t`: whether it is ACKed at once
    /// (then the sim sends the ACK and calls `acked_now`).
    fn ecn_seg(r: &mut Receiver, seq: u32, ecn: Ecn, cwr: bool, t: Time) -> bool {
        let (_, action) = r.on_data_ecn(seq, 0, 0, false, ecn, cwr, t);
        if action == AckAction::Now {
            r.acked_now();
        }
        action == AckAction::Now
    }

    /// A receiver past its first quick ACKs (window 10: segments 0..=4, then 6, 8, 10),
    /// segment 11 held for a delayed ACK, ECN negotiated (`needs_ecn`: DCTCP's echo).
    fn ecn_receiver(needs_ecn: bool) -> Receiver {
        let mut r = fixed(2, 100 * MS, 10);
        r.set_ecn(true, needs_ecn);
        let acked: Vec<u32> = (0..12).filter(|&s| ecn_seg(&mut r, s, Ecn::Ect0, false, s as Time * MS)).collect();
        assert_eq!(acked, [0, 1, 2, 3, 4, 6, 8, 10]);
        r
    }

    #[test]
    fn ce_is_echoed_until_cwr_and_acked_at_once() {
        // __tcp_ecn_check_ce, INET_ECN_CE without DEMAND_CWR: tcp_enter_quickack_mode(sk, 2)
        // and DEMAND_CWR; tcp_ecn_send then sets ECE on every ACK until tcp_ecn_accept_cwr
        // clears it on a segment with CWR (which is ACKed at once, ICSK_ACK_NOW).
        let mut r = ecn_receiver(false);
        assert!(ecn_seg(&mut r, 12, Ecn::Ect0, false, 12 * MS)); // the second of a pair
        assert!(ecn_seg(&mut r, 13, Ecn::Ce, false, 13 * MS)); // alone, but CE: now
        assert!(r.ece());
        // tcp_incr_quickack(sk, 2): two quick ACKs, one used by 13: 14 goes now, ECE on.
        assert!(ecn_seg(&mut r, 14, Ecn::Ect0, false, 14 * MS));
        assert!(r.ece());
        // CWR: ECE off, ACK now; then back to delaying.
        assert!(ecn_seg(&mut r, 15, Ecn::Ect0, true, 15 * MS));
        assert!(!r.ece());
        assert!(!ecn_seg(&mut r, 16, Ecn::Ect0, false, 16 * MS));
        // A CE after the CWR: quick ACK and ECE again; two CEs counted.
        assert!(ecn_seg(&mut r, 17, Ecn::Ce, false, 17 * MS));
        assert!(r.ece() && r.ce_received == 2);
        assert_eq!(r.take_prior_ack(), None);
        assert_eq!(r.ack_ecn(), Ecn::NotEct, "pure ACKs stay Not-ECT (RFC 3168 6.1.4)");
    }

    #[test]
    fn a_not_ect_segment_after_ect_ones_is_acked_at_once() {
        // __tcp_ecn_check_ce, INET_ECN_NOT_ECT with TCP_ECN_SEEN: "probably a retransmit",
        // tcp_enter_quickack_mode(sk, 2).
        let mut r = ecn_receiver(false);
        assert!(ecn_seg(&mut r, 12, Ecn::Ect0, false, 12 * MS));
        assert!(ecn_seg(&mut r, 13, Ecn::NotEct, false, 13 * MS));
        assert!(!r.ece());
    }

    #[test]
    fn without_ecn_marks_are_not_seen() {
        // tcp_ecn_check_ce acts only with TCP_ECN_OK.
        let mut r = fixed(2, 100 * MS, 10);
        feed(&mut r, 0, 13, 0, MS); // 12 is the second of a pair: nothing held
        assert!(!ecn_seg(&mut r, 13, Ecn::Ce, false, 13 * MS));
        assert!(!r.ece() && r.ce_received == 0);
    }

    #[test]
    fn dctcp_echoes_each_ce_change_with_the_held_ack_first() {
        // dctcp_ece_ack_update: 11 is held (ICSK_ACK_TIMER); 12 arrives CE: first an ACK of
        // prior_rcv_nxt 12 without ECE (the state 11 had), then 12's ACK now, with ECE. No
        // quick-ACK mode: DEMAND_CWR is already set when tcp_ecn_check_ce tests it.
        let mut r = ecn_receiver(true);
        assert!(ecn_seg(&mut r, 12, Ecn::Ce, false, 12 * MS));
        assert_eq!(r.take_prior_ack(), Some((12, false)));
        assert!(r.ece());
        // CE again: no change, delayed as usual.
        assert!(!ecn_seg(&mut r, 13, Ecn::Ce, false, 13 * MS));
        assert!(r.ece());
        // Not CE: the held ACK of 14 goes with ECE, this one now without; no CWR needed.
        assert!(ecn_seg(&mut r, 14, Ecn::Ect0, false, 14 * MS));
        assert_eq!(r.take_prior_ack(), Some((14, true)));
        assert!(!r.ece());
        assert_eq!(r.ack_ecn(), Ecn::Ect0, "DCTCP's socket keeps ECT on its ACKs");
    }

    /// A receiver with SACK compression past its quick ACKs: window 20 segments (10 quick
    /// ACKs), segments 0..40 in order 1 ms apart, each echoing a TSval sent 40 ms earlier
    /// (tcp_rcv_rtt_measure_ts, with tcp_rcv_rtt_measure's lower window samples: rcv_rtt_est
    /// 38-40 ms, so the timer's delay is min(1 ms, RTT/20) = 1 ms).
    fn compressing() -> Receiver {
        let mut r = fixed(2, 40 * MS, 20);
        r.set_sack_compression();
        for s in 0..40 {
            let t = 100 * MS + s as Time * MS;
            if let (_, AckAction::Now) = r.on_data(s, 0, ts_ms(t - 40 * MS), false, t) {
                r.acked_now();
            }
        }
        r.acked_now();
        assert_eq!(r.quick, 0);
        assert_eq!(comp_sack::timer_delay(r.window.rtt_us8(), 0), MS, "rcv_rtt_est {}", r.window.rtt_us8());
        r
    }

    /// Segment `seq` at `t` ms after the start of [`compressing`]'s last one; an ACK sent at
    /// once is sent (`acked_now`).
    fn seg(r: &mut Receiver, seq: u32, t: Time) -> (u32, AckAction) {
        let out = r.on_data(seq, 0, 0, false, 139 * MS + t * MS);
        if out.1 == AckAction::Now {
            r.acked_now();
        }
        out
    }

    #[test]
    fn sack_compression_sends_three_then_one_per_timer() {
        // 40 is lost. __tcp_ack_snd_check with the out-of-order queue non-empty: 41, 42, 43
        // are dup_ack_counter 1..3, sent; 44 is compressed_ack 1 and starts the timer at
        // +1 ms + 100 us slack (t = 5.1 ms); 45 is held under it. The timer's ACK
        // (tcp_compressed_ack_kick) carries [41, 46). 46 is held again under a new timer;
        // 40 fills the hole, the queue empties: ICSK_ACK_NOW, an ACK at once.
        let mut r = compressing();
        for s in 41..=43 {
            assert_eq!(seg(&mut r, s, s as Time - 40), (0, AckAction::Now));
        }
        let timer = 139 * MS + 4 * MS + MS + 100_000;
        assert_eq!(seg(&mut r, 44, 4), (0, AckAction::Compress(Some(timer))));
        assert_eq!(seg(&mut r, 45, 5), (0, AckAction::Compress(None)));
        assert!(!r.sack_timer_fired(timer - 1), "not the armed entry");
        assert!(r.sack_timer_fired(timer));
        assert_eq!(r.sack_option(), SackBlocks::of(&[(41, 46)]));
        r.acked_now();
        assert!(matches!(seg(&mut r, 46, 6), (0, AckAction::Compress(Some(_)))));
        assert_eq!(seg(&mut r, 40, 7), (7, AckAction::Now));
        assert!(!r.sack_timer_fired(139 * MS + 6 * MS + MS + 100_000), "cancelled by the ACK");
    }

    #[test]
    fn sack_compression_without_the_key_acks_every_segment() {
        // Off (Linux before 4.18, the catalog's hosts): every out-of-order segment at once.
        let mut r = compressing();
        r.comp = None;
        for s in 41..60 {
            assert_eq!(seg(&mut r, s, 1), (0, AckAction::Now));
        }
    }

    #[test]
    fn sack_compression_holds_at_most_44() {
        // compressed_ack >= tcp_comp_sack_nr: the 45th held ACK goes at once, with all.
        let mut r = compressing();
        for s in 41..=43 {
            seg(&mut r, s, 0);
        }
        for s in 44..44 + 44 {
            assert!(matches!(seg(&mut r, s, 0), (0, AckAction::Compress(_))));
        }
        assert_eq!(seg(&mut r, 88, 0), (0, AckAction::Now));
        assert_eq!(seg(&mut r, 89, 0), (0, AckAction::Compress(Some(139 * MS + MS + 100_000))));
    }

    #[test]
    fn sack_compression_counts_a_one_segment_fill_as_the_first_of_three() {
        // 40 and 41 lost; 42, 43, 44 are the three duplicates of rcv_nxt 40. 40 arrives and
        // delivers itself alone: one segment unacknowledged is not "more than one full
        // frame", so __tcp_ack_snd_check reaches the SACK test, finds a new rcv_nxt
        // (dup_ack_counter = 0, then 1) and sends. Only two more duplicates go at once.
        let mut r = compressing();
        for s in 42..=44 {
            assert_eq!(seg(&mut r, s, 0), (0, AckAction::Now));
        }
        assert_eq!(seg(&mut r, 40, 1), (1, AckAction::Now));
        for s in 45..=46 {
            assert_eq!(seg(&mut r, s, 2), (0, AckAction::Now));
        }
        assert!(matches!(seg(&mut r, 47, 2), (0, AckAction::Compress(Some(_)))));
    }

    #[test]
    fn sack_compression_sends_three_again_after_a_fill_of_a_run() {
        // 40 and 42 lost; 41, 43, 44 go at once, 45 is held. 40 delivers 40 and 41: more
        // than one full frame unacknowledged, sent before the SACK test (its count stays
        // with rcv_nxt 40). The next duplicates find rcv_nxt 42 new: three at once again.
        let mut r = compressing();
        for s in [41, 43, 44] {
            assert_eq!(seg(&mut r, s, 0), (0, AckAction::Now));
        }
        assert!(matches!(seg(&mut r, 45, 0), (0, AckAction::Compress(Some(_)))));
        assert_eq!(seg(&mut r, 40, 1), (2, AckAction::Now));
        for s in 46..=48 {
            assert_eq!(seg(&mut r, s, 2), (0, AckAction::Now));
        }
        assert!(matches!(seg(&mut r, 49, 2), (0, AckAction::Compress(Some(_)))));
    }

    #[test]
    fn sack_compression_sends_what_it_holds_before_a_third_block() {
        // tcp_sack_new_ofo_skb: a new block while two exist (TCP_SACK_BLOCKS_EXPECTED)
        // first sends the held ACKs (tcp_sack_compress_send_ack), with the blocks as they
        // were; the segment's own ACK is then the first held under a new timer. 40 lost:
        // 41, 42, 43 sent, 44 held ([41, 45)); 46 starts a second block (45 lost), held;
        // 48 would start a third (47 lost): the ACK of [46, 47), [41, 45) leaves first.
        let mut r = compressing();
        for s in 41..=43 {
            seg(&mut r, s, 0);
        }
        assert!(matches!(seg(&mut r, 44, 0), (0, AckAction::Compress(Some(_)))));
        assert_eq!(seg(&mut r, 46, 0), (0, AckAction::Compress(None)));
        assert_eq!(r.take_flushed(), None);
        let held = seg(&mut r, 48, 1);
        assert_eq!(r.take_flushed(), Some(SackBlocks::of(&[(46, 47), (41, 45)])));
        assert_eq!(held, (0, AckAction::FlushThenCompress(139 * MS + MS + MS + 100_000)));
        assert_eq!(r.sack_option(), SackBlocks::of(&[(48, 49), (46, 47), (41, 45)]));
    }
}
