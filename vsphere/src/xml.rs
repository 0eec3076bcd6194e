//! The XML of SOAP requests, written with every value escaped. Answers are read by
//! `pvrdma_parsers::xml`, the one reader the configuration's parser also uses.
use std::fmt::Write as _;

/// Escapes text or an attribute value for XML 1.0.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all are sent as the replacement character
            // rather than making the whole request malformed.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A SOAP 1.1 request body: `body` is the method element, already written.
pub fn envelope(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 300);
    out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    out.push_str(r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/""#);
    out.push_str(r#" xmlns:xsd="http://www.w3.org/2001/XMLSchema""#);
    out.push_str(r#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>"#);
    out.push_str(body);
    out.push_str("</soapenv:Body></soapenv:Envelope>");
    out
}

/// `<name>value</name>` with the value escaped.
pub fn text_element(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "<{name}>{}</{name}>", escape(value));
}

/// A managed object reference: `<name type="T">value</name>`.
pub fn moref_element(out: &mut String, name: &str, kind: &str, value: &str) {
    let _ = write!(out, r#"<{name} type="{}">{}</{name}>"#, escape(kind), escape(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pvrdma_parsers::xml::read;

    #[test]
    fn escapes_what_xml_needs() {
        assert_eq!(escape(r#"a&b<c>"d'"#), "a&amp;b&lt;c&gt;&quot;d&apos;");
        assert_eq!(escape("tab\there\u{1}"), "tab\there\u{FFFD}");
        let mut out = String::new();
        text_element(&mut out, "userName", "dom\\ad&min<x>");
        moref_element(&mut out, "_this", "Session\"Manager", "S&M");
        let root = read(&format!("<r>{out}</r>")).unwrap();
        assert_eq!(root.child("userName").unwrap().text, "dom\\ad&min<x>");
        let this = root.child("_this").unwrap();
        assert_eq!(
            (this.attr("type"), this.text.as_str()),
            (Some("Session\"Manager"), "S&M")
        );
        assert!(read(&envelope("<x/>")).unwrap().find("x").is_some());
    }

    mod junk {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn escaped_text_round_trips(s in "[^\\p{Cc}]{0,50}") {
                let mut out = String::new();
                text_element(&mut out, "v", &s);
                let root = read(&out).unwrap();
                prop_assert_eq!(root.text, s);
            }
        }
    }
}
