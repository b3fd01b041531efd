//! What each algorithm does at a congestion event and how it grows back, as numbers for
//! models and users (the catalog's run-length physics asks for them through the bindings):
//! derived from the constants and the checked parameters the algorithm itself uses, one
//! function per registry row. The tests hold every row to what its `ssthresh()` does.

use crate::bic_lineage::BICTCP_BETA_SCALE;
use crate::params::Resolved;
use crate::{bbr, highspeed, htcp, nv, yeah};

/// An algorithm's response to a loss and its growth law, for one parameter set.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// The fraction of the window KEPT at the first congestion event after a fresh start:
    /// `ssthresh() / cwnd`. `None`: no multiplicative decrease (BBR keeps ssthresh).
    pub beta_kept: Option<f64>,
    /// The smallest and largest kept fraction the rule chooses from (equal when fixed):
    /// H-TCP adapts it to the RTT ratio, HighSpeed's depends on the window.
    pub beta_kept_bounds: Option<(f64, f64)>,
    pub growth: Growth,
}

/// How the window grows back after a decrease.
#[derive(Clone, Debug, PartialEq)]
pub enum Growth {
    /// One segment per RTT (`tcp_cong_avoid_ai(cwnd)`).
    Reno,
    /// W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta_kept) / C).
    Cubic {
        /// C, segments/s^3.
        c: f64,
        /// Grows at least as fast as an emulated Reno flow (TCP friendliness).
        reno_friendly: bool,
        /// The growth clamp, segments per second (`None`: no clamp).
        max_increase_per_s: Option<f64>,
    },
    /// BIC's binary search, at most `max_increment` segments per RTT; Reno up to `low_window`.
    Bic { max_increment: f64, low_window: f64 },
    /// HighSpeed's AIMD table: (cwnd up to which a row holds, md in 1/256); a(w) = row + 1
    /// segments per RTT, b(w) = md / 256.
    HighSpeed { table: &'static [(u32, u32)] },
    /// One segment per `ai_cnt` ACKs above `ai_cnt` segments (Reno below).
    Scalable { ai_cnt: f64 },
    /// H-TCP's alpha(Δ), a function of the time since the last backoff.
    Htcp,
    /// Model-based: the window follows the bandwidth and min-RTT estimates, which expire
    /// after `probe_rtt_interval_s` without a lower RTT (ProbeRTT).
    Bbr { probe_rtt_interval_s: f64 },
    /// Delay-based (Vegas): once per RTT, one segment more while fewer than `queue_min`
    /// segments are queued (cwnd (RTT - baseRTT) / baseRTT), one less above `queue_max`
    /// (Linux's alpha and beta); Reno between rounds.
    Vegas { queue_min: f64, queue_max: f64 },
    /// Reno's growth; after a loss the window is the bandwidth estimate times the least RTT
    /// (Westwood+), not a fraction of the window.
    Westwood,
    /// Reno-like AIMD whose increase (segments per RTT) runs from `alpha_max` at low delay
    /// down to `alpha_min` at the largest delay (TCP-Illinois).
    Illinois { alpha_min: f64, alpha_max: f64 },
    /// Reno's growth while the backlog estimate is below 3 segments, half of it above (TCP
    /// Veno).
    Veno,
    /// Reno's window after a loss, grown as a flow of RTT `rtt0_s` would: rho = srtt / rtt0
    /// (at least 1), 2^rho - 1 segments per ACK in slow start, rho^2 per RTT after (TCP
    /// Hybla).
    Hybla { rtt0_s: f64 },
    /// Scalable's growth (one segment per `ai_cnt` ACKed segments) while fewer than
    /// `queue_max` segments are queued and the queueing delay is below baseRTT/8, Reno's
    /// otherwise; more than `queue_max` queued are removed at once (YeAH-TCP).
    Yeah { ai_cnt: f64, queue_max: f64 },
    /// Reno's growth, which yields: the window halves (or drops to 1 within the inference
    /// time) when the smoothed one-way delay passes `threshold` of its range, and does not
    /// grow within the inference time (TCP-LP; Reno without timestamps).
    Lp { threshold: f64 },
    /// Reno's growth while the round's delivery rate fills the window at the least RTT with
    /// fewer than `pad` segments queued; above, 30% of the excess removed once per round
    /// (TCP-NV).
    Nv,
    /// Reno's growth; once per round a rising delay gradient backs off with probability
    /// 1 - exp(-gradient * factor), keeping `backoff_kept` of the window (TCP CDG).
    Cdg { backoff_kept: f64 },
}

impl Growth {
    /// The growth law's name (what a model dispatches on).
    pub fn name(&self) -> &'static str {
        match self {
            Growth::Reno => "reno",
            Growth::Cubic { .. } => "cubic",
            Growth::Bic { .. } => "bic",
            Growth::HighSpeed { .. } => "highspeed",
            Growth::Scalable { .. } => "scalable",
            Growth::Htcp => "htcp",
            Growth::Bbr { .. } => "bbr",
            Growth::Vegas { .. } => "vegas",
            Growth::Westwood => "westwood",
            Growth::Illinois { .. } => "illinois",
            Growth::Veno => "veno",
            Growth::Hybla { .. } => "hybla",
            Growth::Yeah { .. } => "yeah",
            Growth::Lp { .. } => "lp",
            Growth::Nv => "nv",
            Growth::Cdg { .. } => "cdg",
        }
    }

