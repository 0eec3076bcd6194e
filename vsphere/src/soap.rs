//! The vim25 calls host discovery makes, as SOAP bodies, and the decoding of their
//! answers (vSphere Web Services API reference: `ServiceInstance`, `SessionManager`,
//! `ViewManager`, `PropertyCollector`). Pure: bytes in, values out; the transport is
//! `http`, the orchestration `client`.
use std::fmt::Write as _;

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

    fn of(el: &Element) -> Result<MoRef, String> {
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

/// What an answer was: the method's `returnval` (absent when the method returns nothing
/// or an empty result), or a SOAP fault.
#[derive(Debug)]
pub enum Answer {
    Return(Option<Element>),
    Fault { fault: String, message: String },
}

/// Reads an answer's envelope: the `returnval` of `<{method}Response>` or the fault.
pub fn decode(body: &[u8], method: &str) -> Result<Answer, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("{method}: not XML: not UTF-8: {e}"))?;
    let root = xml::read(text).map_err(|e| format!("{method}: not XML: {e}"))?;
    let envelope_body = root
        .child("Body")
        .filter(|_| root.name == "Envelope")
        .ok_or_else(|| format!("{method}: not a SOAP envelope"))?;
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
    let response = envelope_body
        .child(&response_name)
        .ok_or_else(|| format!("{method}: no <{response_name}> in the answer"))?;
    Ok(Answer::Return(response.child("returnval").cloned()))
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

pub fn retrieve_result(ret: Option<&Element>) -> Result<RetrieveResult, String> {
    let Some(ret) = ret else {
        // No returnval: nothing matched.
        return Ok(RetrieveResult::default());
    };
    let token = ret
        .child("token")
        .map(|t| t.text.trim().to_string())
        .filter(|t| !t.is_empty());
    let mut objects = Vec::new();
    for o in ret.children_named("objects") {
        let obj = MoRef::of(o.child("obj").ok_or("an object without obj")?)?;
        let mut props = Vec::new();
        for p in o.children_named("propSet") {
            let name = p
                .child("name")
                .ok_or("a property without a name")?
                .text
                .trim()
                .to_string();
            if let Some(val) = p.child("val") {
                props.push((name, val.clone()));
            }
        }
        objects.push(ObjectContent { obj, props });
    }
    Ok(RetrieveResult { objects, token })
}

/// The session cookie in a `Set-Cookie` header, as the `Cookie` header sends it back.
pub fn session_cookie(set_cookie: &str) -> Option<String> {
    let pair = set_cookie.split(';').next()?.trim();
    let (name, value) = pair.split_once('=')?;
    (name.trim() == "vmware_soap_session" && !value.trim().is_empty()).then(|| pair.to_string())
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
