//! The results store (docs/store.md): runs kept in a database, behind one trait ([`Engine`]) with
//! two engines, SQLite (`sqlite:PATH`, one file) and PostgreSQL (`postgres://...`, a team's
//! server). [`Store`] holds what both share: the schema's version (a newer database is refused
//! before anything is written), the automatic migrations, and reading runs back as the results
//! files they were pushed from.

mod hud;
mod postgres;
mod run;
mod schema;
mod sqlite;
mod url;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::Error;
use crate::outcome::results::Results;

pub use hud::{HudContext, hud_rows};
pub use run::{Origin, StoredRow, StoredRun, normal_date};
pub use schema::SCHEMA_VERSION;
pub use url::StoreUrl;

/// Which runs a read takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this branch.
    pub branch: Option<String>,
    /// Only runs dated at or after this RFC 3339 time (UTC, as [`normal_date`] writes it).
    pub since: Option<String>,
    /// Only this run.
    pub run_id: Option<String>,
}

/// A stored run's columns, without its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    pub seq: i64,
    pub id: String,
    pub branch: String,
    pub kind: String,
    pub runner: String,
    /// The CI job's ids, as pushed ([`Origin::ci`]).
    pub ci: BTreeMap<String, String>,
    pub git_commit: Option<String>,
    pub date: String,
    pub shard: Option<String>,
    pub spec_hash: String,
    pub gpu: String,
    pub verdict: String,
    pub rows: i64,
    pub header: String,
    /// The file it was pushed from, as given.
    pub file: Option<String>,
}

impl RunInfo {
    /// How a run read from the store is named where a file's path would be (`changes`' input
    /// list, the history site's commits): the file it was pushed from, as given, else `store:`
    /// and the first 12 hex digits of its id.
    pub fn label(&self) -> PathBuf {
        match &self.file {
            Some(f) => PathBuf::from(f),
            None => PathBuf::from(format!("store:{}", &self.id[..self.id.len().min(12)])),
        }
    }
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Stored, with this many rows.
    Stored(usize),
    /// The run was already there (pushed before, on this branch): nothing written.
    Already { branch: String },
}

/// What `store migrate` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    pub from: u32,
    pub to: u32,
    /// Each step applied: its version and what it did.
    pub steps: Vec<(u32, &'static str)>,
}

/// A row as a read hands it on: its run's `seq`, its JSON, and its samples when asked for.
pub(crate) type RowText = (i64, String, Option<String>);

/// The one trait of the two engines: what each must do in its own SQL. Every method that writes
/// does it in one transaction.
pub(crate) trait Engine {
    /// The schema version recorded (0: no schema yet). Writes nothing.
    fn version(&mut self) -> Result<u32, Error>;
    /// Apply the steps after the recorded version, under the store's lock (another process may
    /// have migrated in the meantime: the version is read again inside); the version before.
    fn migrate(&mut self) -> Result<u32, Error>;
    /// Store a run and its rows in one transaction, or nothing when its id is there.
    fn push(&mut self, run: &StoredRun) -> Result<Pushed, Error>;
    /// The runs `filter` takes, oldest first (by date, then push order).
    fn runs(&mut self, filter: &Filter) -> Result<Vec<RunInfo>, Error>;
    /// The rows of those runs in the same order, each run's in its file's order, streamed.
    fn rows(
        &mut self,
        filter: &Filter,
        samples: bool,
        each: &mut dyn FnMut(RowText) -> Result<(), Error>,
    ) -> Result<(), Error>;
}

/// An open store.
pub struct Store {
    url: StoreUrl,
    engine: Box<dyn Engine>,
}

/// Whether a command writes to the store or only reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Creates the store when absent and applies the automatic migrations.
    Write,
    /// Writes nothing: the store must exist, at this build's version.
    Read,
}

