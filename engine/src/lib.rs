//! The pure pipeline of pvrdma-doctor, as a library a front end builds on: captured
//! outputs ([`capture`], keyed by [`catalogue`] id) → [`facts`] (parsed, typed) →
//! [`diagnose`] (checks and verdicts) → [`report`] (human, JSON). Nothing here opens a
//! connection or starts a runtime; collecting the outputs is the front end's job.
//!
//! ```
//! use pvrdma_engine::capture::{CaptureSource, HostCapture};
//! let host = HostCapture::new("esx01", CaptureSource::Directory);
//! let diagnosis = pvrdma_engine::diagnose::diagnose(&[host]);
//! // Nothing was collected, so nothing passes: the host is not reported healthy.
//! assert_ne!(diagnosis.exit_code(), pvrdma_engine::exit::HEALTHY);
//! ```
#![forbid(unsafe_code)]
pub mod baseline;
pub mod capture;
pub mod catalogue;
pub mod diagnose;
pub mod duration;
pub mod exit;
pub mod facts;
pub mod report;
