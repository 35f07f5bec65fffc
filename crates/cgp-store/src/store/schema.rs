//! The store's schema and its migrations: one list, each step the SQL of both engines, applied in
//! order inside one transaction that holds the store's lock (SQLite's `BEGIN IMMEDIATE`,
//! PostgreSQL's advisory lock), so that eight shards opening a new store at once make it once.
//!
//! `cgp_gate_schema` holds the version. The rows table of SQLite is an ordinary (rowid) table:
//! a row is about a kilobyte of JSON, which a `WITHOUT ROWID` table (best for rows under a
//! twentieth of a page) spills onto overflow pages, 4.7 KB a row where this takes about 1.4. A database of a newer version is refused before anything
//! is written (exit 2): this binary cannot know what the newer one changed.

/// The schema this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// One step of the schema.
pub(crate) struct Migration {
    /// The version after it.
    pub(crate) to: u32,
    /// What it does, for `store migrate`.
    pub(crate) what: &'static str,
    /// Whether any command may apply it on its own (a step that adds tables is safe; one that
    /// rewrites stored runs must be asked for with `cgp-gate store migrate`).
    pub(crate) automatic: bool,
    pub(crate) sqlite: &'static str,
    pub(crate) postgres: &'static str,
}

/// Every step, oldest first.
pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    to: 1,
    what: "create the runs and rows tables",
    automatic: true,
    sqlite: "
CREATE TABLE cgp_gate_schema (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL,
  written_by TEXT NOT NULL
);
CREATE TABLE cgp_gate_runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  branch TEXT NOT NULL,
  kind TEXT NOT NULL,
  runner TEXT NOT NULL,
  ci TEXT NOT NULL,
  git_commit TEXT,
  run_date TEXT NOT NULL,
  shard TEXT,
  spec_hash TEXT NOT NULL,
  gpu TEXT NOT NULL,
  verdict TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  row_count INTEGER NOT NULL,
  pushed_at TEXT NOT NULL,
  file TEXT,
  header TEXT NOT NULL
);
CREATE INDEX cgp_gate_runs_by_branch ON cgp_gate_runs (branch, run_date);
CREATE INDEX cgp_gate_runs_by_date ON cgp_gate_runs (run_date);
CREATE TABLE cgp_gate_rows (
  run_seq INTEGER NOT NULL REFERENCES cgp_gate_runs (seq) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  gpu TEXT NOT NULL,
  target TEXT NOT NULL,
  size TEXT NOT NULL,
  kernel TEXT NOT NULL,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL,
  verdict TEXT NOT NULL,
  value REAL,
  change REAL,
  body TEXT NOT NULL,
  samples TEXT,
  PRIMARY KEY (run_seq, ord)
);
",
    postgres: "
CREATE TABLE cgp_gate_schema (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL,
  written_by TEXT NOT NULL
);
CREATE TABLE cgp_gate_runs (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  branch TEXT NOT NULL,
  kind TEXT NOT NULL,
  runner TEXT NOT NULL,
  ci TEXT NOT NULL,
  git_commit TEXT,
  run_date TEXT NOT NULL,
  shard TEXT,
  spec_hash TEXT NOT NULL,
  gpu TEXT NOT NULL,
  verdict TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  row_count INTEGER NOT NULL,
  pushed_at TEXT NOT NULL,
  file TEXT,
  header TEXT NOT NULL
);
CREATE INDEX cgp_gate_runs_by_branch ON cgp_gate_runs (branch, run_date);
CREATE INDEX cgp_gate_runs_by_date ON cgp_gate_runs (run_date);
CREATE TABLE cgp_gate_rows (
  run_seq BIGINT NOT NULL REFERENCES cgp_gate_runs (seq) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  gpu TEXT NOT NULL,
  target TEXT NOT NULL,
  size TEXT NOT NULL,
  kernel TEXT NOT NULL,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL,
  verdict TEXT NOT NULL,
  value DOUBLE PRECISION,
  change DOUBLE PRECISION,
  body TEXT NOT NULL,
  samples TEXT,
  PRIMARY KEY (run_seq, ord)
);
",
}];

/// The steps from `from` to [`SCHEMA_VERSION`].
pub(crate) fn pending(from: u32) -> impl Iterator<Item = &'static Migration> {
    MIGRATIONS.iter().filter(move |m| m.to > from)
}

/// The statement that records the version after a step (both engines).
pub(crate) fn record_version(to: u32) -> String {
    format!(
        "INSERT INTO cgp_gate_schema (id, version, written_by) VALUES (1, {to}, 'cgp-gate {}') \
         ON CONFLICT (id) DO UPDATE SET version = excluded.version, written_by = excluded.written_by",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_end_at_the_version_in_order() {
        let tos: Vec<u32> = MIGRATIONS.iter().map(|m| m.to).collect();
        assert_eq!(tos, (1..=SCHEMA_VERSION).collect::<Vec<_>>());
        assert_eq!(pending(0).count(), MIGRATIONS.len());
        assert_eq!(pending(SCHEMA_VERSION).count(), 0);
    }
}
