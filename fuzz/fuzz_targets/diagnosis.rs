//! `cargo fuzz run diagnosis`: two hosts' captures (see `harness::captures` for the input
//! layout) through facts → diagnose → JSON and human reports, with the outcome
//! markings enforced (nothing passes or reads `hca` on an output that broke off).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::diagnosis(data));
