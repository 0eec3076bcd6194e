//! The one reader of the vSphere API's XML, shared by the vSphere client (its SOAP
//! envelopes, faults and property-collector pages) and by the parser of a host's
//! configuration (`vsphere`), so an answer is read by one set of rules: elements by their
//! local name (vCenter, ESXi's hostd and the simulator prefix namespaces differently),
//! entities resolved, and each element's place in the text kept, so a part of an answer
//! can be handed on as it was written. Reading never panics: anything that is not
//! well-formed XML, or nests deeper than a SOAP answer does, is an error saying where.
use std::ops::Range;

use quick_xml::events::{BytesRef, BytesStart, Event};

/// The deepest nesting accepted. A property-collector answer nests about 8 deep, a host's
/// network configuration in it about 16.
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// The local name, without a namespace prefix.
    pub name: String,
    /// Attributes by their name as written, prefix included (`type`, `xsi:type`), values
    /// with their entities resolved.
    pub attrs: Vec<(String, String)>,
    /// The text directly inside it, entities resolved.
    pub text: String,
    pub children: Vec<Element>,
    /// Where it is in the text read: from the `<` of its start tag to the `>` of its end
    /// tag.
    pub span: Range<usize>,
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
    pub fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(name))
    }
}

/// Why a text is not the XML expected, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct XmlError {
    /// The byte offset of the markup or text that could not be read.
    pub at: usize,
    /// What was expected there, as a parse error names it (`well-formed XML`).
    pub expected: &'static str,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl XmlError {
    fn new(at: usize, expected: &'static str, message: impl Into<String>) -> XmlError {
        XmlError {
            at,
            expected,
            message: message.into(),
        }
    }
}

/// Reads a whole document into its root element.
pub fn read(input: &str) -> Result<Element, XmlError> {
    read_to_depth(input, MAX_DEPTH)
}

/// Reads a document into its root element, down to `depth` (the root is at 1): an
/// element deeper than that is passed over, found well-formed enough to be skipped but
/// not read. A caller that needs only the outer structure (which objects a page holds,
/// and where each is in the text) does not pay for the inner one.
pub fn read_to_depth(input: &str, depth: usize) -> Result<Element, XmlError> {
    let mut roots = read_with(input, depth.min(MAX_DEPTH), true)?;
    match roots.pop() {
        Some(root) if roots.is_empty() => Ok(root),
        _ => Err(XmlError::new(0, "an element", "no root element")),
    }
}

/// Reads a sequence of elements, one after the other (whitespace between them), as a
/// part of an answer handed on is written.
pub fn read_elements(input: &str) -> Result<Vec<Element>, XmlError> {
    read_with(input, MAX_DEPTH, false)
}

