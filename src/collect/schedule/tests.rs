use super::*;
use pvrdma_engine::catalogue::{
    CATALOGUE, NIC_DCB_STATUS, PVRDMA_DEVICES_LS, PVRDMA_PROPERTIES, RDMA_DEVICE_LIST, VM_PORT_LIST, VM_PROCESS_LIST,
};
use std::sync::{Arc, Mutex};

fn output(id: &str, stdout: &str) -> RawOutput {
    RawOutput {
        stdout: stdout.to_string(),
        exit_status: Some(0),
        ..RawOutput::new(id, "x")
    }
}

/// One running VM whose Config File has spaces, brackets, a colon and a quote.
const PROCESS_LIST: &str = "hpc node's [01]\n   World ID: 2101874\n   Process ID: 0\n   VMX Cartel ID: 2101873\n   UUID: 42 0a\n   Display Name: hpc node's [01]\n   Config File: /vmfs/volumes/ds 1/hpc: [01]/hpc node's.vmx\n";

/// Runs the catalogue against a fake host answering the listing with `ls`; returns
/// the finished graph and the command lines in the order they were started.
fn simulate(ls: &'static str, refuse_first: usize, window: usize) -> (Finished, Vec<String>, usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sent = Arc::new(Mutex::new(Vec::<String>::new()));
    let open = Arc::new(Mutex::new((0usize, 0usize, refuse_first)));
    // Every output, as the caller's sink receives it.
    let got = Mutex::new(BTreeMap::new());
    let mut finished = rt.block_on(run(
        CATALOGUE,
        window,
        "esx01",
        |spec, line| {
            let (sent, open) = (sent.clone(), open.clone());
            async move {
                {
                    let mut o = open.lock().unwrap();
                    if o.2 > 0 {
                        o.2 -= 1;
                        return Ran::Refused("administratively prohibited".into());
                    }
                    o.0 += 1;
                    o.1 = o.1.max(o.0);
                }
                sent.lock().unwrap().push(line.clone());
                tokio::time::sleep(Duration::from_millis(if spec.id == PVRDMA_DEVICES_LS { 5 } else { 30 })).await;
                open.lock().unwrap().0 -= 1;
                let stdout = match spec.id {
                    PVRDMA_DEVICES_LS => ls,
                    pvrdma_engine::catalogue::VM_PROCESS_LIST => PROCESS_LIST,
                    pvrdma_engine::catalogue::RDMA_DEVICE_LIST => RDMA_LIST,
                    _ => "",
                };
                Ran::Done(RawOutput {
                    command: line,
                    ..output(spec.id, stdout)
                })
            }
        },
        &|id, out| {
            got.lock().unwrap().insert(id.to_string(), out);
        },
    ));
    finished.outputs = got.into_inner().unwrap();
    let peak = open.lock().unwrap().1;
    let sent = sent.lock().unwrap().clone();
    (finished, sent, peak)
}

#[test]
fn every_command_once_listing_first_and_batches_built_from_it() {
    let (f, sent, peak) = simulate("2101874_0/\n2101874_1/\n2100999_0/\n", 0, 10);
    assert_eq!(sent.len(), CATALOGUE.len(), "{sent:#?}");
    assert_eq!(f.outputs.len(), CATALOGUE.len());
    assert!(peak <= 10);
    // The commands others are built from go first: they are on the critical path.
    let mut first: Vec<&str> = sent.iter().take(3).map(String::as_str).collect();
    first.sort_unstable();
    assert_eq!(
        first,
        [
            "esxcli rdma device list",
            "esxcli vm process list",
            "vsish -e ls /vmkModules/vrdma/pvrdmaDevices/"
        ]
    );
    let ports = &f.outputs[VM_PORT_LIST].command;
    assert!(ports.ends_with("b 2100999 2101874"), "{ports}");
    let props = &f.outputs[PVRDMA_PROPERTIES].command;
    assert!(props.ends_with("b 2101874_0 2101874_1 2100999_0"), "{props}");
    // `vm process list` is sent once: neither the batches nor the `.vmx` inventory,
    // which is built from its Config File paths, run it again.
    assert_eq!(
        sent.iter().filter(|l| l.contains("vm process list")).count(),
        1,
        "{sent:#?}"
    );
    let vmx = &f.outputs[pvrdma_engine::catalogue::VMX_PVRDMA_LINES].command;
    assert_eq!(
        pvrdma_engine::catalogue::batch_keys(vmx),
        Some((
            pvrdma_engine::catalogue::VMX_PVRDMA_LINES,
            vec!["/vmfs/volumes/ds 1/hpc: [01]/hpc node's.vmx".to_string()]
        )),
        "{vmx}"
    );
    // The batches start as soon as the listing is in, before independent commands
    // that were still waiting for a channel.
    let pos = |needle: &str| sent.iter().position(|l| l.contains(needle)).unwrap();
    assert!(pos("port list -w") < pos("firewall ruleset list"), "{sent:#?}");
}

#[test]
fn no_adapter_means_empty_batches_and_a_failed_listing_means_not_run() {
    let (f, sent, _) = simulate("", 0, 10);
    assert_eq!(sent.len(), CATALOGUE.len() - 2);
    assert_eq!(f.outputs[VM_PORT_LIST].stdout, "");
    assert!(f.outputs[VM_PORT_LIST].command.starts_with("(not sent"));
    let (f, sent, _) = simulate("VSISHPath_Form():Extraneous 'x' in path.\n", 0, 10);
    assert_eq!(sent.len(), CATALOGUE.len() - 2);
    let why = &f.missing[PVRDMA_PROPERTIES].message;
    assert!(why.contains("was not run") && why.contains("did not parse"), "{why}");
}

