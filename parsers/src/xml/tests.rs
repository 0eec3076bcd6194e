use super::*;

const ANSWER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>
<objects><obj type="VirtualMachine">vm-1</obj><propSet><name>name</name><val xsi:type="xsd:string">a &amp; b &lt;c&gt; &#x41;&#66; %2f</val></propSet></objects>
<empty/><cdata><![CDATA[x<y]]></cdata>
</returnval></RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>"#;

#[test]
fn reads_prefixed_answers_with_entities() {
    let root = read(ANSWER).unwrap();
    assert_eq!(root.name, "Envelope");
    let objects = root.find("objects").unwrap();
    assert_eq!(objects.child("obj").unwrap().attr("type"), Some("VirtualMachine"));
    assert_eq!(objects.child("obj").unwrap().text, "vm-1");
    let val = objects.find("val").unwrap();
    assert_eq!(val.text, "a & b <c> AB %2f");
    assert_eq!(val.attr("type"), None);
    assert_eq!(val.xsi_type(), Some("string"));
    let both = read(r#"<val xmlns:xsi="x" xsi:type="ManagedObjectReference" type="HostSystem">host-1</val>"#).unwrap();
    assert_eq!(
        (both.attr("type"), both.xsi_type()),
        (Some("HostSystem"), Some("ManagedObjectReference"))
    );
    let ret = root.find("returnval").unwrap();
    assert!(ret
        .child("empty")
        .is_some_and(|e| e.children.is_empty() && e.text.is_empty()));
    assert_eq!(ret.child("cdata").unwrap().text, "x<y");
    assert_eq!(ret.children_named("objects").count(), 1);
}

#[test]
fn each_element_knows_where_it_was_written() {
    let root = read(ANSWER).unwrap();
    let objects = root.find("objects").unwrap();
    let written = &ANSWER[objects.span.clone()];
    assert!(
        written.starts_with("<objects><obj type=\"VirtualMachine\">"),
        "{written}"
    );
    assert!(written.ends_with("%2f</val></propSet></objects>"), "{written}");
    assert_eq!(&ANSWER[root.find("empty").unwrap().span.clone()], "<empty/>");
    assert_eq!(
        &ANSWER[root.span.clone()],
        &ANSWER[ANSWER.find("<soapenv:Envelope").unwrap()..]
    );
    // Read again, the part is what it was.
    let again = read(written).unwrap();
    assert_eq!(
        (again.children.len(), again.find("val").unwrap().text.as_str()),
        (2, "a & b <c> AB %2f")
    );
}

#[test]
fn a_shallow_read_keeps_the_outer_levels_and_passes_over_the_rest() {
    // Envelope, Body, the response, returnval, objects: what is inside objects is passed
    // over, its place kept.
    let shallow = read_to_depth(ANSWER, 5).unwrap();
    let whole = read(ANSWER).unwrap();
    let objects = shallow.find("objects").unwrap();
    assert!(objects.children.is_empty() && objects.text.is_empty(), "{objects:?}");
    assert_eq!(objects.span, whole.find("objects").unwrap().span);
    assert_eq!(shallow.find("cdata").unwrap().text, "x<y");
    // What is passed over must still end where it should.
    assert!(read_to_depth("<a><b><c><d></c></b></a>", 2).is_err());
    assert!(read_to_depth("<a><b><c>", 2).is_err());
    // Past the deepest level read, deeper nesting is no error: it is not read.
    let deep = format!("<a>{}{}</a>", "<b>".repeat(MAX_DEPTH + 1), "</b>".repeat(MAX_DEPTH + 1));
    assert!(read_to_depth(&deep, 1).is_ok());
    assert!(read(&deep).is_err());
}

#[test]
fn a_sequence_of_elements_is_read_one_after_the_other() {
    let list = read_elements("<objects><a>1</a></objects>\n<objects><a>2</a></objects>\n").unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].child("a").unwrap().text, "2");
    assert!(read_elements("").unwrap().is_empty());
    let e = read_elements("<objects/>\ntext").unwrap_err();
    assert_eq!((e.at, e.expected), (10, "an element"));
}