    /// The law's constants by name (tables aside).
    pub fn constants(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Growth::Reno | Growth::HighSpeed { .. } | Growth::Htcp | Growth::Westwood | Growth::Veno | Growth::Nv => {
                vec![]
            }
            Growth::Cubic { c, reno_friendly, max_increase_per_s } => vec![
                ("c", c),
                ("reno_friendly", f64::from(u8::from(reno_friendly))),
                ("max_increase_per_s", max_increase_per_s.unwrap_or(f64::INFINITY)),
            ],
            Growth::Bic { max_increment, low_window } => {
                vec![("max_increment", max_increment), ("low_window", low_window)]
            }
            Growth::Scalable { ai_cnt } => vec![("ai_cnt", ai_cnt)],
            Growth::Bbr { probe_rtt_interval_s } => vec![("probe_rtt_interval_s", probe_rtt_interval_s)],
            Growth::Vegas { queue_min, queue_max } => vec![("queue_min", queue_min), ("queue_max", queue_max)],
            Growth::Illinois { alpha_min, alpha_max } => vec![("alpha_min", alpha_min), ("alpha_max", alpha_max)],
            Growth::Hybla { rtt0_s } => vec![("rtt0_s", rtt0_s)],
            Growth::Yeah { ai_cnt, queue_max } => vec![("ai_cnt", ai_cnt), ("queue_max", queue_max)],
            Growth::Lp { threshold } => vec![("threshold", threshold)],
            Growth::Cdg { backoff_kept } => vec![("backoff_kept", backoff_kept)],
        }
    }
}

impl Facts {
    /// The kept fraction by window where it depends on the window (HighSpeed): (largest
    /// cwnd of the row, kept); empty otherwise.
    pub fn beta_kept_by_window(&self) -> Vec<(u32, f64)> {
        match self.growth {
            Growth::HighSpeed { table } => table.iter().map(|&(w, md)| (w, highspeed_kept(md))).collect(),
            _ => Vec::new(),
        }
    }

    fn fixed(beta_kept: f64, growth: Growth) -> Self {
        Facts { beta_kept: Some(beta_kept), beta_kept_bounds: Some((beta_kept, beta_kept)), growth }
    }
}

/// `tcp_reno_ssthresh`: `cwnd >> 1`.
pub(crate) fn reno(_: &Resolved) -> Facts {
    Facts::fixed(0.5, Growth::Reno)
}

/// `dctcp_react_to_loss`: a loss halves (an ECN reduction keeps 1 - alpha/2, which is not a
/// loss's fact); Reno's growth.
pub(crate) fn dctcp(_: &Resolved) -> Facts {
    Facts::fixed(0.5, Growth::Reno)
}

