//! From the property collector's objects to the [`Inventory`]: each host's datacenter
//! and cluster are found by following `parent` upwards (host → compute resource or
//! cluster → host folders → datacenter), as the vSphere Client shows the tree. Pure.
use std::collections::HashMap;

use crate::inventory::{decode_name, ConnectionState, Host, Inventory, PowerState, Vm};
use crate::soap::{MoRef, ObjectContent};

/// The longest parent chain followed: folders nest, but not this deep; a loop in a
/// broken answer stops here.
const MAX_CHAIN: usize = 100;

pub fn assemble(objects: &[ObjectContent]) -> Inventory {
    let by_value: HashMap<&str, &ObjectContent> = objects.iter().map(|o| (o.obj.value.as_str(), o)).collect();
    let name_of = |o: &ObjectContent| decode_name(o.text("name").unwrap_or(&o.obj.value));
    let mut inv = Inventory::default();
    for o in objects {
        match o.obj.kind.as_str() {
            "HostSystem" => {
                let parent = o.moref("parent");
                let cluster = parent
                    .as_ref()
                    .filter(|p| p.kind == "ClusterComputeResource")
                    .and_then(|p| by_value.get(p.value.as_str()))
                    .map(|c| name_of(c));
                inv.hosts.push(Host {
                    id: o.obj.value.clone(),
                    name: name_of(o),
                    datacenter: datacenter(&by_value, parent).map(name_of).unwrap_or_default(),
                    cluster,
                    connection_state: ConnectionState::from_api(o.text("runtime.connectionState").unwrap_or("unset")),
                    in_maintenance: o.text("runtime.inMaintenanceMode").is_some_and(|t| t.trim() == "true"),
                });
            }
            "VirtualMachine" => inv.vms.push(Vm {
                id: o.obj.value.clone(),
                name: name_of(o),
                host: o.moref("runtime.host").map(|h| h.value),
                power_state: PowerState::from_api(o.text("runtime.powerState").unwrap_or("unset")),
            }),
            _ => {}
        }
    }
    inv.hosts.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    inv.vms.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    inv
}

fn datacenter<'a>(by_value: &HashMap<&str, &'a ObjectContent>, start: Option<MoRef>) -> Option<&'a ObjectContent> {
    let mut cur = start?;
    for _ in 0..MAX_CHAIN {
        let obj = by_value.get(cur.value.as_str())?;
        if cur.kind == "Datacenter" {
            return Some(obj);
        }
        cur = obj.moref("parent")?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::Element;

    fn val(text: &str) -> Element {
        Element {
            name: "val".into(),
            text: text.into(),
            ..Element::default()
        }
    }

    fn moref(kind: &str, value: &str) -> Element {
        Element {
            name: "val".into(),
            attrs: vec![("type".into(), kind.into())],
            text: value.into(),
            children: vec![],
        }
    }

    fn obj(kind: &str, id: &str, props: Vec<(&str, Element)>) -> ObjectContent {
        ObjectContent {
            obj: MoRef::new(kind, id),
            props: props.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    #[test]
    fn hosts_find_their_datacenter_and_cluster_through_folders() {
        let objects = vec![
            obj(
                "Datacenter",
                "datacenter-2",
                vec![("name", val("Lab East")), ("parent", moref("Folder", "group-d1"))],
            ),
            obj(
                "Folder",
                "group-h4",
                vec![("name", val("host")), ("parent", moref("Datacenter", "datacenter-2"))],
            ),
            obj(
                "Folder",
                "group-h9",
                vec![("name", val("Racks%2fRow 1")), ("parent", moref("Folder", "group-h4"))],
            ),
            obj(
                "ClusterComputeResource",
                "domain-c7",
                vec![("name", val("HPC%252f")), ("parent", moref("Folder", "group-h9"))],
            ),
            obj(
                "ComputeResource",
                "domain-s9",
                vec![("name", val("solo")), ("parent", moref("Folder", "group-h4"))],
            ),
            obj(
                "HostSystem",
                "host-21",
                vec![
                    ("name", val("esx02")),
                    ("parent", moref("ClusterComputeResource", "domain-c7")),
                    ("runtime.connectionState", val("notResponding")),
                    ("runtime.inMaintenanceMode", val("true")),
                ],
            ),
            obj(
                "HostSystem",
                "host-10",
                vec![
                    ("name", val("solo")),
                    ("parent", moref("ComputeResource", "domain-s9")),
                    ("runtime.connectionState", val("connected")),
                    ("runtime.inMaintenanceMode", val("false")),
                ],
            ),
            obj(
                "VirtualMachine",
                "vm-5",
                vec![
                    ("name", val("a%2fb [x]: y")),
                    ("runtime.host", moref("HostSystem", "host-21")),
                    ("runtime.powerState", val("suspended")),
                ],
            ),
            obj(
                "VirtualMachine",
                "vm-6",
                vec![("name", val("template")), ("runtime.powerState", val("poweredOff"))],
            ),
        ];
        let inv = assemble(&objects);
        assert_eq!(inv.hosts.len(), 2);
        let esx02 = &inv.hosts[0];
        assert_eq!((esx02.id.as_str(), esx02.name.as_str()), ("host-21", "esx02"));
        assert_eq!(esx02.datacenter, "Lab East");
        assert_eq!(esx02.cluster.as_deref(), Some("HPC%2f"));
        assert_eq!(esx02.connection_state, ConnectionState::NotResponding);
        assert!(esx02.in_maintenance);
        let solo = &inv.hosts[1];
        assert_eq!((solo.cluster.as_ref(), solo.datacenter.as_str()), (None, "Lab East"));
        assert_eq!(inv.vms[0].name, "a/b [x]: y");
        assert_eq!(inv.vms[0].host.as_deref(), Some("host-21"));
        assert_eq!(inv.vms[0].power_state, PowerState::Suspended);
        assert_eq!(inv.vms[1].host, None);
    }

    #[test]
    fn a_parent_loop_ends() {
        let objects = vec![
            obj(
                "Folder",
                "f1",
                vec![("name", val("a")), ("parent", moref("Folder", "f2"))],
            ),
            obj(
                "Folder",
                "f2",
                vec![("name", val("b")), ("parent", moref("Folder", "f1"))],
            ),
            obj(
                "HostSystem",
                "h",
                vec![("name", val("h")), ("parent", moref("Folder", "f1"))],
            ),
        ];
        let inv = assemble(&objects);
        assert_eq!(inv.hosts[0].datacenter, "");
        assert_eq!(inv.hosts[0].connection_state, ConnectionState::Other("unset".into()));
    }
}