#[test]
fn refused_opens_shrink_the_window_and_lose_nothing() {
    let (f, sent, _) = simulate("1_0/\n", 12, 10);
    assert_eq!(f.outputs.len(), CATALOGUE.len(), "{:?}", f.missing);
    assert_eq!(sent.len(), CATALOGUE.len());
}

const RDMA_LIST: &str = "\
Name     Driver      State   MTU   Speed     Paired Uplink  Description
-------  ----------  ------  ----  --------  -------------  -----------
vmrdma0  nmlx5_rdma  Active  4096  100 Gbps  vmnic2         ConnectX-5
vmrdma1  nmlx5_rdma  Down    1024  0         vmnic3         ConnectX-5
vmrdma2  nmlx5_rdma  Down    1024  0                        ConnectX-5
";

#[test]
fn dcb_asks_every_rdma_uplink_of_the_collected_list_at_once() {
    let (f, sent, _) = simulate("1_0/\n", 0, 10);
    let dcb: Vec<&String> = sent.iter().filter(|l| l.contains("dcb status get")).collect();
    assert_eq!(dcb.len(), 1, "{sent:?}");
    assert!(dcb[0].ends_with("b vmnic2 vmnic3"), "{}", dcb[0]);
    assert!(
        !dcb[0].contains("esxcli rdma device list"),
        "the list is not run a second time: {}",
        dcb[0]
    );
    assert_eq!(f.missing.get(NIC_DCB_STATUS), None);

    let spec = pvrdma_engine::catalogue::spec(NIC_DCB_STATUS).unwrap();
    let mut outputs = BTreeMap::new();
    let mut missing = BTreeMap::new();
    missing.insert(
        RDMA_DEVICE_LIST.to_string(),
        Failure::new(ErrorKind::Timeout, "did not finish within --command-timeout 60s"),
    );
    match launch("h", spec, &outputs, &missing) {
        Launch::NotRun(f) => assert!(f.message.contains("--command-timeout 60s"), "{}", f.message),
        other => panic!("{other:?}"),
    }
    let header = RDMA_LIST.lines().take(2).collect::<Vec<_>>().join("\n") + "\n";
    outputs.insert(RDMA_DEVICE_LIST.to_string(), output(RDMA_DEVICE_LIST, &header));
    assert!(matches!(launch("h", spec, &outputs, &missing), Launch::Nothing(_)));
}

#[test]
fn launch_needs_a_clean_listing() {
    let spec = pvrdma_engine::catalogue::spec(VM_PORT_LIST).unwrap();
    let mut outputs = BTreeMap::new();
    let missing = BTreeMap::new();
    assert!(matches!(launch("h", spec, &outputs, &missing), Launch::NotRun(_)));
    let mut failed = output(PVRDMA_DEVICES_LS, "1_0/\n");
    failed.exit_status = Some(1);
    outputs.insert(PVRDMA_DEVICES_LS.to_string(), failed);
    assert!(matches!(launch("h", spec, &outputs, &missing), Launch::NotRun(_)));
    outputs.insert(PVRDMA_DEVICES_LS.to_string(), output(PVRDMA_DEVICES_LS, "7_0/\n7_1/\n"));
    match launch("h", spec, &outputs, &missing) {
        Launch::Run(line) => assert!(line.ends_with("b 7"), "{line}"),
        other => panic!("{other:?}"),
    }
}

/// A listing's copy (which a flooding host can make megabytes long) is kept only until the
/// commands built from it are launched; the listing still counts as settled afterwards.
#[test]
fn listing_copy_is_dropped_once_its_dependents_are_built() {
    let index = |id: &str| CATALOGUE.iter().position(|s| s.id == id).unwrap();
    let dependents = [
        VM_PORT_LIST,
        PVRDMA_PROPERTIES,
        pvrdma_engine::catalogue::VMX_PVRDMA_LINES,
        NIC_DCB_STATUS,
    ];
    let mut waiting: Vec<usize> = dependents.iter().map(|id| index(id)).collect();
    let mut ready = VecDeque::new();
    let mut done = Finished::default();
    let on_done = |_: &str, _: RawOutput| {};

    settle(
        CATALOGUE,
        &mut done,
        PVRDMA_DEVICES_LS,
        output(PVRDMA_DEVICES_LS, "2101874_0/\n"),
        &on_done,
    );
    assert!(
        done.outputs.contains_key(PVRDMA_DEVICES_LS),
        "kept while its dependents wait"
    );
    release("esx01", CATALOGUE, &mut waiting, &mut ready, &mut done, &on_done);
    let launched: Vec<&str> = ready.iter().map(|(i, _, _)| CATALOGUE[*i].id).collect();
    assert!(
        launched.contains(&VM_PORT_LIST) && launched.contains(&PVRDMA_PROPERTIES),
        "{launched:?}"
    );
    assert!(done.outputs.is_empty(), "copy still held: {:?}", done.outputs.keys());
    assert_eq!(
        waiting.len(),
        2,
        "the vmx inventory and DCB still wait on their own inputs"
    );

    // The listing stays settled: nothing waits on it again or re-runs it.
    settle(
        CATALOGUE,
        &mut done,
        VM_PROCESS_LIST,
        output(VM_PROCESS_LIST, PROCESS_LIST),
        &on_done,
    );
    release("esx01", CATALOGUE, &mut waiting, &mut ready, &mut done, &on_done);
    assert_eq!(waiting, vec![index(NIC_DCB_STATUS)]);
    assert!(done.outputs.is_empty(), "copy still held: {:?}", done.outputs.keys());
    assert_eq!(ready.len(), 3);
}