/// Linux CUBIC (`cubictcp_recalc_ssthresh`): `cwnd * beta / beta_scale`. C from
/// `bic_scale`: `cube_factor = 2^(10 + 3 BICTCP_HZ) / (bic_scale * 10)` makes
/// K = cbrt(W (1 - beta) 2^10 / (bic_scale * 10)) s, so C = bic_scale * 10 / 2^10.
fn linux_cubic(p: &Resolved, max_increase_per_s: Option<f64>) -> Facts {
    let c = p.f64("bic_scale") * 10.0 / 1024.0;
    let growth = Growth::Cubic { c, reno_friendly: p.bool("tcp_friendliness"), max_increase_per_s };
    Facts::fixed(p.f64("beta") / f64::from(BICTCP_BETA_SCALE), growth)
}

pub(crate) fn cubic(p: &Resolved) -> Facts {
    linux_cubic(p, None)
}

pub(crate) fn cubic_2_2(p: &Resolved) -> Facts {
    linux_cubic(p, None)
}

/// v2.0 clamps growth to `max_increment` segments per 100 ms of min RTT; the 2.6.18
/// scaling bug makes it an eighth of that (`cubic_v2_0`'s module documentation).
pub(crate) fn cubic_v2_0(p: &Resolved) -> Facts {
    let per_s = p.f64("max_increment") * 10.0 / if p.bool("scaling_bug") { 8.0 } else { 1.0 };
    linux_cubic(p, Some(per_s))
}

/// Seed 000's beta (the parameter `decrease`) is the fraction removed: ssthresh = cwnd (1 - beta).
pub(crate) fn cubic_2008(p: &Resolved) -> Facts {
    let growth = Growth::Cubic { c: p.f64("c"), reno_friendly: p.bool("tcp_friendliness"), max_increase_per_s: None };
    Facts::fixed(1.0 - p.f64("decrease"), growth)
}

/// Seed 001's beta is the fraction kept; Smax clamps growth (segments per second).
pub(crate) fn cubic_2005(p: &Resolved) -> Facts {
    let smax = p.f64("smax");
    let growth = Growth::Cubic {
        c: p.f64("c"),
        reno_friendly: p.bool("tcp_friendliness"),
        max_increase_per_s: (smax > 0.0).then_some(smax),
    };
    Facts::fixed(p.f64("beta"), growth)
}

/// RFC 9438's beta_cubic is the fraction kept.
pub(crate) fn cubic_rfc9438(p: &Resolved) -> Facts {
    let growth = Growth::Cubic { c: p.f64("c"), reno_friendly: p.bool("reno_friendly"), max_increase_per_s: None };
    Facts::fixed(p.f64("beta"), growth)
}

/// `bictcp_recalc_ssthresh` above `low_window` (Reno's half below it).
pub(crate) fn bic(p: &Resolved) -> Facts {
    let growth = Growth::Bic { max_increment: p.f64("max_increment"), low_window: p.f64("low_window") };
    Facts::fixed(p.f64("beta") / f64::from(BICTCP_BETA_SCALE), growth)
}

/// `hstcp_ssthresh`: `cwnd - (cwnd * md) >> 8` with md from the row of the window; a fresh
/// connection is on row 0.
pub(crate) fn highspeed(_: &Resolved) -> Facts {
    let table = &highspeed::HSTCP_AIMD_VALS[..];
    let (first, last) = (highspeed_kept(table[0].1), highspeed_kept(table[table.len() - 1].1));
    Facts { beta_kept: Some(first), beta_kept_bounds: Some((first, last)), growth: Growth::HighSpeed { table } }
}

fn highspeed_kept(md: u32) -> f64 {
    1.0 - f64::from(md) / 256.0
}

/// `tcp_scalable_ssthresh`: `cwnd - (cwnd >> md_scale)`.
pub(crate) fn scalable(p: &Resolved) -> Facts {
    let kept = 1.0 - 1.0 / f64::from(1u32 << p.u32("md_scale"));
    Facts::fixed(kept, Growth::Scalable { ai_cnt: p.f64("ai_cnt") })
}

