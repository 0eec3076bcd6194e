//! `cargo fuzz run vm`: the vm parsers (see `harness.rs` for the invariants).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::vm(data));
