//! Load runs of `.http` requests (`volley load`): the selected requests, a weighted
//! mix of them, or the whole file in order, sent by virtual users (the closed model)
//! or at a constant rate (the open model, latencies from the time each request was
//! due), through the engine's client; latencies in HDR histograms that shards' reports
//! add exactly; thresholds that fail a CI job; a self-contained HTML report.

pub mod format;
pub mod histogram;
pub mod html;
pub mod report;
mod runner;
mod tally;
pub mod threshold;

pub use histogram::Latencies;
pub use report::{LoadReport, MergeError, ModelInfo};
pub use runner::{Load, LoadError, Plan, Progress, Stop, Work, file_thresholds, prepare, run};
pub use threshold::{CheckThreshold, Checked, Threshold, ThresholdError};