/// `htcp_recalc_ssthresh`: `cwnd * beta >> 7`, beta from BETA_MIN (the start, and after a
/// throughput change) up to BETA_MAX (minRTT / maxRTT).
pub(crate) fn htcp(_: &Resolved) -> Facts {
    let kept = |beta: u8| f64::from(beta) / 128.0;
    Facts {
        beta_kept: Some(kept(htcp::BETA_MIN)),
        beta_kept_bounds: Some((kept(htcp::BETA_MIN), kept(htcp::BETA_MAX))),
        growth: Growth::Htcp,
    }
}

/// `bbr_ssthresh` keeps ssthresh: no multiplicative decrease.
pub(crate) fn bbr(_: &Resolved) -> Facts {
    let growth = Growth::Bbr { probe_rtt_interval_s: f64::from(bbr::MIN_RTT_WIN_SEC) };
    Facts { beta_kept: None, beta_kept_bounds: None, growth }
}

/// BBRv3 has no loss multiplier on the window; its PROBE_RTT comes every
/// `probe_rtt_win_ms`.
pub(crate) fn bbr3(p: &Resolved) -> Facts {
    let growth = Growth::Bbr { probe_rtt_interval_s: p.f64("probe_rtt_win_ms") / 1000.0 };
    Facts { beta_kept: None, beta_kept_bounds: None, growth }
}

/// `tcp_westwood.c`'s ssthresh hook is `tcp_reno_ssthresh` (what `ssthresh()` keeps); the
/// end of the reduction then sets cwnd and ssthresh to `bw_est * rtt_min / mss`, which no
/// fraction bounds.
pub(crate) fn westwood(_: &Resolved) -> Facts {
    Facts { beta_kept: Some(0.5), beta_kept_bounds: None, growth: Growth::Westwood }
}

/// `tcp_illinois.c`: a fresh connection's beta is BETA_BASE (1/2 removed); the delay moves
/// it between BETA_MIN (1/8) and BETA_MAX (1/2) removed.
pub(crate) fn illinois(_: &Resolved) -> Facts {
    use crate::illinois::{ALPHA_MAX, ALPHA_MIN, ALPHA_SHIFT, BETA_MAX, BETA_MIN, BETA_SHIFT};
    let kept = |beta: u32| 1.0 - f64::from(beta) / f64::from(1u32 << BETA_SHIFT);
    let alpha = |a: u32| f64::from(a) / f64::from(1u32 << ALPHA_SHIFT);
    Facts {
        beta_kept: Some(kept(BETA_MAX)),
        beta_kept_bounds: Some((kept(BETA_MAX), kept(BETA_MIN))),
        growth: Growth::Illinois { alpha_min: alpha(ALPHA_MIN), alpha_max: alpha(ALPHA_MAX) },
    }
}

/// `tcp_veno.c` keeps 4/5 while its backlog estimate (0 on a fresh connection) is below
/// beta, half above.
pub(crate) fn veno(_: &Resolved) -> Facts {
    Facts { beta_kept: Some(0.8), beta_kept_bounds: Some((0.5, 0.8)), growth: Growth::Veno }
}

/// `tcp_hybla.c` halves on loss (`tcp_reno_ssthresh`).
pub(crate) fn hybla(p: &Resolved) -> Facts {
    Facts::fixed(0.5, Growth::Hybla { rtt0_s: p.f64("rtt0") / 1000.0 })
}

/// `tcp_yeah_ssthresh` removes the last backlog estimate, at least an eighth and at most
/// half (0 on a fresh connection: 7/8 kept), or half after 16 slow rounds.
pub(crate) fn yeah(_: &Resolved) -> Facts {
    let growth = Growth::Yeah { ai_cnt: f64::from(yeah::SCALABLE_AI_CNT), queue_max: f64::from(yeah::ALPHA) };
    Facts { beta_kept: Some(0.875), beta_kept_bounds: Some((0.5, 0.875)), growth }
}

/// `tcp_lp.c` halves on loss (`tcp_reno_ssthresh`); its early drops at 15% of the delay
/// range are not losses.
pub(crate) fn lp(_: &Resolved) -> Facts {
    Facts::fixed(0.5, Growth::Lp { threshold: 0.15 })
}

