//! The vim25 calls host discovery makes, as SOAP bodies, and the decoding of their
//! answers (vSphere Web Services API reference: `ServiceInstance`, `SessionManager`,
//! `ViewManager`, `PropertyCollector`). Pure: bytes in, values out; the transport is
//! `http`, the orchestration `client`.
use std::fmt::Write as _;

use std::ops::Range;

use bytes::Bytes;

use pvrdma_parsers::xml::{self, Element};

use crate::xml::{envelope, moref_element, text_element};

/// A managed object reference: its type (`HostSystem`) and value (`host-21`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MoRef {
    pub kind: String,
    pub value: String,
}

impl MoRef {
    pub fn new(kind: &str, value: &str) -> MoRef {
        MoRef {
            kind: kind.into(),
            value: value.into(),
        }
    }

    pub(crate) fn of(el: &Element) -> Result<MoRef, String> {
        let kind = el.attr("type").ok_or_else(|| format!("<{}> has no type", el.name))?;
        Ok(MoRef::new(kind, el.text.trim()))
    }
}

/// The part of `ServiceContent` discovery uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceContent {
    pub root_folder: MoRef,
    pub property_collector: MoRef,
    pub view_manager: MoRef,
    pub session_manager: MoRef,
    /// `about.apiVersion` (`8.0.2.0`): the newest API release the server speaks.
    pub api_version: Option<String>,
}

/// What an answer was: the method's `returnval`, or a SOAP fault.
#[derive(Debug)]
pub enum Answer {
    Return(Returned),
    Fault { fault: String, message: String },
}

/// A method's `returnval` (absent when the method returns nothing or an empty result),
/// read to the depth asked, with the namespace declarations in scope at it: what a part
/// of it handed on as written needs to stand alone.
#[derive(Debug)]
pub struct Returned {
    pub value: Option<Element>,
    /// `xmlns` and `xmlns:PREFIX` declarations of the envelope, the body, the response and
    /// `returnval`, outermost first, each prefix once (as declared innermost).
    pub namespaces: Vec<(String, String)>,
}

/// The depth of a property's value in a property collector's answer (the envelope, its
/// body, the response, `returnval`, `objects`, `propSet`, `val`). Read to there, a page
/// gives each object, its properties' names and the values that are text or a reference,
/// and passes over what structured values hold, as the configuration read hands them on
/// as written for the parser of each object to read.
pub const VALUE_DEPTH: usize = 7;

/// Reads an answer's envelope, to `depth` (see [`VALUE_DEPTH`]; [`xml::MAX_DEPTH`] reads
/// it whole): the `returnval` of `<{method}Response>` or the fault.
pub fn decode(body: &[u8], method: &str, depth: usize) -> Result<Answer, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("{method}: not XML: not UTF-8: {e}"))?;
    let root = xml::read_to_depth(text, depth).map_err(|e| format!("{method}: not XML: {e}"))?;
    if root.name != "Envelope" || root.child("Body").is_none() {
        return Err(format!("{method}: not a SOAP envelope"));
    }
    let mut namespaces = Vec::new();
    declare(&mut namespaces, &root);
    let envelope_body = into_child(root, "Body").ok_or_else(|| format!("{method}: not a SOAP envelope"))?;
    declare(&mut namespaces, &envelope_body);
    if let Some(fault) = envelope_body.child("Fault") {
        let message = fault
            .child("faultstring")
            .map(|f| f.text.trim().to_string())
            .unwrap_or_default();
        // The fault's type is the detail element's xsi:type, else its name less `Fault`
        // (`<InvalidLoginFault xsi:type="InvalidLogin">`).
        let name = fault
            .child("detail")
            .and_then(|d| d.children.first())
            .map(|d| match d.xsi_type() {
                Some(t) => t.to_string(),
                None => d.name.strip_suffix("Fault").unwrap_or(&d.name).to_string(),
            })
            .or_else(|| fault.child("faultcode").map(|c| c.text.trim().to_string()))
            .unwrap_or_else(|| "unknown".into());
        return Ok(Answer::Fault { fault: name, message });
    }
    let response_name = format!("{method}Response");
    let response = into_child(envelope_body, &response_name)
        .ok_or_else(|| format!("{method}: no <{response_name}> in the answer"))?;
    declare(&mut namespaces, &response);
    let value = into_child(response, "returnval");
    if let Some(ret) = &value {
        declare(&mut namespaces, ret);
    }
    Ok(Answer::Return(Returned { value, namespaces }))
}

/// The first child named `name`, taken out of `el`.
fn into_child(el: Element, name: &str) -> Option<Element> {
    el.children.into_iter().find(|c| c.name == name)
}

