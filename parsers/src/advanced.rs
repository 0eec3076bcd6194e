use crate::ParseError;
use serde::Serialize;

/// `esxcli system settings advanced list -o <option>` (one record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdvancedOption {
    pub path: String,
    pub option_type: Option<String>,
    pub int_value: Option<i64>,
    /// Trimmed; empty string when the option is unset.
    pub string_value: String,
    pub default_string_value: Option<String>,
    pub description: Option<String>,
}

pub fn parse_advanced_option(input: &str) -> Result<AdvancedOption, ParseError> {
    let _ = input;
    Err(crate::error::pending(
        "esxcli_system_settings_advanced_list_pvrdmavmknic",
    ))
}
