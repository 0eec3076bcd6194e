use super::*;

fn keys(k: &[&str]) -> Vec<String> {
    k.iter().map(|s| s.to_string()).collect()
}

fn unfinished(d: &Decoded) -> Vec<(&str, &str)> {
    d.unfinished
        .iter()
        .map(|u| (u.key.as_str(), u.reason.as_str()))
        .collect()
}

#[test]
fn interleaved_answers_come_back_whole_in_key_order() {
    let k = keys(&["11", "12", "13"]);
    let raw = "2:begin 12\n1:begin 11\n2|b one\n1|a one\n2|\n1|  a two \\ x\n2|b three\n\
               2:end 12 exit 0 lines 3 bytes 15\n3:begin 13\n3:end 13 exit 1 lines 0 bytes 0\n\
               1:end 11 exit 0 lines 2 bytes 18\n";
    let d = decode(&k, raw.as_bytes(), None);
    assert_eq!(
        d.stdout,
        "==> 11 <==\na one\n  a two \\ x\n<== 11 exit 0 ==>\n\
         ==> 12 <==\nb one\n\nb three\n<== 12 exit 0 ==>\n\
         ==> 13 <==\n<== 13 exit 1 ==>\n"
    );
    assert!(d.unfinished.is_empty(), "{d:?}");
}

#[test]
fn a_timeout_names_the_open_and_the_unstarted_answers_and_keeps_the_others() {
    let k = keys(&["1_0", "2_0", "3_0"]);
    let raw = "1:begin 1_0\n2:begin 2_0\n2|x\n2:end 2_0 exit 0 lines 1 bytes 2\n1|half\n1|a pa";
    let d = decode(&k, raw.as_bytes(), Some("did not finish within --command-timeout 60s"));
    assert_eq!(
        d.stdout,
        "==> 1_0 <==\nhalf\n==> 2_0 <==\nx\n<== 2_0 exit 0 ==>\n==> 3_0 <==\n"
    );
    assert_eq!(
        unfinished(&d),
        vec![
            ("1_0", "did not finish within --command-timeout 60s"),
            (
                "3_0",
                "did not finish within --command-timeout 60s (it had not started: every slot of the batch was taken)"
            ),
        ]
    );
}

#[test]
fn a_started_query_that_printed_nothing_is_open_not_waiting_for_a_slot() {
    // A job's begin line travels with its first records; the batch says which started.
    let k = keys(&["a", "b", "c", "d"]);
    let raw = "2:begin b\n2|x\n2:end b exit 0 lines 1 bytes 2\n0:started 3\n";
    let d = decode(&k, raw.as_bytes(), Some("did not finish within --command-timeout 60s"));
    assert_eq!(
        unfinished(&d),
        vec![
            ("a", "did not finish within --command-timeout 60s"),
            ("c", "did not finish within --command-timeout 60s"),
            (
                "d",
                "did not finish within --command-timeout 60s (it had not started: every slot of the batch was taken)"
            ),
        ]
    );
    assert!(d.stdout.contains("<== b exit 0 ==>"), "{}", d.stdout);
    // The marker is no record: it damages nothing, whenever it arrives.
    let raw = "1:begin a\n0:started 4\n1|y\n1:end a exit 0 lines 1 bytes 2\n";
    let d = decode(&k[..1], raw.as_bytes(), None);
    assert!(d.unfinished.is_empty(), "{d:?}");
}

#[test]
fn a_query_cut_on_the_host_or_killed_with_its_job_costs_only_itself() {
    let k = keys(&["vmnic2", "vmnic3", "vmnic4"]);
    let raw = "1:begin vmnic2\n1|y\n1:cut vmnic2 lines 1 bytes 262146\n2:begin vmnic3\n\
               3:begin vmnic4\n3|ok\n3:end vmnic4 exit 0 lines 1 bytes 3\n";
    let d = decode(&k, raw.as_bytes(), None);
    assert!(d.stdout.contains("<== vmnic4 exit 0 ==>"), "{}", d.stdout);
    assert!(!d.stdout.contains("<== vmnic2") && !d.stdout.contains("<== vmnic3"));
    let u = unfinished(&d);
    assert_eq!(u.len(), 2);
    assert!(u[0].1.contains("more than 256 KiB"), "{u:?}");
    assert_eq!(
        u[1],
        ("vmnic3", "ended without its end line: its job on the host was killed")
    );
}

