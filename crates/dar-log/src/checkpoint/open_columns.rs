//! The columns whose statistics a checkpoint read decodes in the pass
//! that decodes its counts ([`crate::StatsLoading`] other than on demand).
//!
//! Which physical keys and types those are follows from the table's
//! protocol and metadata, so they are found once both are known: from the
//! commits newer than the checkpoint, else from a V2 checkpoint's manifest
//! before its sidecars are read, else from the rows of the checkpoint
//! part that holds them, before that part's statistics decode. A part
//! whose statistics decode before then decodes its counts only, and the
//! file index parses the columns from it on its own pass. Either way the
//! statistics are the same: the index takes those decoded here only when
//! they are for exactly its own stats columns.

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::StatsLoading;
use crate::actions::{Metadata, Protocol};
use crate::file_index::table_stats_columns;
use crate::schema::StatsColumn;
use crate::table_configuration::TableConfiguration;

/// The columns one checkpoint read decodes with its counts.
#[derive(Debug)]
pub(super) struct OpenColumns {
    loading: StatsLoading,
    /// The checkpoint's version (for the table configuration's checks).
    version: u64,
    /// The newest protocol and metadata offered so far.
    header: Mutex<(Option<Protocol>, Option<Metadata>)>,
    resolved: OnceLock<Vec<StatsColumn>>,
}

impl OpenColumns {
    /// The columns `loading` selects, for the checkpoint at `version`.
    pub(super) fn new(loading: &StatsLoading, version: u64) -> Self {
        let resolved = OnceLock::new();
        if *loading == StatsLoading::OnDemand {
            let _ = resolved.set(Vec::new());
        }
        Self {
            loading: loading.clone(),
            version,
            header: Mutex::new((None, None)),
            resolved,
        }
    }

    /// Whether columns are wanted whose keys are not known yet.
    pub(super) fn pending(&self) -> bool {
        self.resolved.get().is_none()
    }

    /// The columns to decode with the counts now: none while pending.
    pub(super) fn columns(&self) -> Vec<StatsColumn> {
        self.resolved.get().cloned().unwrap_or_default()
    }

    /// Takes `protocol` and `metadata` where none was offered before (so
    /// the newest commits' are offered first), and finds the columns once
    /// both are known. A header that does not make a valid table
    /// configuration selects none: the load reports it on its own.
    pub(super) fn offer(&self, protocol: Option<&Protocol>, metadata: Option<&Metadata>) {
        if !self.pending() {
            return;
        }
        let mut header = self.header.lock().unwrap_or_else(PoisonError::into_inner);
        if header.0.is_none() {
            header.0 = protocol.cloned();
        }
        if header.1.is_none() {
            header.1 = metadata.cloned();
        }
        let (Some(p), Some(m)) = (&header.0, &header.1) else {
            return;
        };
        let columns = TableConfiguration::try_new(p.clone(), m.clone(), self.version)
            .and_then(|c| table_stats_columns(c.schema(), c.column_mapping_mode(), c.metadata()))
            .map(|all| {
                all.into_iter()
                    .filter(|c| self.loading.selects(c))
                    .collect()
            })
            .unwrap_or_default();
        let _ = self.resolved.set(columns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(schema: &str) -> (Protocol, Metadata) {
        let protocol: Protocol =
            serde_json::from_str(r#"{"minReaderVersion":1,"minWriterVersion":2}"#).unwrap();
        let metadata: Metadata = serde_json::from_value(serde_json::json!({
            "id": "t",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema,
            "partitionColumns": [],
            "configuration": {},
        }))
        .unwrap();
        (protocol, metadata)
    }

    const SCHEMA: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}"#;

    #[test]
    fn resolves_once_both_are_known_newest_first() {
        let open = OpenColumns::new(&StatsLoading::Columns(vec![vec!["name".into()]]), 3);
        assert!(open.pending());
        let (p, m) = header(SCHEMA);
        open.offer(None, Some(&m));
        assert!(open.pending(), "no protocol yet");
        // The checkpoint's own (older) metadata does not replace the newer.
        let (_, older) = header(
            r#"{"type":"struct","fields":[{"name":"other","type":"long","nullable":true,"metadata":{}}]}"#,
        );
        open.offer(Some(&p), Some(&older));
        assert!(!open.pending());
        let names: Vec<String> = open.columns().iter().map(|c| c.logical_name()).collect();
        assert_eq!(names, ["name"]);
    }

    #[test]
    fn on_demand_and_unknown_names_select_nothing() {
        let open = OpenColumns::new(&StatsLoading::OnDemand, 0);
        assert!(!open.pending());
        assert!(open.columns().is_empty());
        let open = OpenColumns::new(&StatsLoading::Columns(vec![vec!["nope".into()]]), 0);
        let (p, m) = header(SCHEMA);
        open.offer(Some(&p), Some(&m));
        assert!(!open.pending());
        assert!(open.columns().is_empty());
        let all = OpenColumns::new(&StatsLoading::AtLoad, 0);
        all.offer(Some(&p), Some(&m));
        assert_eq!(all.columns().len(), 2);
    }

    #[test]
    fn an_invalid_header_selects_nothing() {
        let open = OpenColumns::new(&StatsLoading::AtLoad, 0);
        let (p, m) = header("not a schema");
        open.offer(Some(&p), Some(&m));
        assert!(!open.pending());
        assert!(open.columns().is_empty());
    }
}
