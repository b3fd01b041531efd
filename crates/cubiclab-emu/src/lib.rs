//! A user-space bottleneck between two network namespaces, in the manner of Mahimahi
//! (Netravali et al., USENIX ATC 2015): one process holds a TUN device in the sender's
//! namespace (side A) and one in the receiver's (side B), reads every IP packet the kernel
//! routes into either, and writes it into the other after the emulated path.
//!
//! The path is the simulator's, the same code (`cubiclab-path`, built by `Link::new` from
//! the same scenario values and seed): forward (A → B) through the bottleneck — a buffer
//! under any of the path's queue disciplines in front of a transmitter of fixed rate, random
//! loss on packets as they leave it — then the flow's forward delay line; backward (B → A) through
//! the reverse bottleneck and the flow's reverse delay line. A flow is told apart by its
//! server's port (the TCP destination or source port: servers live on either side, and the
//! clients' ports lie outside the servers' range); other packets (ICMP, unknown ports) take
//! the default delays.
//!
//! The disciplines see each segment's ECN field as its IPv4 header gives it; a segment
//! a discipline marks leaves with CE (its header rewritten, the checksum updated as
//! RFC 1624 says), counted per link and, once delivered, per flow.
//!
//! Serialization is scheduled on the virtual clock (a packet starts when the previous one
//! finished, not when the loop noticed it), so the rate is exact on average however late the
//! loop wakes; the lateness of each delivery (time written minus time due) is measured and
//! reported.
//!
//! A path of several links runs as in the simulator: each way chains that way's direction
//! of every link, and each packet follows its flow's route across them, a delay line after
//! each link.
//!
//! Modules: [`config`] (the `key value` configuration), [`path`] (one link direction and its
//! delay lines, over a slab of packets), [`chain`] (a way's links along the flows'
//! routes), [`tun`] (the devices, offload and header arithmetic), [`sys`] (clock,
//! namespaces, scheduling, signals), [`record`] (what a run writes), [`run`] (the loop).

pub mod chain;
pub mod config;
pub mod path;
pub mod pcap;
pub mod record;
pub mod run;
pub mod sys;
pub mod tun;

pub use config::{Config, FlowCfg};
pub use record::Summary;
pub use run::run;
pub use sys::install_signal_handlers;
