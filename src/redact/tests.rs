use super::replace::at_edges;
use super::*;
use pvrdma_engine::capture::{CaptureSource, Failure, RawOutput};

fn capture(host: &str, id: &str, stdout: &str) -> HostCapture {
    let mut c = HostCapture::new(host, CaptureSource::Live);
    c.outputs.insert(
        id.to_string(),
        RawOutput {
            stdout: stdout.to_string(),
            exit_status: Some(0),
            ..RawOutput::new(id, "esxcli")
        },
    );
    c
}

#[test]
fn ipv4_table_is_realigned_and_keeps_its_shape() {
    let table = "Name  IPv4 Address    IPv4 Netmask     IPv4 Broadcast  Address Type  Gateway         DHCP DNS\n----  --------------  ---------------  --------------  ------------  --------------  --------\nvmk0  147.75.201.186  255.255.255.248  147.75.201.191  STATIC        147.75.201.185     false\nvmk1  10.8.1.2        255.255.255.248  10.8.1.7        STATIC        0.0.0.0            false\n";
    let mut r = Redactor::new();
    let out = r.redact_captures(&[capture("esx01", "ipv4", table)]).unwrap();
    let text = &out[0].outputs["ipv4"].stdout;
    assert_eq!(
        text,
        "Name  IPv4 Address    IPv4 Netmask     IPv4 Broadcast  Address Type  Gateway         DHCP DNS\n----  --------------  ---------------  --------------  ------------  --------------  --------\nvmk0  198.18.0.186    255.255.255.248  198.18.0.191    STATIC        198.18.0.185       false\nvmk1  198.18.1.2      255.255.255.248  198.18.1.7      STATIC        0.0.0.0            false\n"
    );
}

#[test]
fn short_addresses_widen_the_column() {
    let table = "Name  IP       Up\n----  -------  --\nvmk0  1.2.3.4  true\n";
    let r = {
        let mut r = Redactor::new();
        r.learn_patterns(table).unwrap();
        r
    };
    assert_eq!(
        r.redact_output(table),
        "Name  IP          Up\n----  ----------  --\nvmk0  198.18.0.4  true\n"
    );
}

#[test]
fn right_aligned_cells_stay_right_aligned() {
    let table = "Name    MTU   Addr\n------  ----  -----\nvmk10    900  1.2.3.4\n";
    let mut r = Redactor::new();
    r.learn_name(Kind::Host, "vmk10").unwrap();
    assert_eq!(
        r.redact_output(table),
        "Name      MTU   Addr\n--------  ----  -----\nhost-001   900  1.2.3.4\n"
    );
}

/// A copy pasted with tabs in its header is split on its gaps by the parser, not cut at the
/// dash columns; redaction must see the same table the parser sees, or its re-alignment
/// would cut the header at the dash columns and move cells into the wrong column.
#[test]
fn tab_separated_tables_are_read_the_same_before_and_after_redaction() {
    // Pasted copies mix spaces and tabs; here the address cell happens to sit exactly
    // under the second dash run, which is what made the old re-alignment rewrite the row.
    let table = "Name\tIPv4 Address\tIPv4 Netmask\tIPv4 Broadcast\tAddress Type\tGateway\tDHCP DNS\n\
                 ----  --------  ------------  --------------  ------------  -------  --------\n\
                 vmk1  \t10.8.1.2\t255.255.255.248\t10.8.1.7\tSTATIC\t0.0.0.0\tfalse\n";
    let layout = pvrdma_parsers::table_layout("Name\tIPv4 Address\n", "----  ------------\n").unwrap();
    assert!(layout.tab_separated);
    let mut r = Redactor::new();
    let out = r.redact_captures(&[capture("esx01", "ipv4", table)]).unwrap();
    let text = &out[0].outputs["ipv4"].stdout;
    assert_eq!(text, &table.replace("10.8.1.", "198.18.0."));
    let before = pvrdma_parsers::parse_ip_interface_ipv4_get(table).unwrap();
    let after = pvrdma_parsers::parse_ip_interface_ipv4_get(text).unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].name, before[0].name);
    assert_eq!(after[0].address.as_deref(), Some("198.18.0.2"));
    assert_eq!(after[0].netmask, before[0].netmask);
    assert_eq!(after[0].broadcast.as_deref(), Some("198.18.0.7"));
    assert_eq!(after[0].address_type, before[0].address_type);
    assert_eq!(after[0].gateway, before[0].gateway);
    assert_eq!(after[0].dhcp_dns, before[0].dhcp_dns);
}

