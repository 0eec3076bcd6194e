use super::error::Fail;
use super::records::key_value;
use super::table::tab_cells;
use super::*;

#[test]
fn key_value_splits_on_first_colon_space_and_keeps_the_rest() {
    let (_, kv) = key_value("   Config File: /vmfs/volumes/vsan:52/a [b] c.vmx  ").unwrap();
    assert_eq!(kv, ("Config File", "/vmfs/volumes/vsan:52/a [b] c.vmx"));
    assert_eq!(key_value("   Uplinks: ").unwrap().1, ("Uplinks", ""));
    assert_eq!(key_value("   DVPort:").unwrap().1, ("DVPort", ""));
    assert!(key_value("   no colon here").is_err());
}

#[test]
fn table_cuts_at_dash_runs_and_joins_continuations() {
    let t = "HBA Name Driver   Link State UID  Description\n\
             -------- ------   ---------- ---- -----------\n\
             vmhba0   nfnic    link-down  fc.1 Cisco Corporation Cisco \n\
             \x20                                UCS VIC Fnic Controller\n";
    let (_, table) = table(t).unwrap();
    assert_eq!(
        table.headers,
        ["HBA Name", "Driver", "Link State", "UID", "Description"]
    );
    assert_eq!(table.rows().len(), 1);
    let row = table.rows().next().unwrap();
    assert_eq!(row.cell(Some(2)), "link-down");
    assert_eq!(row.cell(Some(4)), "Cisco Corporation Cisco UCS VIC Fnic Controller");
}

#[test]
fn tab_cells_split_on_tabs_and_double_spaces_only() {
    assert_eq!(
        tab_cells("vmrdma0\t nmlx5_rdma  Active\t 1024\t100 Gbps   vmnic2\t\t\tMT28800 Family [ConnectX-5 MT28831]"),
        [
            "vmrdma0",
            "nmlx5_rdma",
            "Active",
            "1024",
            "100 Gbps",
            "vmnic2",
            "MT28800 Family [ConnectX-5 MT28831]"
        ]
    );
}

#[test]
fn records_nest_dvport_entries_and_split_at_unindented_lines() {
    let input = "A\n   Name: A\n   DVPort: \n         Client: x\n      \n         Client: \nB\n   Name: B\n";
    let (_, recs) = records(input).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].fields.len(), 2);
    assert_eq!(recs[0].fields[1].children.len(), 2);
    assert_eq!(recs[0].fields[1].children[1][0].value, "");
    assert_eq!(recs[1].name, "B");
}

#[test]
fn sections_are_sub_slices_so_errors_keep_their_line_numbers() {
    let input = "==> 1 <==\nbody one\n==> 2 <==\r\n\r\n";
    let (_, s) = sections(input, "a header").unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].body, "body one\n");
    assert_eq!(s[1].body, "\r\n");
    let e = to_parse_error("x", input, &fail_at(s[0].body));
    assert_eq!((e.line, e.column), (2, 1));
}

#[test]
fn table_errors_say_what_is_wrong() {
    let cut = "Name     Driver  State\n-------  ------  -----\nvmrdma0  nm";
    let e = to_parse_error("t", cut, &fail_of(table(cut)));
    assert_eq!(
        (e.line, e.column, e.expected),
        (3, 12, "a complete last row (the output ends in the middle of it)")
    );
    let orphan = "Name  State\n----  -----\n      Active\n";
    let e = to_parse_error("t", orphan, &fail_of(table(orphan)));
    assert_eq!((e.line, e.expected), (3, "a table row with its first column filled"));
    let tabbed = "Name\tState\n----\t-----\nvmrdma0\n";
    let e = to_parse_error("t", tabbed, &fail_of(table(tabbed)));
    assert_eq!((e.line, e.expected), (3, "one cell per column in a tab-separated row"));
    let e = to_parse_error("t", "", &fail_of(table("")));
    assert_eq!((e.line, e.expected), (1, "a table header line"));
}

#[test]
fn error_text_spots_esxcli_and_shell_errors_only() {
    assert!(error_text("Error: Unknown command or namespace x\n").is_some());
    assert!(error_text("\n-sh: esxcli: not found\n").is_some());
    assert!(error_text("Error: my vm\n   World ID: 1\n").is_none());
    assert!(error_text("Name  Enabled\n").is_none());
    assert!(error_text("").is_none());
}

fn fail_of<T: std::fmt::Debug>(r: PResult<'_, T>) -> Fail<'_> {
    match r.unwrap_err() {
        nom::Err::Error(f) | nom::Err::Failure(f) => f,
        nom::Err::Incomplete(_) => unreachable!(),
    }
}

fn fail_at(at: &str) -> Fail<'_> {
    match fail(at, "x") {
        nom::Err::Error(f) | nom::Err::Failure(f) => f,
        nom::Err::Incomplete(_) => unreachable!(),
    }
}