#[test]
fn malformed_documents_are_errors_that_say_where() {
    for bad in [
        "",
        "<a>",
        "<a></b>",
        "</a>",
        "<a/><b/>",
        "text",
        "<a>&bogus;</a>",
        "<a>&#0;</a>",
        "<a x='1' x='2'/>",
    ] {
        assert!(read(bad).is_err(), "{bad:?}");
    }
    let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
    let e = read(&deep).unwrap_err();
    assert!(e.message.contains("deeper"), "{e}");
    assert_eq!(e.at, 3 * MAX_DEPTH);
    let e = read("<a>\n<b>&bogus;</b></a>").unwrap_err();
    assert_eq!(
        (e.at, e.expected, e.message.as_str()),
        (7, "a predefined entity", "unknown entity &bogus;")
    );
    assert_eq!(read("<a>").unwrap_err().expected, "the end of every element");
}

mod junk {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = read(&text);
            let _ = read_elements(&text);
            let _ = read_to_depth(&text, 2);
        }

        #[test]
        fn xml_like_junk_parses_or_fails_cleanly(s in "[<>/a-c =\"'&;#x0-9!\\[\\]CDAT?-]{0,200}") {
            let _ = read(&s);
            let _ = read_elements(&s);
            let _ = read_to_depth(&s, 2);
        }

        #[test]
        fn what_is_left_alone_is_kept_byte_for_byte(s in "[<>/a-c =\"'&;#x0-9!\\[\\]CDAT?\r\n-]{0,200}") {
            prop_assert_eq!(rewrite_text(&s, |_| None, str::to_string), s.clone());
            // Text rewritten to itself means the same, whatever its entities were.
            let again = rewrite_text(&s, |t| Some(t.to_string()), str::to_string);
            if let (Ok(was), Ok(now)) = (read_elements(&s), read_elements(&again)) {
                let texts = |l: &[Element]| l.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
                prop_assert_eq!(texts(&was), texts(&now));
            }
        }

        #[test]
        fn every_span_is_the_element_as_written(s in "(<a>|</a>|<b/>|x|&amp;){0,40}") {
            if let Ok(list) = read_elements(&s) {
                for el in &list {
                    let again = read(&s[el.span.clone()]).unwrap();
                    prop_assert_eq!(&again.text, &el.text);
                    prop_assert_eq!(again.children.len(), el.children.len());
                }
            }
        }
    }
}

#[test]
fn text_is_rewritten_as_it_means_and_the_rest_kept_as_written() {
    let hide = |t: &str| (t == "a & b <c> AB %2f").then(|| "vm-001".to_string());
    let out = rewrite_text(ANSWER, hide, str::to_string);
    assert_eq!(
        out,
        ANSWER.replace("a &amp; b &lt;c&gt; &#x41;&#66; %2f", "vm-001"),
        "only the text that means the name changes"
    );
    // Part of a run: the rest of it escaped again, as XML requires.
    let out = rewrite_text(
        "<val>R&amp;D &lt;lab&gt; o&#39;neil</val>",
        |t| Some(t.replace("o'neil", "vm-002")),
        str::to_string,
    );
    assert_eq!(out, "<val>R&amp;D &lt;lab&gt; vm-002</val>");
    assert_eq!(read(&out).unwrap().text, "R&D <lab> vm-002");
    // Markup goes through its own hand; an answer cut inside a tag, from there on.
    let out = rewrite_text(
        "<a k=\"R&amp;D\">R&amp;D</a><b>R&amp;D</b><c x=\"R&amp;D",
        |t| (t == "R&D").then(|| "host-001".to_string()),
        |m| m.replace("R&amp;D", "[markup]"),
    );
    assert_eq!(out, "<a k=\"[markup]\">host-001</a><b>host-001</b><c x=\"[markup]");
}
