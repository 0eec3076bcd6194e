use super::*;

const NS: &str = r#"xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#;

fn wrap(body: &str) -> Vec<u8> {
    format!(r#"<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope {NS}><soapenv:Body>{body}</soapenv:Body></soapenv:Envelope>"#)
        .into_bytes()
}

#[test]
fn service_content_as_vcenter_sends_it() {
    let body = wrap(
        r#"<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval>
<rootFolder type="Folder">group-d1</rootFolder><propertyCollector type="PropertyCollector">propertyCollector</propertyCollector>
<viewManager type="ViewManager">ViewManager</viewManager><about><name>VMware vCenter Server</name><apiVersion>8.0.2.0</apiVersion></about>
<sessionManager type="SessionManager">SessionManager</sessionManager></returnval></RetrieveServiceContentResponse>"#,
    );
    let Answer::Return(Returned { value: ret, .. }) = decode(&body, "RetrieveServiceContent", xml::MAX_DEPTH).unwrap()
    else {
        panic!("a fault")
    };
    let sc = service_content(ret.as_ref()).unwrap();
    assert_eq!(sc.root_folder, MoRef::new("Folder", "group-d1"));
    assert_eq!(sc.session_manager.value, "SessionManager");
    assert_eq!(sc.view_manager.kind, "ViewManager");
    assert_eq!(sc.api_version.as_deref(), Some("8.0.2.0"));
}

#[test]
fn faults_are_named_by_their_type() {
    let vcenter = wrap(
        r#"<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>Cannot complete login due to an incorrect user name or password.</faultstring><detail><InvalidLoginFault xmlns="urn:vim25" xsi:type="InvalidLogin"></InvalidLoginFault></detail></soapenv:Fault>"#,
    );
    let Answer::Fault { fault, message } = decode(&vcenter, "Login", xml::MAX_DEPTH).unwrap() else {
        panic!("not a fault")
    };
    assert_eq!(fault, "InvalidLogin");
    assert!(message.starts_with("Cannot complete login"));
    // Without xsi:type, the element name less `Fault`; without detail, the fault code.
    let bare = wrap(
        r#"<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>x</faultstring><detail><NotAuthenticatedFault xmlns="urn:vim25"/></detail></soapenv:Fault>"#,
    );
    assert!(
        matches!(decode(&bare, "X", xml::MAX_DEPTH).unwrap(), Answer::Fault { fault, .. } if fault == "NotAuthenticated")
    );
    let code =
        wrap(r#"<soapenv:Fault><faultcode>soapenv:Client</faultcode><faultstring>y</faultstring></soapenv:Fault>"#);
    assert!(
        matches!(decode(&code, "X", xml::MAX_DEPTH).unwrap(), Answer::Fault { fault, .. } if fault == "soapenv:Client")
    );
}

#[test]
fn a_page_of_objects_and_its_token() {
    let body = wrap(
        r#"<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><token>1</token>
<objects><obj type="HostSystem">host-21</obj>
<propSet><name>name</name><val xsi:type="xsd:string">esx01.lab</val></propSet>
<propSet><name>parent</name><val xsi:type="ManagedObjectReference" type="ClusterComputeResource">domain-c7</val></propSet>
<propSet><name>runtime.connectionState</name><val xsi:type="HostSystemConnectionState">connected</val></propSet>
<propSet><name>runtime.inMaintenanceMode</name><val xsi:type="xsd:boolean">false</val></propSet></objects>
<objects><obj type="VirtualMachine">vm-42</obj>
<propSet><name>name</name><val xsi:type="xsd:string">hpc [test] 07 &amp; co</val></propSet>
<missingSet><path>runtime.host</path><fault><fault xsi:type="NoPermission"/></fault></missingSet></objects>
</returnval></RetrievePropertiesExResponse>"#,
    );
    let Answer::Return(Returned { value: ret, namespaces }) =
        decode(&body, "RetrievePropertiesEx", xml::MAX_DEPTH).unwrap()
    else {
        panic!("a fault")
    };
    // What a part of it handed on needs declared: the envelope's prefixes, the
    // response's default namespace.
    let keys: Vec<&str> = namespaces.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["xmlns:soapenv", "xmlns:xsd", "xmlns:xsi", "xmlns"]);
    let page = retrieve_result(ret).unwrap();
    assert_eq!(page.token.as_deref(), Some("1"));
    assert_eq!(page.objects.len(), 2);
    let host = &page.objects[0];
    assert_eq!(host.obj, MoRef::new("HostSystem", "host-21"));
    assert_eq!(host.text("name"), Some("esx01.lab"));
    assert_eq!(
        host.moref("parent"),
        Some(MoRef::new("ClusterComputeResource", "domain-c7"))
    );
    assert_eq!(host.text("runtime.inMaintenanceMode"), Some("false"));
    let vm = &page.objects[1];
    assert_eq!(vm.text("name"), Some("hpc [test] 07 & co"));
    assert_eq!(vm.moref("runtime.host"), None);

    // The last page has no token; an empty result has no returnval at all.
    let empty = wrap(r#"<RetrievePropertiesExResponse xmlns="urn:vim25"></RetrievePropertiesExResponse>"#);
    let Answer::Return(Returned { value: ret, .. }) = decode(&empty, "RetrievePropertiesEx", xml::MAX_DEPTH).unwrap()
    else {
        panic!("a fault")
    };
    assert_eq!(retrieve_result(ret).unwrap(), RetrieveResult::default());
}

#[test]
fn requests_escape_what_users_type() {
    let body = login(
        &MoRef::new("SessionManager", "SessionManager"),
        "ad\\ops&<dev>",
        "p&<>\"'w",
    );
    let root = xml::read(&body).unwrap();
    let l = root.find("Login").unwrap();
    assert_eq!(l.child("userName").unwrap().text, "ad\\ops&<dev>");
    assert_eq!(l.child("password").unwrap().text, "p&<>\"'w");
    assert_eq!(l.child("_this").unwrap().attr("type"), Some("SessionManager"));

    let view = MoRef::new("ContainerView", "session[52a1]52b2");
    let req = retrieve_view(&MoRef::new("PropertyCollector", "propertyCollector"), &view, 100);
    let root = xml::read(&req).unwrap();
    let r = root.find("RetrievePropertiesEx").unwrap();
    assert_eq!(r.find("maxObjects").unwrap().text, "100");
    assert_eq!(
        r.find("objectSet").unwrap().child("obj").unwrap().text,
        "session[52a1]52b2"
    );
    assert_eq!(
        r.find("specSet").unwrap().children_named("propSet").count(),
        PROPERTIES.len()
    );
}

#[test]
fn cookies_and_excerpts() {
    assert_eq!(
        session_cookie(r#"vmware_soap_session="52e1"; Path=/; HttpOnly; Secure;"#).as_deref(),
        Some(r#"vmware_soap_session="52e1""#)
    );
    assert_eq!(session_cookie("other=1; Path=/"), None);
    assert_eq!(session_cookie("vmware_soap_session=; Path=/"), None);
    let long = "x ".repeat(300);
    let e = excerpt(long.as_bytes());
    assert!(e.ends_with('…') && e.chars().count() == 201);
    assert_eq!(excerpt(b"a\x01\n\nb"), "a? b");
}

#[test]
fn the_list_of_api_releases_is_told_from_a_web_page() {
    // As govmomi's simulator, vCenter and ESXi serve /sdk/vimServiceVersions.xml.
    let vsphere = br#"<?xml version="1.0" encoding="UTF-8"?>
<namespaces version="1.0">
 <namespace>
  <name>urn:vim25</name>
  <version>7.0</version>
 </namespace>
</namespaces>"#;
    assert!(lists_vim25(vsphere));
    assert!(!lists_vim25(
        b"<HTML><BODY BGCOLOR=\"#ffffff\">\n<pre>\n\ns_server -www"
    ));
    assert!(!lists_vim25(b"\xff\xfe"));
}

#[test]
fn answers_of_the_wrong_shape_are_errors() {
    assert!(decode(b"<html><body>502 Bad Gateway</body></html>", "Login", xml::MAX_DEPTH).is_err());
    assert!(decode(&wrap("<OtherResponse/>"), "Login", xml::MAX_DEPTH).is_err());
    let Answer::Return(Returned { value: ret, .. }) = decode(&wrap(r#"<RetrievePropertiesExResponse><returnval><objects><propSet/></objects></returnval></RetrievePropertiesExResponse>"#), "RetrievePropertiesEx", xml::MAX_DEPTH).unwrap() else {
        panic!()
    };
    assert!(retrieve_result(ret).is_err());
    assert!(service_content(None).is_err());
    assert!(returned_moref(None, "CreateContainerView").is_err());
}

mod junk {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of real answers, shuffled and cut: the decoders must answer Ok or Err.
    fn fragment() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "<soapenv:Envelope>",
            "</soapenv:Envelope>",
            "<soapenv:Body>",
            "</soapenv:Body>",
            "<RetrievePropertiesExResponse>",
            "</RetrievePropertiesExResponse>",
            "<returnval>",
            "</returnval>",
            "<objects>",
            "</objects>",
            "<obj type=\"HostSystem\">",
            "<obj>",
            "</obj>",
            "host-1",
            "<propSet>",
            "</propSet>",
            "<name>",
            "</name>",
            "<val type=\"Folder\">",
            "</val>",
            "<token>",
            "</token>",
            "<soapenv:Fault>",
            "</soapenv:Fault>",
            "<detail>",
            "</detail>",
            "<X/>",
            "&amp;",
            "&",
            "<",
            "\"",
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        #[test]
        fn decoders_never_panic(parts in proptest::collection::vec(fragment(), 0..40)) {
            let text = parts.concat();
            for method in ["RetrievePropertiesEx", "RetrieveServiceContent", "CreateContainerView"] {
                for depth in [xml::MAX_DEPTH, VALUE_DEPTH] {
                    if let Ok(Answer::Return(Returned { value: ret, .. })) = decode(text.as_bytes(), method, depth) {
                        let _ = service_content(ret.as_ref());
                        let _ = returned_moref(ret.as_ref(), method);
                        let _ = retrieve_result(ret);
                    }
                }
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode(&bytes, "Login", xml::MAX_DEPTH);
            let _ = excerpt(&bytes);
            let _ = session_cookie(&String::from_utf8_lossy(&bytes));
        }
    }
}