/// Adds the namespace declarations of `el` to `namespaces`, replacing an outer one of the
/// same prefix.
fn declare(namespaces: &mut Vec<(String, String)>, el: &Element) {
    for (key, value) in el.attrs.iter().filter(|(k, _)| is_declaration(k)) {
        namespaces.retain(|(k, _)| k != key);
        namespaces.push((key.clone(), value.clone()));
    }
}

/// Whether an attribute name declares a namespace (`xmlns`, `xmlns:xsi`).
pub(crate) fn is_declaration(attribute: &str) -> bool {
    attribute == "xmlns" || attribute.starts_with("xmlns:")
}

pub(crate) fn call(method: &str, this: &MoRef, args: &str) -> String {
    let mut body = String::with_capacity(args.len() + 200);
    let _ = write!(body, r#"<{method} xmlns="urn:vim25">"#);
    moref_element(&mut body, "_this", &this.kind, &this.value);
    body.push_str(args);
    let _ = write!(body, "</{method}>");
    envelope(&body)
}

pub fn retrieve_service_content() -> String {
    call(
        "RetrieveServiceContent",
        &MoRef::new("ServiceInstance", "ServiceInstance"),
        "",
    )
}

pub fn service_content(ret: Option<&Element>) -> Result<ServiceContent, String> {
    let ret = ret.ok_or("RetrieveServiceContent returned nothing")?;
    let get = |name: &str| {
        ret.child(name)
            .ok_or_else(|| format!("the service content has no {name}"))
            .and_then(MoRef::of)
    };
    Ok(ServiceContent {
        root_folder: get("rootFolder")?,
        property_collector: get("propertyCollector")?,
        view_manager: get("viewManager")?,
        session_manager: get("sessionManager")?,
        api_version: ret
            .child("about")
            .and_then(|a| a.child("apiVersion"))
            .map(|v| v.text.trim().to_string())
            .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')),
    })
}

/// `SessionManager.Login`. The password goes only into this body, escaped.
pub fn login(session_manager: &MoRef, user: &str, password: &str) -> String {
    let mut args = String::new();
    text_element(&mut args, "userName", user);
    text_element(&mut args, "password", password);
    call("Login", session_manager, &args)
}

pub fn logout(session_manager: &MoRef) -> String {
    call("Logout", session_manager, "")
}

/// The inventory types a host's datacenter and cluster are found through, and the
/// hosts and VMs themselves.
pub const VIEW_TYPES: [&str; 6] = [
    "Datacenter",
    "Folder",
    "ClusterComputeResource",
    "ComputeResource",
    "HostSystem",
    "VirtualMachine",
];

pub fn create_container_view(view_manager: &MoRef, root: &MoRef) -> String {
    let mut args = String::new();
    moref_element(&mut args, "container", &root.kind, &root.value);
    for t in VIEW_TYPES {
        text_element(&mut args, "type", t);
    }
    args.push_str("<recursive>true</recursive>");
    call("CreateContainerView", view_manager, &args)
}

pub fn returned_moref(ret: Option<&Element>, method: &str) -> Result<MoRef, String> {
    MoRef::of(ret.ok_or_else(|| format!("{method} returned nothing"))?)
}

pub fn destroy_view(view: &MoRef) -> String {
    call("DestroyView", view, "")
}

/// The properties read per type. VMs need no `parent`: only their host matters.
pub const PROPERTIES: [(&str, &[&str]); 6] = [
    ("Datacenter", &["name", "parent"]),
    ("Folder", &["name", "parent"]),
    ("ClusterComputeResource", &["name", "parent"]),
    ("ComputeResource", &["name", "parent"]),
    (
        "HostSystem",
        &["name", "parent", "runtime.connectionState", "runtime.inMaintenanceMode"],
    ),
    ("VirtualMachine", &["name", "runtime.host", "runtime.powerState"]),
];

/// `RetrievePropertiesEx` over everything a container view holds, `max_objects` a page.
pub fn retrieve_view(collector: &MoRef, view: &MoRef, max_objects: u32) -> String {
    let mut args = String::from("<specSet>");
    for (kind, paths) in PROPERTIES {
        args.push_str("<propSet>");
        text_element(&mut args, "type", kind);
        args.push_str("<all>false</all>");
        for p in paths {
            text_element(&mut args, "pathSet", p);
        }
        args.push_str("</propSet>");
    }
    args.push_str("<objectSet>");
    moref_element(&mut args, "obj", &view.kind, &view.value);
    args.push_str("<skip>true</skip>");
    args.push_str(
        r#"<selectSet xsi:type="TraversalSpec"><name>view</name><type>ContainerView</type><path>view</path><skip>false</skip></selectSet>"#,
    );
    args.push_str("</objectSet></specSet>");
    let _ = write!(args, "<options><maxObjects>{max_objects}</maxObjects></options>");
    call("RetrievePropertiesEx", collector, &args)
}

/// `RetrievePropertiesEx` of one property of one object.
pub fn retrieve_one(collector: &MoRef, obj: &MoRef, path: &str) -> String {
    let mut args = String::from("<specSet><propSet>");
    text_element(&mut args, "type", &obj.kind);
    args.push_str("<all>false</all>");
    text_element(&mut args, "pathSet", path);
    args.push_str("</propSet><objectSet>");
    moref_element(&mut args, "obj", &obj.kind, &obj.value);
    args.push_str("<skip>false</skip></objectSet></specSet><options></options>");
    call("RetrievePropertiesEx", collector, &args)
}

pub fn continue_retrieve(collector: &MoRef, token: &str) -> String {
    let mut args = String::new();
    text_element(&mut args, "token", token);
    call("ContinueRetrievePropertiesEx", collector, &args)
}

/// One object of a `RetrieveResult`: its reference and its properties by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectContent {
    pub obj: MoRef,
    pub props: Vec<(String, Element)>,
    /// Where its `<objects>` element is in the answer's text.
    pub span: Range<usize>,
    /// The namespace prefixes its `<objects>` start tag declares itself (`xmlns:xsi`).
    pub declares: Vec<String>,
}

