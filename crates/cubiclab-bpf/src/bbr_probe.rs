//! `probe-bbr FILE`: the kernel's `bbr` recorded per ACK (bpf/bbr_probe.bpf.c), written to
//! FILE as CSV with one row per `tcp_probe` of a socket running `bbr` (the state the ACK
//! finds), ending with `# lost N`. Columns: the record's fields in [`TCP_FIELDS`], then
//! `struct bbr` decoded field by field ([`BBR_FIELDS`], prefixed `bbr_`).

use std::path::PathBuf;

use crate::recorder::{u16_at, u32_at, u64_at, Program, Recorder};

static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bbr_probe.bpf.o"));

/// Where `struct bbr_ack` keeps each field: (column, byte offset, size in bytes).
const TCP_FIELDS: &[(&str, usize, usize)] = &[
    ("time_ns", 0, 8),
    ("tcp_mstamp", 8, 8),
    ("delivered_mstamp", 16, 8),
    ("wstamp_ns", 24, 8),
    ("pacing_rate", 32, 8),
    ("skb_mstamp_ns", 40, 8),
    ("tx_first_tx_mstamp", 48, 8),
    ("tx_delivered_mstamp", 56, 8),
    ("ack_seq", 64, 4),
    ("snd_una", 68, 4),
    ("snd_nxt", 72, 4),
    ("cwnd", 76, 4),
    ("ssthresh", 80, 4),
    ("packets_out", 84, 4),
    ("sacked_out", 88, 4),
    ("lost_out", 92, 4),
    ("retrans_out", 96, 4),
    ("delivered", 100, 4),
    ("lost", 104, 4),
    ("app_limited", 108, 4),
    ("srtt_us8", 112, 4),
    ("mss", 116, 4),
    ("min_rtt_us", 120, 4),
    ("rack_rtt_us", 124, 4),
    ("rate_delivered", 128, 4),
    ("rate_interval_us", 132, 4),
    ("tx_delivered", 136, 4),
    ("skb_seq", 140, 4),
    ("skb_end_seq", 144, 4),
    ("sport", 148, 2),
    ("dport", 150, 2),
    ("ca_state", 152, 1),
    ("rate_app_limited", 153, 1),
    ("tx_app_limited", 154, 1),
    ("skb_sacked", 155, 1),
    ("pacing_shift", 156, 1),
    ("sack_skb_mstamp_ns", 272, 8),
    ("sack_tx_first_tx_mstamp", 280, 8),
    ("sack_tx_delivered_mstamp", 288, 8),
    ("sack_end", 296, 4),
    ("sack_tx_delivered", 300, 4),
    ("sack_skb_end_seq", 304, 4),
    ("sack_skb_sacked", 308, 1),
    ("sack_tx_app_limited", 309, 1),
    ("total_retrans", 312, 4),
    ("tsoffset", 316, 4),
    ("tsecr", 320, 4),
];
/// Offset of the raw `struct bbr` (`icsk_ca_priv`, 104 bytes) in the record.
const BBR_AT: usize = 164;