#[test]
fn spliced_writes_are_caught_by_the_counts_or_by_a_line_that_is_no_record() {
    let k = keys(&["a", "b", "c"]);
    // b's record was written into the middle of a's long line: a's line gained b's record,
    // b lost it, and the rest of a's line stands alone. c began after it and is whole.
    let raw = "1:begin a\n2:begin b\n1|xxxx2|bbb\nyyy\n1:end a exit 0 lines 1 bytes 8\n\
               2:end b exit 0 lines 1 bytes 4\n3:begin c\n3|c\n3:end c exit 0 lines 1 bytes 2\n";
    let d = decode(&k, raw.as_bytes(), None);
    let u = unfinished(&d);
    assert_eq!(u.iter().map(|(k, _)| *k).collect::<Vec<_>>(), vec!["a", "b"], "{u:?}");
    assert!(u.iter().all(|(_, why)| why.starts_with("arrived damaged")), "{u:?}");
    assert!(!d.stdout.contains("<== a exit") && !d.stdout.contains("<== b exit"));
    assert!(d.stdout.ends_with("==> c <==\nc\n<== c exit 0 ==>\n"), "{}", d.stdout);
    // A count that does not match on its own (no stray line) is caught as well.
    let raw = "1:begin a\n1|one\n1|two\n1:end a exit 0 lines 3 bytes 8\n";
    let d = decode(&keys(&["a"]), raw.as_bytes(), None);
    assert!(d.unfinished[0].reason.contains("counts 3 lines"), "{d:?}");
}

#[test]
fn a_size_counted_in_characters_matches_as_well_as_in_bytes() {
    let k = keys(&["/vmfs/volumes/ds 1/vé/vé.vmx"]);
    let line = "displayName = \"vé\"";
    for size in [line.len() + 1, line.chars().count() + 1] {
        let raw = format!("1:begin {0}\n1|{line}\n1:end {0} exit 0 lines 1 bytes {size}\n", k[0]);
        let d = decode(&k, raw.as_bytes(), None);
        assert!(d.unfinished.is_empty(), "{size}: {d:?}");
    }
}

#[test]
fn what_the_simulated_hosts_encode_decodes_to_the_same_sections() {
    let k = keys(&["7_0", "8_0"]);
    let raw = encode(&k, &[(1, "b\n\nc\n", 0), (0, "", 3)]);
    let d = decode(&k, raw.as_bytes(), None);
    assert_eq!(
        d.stdout,
        "==> 7_0 <==\n<== 7_0 exit 3 ==>\n==> 8_0 <==\nb\n\nc\n<== 8_0 exit 0 ==>\n"
    );
    assert!(d.unfinished.is_empty());
}

#[test]
fn answers_give_each_key_its_own_text_exit_and_reason() {
    let k = keys(&["a", "b", "c", "d"]);
    // b ended whole with exit 1, a is cut, c is open, d never began.
    let raw = "2:begin b\n1:begin a\n2|Error: no such thing\n2|\n\
               2:end b exit 1 lines 2 bytes 22\n1|x\n1:cut a lines 1 bytes 2\n3:begin c\n3|half\n";
    let got = answers(&k, raw.as_bytes(), Some("did not finish within --command-timeout 5s"));
    assert_eq!(got.len(), 4);
    assert_eq!(got[1].text, "Error: no such thing\n");
    assert_eq!(
        (got[1].exit, got[1].unfinished.as_deref(), got[1].cut),
        (Some(1), None, false)
    );
    assert_eq!((got[0].text.as_str(), got[0].exit, got[0].cut), ("x\n", None, true));
    assert!(
        got[0].unfinished.as_deref().is_some_and(|r| r.contains("KiB")),
        "{:?}",
        got[0]
    );
    assert_eq!(got[2].text, "half\n");
    assert_eq!(
        got[2].unfinished.as_deref(),
        Some("did not finish within --command-timeout 5s")
    );
    assert_eq!(got[3].text, "");
    assert!(
        got[3]
            .unfinished
            .as_deref()
            .is_some_and(|r| r.contains("had not started")),
        "{:?}",
        got[3]
    );
    // The same stream decoded as a batch tells the same story.
    let d = decode(&k, raw.as_bytes(), Some("did not finish within --command-timeout 5s"));
    assert_eq!(
        unfinished(&d).iter().map(|(key, _)| *key).collect::<Vec<_>>(),
        ["a", "c", "d"]
    );
    // An answer whose counts do not match what arrived is never whole.
    let spliced = "1:begin a\n1|x\n1:end a exit 0 lines 2 bytes 4\n";
    let got = answers(&keys(&["a"]), spliced.as_bytes(), None);
    assert_eq!(got[0].exit, None);
    assert!(
        got[0].unfinished.as_deref().is_some_and(|r| r.contains("damaged")),
        "{:?}",
        got[0]
    );
}

