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
                    .and_then(|p| by_value.get(p.value.as_str()).copied());
                inv.hosts.push(Host {
                    id: o.obj.value.clone(),
                    name: name_of(o),
                    datacenter: datacenter(&by_value, parent).map(name_of).unwrap_or_default(),
                    cluster: cluster.map(name_of),
                    cluster_path: cluster.and_then(|c| inventory_path(&by_value, c)),
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

/// `obj`'s inventory path: the names from the top down to it, as the API sends them,
/// without the root folder (the one object with no parent), as `govc find` prints them.
/// `None` when the chain does not pass a datacenter (a parent was not read) or does not
/// end.
fn inventory_path(by_value: &HashMap<&str, &ObjectContent>, obj: &ObjectContent) -> Option<String> {
    let mut names = Vec::new();
    let mut in_datacenter = false;
    let mut cur = obj;
    for _ in 0..MAX_CHAIN {
        names.push(cur.text("name")?);
        in_datacenter |= cur.obj.kind == "Datacenter";
        let parent = cur.moref("parent")?;
        match by_value.get(parent.value.as_str()) {
            // The view lists what is inside the root folder, not the root folder itself.
            None => return in_datacenter.then(|| join_path(&names)),
            Some(up) if up.moref("parent").is_none() => return in_datacenter.then(|| join_path(&names)),
            Some(up) => cur = up,
        }
    }
    None
}

fn join_path(names_upwards: &[&str]) -> String {
    names_upwards.iter().rev().fold(String::new(), |mut path, name| {
        path.push('/');
        path.push_str(name);
        path
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pvrdma_parsers::xml::Element;

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
            ..Element::default()
        }
    }

    fn obj(kind: &str, id: &str, props: Vec<(&str, Element)>) -> ObjectContent {
        ObjectContent {
            obj: MoRef::new(kind, id),
            props: props.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            span: 0..0,
            declares: Vec::new(),
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
        assert_eq!(
            esx02.cluster_path.as_deref(),
            Some("/Lab East/host/Racks%2fRow 1/HPC%252f"),
            "names stay as sent, so a `/` in one is not a separator"
        );
        assert_eq!(esx02.connection_state, ConnectionState::NotResponding);
        assert!(esx02.in_maintenance);
        let solo = &inv.hosts[1];
        assert_eq!((solo.cluster.as_ref(), solo.datacenter.as_str()), (None, "Lab East"));
        assert_eq!(solo.cluster_path, None);
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

    #[test]
    fn a_datacenter_in_a_folder_is_on_its_clusters_path_and_the_root_folder_is_not() {
        let objects = vec![
            obj("Folder", "group-d1", vec![("name", val("Datacenters"))]),
            obj(
                "Folder",
                "group-d7",
                vec![("name", val("Region A")), ("parent", moref("Folder", "group-d1"))],
            ),
            obj(
                "Datacenter",
                "datacenter-3",
                vec![("name", val("Lab East")), ("parent", moref("Folder", "group-d7"))],
            ),
            obj(
                "Folder",
                "group-h4",
                vec![("name", val("host")), ("parent", moref("Datacenter", "datacenter-3"))],
            ),
            obj(
                "ClusterComputeResource",
                "domain-c7",
                vec![("name", val("HPC")), ("parent", moref("Folder", "group-h4"))],
            ),
            obj(
                "HostSystem",
                "host-1",
                vec![
                    ("name", val("esx01")),
                    ("parent", moref("ClusterComputeResource", "domain-c7")),
                ],
            ),
            obj(
                "ClusterComputeResource",
                "domain-c8",
                vec![("name", val("Lost")), ("parent", moref("Folder", "group-unread"))],
            ),
            obj(
                "HostSystem",
                "host-2",
                vec![
                    ("name", val("esx02")),
                    ("parent", moref("ClusterComputeResource", "domain-c8")),
                ],
            ),
        ];
        let inv = assemble(&objects);
        assert_eq!(inv.hosts[0].datacenter, "Lab East");
        assert_eq!(
            inv.hosts[0].cluster_path.as_deref(),
            Some("/Region A/Lab East/host/HPC")
        );
        // A cluster whose parents were not read has no path, rather than a short one.
        assert_eq!(inv.hosts[1].cluster_path, None);
        assert_eq!(inv.hosts[1].datacenter, "");
    }
}