/// `tcp_nv.c` keeps 819/1024 at a loss (`nv_loss_dec_factor`); its delay-driven decreases
/// (30% of the window above the rate's) are not losses.
pub(crate) fn nv(_: &Resolved) -> Facts {
    Facts::fixed(f64::from(nv::LOSS_DEC_FACTOR) / 1024.0, Growth::Nv)
}

/// `tcp_cdg.c` at a loss keeps the larger of half the window and the halved shadow window,
/// which on a fresh connection follows the window (half kept); with `use_tolerance`, a loss
/// while the queue is not full keeps it all. Its delay-gradient backoffs keep
/// `backoff_beta`/1024 and are not losses.
pub(crate) fn cdg(p: &Resolved) -> Facts {
    let most = if p.u32("use_tolerance") != 0 { 1.0 } else { 0.5 };
    let growth = Growth::Cdg { backoff_kept: f64::from(p.u32("backoff_beta").min(1024)) / 1024.0 };
    Facts { beta_kept: Some(0.5), beta_kept_bounds: Some((0.5, most)), growth }
}

/// `tcp_vegas.c` halves on loss (`tcp_reno_ssthresh`).
pub(crate) fn vegas(p: &Resolved) -> Facts {
    Facts::fixed(0.5, Growth::Vegas { queue_min: p.f64("queue_min"), queue_max: p.f64("queue_max") })
}

#[cfg(test)]
mod tests {
    use crate::registry::info;
    use crate::tcp::{CaState, TcpState};
    use crate::{Algorithm, CongestionControl, Params, ALGORITHMS};

    /// ssthresh / cwnd at a first loss of a fresh connection in congestion avoidance at
    /// `cwnd`, after one ACK there (HighSpeed picks its table row on an ACK).
    fn kept_on_loss(name: &str, params: &Params, cwnd: u32) -> f64 {
        let mut alg = Algorithm::new(name, params).unwrap();
        let mut tcp =
            TcpState { cwnd, ssthresh: 2, cwnd_limited: true, ca_state: CaState::Open, ..TcpState::default() };
        alg.init(&mut tcp, 10_000_000_000);
        tcp.cwnd = cwnd;
        tcp.ssthresh = 2;
        alg.cong_avoid(&mut tcp, 1, 10_001_000_000);
        tcp.cwnd = cwnd;
        f64::from(alg.ssthresh(&tcp, 10_002_000_000)) / f64::from(cwnd)
    }

    fn facts(name: &str, params: &Params) -> super::Facts {
        info(name).unwrap().facts(params).unwrap()
    }

    #[test]
    fn every_rows_beta_kept_is_what_its_ssthresh_keeps() {
        // At cwnd 2^20 the integer rounding of ssthresh is below 2^-20 of the window;
        // HighSpeed at 38, the top of its first row.
        for a in ALGORITHMS {
            let f = facts(a.name, &Params::new());
            let cwnd = if matches!(a.name, "highspeed") { 38 } else { 1 << 20 };
            let kept = kept_on_loss(a.name, &Params::new(), cwnd);
            match f.beta_kept {
                Some(b) => assert!((kept - b).abs() <= 1.0 / f64::from(cwnd) + 1e-9, "{}: {kept} vs {b}", a.name),
                // BBR: ssthresh stays where it was (2 here).
                None => assert_eq!(kept * f64::from(cwnd), 2.0, "{}", a.name),
            }
        }
    }

    #[test]
    fn beta_kept_follows_the_parameters() {
        // cubic: beta 512/1024 keeps half; cubic-2008 removes its beta (0.3 -> 0.7 kept);
        // cubic-2005 and RFC 9438 keep theirs; scalable with md_scale 1 keeps 1 - 2^-1.
        for (name, key, value, kept) in [
            ("cubic", "beta", 512.0, 0.5),
            ("cubic-2.0", "beta", 512.0, 0.5),
            ("cubic-2008", "decrease", 0.3, 0.7),
            ("cubic-2008-fixed", "decrease", 0.3, 0.7),
            ("cubic-2005", "beta", 0.6, 0.6),
            ("cubic-rfc9438", "beta", 0.6, 0.6),
            ("bic", "beta", 512.0, 0.5),
            ("scalable", "md_scale", 1.0, 0.5),
        ] {
            let p = Params::new().set(key, value);
            assert!((facts(name, &p).beta_kept.unwrap() - kept).abs() < 1e-12, "{name}");
            assert!((kept_on_loss(name, &p, 1 << 20) - kept).abs() < 1e-6, "{name}");
        }
    }

