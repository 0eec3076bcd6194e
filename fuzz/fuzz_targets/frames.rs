//! `cargo fuzz run frames`: the batch-frame decoder on a stream a host chose (see `harness.rs` for the invariants).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::frames(data));
