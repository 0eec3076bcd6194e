//! Cell and field values: booleans, "none" markers, comma lists.

/// `true`/`false` (esxcli) → bool; anything else is unknown, not an error.
pub(crate) fn bool_value(v: &str) -> Option<bool> {
    match v.trim() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// `1`/`0` (vsish) → bool.
pub(crate) fn bool01(v: &str) -> Option<bool> {
    match v.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

pub(crate) fn non_empty(v: &str) -> Option<String> {
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// Like [`non_empty`], and `N/A` is "none" too (esxcli prints it for unset references).
pub(crate) fn non_na(v: &str) -> Option<String> {
    non_empty(v).filter(|s| !s.eq_ignore_ascii_case("N/A"))
}

/// A `, `-separated esxcli list (`Uplinks: vmnic3, vmnic2`); elements may contain spaces.
pub(crate) fn list_value(v: &str) -> Vec<String> {
    v.split(',').filter_map(non_empty).collect()
}
