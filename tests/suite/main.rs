//! Every integration test that needs no `sshd`, in one binary (ripgrep's `tests/tests.rs`
//! layout): each integration-test binary links russh, tokio and clap, so one per file cost a
//! link and about 140 MB of `target/` each. The tests built around `sshd` are their own
//! binary; the few here that need one (a shipped unit's command line) use the same support.
#[path = "../support/mod.rs"]
mod support;

mod alerting;
mod alerting_host_fault;
mod alerting_rules;
mod alerting_vcenter;
mod api_names;
mod bundle;
mod bundle_cli;
mod cli;
mod demo;
mod docs;
mod drift;
mod esxi_commands_doc;
mod evidence;
mod fuzz_corpus;
mod fuzz_regressions;
mod golden;
mod html_chromium;
mod html_fixes;
mod install_test_deps;
mod layering;
mod nagios;
mod no_ssh;
mod no_ssh_fixes;
mod nodeset_cli;
mod nodeset_oracle;
mod plan;
mod plan_apply;
mod probe;
mod prometheus;
mod readme;
mod redact;
mod redact_vcenter;
mod sample_from_bundle;
mod schema;
mod serve;
mod serve_auth;
mod serve_budget;
mod serve_vcenter;
mod serve_vcenter_follow;
mod skips;
mod ssh_config_diff;
mod tmux;
mod vcenter_cli;
mod vcenter_cli_options;
mod vmsupport;
mod watch;
