//! Values of keywords: checked as ssh checks them, and the timeouts used.
use super::*;

#[test]
fn values_of_unused_keywords_ssh_refuses_are_refused() {
    for line in [
        "ConnectTimeout -1",
        "ServerAliveInterval soon",
        "LogLevel junk",
        "ServerAliveCountMax x",
        "ConnectTimeout 10 20",
        "Ciphers aes128-ctr extra",
        "CanonicalDomains none extra",
        "CanonicalDomains .bad",
    ] {
        // Inside a block that does not apply too: ssh checks the value before that.
        let (_dir, cfg) = config(&format!("Host nothing-matches\n  {line}\n"));
        assert!(resolve(&cfg, "esx01").is_err(), "{line}");
    }
    for line in [
        "ConnectTimeout 10",
        "ServerAliveInterval 1m30s",
        "LogLevel DEBUG3",
        "ConnectionAttempts 3",
        "CanonicalDomains none",
    ] {
        let (_dir, cfg) = config(&format!("{line}\n"));
        assert!(resolve(&cfg, "esx01").is_ok(), "{line}");
    }
}

#[test]
fn connect_timeout_is_the_first_value_obtained_command_line_first() {
    let (_dir, cfg) = config("Host esx01\n  ConnectTimeout 1m5s\nHost *\n  ConnectTimeout 20\n");
    assert_eq!(ok(&cfg, "esx01").connect_timeout, Some(65));
    assert_eq!(ok(&cfg, "esx02").connect_timeout, Some(20));
    let o = cli(&[CliOption::Option("ConnectTimeout=7".into())]);
    let c = cfg.resolve(&HostArg::named("esx01"), &o).unwrap();
    assert_eq!(c.connect_timeout, Some(7));
    let (_dir, cfg) = config("Host esx01\n  ConnectTimeout 0\n");
    assert_eq!(ok(&cfg, "esx01").connect_timeout, Some(0));
    assert_eq!(ok(&cfg, "esx02").connect_timeout, None);
}
