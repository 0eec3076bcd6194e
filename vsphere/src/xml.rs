//! The XML of SOAP messages: writing requests with every value escaped, and reading
//! answers into a small element tree (local names only: vCenter, ESXi's hostd and the
//! simulator prefix namespaces differently). Reading never panics: anything that is not
//! well-formed XML, or nests deeper than a SOAP answer does, is an error.
use std::fmt::Write as _;

use quick_xml::events::Event;

/// The deepest nesting accepted. A property-collector answer nests about 8 deep.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// The local name, without a namespace prefix.
    pub name: String,
    /// Attributes by their name as written, prefix included (`type`, `xsi:type`).
    pub attrs: Vec<(String, String)>,
    /// The text directly inside it, entities resolved.
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The attribute of exactly this name: `type` on a managed object reference is not
    /// its `xsi:type`, which vCenter and the simulator write beside it in either order.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The schema type (`xsi:type`, whatever the prefix), without its own prefix.
    pub fn xsi_type(&self) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.ends_with(":type"))
            .map(|(_, v)| v.rsplit(':').next().unwrap_or(v))
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The first element named `name` at any depth, this one included.
    #[cfg(test)]
    pub fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(name))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct XmlError(pub String);

/// Parses a whole document into its root element.
pub fn parse(input: &[u8]) -> Result<Element, XmlError> {
    let text = std::str::from_utf8(input).map_err(|e| XmlError(format!("not UTF-8: {e}")))?;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let err = |e: &dyn std::fmt::Display| XmlError(e.to_string());
    loop {
        let event = reader.read_event().map_err(|e| err(&e))?;
        match event {
            Event::Start(start) => {
                let el = element(&start, root.is_some(), stack.len())?;
                stack.push(el);
            }
            Event::Empty(start) => {
                let el = element(&start, root.is_some(), stack.len())?;
                close(&mut stack, &mut root, el);
            }
            Event::End(_) => {
                let el = stack
                    .pop()
                    .ok_or_else(|| XmlError("an end tag without a start".into()))?;
                close(&mut stack, &mut root, el);
            }
            Event::Text(t) => {
                let s = t.xml10_content().map_err(|e| err(&e))?;
                push_text(&mut stack, &s)?;
            }
            Event::CData(t) => {
                let s = t.decode().map_err(|e| err(&e))?;
                push_text(&mut stack, &s)?;
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(|e| err(&e))? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| err(&e))?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| XmlError(format!("unknown entity &{name};")))?
                            .to_string()
                    }
                };
                push_text(&mut stack, &resolved)?;
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(XmlError("the document ends inside an element".into()));
    }
    root.ok_or_else(|| XmlError("no root element".into()))
}

fn element(start: &quick_xml::events::BytesStart<'_>, after_root: bool, depth: usize) -> Result<Element, XmlError> {
    let err = |e: &dyn std::fmt::Display| XmlError(e.to_string());
    if after_root {
        return Err(XmlError("content after the root element".into()));
    }
    if depth >= MAX_DEPTH {
        return Err(XmlError(format!("elements nested deeper than {MAX_DEPTH}")));
    }
    let mut el = Element {
        name: utf8(start.local_name().as_ref()),
        ..Element::default()
    };
    for attr in start.attributes() {
        let attr = attr.map_err(|e| err(&e))?;
        let value = attr.unescape_value().map_err(|e| err(&e))?;
        el.attrs.push((utf8(attr.key.as_ref()), value.into_owned()));
    }
    Ok(el)
}

fn close(stack: &mut [Element], root: &mut Option<Element>, el: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None => *root = Some(el),
    }
}

fn push_text(stack: &mut [Element], s: &str) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some(el) => {
            el.text.push_str(s);
            Ok(())
        }
        None if s.trim().is_empty() => Ok(()),
        None => Err(XmlError("text outside the root element".into())),
    }
}

fn utf8(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

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

    #[test]
    fn reads_prefixed_answers_with_entities() {
        let doc = br#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>
<objects><obj type="VirtualMachine">vm-1</obj><propSet><name>name</name><val xsi:type="xsd:string">a &amp; b &lt;c&gt; &#x41;&#66; %2f</val></propSet></objects>
<empty/><cdata><![CDATA[x<y]]></cdata>
</returnval></RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>"#;
        let root = parse(doc).unwrap();
        assert_eq!(root.name, "Envelope");
        let objects = root.find("objects").unwrap();
        assert_eq!(objects.child("obj").unwrap().attr("type"), Some("VirtualMachine"));
        assert_eq!(objects.child("obj").unwrap().text, "vm-1");
        let val = objects.find("val").unwrap();
        assert_eq!(val.text, "a & b <c> AB %2f");
        assert_eq!(val.attr("type"), None);
        assert_eq!(val.xsi_type(), Some("string"));
        let both =
            parse(br#"<val xmlns:xsi="x" xsi:type="ManagedObjectReference" type="HostSystem">host-1</val>"#).unwrap();
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
    fn malformed_documents_are_errors() {
        for bad in [
            &b""[..],
            b"<a>",
            b"<a></b>",
            b"</a>",
            b"<a/><b/>",
            b"text",
            b"<a>&bogus;</a>",
            b"<a>&#0;</a>",
            b"<a x='1' x='2'/>",
            b"<a>\xff</a>",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(deep.as_bytes()).unwrap_err().0.contains("deeper"));
    }

    #[test]
    fn escapes_what_xml_needs() {
        assert_eq!(escape(r#"a&b<c>"d'"#), "a&amp;b&lt;c&gt;&quot;d&apos;");
        assert_eq!(escape("tab\there\u{1}"), "tab\there\u{FFFD}");
        let mut out = String::new();
        text_element(&mut out, "userName", "dom\\ad&min<x>");
        moref_element(&mut out, "_this", "Session\"Manager", "S&M");
        let root = parse(format!("<r>{out}</r>").as_bytes()).unwrap();
        assert_eq!(root.child("userName").unwrap().text, "dom\\ad&min<x>");
        let this = root.child("_this").unwrap();
        assert_eq!(
            (this.attr("type"), this.text.as_str()),
            (Some("Session\"Manager"), "S&M")
        );
        assert!(parse(envelope("<x/>").as_bytes()).unwrap().find("x").is_some());
    }

    mod junk {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
                let _ = parse(&bytes);
            }

            #[test]
            fn xml_like_junk_parses_or_fails_cleanly(s in "[<>/a-c =\"'&;#x0-9!\\[\\]CDAT?-]{0,200}") {
                let _ = parse(s.as_bytes());
            }

            #[test]
            fn escaped_text_round_trips(s in "[^\\p{Cc}]{0,50}") {
                let mut out = String::new();
                text_element(&mut out, "v", &s);
                let root = parse(out.as_bytes()).unwrap();
                prop_assert_eq!(root.text, s);
            }
        }
    }
}
