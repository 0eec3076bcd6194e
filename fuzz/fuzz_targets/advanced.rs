//! `cargo fuzz run advanced`: the advanced parsers (see `harness.rs` for the invariants).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::advanced(data));