#[test]
fn same_value_same_token_across_case_and_files() {
    let mut r = Redactor::new();
    let mut a = capture(
        "esx01.lab.example.com",
        "props",
        "MAC address:00:50:56:8a:9f:c2\nseen on esx01\n",
    );
    a.vmx_files.push(pvrdma_engine::capture::VmxFile {
        path: "vmfs/volumes/ds 1/hpc01/hpc01.vmx".to_string(),
        content: "displayName = \"hpc01\"\nethernet1.generatedAddress = \"00:50:56:8A:9F:C2\"\n".to_string(),
    });
    let out = r.redact_captures(&[a]).unwrap();
    assert_eq!(out[0].host, "host-001");
    assert_eq!(
        out[0].outputs["props"].stdout,
        "MAC address:00:00:5e:00:00:01\nseen on host-001\n"
    );
    assert_eq!(out[0].vmx_files[0].path, "vmfs/volumes/datastore-001/vm-001/vm-001.vmx");
    assert_eq!(
        out[0].vmx_files[0].content,
        "displayName = \"vm-001\"\nethernet1.generatedAddress = \"00:00:5E:00:00:01\"\n"
    );
}

#[test]
fn uuids_keep_their_layout() {
    let text = "UUID: 56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec\nid 5cce4874-40c5c88e-a836-003048fc4ffe\nvsan:523d6567f1251470-01fff6533f4bec49\n";
    let mut r = Redactor::new();
    r.learn_patterns(text).unwrap();
    assert_eq!(
        r.redact_text(text),
        "UUID: 00 00 00 00 00 00 00 00-00 00 00 00 00 00 00 01\nid 00000000-00000000-0000-000000000002\nvsan:0000000000000000-0000000000000003\n"
    );
}

#[test]
fn ipv6_and_kept_addresses() {
    let text =
        "fe80::250:56ff:fe69:96f0 2001:470:1f0b::1 ::1 0.0.0.0 255.255.255.0 127.0.0.1 169.254.1.1 version 8.0.2\n";
    let mut r = Redactor::new();
    r.learn_patterns(text).unwrap();
    assert_eq!(
        r.redact_text(text),
        "fe80::1 2001:db8::2 ::1 0.0.0.0 255.255.255.0 127.0.0.1 169.254.0.1 version 8.0.2\n"
    );
}

#[test]
fn matches_respect_edges() {
    let mut r = Redactor::new();
    r.learn_patterns("10.0.0.1").unwrap();
    r.learn_name(Kind::Vm, "hpc01").unwrap();
    assert_eq!(
        r.redact_text("10.0.0.1 10.0.0.12 110.0.0.1 hpc01.eth1 hpc010 hpc01-b"),
        "198.18.0.1 10.0.0.12 110.0.0.1 vm-001.eth1 hpc010 hpc01-b"
    );
}

#[test]
fn host_labels_with_user_and_port_hide_the_bare_host_too() {
    let mut r = Redactor::new();
    r.learn_host("root@esx07.lab:2222").unwrap();
    r.learn_host("10.1.2.3:22").unwrap();
    assert_eq!(
        r.redact_text("root@esx07.lab:2222 esx07.lab esx07 10.1.2.3:22 10.1.2.3"),
        "host-001 host-001 host-001 host-002 198.18.0.3"
    );
}

#[test]
fn vm_names_that_are_esxcli_words_are_left_alone() {
    let mut r = Redactor::new();
    for name in ["true", "Up", "9000", "vmk1", "x", "hpc01"] {
        r.learn_name(Kind::Vm, name).unwrap();
    }
    assert_eq!(r.redact_text("true Up 9000 vmk1 x hpc01"), "true Up 9000 vmk1 x vm-001");
}