impl ObjectContent {
    pub fn prop(&self, path: &str) -> Option<&Element> {
        self.props.iter().find(|(p, _)| p == path).map(|(_, v)| v)
    }

    pub fn text(&self, path: &str) -> Option<&str> {
        self.prop(path).map(|v| v.text.as_str())
    }

    pub fn moref(&self, path: &str) -> Option<MoRef> {
        self.prop(path).and_then(|v| MoRef::of(v).ok())
    }
}

/// A page: its objects, and the token of the next page when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetrieveResult {
    pub objects: Vec<ObjectContent>,
    pub token: Option<String>,
}

pub fn retrieve_result(ret: Option<Element>) -> Result<RetrieveResult, String> {
    let Some(ret) = ret else {
        // No returnval: nothing matched.
        return Ok(RetrieveResult::default());
    };
    let token = ret
        .child("token")
        .map(|t| t.text.trim().to_string())
        .filter(|t| !t.is_empty());
    let mut objects = Vec::new();
    for o in ret.children.into_iter().filter(|c| c.name == "objects") {
        let obj = MoRef::of(o.child("obj").ok_or("an object without obj")?)?;
        let declares = o
            .attrs
            .iter()
            .filter(|(k, _)| is_declaration(k))
            .map(|(k, _)| k.clone())
            .collect();
        let mut props = Vec::new();
        for p in o.children.into_iter().filter(|c| c.name == "propSet") {
            let name = p
                .child("name")
                .ok_or("a property without a name")?
                .text
                .trim()
                .to_string();
            if let Some(val) = into_child(p, "val") {
                props.push((name, val));
            }
        }
        objects.push(ObjectContent {
            obj,
            props,
            span: o.span,
            declares,
        });
    }
    Ok(RetrieveResult { objects, token })
}

/// A property collector's answer, as its objects are read from it: its text, which the
/// objects' spans point into, and the namespace declarations in scope at its objects.
pub struct Page {
    text: Bytes,
    namespaces: Vec<(String, String)>,
}

impl Page {
    pub fn new(text: Bytes, namespaces: Vec<(String, String)>) -> Page {
        Page { text, namespaces }
    }

    /// The text of the answer at `span`, as vCenter wrote it.
    pub fn written(&self, span: std::ops::Range<usize>) -> Result<&str, String> {
        self.text
            .get(span)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .ok_or_else(|| "an object's place in the answer is not in its text".to_string())
    }

    pub fn namespaces(&self) -> &[(String, String)] {
        &self.namespaces
    }
}

/// The session cookie in a `Set-Cookie` header, as the `Cookie` header sends it back.
pub fn session_cookie(set_cookie: &str) -> Option<String> {
    let pair = set_cookie.split(';').next()?.trim();
    let (name, value) = pair.split_once('=')?;
    (name.trim() == "vmware_soap_session" && !value.trim().is_empty()).then(|| pair.to_string())
}

/// Whether an answer to `vimServiceVersions.xml` is the vSphere API's: it lists the
/// `urn:vim25` namespace.
pub fn lists_vim25(body: &[u8]) -> bool {
    std::str::from_utf8(body).is_ok_and(|text| text.contains("<namespaces") && text.contains("urn:vim25"))
}

/// A short, single-line excerpt of an answer for an error message.
pub fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = flat.chars().take(200).collect();
    if flat.chars().count() > 200 {
        cut.push('…');
    }
    escape_control(&cut)
}

fn escape_control(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

#[cfg(test)]
#[path = "soap_tests.rs"]
mod tests;