    /// The fraction of the window a decrease parameter's value keeps, read through its unit
    /// (`None`: not a decrease unit).
    fn kept_by_unit(unit: &str, value: f64) -> Option<f64> {
        match unit {
            "1/1024" => Some(value / 1024.0),
            "fraction kept" => Some(value),
            "fraction removed" => Some(1.0 - value),
            "2^-n removed" => Some(1.0 - (-value).exp2()),
            _ => None,
        }
    }

    #[test]
    fn beta_means_the_fraction_kept_everywhere() {
        // One meaning per word: a parameter named beta is what ssthresh keeps (Linux's in
        // 1/1024, the papers' as a fraction); seed 000's fraction removed is `decrease`, and
        // its old name is refused with the new one.
        for a in ALGORITHMS {
            for p in a.params.iter().filter(|p| p.name == "beta") {
                assert!(matches!(p.unit, "1/1024" | "fraction kept"), "{} beta in {}", a.name, p.unit);
            }
        }
        for name in ["cubic-2008", "cubic-2008-fixed"] {
            let err = info(name).unwrap().facts(&Params::new().set("beta", 0.3)).unwrap_err();
            assert!(err.0.starts_with(&format!("parameter 'beta' of algorithm '{name}' is now 'decrease' (")), "{err}");
        }
        // Vegas' queue bounds, Linux's alpha/beta/gamma, carry names of their own.
        let err = info("vegas").unwrap().facts(&Params::new().set("beta", 4.0)).unwrap_err();
        assert!(err.0.starts_with("parameter 'beta' of algorithm 'vegas' is now 'queue_max' ("), "{err}");
    }

    #[test]
    fn decrease_units_say_what_ssthresh_keeps() {
        // Linux's beta is in 1/1024: bictcp_recalc_ssthresh / cubictcp_recalc_ssthresh keep
        // cwnd * beta / BICTCP_BETA_SCALE (1024). Seed 000's Algorithm 1 (cubic-2008) sets
        // ssthresh = cwnd (1 - beta): its beta is removed; seed 001 (cubic-2005) and RFC 9438
        // keep cwnd * beta. tcp_scalable.c removes cwnd >> md_scale. The defaults (0.2, 0.8,
        // 0.7, 717, 819, 3) tell kept from removed apart.
        let unit = |name, param| info(name).unwrap().params.iter().find(|p| p.name == param).unwrap().unit;
        assert_eq!(unit("cubic", "beta"), "1/1024");
        assert_eq!(unit("cubic-2008", "decrease"), "fraction removed");
        assert_eq!((unit("cubic-2005", "beta"), unit("cubic-rfc9438", "beta")), ("fraction kept", "fraction kept"));
        let mut read = 0;
        for a in ALGORITHMS {
            for p in a.params {
                let Some(kept) = kept_by_unit(p.unit, p.default) else { continue };
                let measured = kept_on_loss(a.name, &Params::new(), 1 << 20);
                assert!(
                    (measured - kept).abs() < 1e-6,
                    "{} {} in {}: ssthresh keeps {measured}",
                    a.name,
                    p.name,
                    p.unit
                );
                read += 1;
            }
        }
        // The four Linux CUBIC/BIC betas, the three papers' betas and their fixed-point
        // ports, scalable's md_scale; at least, as an algorithm added to the registry with
        // such a unit is read too (docs/tutorials/your-own-variant.md adds one).
        assert!(read >= 11, "{read}");
    }