#[test]
fn command_line_keeps_options_only() {
    let args: Vec<String> = [
        "/usr/bin/pvrdma-doctor",
        "esx01",
        "--bundle=x.tgz",
        "--redact",
        "-l",
        "root",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        redact_command_line(&args),
        [
            "pvrdma-doctor",
            "<redacted>",
            "--bundle=<redacted>",
            "--redact",
            "-l",
            "<redacted>"
        ]
    );
}

#[test]
fn local_paths_and_login_users_leave_failure_messages() {
    let mut r = Redactor::new();
    r.hide_local(&LocalValues {
        paths: vec!["/home/alice/.ssh/lab_ecdsa".into(), "/opt/keys/k1".into()],
        users: vec!["alice".into()],
    });
    let mut c = HostCapture::failed(
        "esx01",
        pvrdma_engine::capture::CaptureSource::Live,
        Failure::of_host(
            pvrdma_engine::capture::ErrorKind::Auth,
            "esx01:22",
            "authentication as \"alice\" failed. Attempts: 1) /home/alice/.ssh/lab_ecdsa (ecdsa): refused; 2) /opt/keys/k1 (rsa): refused. Put a key in /etc/ssh/keys-alice/authorized_keys; alicea stays",
        ),
    );
    c.missing.clear();
    let out = r.redact_captures(&[c]).unwrap();
    let msg = &out[0].error.as_ref().unwrap().message;
    assert!(!msg.contains("/home/alice") && !msg.contains("/opt/keys"), "{msg}");
    assert!(!msg.contains("\"alice\"") && !msg.contains("keys-alice/"), "{msg}");
    assert!(msg.contains("<login-user-1>") && msg.contains("<local-path-"), "{msg}");
    assert!(msg.contains("alicea stays"), "only whole words: {msg}");
    // The detail is the message without the host's name, redacted alike.
    let detail = out[0].error.as_ref().unwrap().detail.as_deref().unwrap_or_default();
    assert!(
        msg.ends_with(detail) && detail.starts_with("authentication as \"<login-user-1>\""),
        "{detail}"
    );
    assert_eq!(
        r.map().login_users.get("alice").map(String::as_str),
        Some("<login-user-1>")
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text shaped like esxcli output: tables, records, addresses, odd bytes.
    fn output_like() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Name  IP Address  MTU\n----  ----------  ---\n".to_string()),
            Just("   MAC Address: 00:50:56:8A:9f:c2\n".to_string()),
            "[a-z]{1,8}  10\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}  [0-9]{1,4}\n",
            "[ -~]{0,30}\n",
            "\\PC{0,12}",
            Just("fe80::250:56ff:fe69:96f0 ".to_string()),
            Just("/vmfs/volumes/ds1/vm a/vm a.vmx\n".to_string()),
            Just("56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec\n".to_string()),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn never_panics_and_learnt_values_never_survive(text in output_like()) {
            let mut r = Redactor::new();
            prop_assert_eq!(r.redact_output(&text), text.clone());
            r.learn_patterns(&text).unwrap();
            r.learn_datastores_and_vm_dirs(&text).unwrap();
            let out = r.redact_output(&text);
            let m = r.map();
            // Long hex values never survive, wherever they stand (case folded), but inside a
            // replacement: `::2` learnt from the text is also part of the token `2001:db8::2`.
            let mut folded = out.to_ascii_lowercase();
            for token in m.macs.values().chain(m.uuids.values()).chain(m.ipv6.values()) {
                folded = folded.replace(&token.to_ascii_lowercase(), " ");
            }
            for original in m.macs.keys().chain(m.uuids.keys()).chain(m.ipv6.keys()) {
                prop_assert!(!folded.contains(&original.to_ascii_lowercase()), "{:?} survives in {:?}", original, out);
            }
            // Addresses and names never survive standing alone.
            for original in m.ipv4.keys().chain(m.datastores.keys()).chain(m.vm_names.keys()) {
                let standalone = out.match_indices(original.as_str()).any(|(at, _)| {
                    at_edges(Kind::Ipv4, &out, at, at + original.len())
                });
                let inside_a_token = m.ipv4.values().chain(m.vm_names.values()).chain(m.datastores.values())
                    .any(|t| t.contains(original.as_str()));
                prop_assert!(!standalone || inside_a_token, "{:?} survives in {:?}", original, out);
            }
        }
    }
}

