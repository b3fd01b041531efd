//! Every algorithm by name: a closed enum (no boxing on the simulator's hot path), built
//! from a name and checked parameters, like Linux's registry of `tcp_congestion_ops`.

use crate::bic::Bic;
use crate::facts::{self, Facts};
use crate::highspeed::HighSpeed;
use crate::htcp::Htcp;
use crate::params::{ParamError, ParamSpec, Params, Resolved};
use crate::reno::{Reno, Tahoe};
use crate::scalable::Scalable;
use crate::tcp::{AckEvent, AckSample, CaEvent, CaState, RateSample, TcpState};
use crate::CongestionControl;

/// One registry entry: the name users write, what it follows, its parameters, and its
/// decrease and growth facts.
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub reference: &'static str,
    pub params: &'static [ParamSpec],
    facts: fn(&Resolved) -> Facts,
}

impl AlgorithmInfo {
    /// The algorithm's decrease and growth for `params` (checked as when building it).
    pub fn facts(&self, params: &Params) -> Result<Facts, ParamError> {
        Ok((self.facts)(&params.check(self.name, self.params)?))
    }
}

macro_rules! registry {
    ($( $variant:ident($ty:ty) = $name:literal, $reference:literal, $facts:path; )*) => {
        /// Any algorithm of the library.
        #[derive(Clone, Debug)]
        pub enum Algorithm {
            $( $variant($ty), )*
        }

        /// Every algorithm, in the order `cubiclab` lists them.
        pub const ALGORITHMS: &[AlgorithmInfo] = &[
            $( AlgorithmInfo { name: $name, reference: $reference, params: <$ty>::PARAMS, facts: $facts }, )*
        ];

        impl Algorithm {
            /// Build an algorithm by name; unknown names and bad parameters are errors that
            /// name what is allowed.
            pub fn new(name: &str, params: &Params) -> Result<Self, ParamError> {
                match name {
                    $( $name => Ok(Algorithm::$variant(<$ty>::new(params)?)), )*
                    _ => Err(unknown(name)),
                }
            }

            /// The registry name of this algorithm.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Algorithm::$variant(_) => $name, )*
                }
            }
        }

        impl CongestionControl for Algorithm {
            #[inline]
            fn init(&mut self, tcp: &mut TcpState, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.init(tcp, now_ns), )* }
            }
            #[inline]
            fn ssthresh(&mut self, tcp: &TcpState, now_ns: u64) -> u32 {
                match self { $( Algorithm::$variant(a) => a.ssthresh(tcp, now_ns), )* }
            }
            #[inline]
            fn cong_avoid(&mut self, tcp: &mut TcpState, acked: u32, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.cong_avoid(tcp, acked, now_ns), )* }
            }
            #[inline]
            fn set_state(&mut self, tcp: &mut TcpState, new_state: CaState, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.set_state(tcp, new_state, now_ns), )* }
            }
            #[inline]
            fn cwnd_event(&mut self, tcp: &mut TcpState, event: CaEvent, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.cwnd_event(tcp, event, now_ns), )* }
            }
            #[inline]
            fn has_in_ack_event(&self) -> bool {
                match self { $( Algorithm::$variant(a) => a.has_in_ack_event(), )* }
            }
            #[inline]
            fn needs_ecn(&self) -> bool {
                match self { $( Algorithm::$variant(a) => a.needs_ecn(), )* }
            }
            #[inline]
            fn undo_cwnd(&mut self, tcp: &mut TcpState, now_ns: u64) -> u32 {
                match self { $( Algorithm::$variant(a) => a.undo_cwnd(tcp, now_ns), )* }
            }
            #[inline]
            fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.pkts_acked(tcp, sample, now_ns), )* }
            }
            #[inline]
            fn in_ack_event(&mut self, tcp: &mut TcpState, ev: AckEvent, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.in_ack_event(tcp, ev, now_ns), )* }
            }
            #[inline]
            fn has_cong_control(&self) -> bool {
                match self { $( Algorithm::$variant(a) => a.has_cong_control(), )* }
            }
            #[inline]
            fn cong_control(&mut self, tcp: &mut TcpState, rs: &RateSample, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.cong_control(tcp, rs, now_ns), )* }
            }
            #[inline]
            fn min_tso_segs(&self, tcp: &TcpState) -> Option<u32> {
                match self { $( Algorithm::$variant(a) => a.min_tso_segs(tcp), )* }
            }
            fn seed_random(&mut self, seed: u64) {
                match self { $( Algorithm::$variant(a) => a.seed_random(seed), )* }
            }
            fn takes_run_seed(&self) -> bool {
                match self { $( Algorithm::$variant(a) => a.takes_run_seed(), )* }
            }
            #[inline]
            fn fast_recovery(&self) -> bool {
                match self { $( Algorithm::$variant(a) => a.fast_recovery(), )* }
            }
            fn vars(&self, out: &mut dyn FnMut(&'static str, f64)) {
                match self { $( Algorithm::$variant(a) => a.vars(out), )* }
            }
        }
    };
}

