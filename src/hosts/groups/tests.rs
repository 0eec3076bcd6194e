use super::*;

#[test]
fn template_substitution_is_safe() {
    let v = [("GROUP", "esxi"), ("CFGDIR", "/etc/cs")];
    assert_eq!(
        substitute("cat $CFGDIR/${GROUP}.txt $$HOME $OTHER $", &v),
        "cat /etc/cs/esxi.txt $HOME $OTHER $"
    );
}

fn config(dir: &Path, conf: &str) -> GroupConfig {
    std::fs::write(dir.join("groups.conf"), conf).unwrap();
    GroupConfig::from_files(vec![dir.join("missing.conf"), dir.join("groups.conf")])
}

#[test]
fn sources_from_conf_parts_and_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("parts")).unwrap();
    std::fs::create_dir_all(dir.path().join("auto")).unwrap();
    std::fs::write(
        dir.path().join("parts/a.conf"),
        "[racks]\nmap: echo rack-$GROUP\n  echo second\nlist: echo r1 r2\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("parts/.hidden.conf"), "not read").unwrap();
    std::fs::write(
        dir.path().join("auto/site.yaml"),
        "site:\n  esxi: [esx1, 'esx[2-3]']\n  bad: 5\n  none:\n",
    )
    .unwrap();
    let mut c = config(
        dir.path(),
        "; comment\n[Main]\ndefault = site\ngroupsdir: $CFGDIR/parts\nautodir: $CFGDIR/auto\n",
    );
    assert_eq!(c.group_nodes("esxi", None).unwrap(), ["esx1,esx[2-3]"]);
    assert_eq!(c.group_nodes("none", None).unwrap(), Vec::<String>::new());
    assert!(c.group_nodes("bad", None).is_err());
    assert_eq!(c.grouplist(Some("site")).unwrap(), ["esxi", "bad", "none"]);
    // A continuation line joins the value with a newline: a second command.
    assert_eq!(c.group_nodes("x", Some("racks")).unwrap(), ["rack-x", "second"]);
    assert!(matches!(c.all_nodes(Some("site")), Err(GroupError::NoUpcall(_))));
    assert!(c
        .group_nodes("x", Some("nope"))
        .unwrap_err()
        .to_string()
        .contains("known: racks, site"));
}

#[test]
fn configuration_errors_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    for (conf, needle) in [
        ("[Main]\n[Main]\n", "appears twice"),
        ("key: before any section\n", "no [section]"),
        ("[s]\nall: echo x\n", "neither 'map' nor 'mapall'"),
        (
            "[Main]\ndefault: gone\n[s]\nmap: true\n",
            "default group source not found",
        ),
        ("[s]\nmap: true\nmap: false\n", "appears twice"),
    ] {
        let mut c = config(dir.path(), conf);
        let err = c.group_nodes("g", None).unwrap_err().to_string();
        assert!(err.contains(needle), "{conf:?}: {err}");
    }
}

#[test]
fn paths_normalise_like_python() {
    assert_eq!(normpath("/etc/./cs//groups.d/../x"), PathBuf::from("/etc/cs/x"));
    assert_eq!(shell_words("/a \"/b c\" '/d'"), ["/a", "/b c", "/d"]);
}
