//! What every renderer says of one diagnosis.

/// A chosen VM not diagnosed is named, with why, in every rendering a person, a script or
/// a monitoring system reads.
#[test]
fn a_chosen_vm_not_diagnosed_is_named_in_every_format() {
    use crate::capture::{VmChoice, VmLeftOut};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/healthy-cluster");
    let captures = crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads");
    let chosen = VmChoice {
        vms: vec!["hpc-node01".into(), "hpc-node07".into()],
        left_out: vec![VmLeftOut {
            vm: "hpc-node09".into(),
            host: "esx09".into(),
            reason: "not responding".into(),
        }],
    };
    let d = crate::diagnose::diagnose_selected(&captures, &crate::diagnose::Selection::of_vms(Some(&chosen)));
    let human = crate::report::render(&d, crate::report::Format::Human, false);
    assert!(
        human.contains("not running on the hosts diagnosed: hpc-node07"),
        "{human}"
    );
    assert!(
        human.contains("not diagnosed, on hosts this run left out: hpc-node09 (on esx09, not responding)"),
        "{human}"
    );
    assert!(human.contains("; 2 of 3 chosen VMs not diagnosed"), "{human}");
    let json = crate::report::json::to_value(&d);
    assert_eq!(json["exit_code"], 3);
    assert_eq!(
        json["vm_scope"]["not_diagnosed"],
        serde_json::json!(["hpc-node07", "hpc-node09"])
    );
    assert_eq!(json["vm_scope"]["on_hosts_left_out"][0]["host"], "esx09");
    let nagios = crate::report::nagios::render(&d, &crate::report::nagios::NagiosOptions::default());
    assert_eq!(nagios.state, crate::report::nagios::State::Unknown, "{}", nagios.text);
    assert!(
        nagios
            .text
            .starts_with("PVRDMA UNKNOWN - hpc-node07, hpc-node09: VM not diagnosed"),
        "{}",
        nagios.text
    );
    assert!(
        nagios.text.contains(
            "[UNKNOWN] VM hpc-node09: not diagnosed: it runs on esx09, which this run left out (not responding)"
        ),
        "{}",
        nagios.text
    );
    let metrics = crate::report::prometheus::render(&d, &crate::report::prometheus::PrometheusOptions::rendered_now());
    for (vm, v) in [("hpc-node01", 1), ("hpc-node07", 0), ("hpc-node09", 0)] {
        let series = format!("\npvrdma_vm_diagnosed{{vm_name=\"{vm}\"}} {v}\n");
        assert!(metrics.contains(&series), "{series}: {metrics}");
    }
}
