//! The cubiclab packet simulator (DESIGN.md, layer 2): a discrete-event dumbbell in
//! integer nanoseconds, running the `cubiclab-cc` algorithms (the same code, never a copy).
//! The same scenario and seed give bit-identical results.

pub mod engine;
pub mod link;
pub mod loss;
pub mod packet;
pub mod pipe;
pub mod queue;
pub mod record;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod traffic;

pub use loss::LossSpec;
pub use queue::{CoDelSpec, RedSpec};
pub use queue::{Limit, QueueDiscipline};
pub use record::{Column, Results, Table};
pub use scenario::{
    Bottleneck, CwndRecording, Direction, FlowGroup, Plan, Record, RttDist, Scenario, WebDirection, WebGroup,
};
pub use sim::Sim;
pub use tcp::Recovery;