registry! {
    Cubic(crate::cubic::Cubic) = "cubic", "Linux net/ipv4/tcp_cubic.c v2.3 (6.x); hystart = \"hystart++\": RFC 9406", facts::cubic;
    CubicV20(crate::cubic_v2_0::CubicV20) = "cubic-2.0", "Linux net/ipv4/tcp_cubic.c v2.0 (2.6.19-2.6.21), the 2.6.18 scaling bug as a parameter", facts::cubic_v2_0;
    Cubic22(crate::cubic_2_2::Cubic22) = "cubic-2.2", "Linux net/ipv4/tcp_cubic.c v2.2 (2.6.25-2.6.28), the code seed 000 measured", facts::cubic_2_2;
    Cubic2008(crate::cubic_2008::Cubic2008) = "cubic-2008", "Seed 000 Algorithm 1 (Linux CUBIC v2.2 as the 2008 paper describes it)", facts::cubic_2008;
    Cubic2008Fixed(crate::cubic_2008_fixed::Cubic2008Fixed) = "cubic-2008-fixed", "Seed 000 Algorithm 1 in the integers of its BPF port (jiffies, C to 2^-10, K to 2^-10 s)", facts::cubic_2008;
    Cubic2005(crate::cubic_2005::Cubic2005) = "cubic-2005", "Seed 001 (Rhee, Xu, PFLDnet 2005): beta kept 0.8, Smax clamp, TCP mode Eq. 4", facts::cubic_2005;
    Cubic2005Fixed(crate::cubic_2005_fixed::Cubic2005Fixed) = "cubic-2005-fixed", "Seed 001 CUBIC in the integers of its BPF port (us clock, C to 2^-10, K to 2^-10 s)", facts::cubic_2005;
    CubicRfc9438(crate::cubic_rfc9438::CubicRfc9438) = "cubic-rfc9438", "RFC 9438 Section 4 (W_est, alpha_cubic, target clamped to 1.5 cwnd)", facts::cubic_rfc9438;
    CubicRfc9438Fixed(crate::cubic_rfc9438_fixed::CubicRfc9438Fixed) = "cubic-rfc9438-fixed", "RFC 9438 in the integers of its BPF port (us clock, C to 2^-10, K and W_max to 2^-10)", facts::cubic_rfc9438;
    Reno(Reno) = "reno", "Linux net/ipv4/tcp_cong.c tcp_reno_* (6.x); RFC 5681", facts::reno;
    Tahoe(Tahoe) = "tahoe", "RFC 5681 without fast recovery (seed 003)", facts::reno;
    Bic(Bic) = "bic", "Linux net/ipv4/tcp_bic.c (6.x)", facts::bic;
    HighSpeed(HighSpeed) = "highspeed", "Linux net/ipv4/tcp_highspeed.c (6.x); RFC 3649", facts::highspeed;
    Scalable(Scalable) = "scalable", "Linux net/ipv4/tcp_scalable.c (6.x)", facts::scalable;
    Htcp(Htcp) = "htcp", "Linux net/ipv4/tcp_htcp.c (6.x)", facts::htcp;
    Dctcp(crate::dctcp::Dctcp) = "dctcp", "Linux net/ipv4/tcp_dctcp.c and tcp_dctcp.h (6.x; RFC 8257)", facts::dctcp;
    Bbr(crate::bbr::Bbr) = "bbr", "Linux net/ipv4/tcp_bbr.c (BBR v1, 6.x), with lib/win_minmax.c", facts::bbr;
    Vegas(crate::vegas::Vegas) = "vegas", "Linux net/ipv4/tcp_vegas.c (6.x)", facts::vegas;
    Westwood(crate::westwood::Westwood) = "westwood", "Linux net/ipv4/tcp_westwood.c (Westwood+, 6.x)", facts::westwood;
    Illinois(crate::illinois::Illinois) = "illinois", "Linux net/ipv4/tcp_illinois.c (6.x)", facts::illinois;
    Veno(crate::veno::Veno) = "veno", "Linux net/ipv4/tcp_veno.c (6.x)", facts::veno;
    Hybla(crate::hybla::Hybla) = "hybla", "Linux net/ipv4/tcp_hybla.c (6.x)", facts::hybla;
    Yeah(crate::yeah::Yeah) = "yeah", "Linux net/ipv4/tcp_yeah.c (6.x), on tcp_vegas.c's RTT filter", facts::yeah;
    Lp(crate::lp::Lp) = "lp", "Linux net/ipv4/tcp_lp.c (6.x); Reno where the host carries no timestamps", facts::lp;
    Bbr3(crate::bbr3::Bbr3) = "bbr3", "Google BBRv3, github.com/google/bbr v3 net/ipv4/tcp_bbr.c (001a430b), with its tcp_rate.c sample fields", facts::bbr3;
    Nv(crate::nv::Nv) = "nv", "Linux net/ipv4/tcp_nv.c (6.x)", facts::nv;
    Cdg(crate::cdg::Cdg) = "cdg", "Linux net/ipv4/tcp_cdg.c (6.x); backoff draws from the run's seed", facts::cdg;
}

/// The registry entry for `name`.
pub fn info(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// The registry entry for `name`, or the error that names the algorithms there are.
pub fn lookup(name: &str) -> Result<&'static AlgorithmInfo, ParamError> {
    info(name).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> ParamError {
    ParamError(format!(
        "unknown algorithm '{name}'; allowed: {}",
        ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_lists_names() {
        let err = Algorithm::new("cubik", &Params::new()).unwrap_err();
        assert!(err.0.contains("'cubik'") && err.0.contains("reno"), "{err}");
    }

    #[test]
    fn every_parameter_has_a_unit() {
        for a in ALGORITHMS {
            for p in a.params {
                assert!(!p.unit.trim().is_empty(), "{} {}", a.name, p.name);
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for a in ALGORITHMS {
            let alg = Algorithm::new(a.name, &Params::new()).unwrap();
            assert_eq!(alg.name(), a.name);
        }
    }
}
