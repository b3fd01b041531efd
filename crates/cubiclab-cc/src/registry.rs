//! Every algorithm by name: a closed enum (no boxing on the simulator's hot path), built
//! from a name and checked parameters, like Linux's registry of `tcp_congestion_ops`.

use crate::params::{ParamError, ParamSpec, Params};
use crate::reno::{Reno, Tahoe};
use crate::tcp::{AckSample, CaEvent, CaState, TcpState};
use crate::CongestionControl;

/// One registry entry: the name users write, what it follows, and its parameters.
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub reference: &'static str,
    pub params: &'static [ParamSpec],
}

macro_rules! registry {
    ($( $variant:ident($ty:ty) = $name:literal, $reference:literal; )*) => {
        /// Any algorithm of the library.
        #[derive(Clone, Debug)]
        pub enum Algorithm {
            $( $variant($ty), )*
        }

        /// Every algorithm, in the order `cubiclab` lists them.
        pub const ALGORITHMS: &[AlgorithmInfo] = &[
            $( AlgorithmInfo { name: $name, reference: $reference, params: <$ty>::PARAMS }, )*
        ];

        impl Algorithm {
            /// Build an algorithm by name; unknown names and bad parameters are errors that
            /// name what is allowed.
            pub fn new(name: &str, params: &Params) -> Result<Self, ParamError> {
                match name {
                    $( $name => Ok(Algorithm::$variant(<$ty>::new(params)?)), )*
                    _ => Err(ParamError(format!(
                        "unknown algorithm '{name}'; allowed: {}",
                        ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
                    ))),
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
            fn undo_cwnd(&mut self, tcp: &mut TcpState, now_ns: u64) -> u32 {
                match self { $( Algorithm::$variant(a) => a.undo_cwnd(tcp, now_ns), )* }
            }
            #[inline]
            fn pkts_acked(&mut self, tcp: &mut TcpState, sample: &AckSample, now_ns: u64) {
                match self { $( Algorithm::$variant(a) => a.pkts_acked(tcp, sample, now_ns), )* }
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
    Reno(Reno) = "reno", "Linux net/ipv4/tcp_cong.c tcp_reno_* (6.x); RFC 5681";
    Tahoe(Tahoe) = "tahoe", "RFC 5681 without fast recovery (seed 003)";
    Cubic(crate::cubic::Cubic) = "cubic", "Linux net/ipv4/tcp_cubic.c v2.3 (6.x)";
}

/// The registry entry for `name`.
pub fn info(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
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
    fn names_round_trip() {
        for a in ALGORITHMS {
            let alg = Algorithm::new(a.name, &Params::new()).unwrap();
            assert_eq!(alg.name(), a.name);
        }
    }
}
