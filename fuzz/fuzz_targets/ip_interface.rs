//! `cargo fuzz run ip_interface`: the ip_interface parsers (see `harness.rs` for the invariants).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pvrdma_fuzz::ip_interface(data));
