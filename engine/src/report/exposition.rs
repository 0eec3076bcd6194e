//! The one writer of Prometheus text exposition format 0.0.4 ("Exposition formats",
//! prometheus.io): a metric family's HELP and TYPE lines and its samples, label values and
//! help text escaped as the format wants. The report's metrics (`report/prometheus.rs`)
//! and the exporter's own (`/metrics`, `pvrdma_up`) are written with it.
use std::fmt::Write as _;

/// What a metric counts ("Metric types", prometheus.io).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    /// Only goes up; its name ends in `_total`.
    Counter,
}

/// One metric: its name, help text, type and samples, written as one group.
pub struct Family {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    samples: Vec<(Vec<(&'static str, String)>, String)>,
}

impl Family {
    /// A gauge.
    pub fn new(name: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            kind: Kind::Gauge,
            samples: Vec::new(),
        }
    }

    /// A counter.
    pub fn counter(name: &'static str, help: &'static str) -> Self {
        Family {
            kind: Kind::Counter,
            ..Family::new(name, help)
        }
    }

    pub fn add(&mut self, labels: Vec<(&'static str, String)>, value: impl Into<String>) {
        self.samples.push((labels, value.into()));
    }

    /// One series per value of an enumeration: 1 for `current`, 0 for the others.
    pub fn one_hot<T: Copy + PartialEq>(
        &mut self,
        labels: &[(&'static str, String)],
        key: &'static str,
        all: &[T],
        current: T,
        name: impl Fn(T) -> &'static str,
    ) {
        for &value in all {
            let mut l = labels.to_vec();
            l.push((key, name(value).to_string()));
            self.add(l, if value == current { "1" } else { "0" });
        }
    }

    /// HELP, TYPE and the samples; nothing at all for a metric without samples.
    pub fn write(&self, out: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {} {}", self.name, escape_help(self.help));
        let kind = match self.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# TYPE {} {kind}", self.name);
        for (labels, value) in &self.samples {
            out.push_str(self.name);
            if !labels.is_empty() {
                out.push('{');
                for (i, (key, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{key}=\"{}\"", escape_label(v));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {value}");
        }
    }
}

/// A label value as 0.0.4 wants it: backslash, double quote and line feed escaped.
fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A HELP text as 0.0.4 wants it: backslash and line feed escaped.
pub(super) fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}
