//! docs/esxi-commands.md lists every command the catalogue sends, under the name the report
//! uses for it, and nothing else: a command added to the catalogue without saying where its
//! format comes from fails here.
use pvrdma_engine::catalogue::CATALOGUE;
use std::collections::BTreeSet;

/// (command, id, format) of each row of the table.
fn rows() -> Vec<(String, String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/esxi-commands.md");
    let text = std::fs::read_to_string(&path).expect("docs/esxi-commands.md");
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert!(cells.len() == 5, "a row has 5 cells: {l}");
            let unquote = |c: &str| c.trim_matches('`').to_string();
            (unquote(cells[0]), unquote(cells[1]), cells[2].to_string())
        })
        .collect()
}

#[test]
fn the_table_lists_every_catalogue_command_once_by_the_reports_name() {
    let rows = rows();
    let listed: Vec<&str> = rows.iter().map(|(_, id, _)| id.as_str()).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "an id listed twice: {listed:?}");
    let catalogue: BTreeSet<&str> = CATALOGUE.iter().map(|s| s.id).collect();
    assert_eq!(unique, catalogue, "the table and the catalogue differ");
    for spec in CATALOGUE {
        let (command, _, format) = rows.iter().find(|(_, id, _)| id == spec.id).unwrap();
        assert_eq!(command, spec.label(), "{}: the report names it otherwise", spec.id);
        assert!(
            format.starts_with("confirmed") || format == "composed",
            "{}: say whether the format is confirmed or composed: {format}",
            spec.id
        );
    }
}

#[test]
fn the_formats_without_a_public_capture_are_marked_composed() {
    let rows = rows();
    for id in [
        pvrdma_engine::catalogue::PVRDMA_DEVICES_LS,
        pvrdma_engine::catalogue::PVRDMA_PROPERTIES,
        pvrdma_engine::catalogue::NIC_DCB_STATUS,
        pvrdma_engine::catalogue::VM_PORT_LIST,
    ] {
        let (_, _, format) = rows.iter().find(|(_, i, _)| i == id).expect(id);
        assert_eq!(format, "composed", "{id}");
    }
}