impl Store {
    /// Connect to the store `url` for `access`: a newer database is refused before anything is
    /// written; for [`Access::Write`], an absent schema is made and an older one migrated when
    /// every pending step is safe ([`schema::Migration::automatic`]).
    ///
    /// # Errors
    /// [`Error::Usage`] (exit 2): a database of a newer cgp-gate, a store to read that holds no
    /// runs, a step that must be asked for. [`Error::Environment`] (exit 3): the file or the
    /// server cannot be reached or written.
    pub fn open(url: &StoreUrl, access: Access) -> Result<Self, Error> {
        let engine: Box<dyn Engine> = match &url.kind {
            url::Kind::Sqlite(path) => Box::new(sqlite::Sqlite::open(url, path, access)?),
            url::Kind::Postgres(pg) => Box::new(postgres::Postgres::connect(url, pg)?),
        };
        let mut store = Self {
            url: url.clone(),
            engine,
        };
        let v = store.engine.version()?;
        store.refuse_newer(v)?;
        match access {
            Access::Read if v == 0 => Err(Error::Usage(format!(
                "the store {} holds no cgp-gate runs (it has no cgp-gate schema); push runs first \
                 (`cgp-gate store push`, or --store on check)",
                store.url
            ))),
            Access::Read if v < SCHEMA_VERSION => Err(Error::Usage(format!(
                "the store {} has schema {v}, older than this cgp-gate's {SCHEMA_VERSION}; run \
                 `cgp-gate store migrate --store URL` first (reading commands write nothing)",
                store.url
            ))),
            Access::Write if v < SCHEMA_VERSION => {
                if let Some(m) = schema::pending(v).find(|m| !m.automatic) {
                    return Err(Error::Usage(format!(
                        "the store {} has schema {v}; step {} ({}) is not applied on its own: run \
                         `cgp-gate store migrate --store URL` when no other job uses the store",
                        store.url, m.to, m.what
                    )));
                }
                store.engine.migrate()?;
                Ok(store)
            }
            _ => Ok(store),
        }
    }