#[test]
fn map_file_is_private_and_next_to_the_bundle() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("b.tar.gz");
    let mut r = Redactor::new();
    r.learn_host("esx01").unwrap();
    let path = r.write_map(&bundle, false).unwrap();
    assert_eq!(path, dir.path().join("b.tar.gz.redaction-map.json"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["hosts"]["esx01"], "host-001");
    assert!(r.write_map(&bundle, false).is_err());
    assert!(r.write_map(&bundle, true).is_ok());
}

#[test]
fn an_unfinished_vmx_answer_is_named_by_its_redacted_path() {
    let path = "/vmfs/volumes/64f1c2a3-5d8e21b0-7c3a-ec0d9a7f3196/secret-vm/secret-vm.vmx";
    let id = pvrdma_engine::catalogue::VMX_PVRDMA_LINES;
    let mut c = HostCapture::new("esx01", CaptureSource::Live);
    let mut raw = RawOutput {
        stdout: format!("==> {path} <==\ndisplayName = \"secret-vm\"\n"),
        exit_status: Some(0),
        ..RawOutput::new(
            id,
            pvrdma_engine::catalogue::vmx_lines_command(&[path.to_string()]).expect("line"),
        )
    };
    raw.unfinished.push(pvrdma_engine::capture::UnfinishedSection {
        key: path.to_string(),
        reason: "ended without its end line: its job on the host was killed".to_string(),
    });
    c.outputs.insert(id.to_string(), raw);
    let out = Redactor::new().redact_captures(&[c]).unwrap();
    let raw = &out[0].outputs[id];
    let key = &raw.unfinished[0].key;
    assert!(!key.contains("secret-vm") && !key.contains("64f1c2a3"), "{key}");
    assert!(raw.stdout.starts_with(&format!("==> {key} <==")), "{}", raw.stdout);
}

/// vCenter writes a quote as `&apos;` or `&quot;`, Go's encoding/xml (the simulator) as
/// `&#39;` or `&#34;`: a name is hidden whichever spelling its answer uses, the answer
/// still reads, and what holds no name stays as written.
#[test]
fn names_in_the_apis_answers_are_hidden_in_any_spelling_of_their_entities() {
    let vm = |name: &str| {
        format!(
            r#"<objects><obj type="VirtualMachine">vm-7</obj><propSet><name>name</name><val xsi:type="xsd:string">{name}</val></propSet><propSet><name>runtime.powerState</name><val xsi:type="VirtualMachinePowerState">poweredOn</val></propSet></objects>"#
        )
    };
    let spellings = [
        "o&apos;brennan &amp; &quot;co&quot; &lt;rank&gt;",
        "o&#39;brennan &amp; &#34;co&#34; &lt;rank>",
        "o'brennan &#x26; \"co\" &#60;rank&#62;",
    ];
    for spelling in spellings {
        let mut c = HostCapture::new("esx01", CaptureSource::VsphereApi);
        pvrdma_engine::capture::add_vsphere(&mut c, String::new(), &[vm(spelling)], 1);
        let mut r = Redactor::new();
        let out = r.redact_captures(&[c]).unwrap();
        let text = &out[0].outputs[pvrdma_engine::catalogue::VSPHERE_VM_CONFIG].stdout;
        assert_eq!(*text, vm("vm-001"), "{spelling}");
        assert_eq!(
            r.map().vm_names.get("o'brennan & \"co\" <rank>").map(String::as_str),
            Some("vm-001")
        );
    }
}
