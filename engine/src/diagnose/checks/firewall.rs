//! `firewall-pvrdma`: the firewall and its `pvrdma` ruleset.
use super::super::*;

pub(in crate::diagnose) fn check_firewall(ctx: &Context) -> Check {
    const ID: CheckId = CheckId::FirewallPvrdma;
    let f = ctx.facts;
    let firewall_off = matches!(&f.firewall, Ok(fw) if fw.enabled == Some(false));
    if firewall_off {
        return check(
            ID,
            Status::Pass,
            "the ESXi firewall is disabled, so it does not block PVRDMA",
            vec![ev(cat::FIREWALL_GET, "Enabled")],
        );
    }
    let rulesets = match &f.rulesets {
        Ok(r) => r,
        Err(e) => return unknown_from(ID, cat::FIREWALL_RULESET_LIST, e),
    };
    // `firewall get` is evidence only when it was read: an enabled pvrdma ruleset passes
    // whatever the firewall state, and must not cite a command that failed.
    let evidence: Vec<Evidence> = f
        .firewall
        .is_ok()
        .then(|| ev(cat::FIREWALL_GET, "Enabled"))
        .into_iter()
        .chain([ev(cat::FIREWALL_RULESET_LIST, "Enabled of pvrdma")])
        .collect();
    let enable = || {
        Remedy::of_changes(
            vec![ConfigChange::host(
                Setting::FirewallRuleset {
                    ruleset: "pvrdma".to_string(),
                    enabled: true,
                },
                Some("false".to_string()),
            )],
            None,
        )
    };
    let esxi8 = matches!(&f.version, Ok(v) if v.numbers().is_some_and(|n| n.0 >= 8));
    match rulesets.iter().find(|r| r.name.eq_ignore_ascii_case("pvrdma")) {
        Some(r) if r.enabled == Some(true) => check(ID, Status::Pass, "firewall ruleset pvrdma is enabled", evidence),
        Some(r) if r.enabled == Some(false) => match &f.firewall {
            Ok(fw) if fw.enabled == Some(true) => with_remedy(
                check(
                    ID,
                    Status::Fail,
                    format!(
                        "the firewall is enabled and its pvrdma ruleset is disabled{}: PVRDMA traffic is blocked",
                        if esxi8 { " (the ESXi 8.0 default)" } else { "" }
                    ),
                    evidence,
                ),
                enable(),
            ),
            Ok(_) => with_remedy(
                check(ID, Status::Unknown, "ruleset pvrdma is disabled and whether the firewall is enabled is not stated", evidence),
                enable(),
            ),
            Err(e) => with_remedy(
                check(ID, Status::Unknown, format!("ruleset pvrdma is disabled; firewall state unknown: {e}"), evidence),
                enable(),
            ),
        },
        Some(_) => check(ID, Status::Unknown, "ruleset pvrdma has no readable Enabled value", evidence),
        // ESXi has shipped a pvrdma ruleset since PVRDMA itself (6.5): its absence means
        // the list is not what it seems, so nothing can be concluded.
        None => check(
            ID,
            Status::Unknown,
            format!(
                "the firewall is on and its ruleset list has no pvrdma row among {} rulesets; check `esxcli network firewall ruleset list -r pvrdma`",
                rulesets.len()
            ),
            evidence,
        ),
    }
}