    /// `cgp-gate store migrate`: every pending step, the safe ones and the others.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn migrate(url: &StoreUrl) -> Result<Migrated, Error> {
        let engine: Box<dyn Engine> = match &url.kind {
            url::Kind::Sqlite(path) => Box::new(sqlite::Sqlite::open(url, path, Access::Write)?),
            url::Kind::Postgres(pg) => Box::new(postgres::Postgres::connect(url, pg)?),
        };
        let mut store = Self {
            url: url.clone(),
            engine,
        };
        let before = store.engine.version()?;
        store.refuse_newer(before)?;
        let from = store.engine.migrate()?;
        Ok(Migrated {
            from,
            to: SCHEMA_VERSION,
            steps: schema::pending(from).map(|m| (m.to, m.what)).collect(),
        })
    }

    fn refuse_newer(&self, v: u32) -> Result<(), Error> {
        if v > SCHEMA_VERSION {
            return Err(Error::Usage(format!(
                "the store {} has schema {v}, written by a newer cgp-gate; this one knows schema \
                 {SCHEMA_VERSION} and writes nothing to it: upgrade cgp-gate",
                self.url
            )));
        }
        Ok(())
    }

    /// The store's address, without its password.
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// Store a run (one transaction: all of it or nothing).
    ///
    /// # Errors
    /// The engine's: the store could not be written (exit 3).
    pub fn push(&mut self, run: &StoredRun) -> Result<Pushed, Error> {
        self.engine.push(run)
    }

    /// The runs `filter` takes, oldest first, without their rows.
    ///
    /// # Errors
    /// The engine's.
    pub fn runs(&mut self, filter: &Filter) -> Result<Vec<RunInfo>, Error> {
        self.engine.runs(filter)
    }

    /// Every run `filter` takes, as the results it was pushed as, oldest first (by the run's
    /// date, then the order of pushing); `samples: false` leaves each side's samples empty (the
    /// history and the change-point search read the summaries only).
    ///
    /// # Errors
    /// The engine's; a stored record that no longer reads as results (exit 2).
    pub fn results(&mut self, filter: &Filter, samples: bool) -> Result<Vec<(RunInfo, Results)>, Error> {
        let mut out = Vec::new();
        self.each_result(filter, samples, &mut |info, results| {
            out.push((info, results));
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Store::results`], one run at a time: only the run being read is in memory (an export
    /// of a million rows holds one run's).
    ///
    /// # Errors
    /// As [`Store::results`], and `each`'s own.
    pub fn each_result(
        &mut self,
        filter: &Filter,
        samples: bool,
        each: &mut dyn FnMut(RunInfo, Results) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let runs = self.engine.runs(filter)?;
        let place: BTreeMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.seq, i)).collect();
        let url = self.url.clone();
        // The next run to hand on; the rows come in the runs' order, a run without rows not at all.
        let mut next = 0usize;
        let mut rows: Vec<(String, Option<String>)> = Vec::new();
        let mut emit = |upto: usize, rows: &mut Vec<(String, Option<String>)>, next: &mut usize| {
            while *next <= upto.min(runs.len().saturating_sub(1)) && *next < runs.len() {
                let info = runs[*next].clone();
                let mine = if *next == upto {
                    std::mem::take(rows)
                } else {
                    Vec::new()
                };
                *next += 1;
                let text =
                    run::assemble(&info.header, &mine, samples).map_err(|m| damaged(&url, &info, &m))?;
                let results = crate::outcome::results::parse(&text).map_err(|m| damaged(&url, &info, &m))?;
                each(info, results)?;
            }
            Ok::<(), Error>(())
        };
        let mut current: Option<usize> = None;
        self.engine.rows(filter, samples, &mut |(seq, body, s)| {
            let Some(&at) = place.get(&seq) else {
                return Ok(());
            };
            if current != Some(at) {
                if let Some(prev) = current {
                    emit(prev, &mut rows, &mut next)?;
                }
                current = Some(at);
            }
            rows.push((body, s));
            Ok(())
        })?;
        if let Some(prev) = current {
            emit(prev, &mut rows, &mut next)?;
        }
        if !runs.is_empty() {
            emit(runs.len() - 1, &mut Vec::new(), &mut next)?;
        }
        Ok(())
    }

    /// The history of `filter` as `history` and `changes` read results files: one result per
    /// run, oldest first. A run that covers the whole spec (unsharded, or `merge`'s) stands for
    /// its commit; the shards of a commit that has no such run are merged here, as `merge` would
    /// (a shard that never arrived is an error row, which the history leaves out).
    ///
    /// # Errors
    /// As [`Store::results`]; shards that `merge` refuses to merge (exit 2, naming them).
    pub fn history(&mut self, filter: &Filter) -> Result<Vec<(PathBuf, Results)>, Error> {
        let runs = self.results(filter, false)?;
        let group = |i: &RunInfo| {
            i.git_commit
                .as_ref()
                .map(|c| (i.branch.clone(), c.clone(), i.spec_hash.clone()))
        };
        let whole: std::collections::BTreeSet<_> = runs
            .iter()
            .filter(|(i, _)| i.shard.is_none())
            .filter_map(|(i, _)| group(i))
            .collect();
        let mut out: Vec<(PathBuf, Results)> = Vec::new();
        let mut shards: BTreeMap<Commit, (usize, Vec<(PathBuf, Results)>)> = BTreeMap::new();
        for (info, results) in runs {
            match group(&info).filter(|_| info.shard.is_some()) {
                Some(g) if whole.contains(&g) => {}
                Some(g) => {
                    let slot = out.len();
                    let entry = shards.entry(g).or_insert_with(|| (slot, Vec::new()));
                    if entry.1.is_empty() {
                        out.push((info.label(), results.clone()));
                    }
                    entry.1.push((info.label(), results));
                }
                None => out.push((info.label(), results)),
            }
        }
        for (_, (slot, parts)) in shards {
            let label = PathBuf::from(format!(
                "{} (merged from {} shard runs)",
                parts[0].0.display(),
                parts.len()
            ));
            out[slot] = (label, crate::outcome::merge(parts)?);
        }
        Ok(out)
    }
}

/// A commit's runs: branch, commit, spec hash.
type Commit = (String, String, String);

/// A stored run that no longer reads as results.
fn damaged(url: &StoreUrl, info: &RunInfo, message: &str) -> Error {
    Error::Usage(format!(
        "the store {url}: run {} ({}) does not read as results: {message}",
        info.label().display(),
        info.date
    ))
}

/// The time now, RFC 3339 in UTC: when a run was pushed.
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map_or_else(|_| jiff::Timestamp::now().to_string(), |t| t.to_string())
}