/// `struct bbr` of Linux 6.18 (`net/ipv4/tcp_bbr.c`) as its BTF lays it out on x86-64:
/// (field, bit offset, bits). Bit fields fill their u32 from the least significant bit.
pub const BBR_FIELDS: &[(&str, usize, usize)] = &[
    ("min_rtt_us", 0, 32),
    ("min_rtt_stamp", 32, 32),
    ("probe_rtt_done_stamp", 64, 32),
    // struct minmax bw: s[0] holds the max, {u32 t; u32 v} each.
    ("bw_t", 96, 32),
    ("bw", 128, 32),
    ("bw_t1", 160, 32),
    ("bw1", 192, 32),
    ("bw_t2", 224, 32),
    ("bw2", 256, 32),
    ("rtt_cnt", 288, 32),
    ("next_rtt_delivered", 320, 32),
    ("cycle_mstamp", 384, 64),
    ("mode", 448, 3),
    ("prev_ca_state", 451, 3),
    ("packet_conservation", 454, 1),
    ("round_start", 455, 1),
    ("idle_restart", 456, 1),
    ("probe_rtt_round_done", 457, 1),
    ("lt_is_sampling", 471, 1),
    ("lt_rtt_cnt", 472, 7),
    ("lt_use_bw", 479, 1),
    ("lt_bw", 480, 32),
    ("lt_last_delivered", 512, 32),
    ("lt_last_stamp", 544, 32),
    ("lt_last_lost", 576, 32),
    ("pacing_gain", 608, 10),
    ("cwnd_gain", 618, 10),
    ("full_bw_reached", 628, 1),
    ("full_bw_cnt", 629, 2),
    ("cycle_idx", 631, 3),
    ("has_seen_rtt", 634, 1),
    ("prior_cwnd", 640, 32),
    ("full_bw", 672, 32),
    ("ack_epoch_mstamp", 704, 64),
    ("extra_acked0", 768, 16),
    ("extra_acked1", 784, 16),
    ("ack_epoch_acked", 800, 20),
    ("extra_acked_win_rtts", 820, 5),
    ("extra_acked_win_idx", 825, 1),
];

/// The field of `bits` bits at bit `off` of little-endian bytes `d`.
fn bits(d: &[u8], off: usize, bits: usize) -> u64 {
    let byte = off / 8;
    let mut word = [0u8; 8];
    let n = (bits + off % 8).div_ceil(8).min(8);
    word[..n].copy_from_slice(&d[byte..byte + n]);
    let v = u64::from_le_bytes(word) >> (off % 8);
    if bits == 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn header() -> &'static str {
    let cols: Vec<String> =
        TCP_FIELDS.iter().map(|f| f.0.to_string()).chain(BBR_FIELDS.iter().map(|f| format!("bbr_{}", f.0))).collect();
    Box::leak(cols.join(",").into_boxed_str())
}

fn row(d: &[u8]) -> String {
    let mut out: Vec<String> = TCP_FIELDS
        .iter()
        .map(|&(_, o, size)| match size {
            8 => u64_at(d, o).to_string(),
            4 => u32_at(d, o).to_string(),
            2 => u16_at(d, o).to_string(),
            _ => d[o].to_string(),
        })
        .collect();
    let bbr = &d[BBR_AT..BBR_AT + 104];
    out.extend(BBR_FIELDS.iter().map(|&(_, off, n)| bits(bbr, off, n).to_string()));
    out.join(",")
}

/// Attach the recorder of `bbr` sockets, writing to `path`.
pub fn start(path: PathBuf) -> Result<Recorder, String> {
    let program = Program { name: "probe-bbr", object: OBJECT, configure: Box::new(|_| Ok(())), header: header(), row };
    Recorder::start(program, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_fields_decode_from_the_low_bit() {
        // The u32 at byte 56 of struct bbr: mode 2 (PROBE_BW) in bits 0-2, prev_ca_state 3
        // in bits 3-5, round_start (bit 7), lt_rtt_cnt 5 in bits 24-30:
        // 2 | 3 << 3 | 1 << 7 | 5 << 24 = 0x050000 9A.
        let mut d = [0u8; 104];
        d[56..60].copy_from_slice(&(2u32 | 3 << 3 | 1 << 7 | 5 << 24).to_le_bytes());
        // pacing_gain 320 and cwnd_gain 512 in the u32 at byte 76, cycle_idx 6 at bit 23.
        d[76..80].copy_from_slice(&(320u32 | 512 << 10 | 6 << 23).to_le_bytes());
        let get = |name: &str| {
            let &(_, off, n) = BBR_FIELDS.iter().find(|f| f.0 == name).unwrap();
            bits(&d, off, n)
        };
        assert_eq!((get("mode"), get("prev_ca_state"), get("round_start"), get("lt_rtt_cnt")), (2, 3, 1, 5));
        assert_eq!((get("pacing_gain"), get("cwnd_gain"), get("cycle_idx")), (320, 512, 6));
    }
}