/// The reader itself: `depth` is the deepest level read into the tree, `one_root`
/// whether the text is a document (one root element) or a sequence of them.
fn read_with(input: &str, depth: usize, one_root: bool) -> Result<Vec<Element>, XmlError> {
    let mut reader = quick_xml::Reader::from_str(input);
    reader.config_mut().check_end_names = true;
    let syntax = |at: usize, e: &dyn std::fmt::Display| XmlError::new(at, "well-formed XML", e.to_string());
    let mut stack: Vec<Element> = Vec::new();
    let mut roots: Vec<Element> = Vec::new();
    loop {
        let at = position(&reader);
        let event = reader.read_event().map_err(|e| syntax(at, &e))?;
        match event {
            Event::Start(start) | Event::Empty(start) if one_root && stack.is_empty() && !roots.is_empty() => {
                let _ = start;
                return Err(XmlError::new(
                    at,
                    "the end of the text",
                    "content after the root element",
                ));
            }
            Event::Start(start) if stack.len() >= depth && depth < MAX_DEPTH => {
                reader.read_to_end(start.name()).map_err(|e| syntax(at, &e))?;
            }
            Event::Empty(_) if stack.len() >= depth && depth < MAX_DEPTH => {}
            Event::Start(start) => stack.push(element(&start, at, stack.len())?),
            Event::Empty(start) => {
                let mut el = element(&start, at, stack.len())?;
                el.span.end = position(&reader);
                close(&mut stack, &mut roots, el);
            }
            Event::End(_) => {
                let mut el = stack
                    .pop()
                    .ok_or_else(|| XmlError::new(at, "a start tag", "an end tag without a start"))?;
                el.span.end = position(&reader);
                close(&mut stack, &mut roots, el);
            }
            Event::Text(t) => {
                let s = t
                    .xml10_content()
                    .map_err(|e| XmlError::new(at, "text", e.to_string()))?;
                push_text(&mut stack, &s, at)?;
            }
            Event::CData(t) => {
                let s = t.decode().map_err(|e| XmlError::new(at, "text", e.to_string()))?;
                push_text(&mut stack, &s, at)?;
            }
            Event::GeneralRef(r) => push_text(&mut stack, &resolve(&r, at)?, at)?,
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(XmlError::new(
            input.len(),
            "the end of every element",
            "the document ends inside an element",
        ));
    }
    Ok(roots)
}

/// The character an entity or character reference (`&amp;`, `&#39;`) stands for.
fn resolve(r: &BytesRef<'_>, at: usize) -> Result<String, XmlError> {
    match r
        .resolve_char_ref()
        .map_err(|e| XmlError::new(at, "a character reference", e.to_string()))?
    {
        Some(c) => Ok(c.to_string()),
        None => {
            let name = r.decode().map_err(|e| XmlError::new(at, "an entity", e.to_string()))?;
            quick_xml::escape::resolve_predefined_entity(&name)
                .map(str::to_string)
                .ok_or_else(|| XmlError::new(at, "a predefined entity", format!("unknown entity &{name};")))
        }
    }
}

/// `input` with each run of character data (the text between two tags, its entities and
/// character references resolved: `R&amp;D` is handed over as `R&D`) replaced by what
/// `text` gives for it, escaped again, and the markup (tags, comments, declarations)
/// replaced by what `markup` gives for it. Where `text` gives `None`, the run stays as
/// written, byte for byte. For a redactor: a name vCenter wrote with entities is still
/// the name it learnt, and what it does not touch stays as vCenter wrote it.
///
/// Markup is handed over as written (an attribute value with its entities). Text that
/// is not well-formed XML from some point on (an answer cut by a size limit) goes to
/// `markup` from that point, whole.
pub fn rewrite_text(
    input: &str,
    mut text: impl FnMut(&str) -> Option<String>,
    mut markup: impl FnMut(&str) -> String,
) -> String {
    let mut reader = quick_xml::Reader::from_str(input);
    let mut out = String::with_capacity(input.len());
    // The run of character data being read: where it starts, and what it means.
    let mut run: Option<(usize, String)> = None;
    let mut flush = |out: &mut String, run: &mut Option<(usize, String)>, end: usize| {
        if let Some((start, meaning)) = run.take() {
            let written = input.get(start..end).unwrap_or_default();
            match text(&meaning) {
                Some(new) => out.push_str(&quick_xml::escape::partial_escape(new.as_str())),
                None => out.push_str(written),
            }
        }
    };
    loop {
        let at = position(&reader);
        let meaning = match reader.read_event() {
            Ok(Event::Eof) => {
                flush(&mut out, &mut run, at);
                out.push_str(&markup(input.get(at..).unwrap_or_default()));
                return out;
            }
            Ok(Event::Text(t)) => t.xml10_content().map(|c| c.into_owned()).ok(),
            Ok(Event::CData(t)) => t.decode().map(|c| c.into_owned()).ok(),
            Ok(Event::GeneralRef(r)) => resolve(&r, at).ok(),
            Ok(_) => {
                flush(&mut out, &mut run, at);
                out.push_str(&markup(input.get(at..position(&reader)).unwrap_or_default()));
                continue;
            }
            Err(_) => None,
        };
        let Some(meaning) = meaning else {
            flush(&mut out, &mut run, at);
            out.push_str(&markup(input.get(at..).unwrap_or_default()));
            return out;
        };
        run.get_or_insert_with(|| (at, String::new())).1.push_str(&meaning);
    }
}

/// Where the reader is, as a byte offset into the text.
fn position(reader: &quick_xml::Reader<&[u8]>) -> usize {
    usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX)
}

fn element(start: &BytesStart<'_>, at: usize, depth: usize) -> Result<Element, XmlError> {
    if depth >= MAX_DEPTH {
        return Err(XmlError::new(
            at,
            "elements nested at most 64 deep",
            format!("elements nested deeper than {MAX_DEPTH}"),
        ));
    }
    let mut el = Element {
        name: utf8(start.local_name().as_ref()),
        span: at..at,
        ..Element::default()
    };
    for attr in start.attributes() {
        let attr = attr.map_err(|e| XmlError::new(at, "well-formed attributes", e.to_string()))?;
        let value = attr
            .unescape_value()
            .map_err(|e| XmlError::new(at, "well-formed attributes", e.to_string()))?;
        el.attrs.push((utf8(attr.key.as_ref()), value.into_owned()));
    }
    Ok(el)
}

fn close(stack: &mut [Element], roots: &mut Vec<Element>, el: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None => roots.push(el),
    }
}

fn push_text(stack: &mut [Element], s: &str, at: usize) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some(el) => {
            el.text.push_str(s);
            Ok(())
        }
        None if s.trim().is_empty() => Ok(()),
        None => Err(XmlError::new(at, "an element", "text outside the root element")),
    }
}

fn utf8(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

#[cfg(test)]
mod tests;
