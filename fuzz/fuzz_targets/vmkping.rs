//! `cargo fuzz run vmkping`: the vmkping parsers of `--probe` (see `harness.rs` for the invariants).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::vmkping(data));