#[test]
fn a_reader_tells_each_answer_whole_the_moment_its_end_line_is_read() {
    let k = keys(&["a", "b", "c"]);
    let raw = "2:begin b\n2|x\n2:end b exit 0 lines 1 bytes 2\n1:begin a\n1:cut a lines 0 bytes 0\n\
               3:end zz exit 0 lines 0 bytes 0\n9:end c exit 0 lines 0 bytes 0\n3|3:end c exit 0\n";
    let mut reader = Reader::new(k.len());
    // Split inside b's end line: nothing whole yet, and nothing read twice after.
    let cut = raw.find("exit 0 lines 1").expect("b's end line");
    assert!(reader.read(&k, &raw.as_bytes()[..cut]).is_empty());
    // Only b's end line ends an answer: a was cut, the others name the wrong key or index,
    // or are text that looks like an end line.
    assert_eq!(reader.read(&k, raw.as_bytes()), [1]);
    assert!(reader.read(&k, raw.as_bytes()).is_empty(), "read once");
    let b = reader.whole(raw.as_bytes(), 1).expect("b is whole");
    assert_eq!((b.text.as_str(), b.exit), ("x\n", Some(0)));
    assert!(reader.whole(raw.as_bytes(), 0).is_none(), "a was cut");
    // An answer whose text is not valid UTF-8 is still whole, decoded from the bytes.
    let raw = b"1:begin a\n1|caf\xe9\n1:end a exit 0 lines 1 bytes 5\n";
    let got = answers(&keys(&["a"]), raw, None);
    assert_eq!((got[0].exit, got[0].text.as_str()), (Some(0), "caf\u{fffd}\n"));
}

/// A stream of framing lines, well-formed or not, over keys `a`, `b`, `c`.
fn stream() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let line = prop_oneof![
        (1..4usize).prop_map(|n| format!("{n}:begin {}\n", ["a", "b", "c"][n - 1])),
        (1..4usize, "[ -~]{0,6}").prop_map(|(n, t)| format!("{n}|{t}\n")),
        (1..4usize, 0..3u32, 0..3usize, 0..9usize)
            .prop_map(|(n, e, l, b)| format!("{n}:end {} exit {e} lines {l} bytes {b}\n", ["a", "b", "c"][n - 1])),
        (1..4usize).prop_map(|n| format!("{n}:cut {} lines 0 bytes 0\n", ["a", "b", "c"][n - 1])),
        (0..4usize).prop_map(|n| format!("0:started {n}\n")),
        "[ -~]{0,8}\n?",
    ];
    proptest::collection::vec(line, 0..24).prop_map(|lines| lines.concat().into_bytes())
}

proptest::proptest! {
    /// Read in pieces, as a channel delivers it, a stream tells what it tells read at once:
    /// the same answers in the end, and each answer reported whole once at most, whole as
    /// it was then. An answer damaged by a later line may be reported in pieces (it was
    /// whole when it arrived) where the stream read at once does not report it; one whole
    /// at the end is reported either way.
    #[test]
    fn a_stream_read_in_pieces_tells_what_it_tells_at_once(
        raw in stream(),
        cuts in proptest::collection::vec(0..400usize, 0..6),
        problem in proptest::option::of(proptest::strategy::Just("did not finish within --command-timeout 5s")),
    ) {
        let k = keys(&["a", "b", "c"]);
        let mut ends: Vec<usize> = cuts.into_iter().map(|c| c.min(raw.len())).collect();
        ends.sort_unstable();
        let mut reader = Reader::new(k.len());
        let mut reported = Vec::new();
        for end in ends.into_iter().chain([raw.len()]) {
            for n in reader.read(&k, &raw[..end]) {
                proptest::prop_assert!(!reported.contains(&n), "{n} reported twice");
                proptest::prop_assert!(reader.whole(&raw[..end], n).is_some());
                reported.push(n);
            }
        }
        let whole_at_once: Vec<usize> = {
            let mut at_once = Reader::new(k.len());
            at_once.read(&k, &raw)
        };
        for n in &whole_at_once {
            proptest::prop_assert!(reported.contains(n), "{n} whole at once, not in pieces");
        }
        proptest::prop_assert_eq!(reader.answers(&k, &raw, problem), answers(&k, &raw, problem));
    }
}
