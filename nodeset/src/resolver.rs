//! What the evaluator asks of a group source: the front end answers from ClusterShell's
//! configuration (the `groups` module of pvrdma-doctor); folding needs none.
use std::fmt;

/// Why a group does not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    /// The source has no command for this query (`all` or `list`).
    NoUpcall(String),
    Failed(String),
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::NoUpcall(m) | GroupError::Failed(m) => f.write_str(m),
        }
    }
}

pub type Result<T> = std::result::Result<T, GroupError>;

/// Answers group queries for the evaluator.
pub trait Resolver {
    /// The node set texts of a group (`map`).
    fn group_nodes(&mut self, group: &str, source: Option<&str>) -> Result<Vec<String>>;
    /// Every node of a source (`all`).
    fn all_nodes(&mut self, source: Option<&str>) -> Result<Vec<String>>;
    /// The group names of a source (`list`).
    fn grouplist(&mut self, source: Option<&str>) -> Result<Vec<String>>;
}

/// No groups at all: for folding names, which never holds a group.
pub struct NoGroups;

impl Resolver for NoGroups {
    fn group_nodes(&mut self, _: &str, _: Option<&str>) -> Result<Vec<String>> {
        Err(GroupError::Failed("groups are not available here".into()))
    }
    fn all_nodes(&mut self, _: Option<&str>) -> Result<Vec<String>> {
        Err(GroupError::Failed("groups are not available here".into()))
    }
    fn grouplist(&mut self, _: Option<&str>) -> Result<Vec<String>> {
        Err(GroupError::Failed("groups are not available here".into()))
    }
}
