//! TCP endpoints: a sender whose window is driven by a `cubiclab-cc` algorithm, with
//! Linux-style loss recovery (SACK scoreboard or NewReno), PRR and RTO; and a receiver
//! with delayed ACKs.

pub mod comp_sack;
pub mod frto;
pub mod rack;
pub mod rcv_window;
pub mod receiver;
pub mod scoreboard;
pub mod sender;
pub mod tlp;

pub use rcv_window::RcvWindow;
pub use receiver::Receiver;
pub use sender::{Recovery, Segment, Sender, SenderConfig, Timeout, Timer};