    #[test]
    fn coefficient_units_say_c() {
        // Linux: cube_rtt_scale = bic_scale * 10 over ticks of 2^-10 s, so C = bic_scale *
        // 10/1024 segments/s^3; the papers' and RFC 9438's c is C.
        let mut read = 0;
        for a in ALGORITHMS {
            for p in a.params {
                let scale = match p.unit {
                    "segments/s^3" => 1.0,
                    "10/1024 segments/s^3" => 10.0 / 1024.0,
                    _ => continue,
                };
                match facts(a.name, &Params::new()).growth {
                    super::Growth::Cubic { c, .. } => assert_eq!(c, p.default * scale, "{} {}", a.name, p.name),
                    g => panic!("{}: {g:?}", a.name),
                }
                read += 1;
            }
        }
        // Every CUBIC: three Linux versions, three papers' and their ports (at least, as
        // above).
        assert!(read >= 9, "{read}");
    }

    #[test]
    fn kernel_constants() {
        // tcp_cubic.c: beta = 717 (/1024), bic_scale = 41 (C = 410/1024); tcp_bic.c and
        // CUBIC v2.0: beta = 819; tcp_cong.c: Reno halves.
        assert_eq!(facts("cubic", &Params::new()).beta_kept, Some(717.0 / 1024.0));
        assert_eq!(facts("cubic-2.2", &Params::new()).beta_kept, Some(717.0 / 1024.0));
        assert_eq!(facts("cubic-2.0", &Params::new()).beta_kept, Some(819.0 / 1024.0));
        assert_eq!(facts("bic", &Params::new()).beta_kept, Some(819.0 / 1024.0));
        assert_eq!(facts("reno", &Params::new()).beta_kept, Some(0.5));
        assert_eq!(facts("tahoe", &Params::new()).beta_kept, Some(0.5));
        let c = |name| match facts(name, &Params::new()).growth {
            super::Growth::Cubic { c, .. } => c,
            g => panic!("{name}: {g:?}"),
        };
        assert_eq!(c("cubic"), 410.0 / 1024.0);
        assert_eq!(c("cubic-2008"), 0.4);
        // tcp_scalable.c: TCP_SCALABLE_MD_SCALE 3 keeps 7/8.
        assert_eq!(facts("scalable", &Params::new()).beta_kept, Some(0.875));
        // tcp_htcp.c: BETA_MIN = 128 >> 1, BETA_MAX = 102 (of 128).
        let h = facts("htcp", &Params::new());
        assert_eq!((h.beta_kept, h.beta_kept_bounds), (Some(0.5), Some((0.5, 102.0 / 128.0))));
        // tcp_bbr.c: bbr_min_rtt_win_sec = 10.
        assert_eq!(facts("bbr", &Params::new()).growth.constants(), vec![("probe_rtt_interval_s", 10.0)]);
    }

    #[test]
    fn highspeed_keeps_what_its_table_row_says() {
        // tcp_highspeed.c hstcp_aimd_vals: {38, 128} (b = 0.5) first, {84035, 25} near
        // RFC 3649's High_Window, {89053, 24} last: kept 1 - 24/256 = 0.90625.
        let f = facts("highspeed", &Params::new());
        assert_eq!(f.beta_kept_bounds, Some((0.5, 1.0 - 24.0 / 256.0)));
        let rows = f.beta_kept_by_window();
        assert_eq!((rows.len(), rows[0], rows[1]), (72, (38, 0.5), (118, 1.0 - 112.0 / 256.0)));
        // A window at the top of a row uses that row (to one segment of rounding).
        for &(w, want) in rows.iter().step_by(7) {
            let kept = kept_on_loss("highspeed", &Params::new(), w);
            assert!((kept - want).abs() <= 1.0 / f64::from(w), "row ({w}, {want}): {kept}");
        }
    }

    #[test]
    fn bad_parameters_are_refused_as_when_building() {
        let err = info("cubic").unwrap().facts(&Params::new().set("beta", 2000.0)).unwrap_err();
        assert!(err.0.contains("'beta'") && err.0.contains("[1, 1023]"), "{err}");
        let err = crate::registry::lookup("cubik").err().unwrap();
        assert!(err.0.contains("'cubik'") && err.0.contains("htcp"), "{err}");
    }
}
