//! The JSON report's schema (docs/report.schema.json) is generated from the serde types,
//! documents every field, and every reviewed report validates against it.
//!
//! The validator below covers the keywords schemars emits and fails on any other, so a
//! schema that grows a keyword it does not understand cannot pass by being ignored.
use serde_json::Value;
use std::path::Path;

fn checked_in() -> (std::path::PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    (path, text)
}

#[test]
fn checked_in_schema_matches_the_types() {
    let generated = pvrdma_engine::report::json::schema();
    let (path, text) = checked_in();
    if std::env::var_os("PVRDMA_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write the schema");
        return;
    }
    assert!(
        text == generated,
        "{} is out of date: run `PVRDMA_UPDATE_SCHEMA=1 cargo test --test suite schema` and review the diff",
        path.display()
    );
}

fn walk_descriptions(schema: &Value, at: &str, missing: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    if prop
                        .get("description")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        missing.push(format!("{at}.{name}"));
                    }
                }
            }
            for (k, v) in map {
                walk_descriptions(v, &format!("{at}/{k}"), missing);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk_descriptions(v, &format!("{at}[{i}]"), missing);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_is_documented() {
    let schema: Value = serde_json::from_str(&pvrdma_engine::report::json::schema()).unwrap();
    let mut missing = Vec::new();
    walk_descriptions(&schema, "#", &mut missing);
    assert!(missing.is_empty(), "fields without a description: {missing:#?}");
}

fn type_matches(name: &str, v: &Value) -> bool {
    match name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn validate(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let map = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return errors.push(format!("{at}: no value allowed")),
        Value::Object(m) => m,
        _ => return errors.push(format!("{at}: schema is not an object")),
    };
    for (key, rule) in map {
        match key.as_str() {
            "$schema" | "title" | "description" | "$defs" | "definitions" | "default" | "examples" => {}
            "$ref" => {
                let target = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#"))
                    .and_then(|pointer| root.pointer(pointer));
                match target {
                    Some(t) => validate(root, t, v, at, errors),
                    None => errors.push(format!("{at}: unresolvable $ref {rule}")),
                }
            }
            "type" => {
                let ok = match rule {
                    Value::String(t) => type_matches(t, v),
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| type_matches(t, v)),
                    _ => false,
                };
                if !ok {
                    errors.push(format!("{at}: {v} is not of type {rule}"));
                }
            }
            "format" => {
                let unsigned = rule.as_str().is_some_and(|f| f.starts_with("uint"));
                if unsigned && v.is_number() && !v.is_u64() {
                    errors.push(format!("{at}: {v} is not an unsigned integer"));
                }
            }
            "minimum" => {
                if let (Some(min), Some(n)) = (rule.as_f64(), v.as_f64()) {
                    if n < min {
                        errors.push(format!("{at}: {n} < minimum {min}"));
                    }
                }
            }
            "maximum" => {
                if let (Some(max), Some(n)) = (rule.as_f64(), v.as_f64()) {
                    if n > max {
                        errors.push(format!("{at}: {n} > maximum {max}"));
                    }
                }
            }
            "properties" => {
                if let (Some(props), Some(obj)) = (rule.as_object(), v.as_object()) {
                    for (name, sub) in props {
                        if let Some(value) = obj.get(name) {
                            validate(root, sub, value, &format!("{at}.{name}"), errors);
                        }
                    }
                }
            }
            "required" => {
                if let (Some(names), Some(obj)) = (rule.as_array(), v.as_object()) {
                    for n in names.iter().filter_map(Value::as_str) {
                        if !obj.contains_key(n) {
                            errors.push(format!("{at}: required field {n} is missing"));
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(obj) = v.as_object() {
                    let known = map.get("properties").and_then(Value::as_object);
                    for (name, value) in obj {
                        if known.is_some_and(|k| k.contains_key(name)) {
                            continue;
                        }
                        validate(root, rule, value, &format!("{at}.{name}"), errors);
                    }
                }
            }
            "items" => {
                if let Some(items) = v.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        validate(root, rule, item, &format!("{at}[{i}]"), errors);
                    }
                }
            }
            "enum" => {
                if !rule.as_array().is_some_and(|options| options.contains(v)) {
                    errors.push(format!("{at}: {v} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != v {
                    errors.push(format!("{at}: {v} is not {rule}"));
                }
            }
            "oneOf" | "anyOf" => {
                let options = rule.as_array().cloned().unwrap_or_default();
                let passing = options
                    .iter()
                    .filter(|o| {
                        let mut e = Vec::new();
                        validate(root, o, v, at, &mut e);
                        e.is_empty()
                    })
                    .count();
                let ok = if key == "oneOf" { passing == 1 } else { passing >= 1 };
                if !ok {
                    errors.push(format!("{at}: {v} matches {passing} of the {key} options"));
                }
            }
            "allOf" => {
                for o in rule.as_array().into_iter().flatten() {
                    validate(root, o, v, at, errors);
                }
            }
            other => errors.push(format!("{at}: the test validator does not know keyword {other:?}")),
        }
    }
}

fn errors_for(report: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(&pvrdma_engine::report::json::schema()).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, report, "$", &mut errors);
    errors
}

#[test]
fn every_reviewed_report_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/snapshots");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("suite__golden__") || !name.ends_with(".json.snap") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // insta's header is between the first two `---` lines.
        let body = text.splitn(3, "---\n").nth(2).unwrap_or("");
        let report: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{name}: {e}"));
        let errors = errors_for(&report);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} reports found");
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/snapshots/suite__golden__esxi80-mixed-fleet.json.snap");
    let text = std::fs::read_to_string(dir).unwrap();
    let body = text.splitn(3, "---\n").nth(2).unwrap_or("");
    let good: Value = serde_json::from_str(body).unwrap();
    let mut bad = good.clone();
    bad["hosts"][0]["status"] = Value::from("fine");
    assert!(!errors_for(&bad).is_empty());
    let mut bad = good.clone();
    bad["summary"]["hosts"] = Value::from(-1);
    assert!(!errors_for(&bad).is_empty());
    let mut bad = good;
    if let Some(obj) = bad["hosts"][0].as_object_mut() {
        obj.remove("checks");
    }
    assert!(!errors_for(&bad).is_empty());
}
