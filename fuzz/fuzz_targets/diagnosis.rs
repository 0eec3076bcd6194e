//! `cargo fuzz run diagnosis`: two hosts' captures (see `harness::captures` for the input
//! layout) through facts → diagnose → JSON and human reports.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::diagnosis_with(data, cfg!(feature = "strict-outcomes")));
