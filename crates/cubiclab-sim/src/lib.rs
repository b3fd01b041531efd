//! The cubiclab packet simulator (DESIGN.md, layer 2): a discrete-event dumbbell in
//! integer nanoseconds, running the `cubiclab-cc` algorithms (the same code, never a copy).
//! The same scenario and seed give bit-identical results.

pub mod engine;
pub mod packet;
pub mod pcap;
pub mod pipe;
pub mod record;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod traffic;

// The bottleneck path is the shared `cubiclab-path` crate (the emulator runs the same code).
pub use cubiclab_path::{loss, queue, rng};
pub use cubiclab_path::{CoDelSpec, Limit, LossSpec, QueueDiscipline, QueueSettings, RedSpec};
pub use record::{Column, Results, Table};
pub use scenario::{
    CwndRecording, Direction, DuplexLink, FlowGroup, Plan, PlannedHop, Record, RttDist, Scenario, WebDirection,
    WebGroup, BOTTLENECK, MAX_HOPS,
};
pub use sim::Sim;
pub use tcp::Recovery;
