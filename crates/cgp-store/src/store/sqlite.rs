//! The SQLite engine: one file, written in WAL mode (readers never wait for a pusher), each push
//! one `BEGIN IMMEDIATE` transaction (pushers queue on the file's lock for up to
//! [`BUSY_TIMEOUT`]; a pusher killed mid-push leaves its transaction uncommitted, which SQLite
//! rolls back when the file is next opened).

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Access, Engine, Filter, Pushed, RowText, RunInfo, StoreUrl, StoredRun, schema};
use crate::Error;

/// How long a pusher waits for another's transaction on the same file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) struct Sqlite {
    url: StoreUrl,
    conn: Connection,
}

impl Sqlite {
    /// Open the file: for reading it must exist and is opened read-only; for writing it is
    /// created when absent. Nothing is written here (WAL mode is set by the first write).
    pub(crate) fn open(url: &StoreUrl, path: &Path, access: Access) -> Result<Self, Error> {
        let flags = match access {
            Access::Read => {
                if !path.exists() {
                    return Err(Error::Usage(format!(
                        "the store {url}: no such file; push runs first (`cgp-gate store push`, or --store on check)"
                    )));
                }
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
            Access::Write => {
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(Error::Usage(format!(
                        "the store {url} is a symbolic link; name the file itself (cgp-gate writes through no link)"
                    )));
                }
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| fail(url, "open", &e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| fail(url, "open", &e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| fail(url, "open", &e))?;
        Ok(Self {
            url: url.clone(),
            conn,
        })
    }

    /// WAL mode (persistent in the file; a no-op once set): readers do not block the pushers.
    fn wal(&self) -> Result<(), Error> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| fail(&self.url, "read", &e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            self.conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map_err(|e| fail(&self.url, "write", &e))?;
        }
        Ok(())
    }
}

/// An SQLite failure: a file that is not a database is invalid input (exit 2); anything else
/// (read-only, full, unreadable, locked past the timeout) is the environment's (exit 3).
fn fail(url: &StoreUrl, action: &str, e: &rusqlite::Error) -> Error {
    let text = url.scrub(&e.to_string());
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => Error::Usage(format!(
            "the store {url} is not an SQLite database ({text}); name another file, or move this one away"
        )),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => Error::Usage(format!(
            "the store {url} is damaged ({text}); restore it from a copy"
        )),
        Some(rusqlite::ErrorCode::DiskFull) => Error::Environment(format!(
            "cannot {action} the store {url}: the disk is full ({text}); nothing of this run was stored: free space and push again"
        )),
        Some(
            rusqlite::ErrorCode::ReadOnly
            | rusqlite::ErrorCode::CannotOpen
            | rusqlite::ErrorCode::PermissionDenied,
        ) => Error::Environment(format!(
            "cannot {action} the store {url}: {text}; nothing of this run was stored: make the file and its folder writable"
        )),
        _ => Error::Environment(format!("cannot {action} the store {url}: {text}")),
    }
}

impl Engine for Sqlite {
    fn version(&mut self) -> Result<u32, Error> {
        let has: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cgp_gate_schema'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| fail(&self.url, "read", &e))?;
        if has.is_none() {
            return Ok(0);
        }
        let v: Option<i64> = self
            .conn
            .query_row("SELECT version FROM cgp_gate_schema WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| fail(&self.url, "read", &e))?;
        Ok(u32::try_from(v.unwrap_or(0)).unwrap_or(u32::MAX))
    }

    fn migrate(&mut self) -> Result<u32, Error> {
        self.wal()?;
        let url = self.url.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| fail(&url, "write", &e))?;
        let exists: bool = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'cgp_gate_schema'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| fail(&url, "read", &e))?
            > 0;
        let from = if exists {
            tx.query_row("SELECT version FROM cgp_gate_schema WHERE id = 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map_err(|e| fail(&url, "read", &e))?
            .unwrap_or(0)
        } else {
            0
        };
        let from = u32::try_from(from).unwrap_or(u32::MAX);
        if from > schema::SCHEMA_VERSION {
            return Ok(from);
        }
        for m in schema::pending(from) {
            tx.execute_batch(m.sqlite)
                .map_err(|e| fail(&url, "migrate", &e))?;
            tx.execute_batch(&schema::record_version(m.to))
                .map_err(|e| fail(&url, "migrate", &e))?;
        }
        tx.commit().map_err(|e| fail(&url, "write", &e))?;
        Ok(from)
    }

    fn push(&mut self, run: &StoredRun) -> Result<Pushed, Error> {
        self.wal()?;
        let url = self.url.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| fail(&url, "write", &e))?;
        let ci = serde_json::to_string(&run.origin.ci).unwrap_or_else(|_| "{}".to_owned());
        let inserted = tx
            .execute(
                "INSERT INTO cgp_gate_runs (run_id, branch, kind, runner, ci, git_commit, run_date, shard, \
                 spec_hash, gpu, verdict, tool_version, row_count, pushed_at, header, file) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) \
                 ON CONFLICT (run_id) DO NOTHING",
                params![
                    run.id,
                    run.origin.branch,
                    run.origin.kind,
                    run.origin.runner,
                    ci,
                    run.git_commit,
                    run.date,
                    run.shard,
                    run.spec_hash,
                    run.gpu,
                    run.verdict,
                    run.tool_version,
                    run.rows.len() as i64,
                    super::now(),
                    run.header,
                    run.origin.file
                ],
            )
            .map_err(|e| fail(&url, "write", &e))?;
        if inserted == 0 {
            let branch: String = tx
                .query_row(
                    "SELECT branch FROM cgp_gate_runs WHERE run_id = ?1",
                    [&run.id],
                    |r| r.get(0),
                )
                .map_err(|e| fail(&url, "read", &e))?;
            return Ok(Pushed::Already { branch });
        }
        let seq = tx.last_insert_rowid();
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO cgp_gate_rows (run_seq, ord, gpu, target, size, kernel, metric, unit, verdict, \
                     value, change, body, samples) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(|e| fail(&url, "write", &e))?;
            for (ord, r) in run.rows.iter().enumerate() {
                st.execute(params![
                    seq, ord as i64, r.gpu, r.target, r.size, r.kernel, r.metric, r.unit, r.verdict, r.value,
                    r.change, r.body, r.samples
                ])
                .map_err(|e| fail(&url, "write", &e))?;
            }
        }
        tx.commit().map_err(|e| fail(&url, "write", &e))?;
        Ok(Pushed::Stored(run.rows.len()))
    }

    fn runs(&mut self, filter: &Filter) -> Result<Vec<RunInfo>, Error> {
        let (cond, args) = where_of(filter);
        let sql = format!(
            "SELECT seq, run_id, branch, kind, runner, ci, git_commit, run_date, shard, spec_hash, gpu, verdict, \
             row_count, header, file FROM cgp_gate_runs r {cond} ORDER BY run_date, seq"
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| fail(&self.url, "read", &e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                let ci: String = r.get(5)?;
                Ok(RunInfo {
                    seq: r.get(0)?,
                    id: r.get(1)?,
                    branch: r.get(2)?,
                    kind: r.get(3)?,
                    runner: r.get(4)?,
                    ci: serde_json::from_str(&ci).unwrap_or_default(),
                    git_commit: r.get(6)?,
                    date: r.get(7)?,
                    shard: r.get(8)?,
                    spec_hash: r.get(9)?,
                    gpu: r.get(10)?,
                    verdict: r.get(11)?,
                    rows: r.get(12)?,
                    header: r.get(13)?,
                    file: r.get(14)?,
                })
            })
            .map_err(|e| fail(&self.url, "read", &e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(&self.url, "read", &e))
    }

    fn rows(
        &mut self,
        filter: &Filter,
        samples: bool,
        each: &mut dyn FnMut(RowText) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (cond, args) = where_of(filter);
        let sql = format!(
            "SELECT w.run_seq, w.body, {} FROM cgp_gate_runs r JOIN cgp_gate_rows w ON w.run_seq = r.seq {cond} \
             ORDER BY r.run_date, r.seq, w.ord",
            if samples { "w.samples" } else { "NULL" }
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| fail(&self.url, "read", &e))?;
        let mut rows = st
            .query(rusqlite::params_from_iter(args.iter()))
            .map_err(|e| fail(&self.url, "read", &e))?;
        while let Some(r) = rows.next().map_err(|e| fail(&self.url, "read", &e))? {
            let row = (|| Ok::<_, rusqlite::Error>((r.get(0)?, r.get(1)?, r.get(2)?)))()
                .map_err(|e| fail(&self.url, "read", &e))?;
            each(row)?;
        }
        Ok(())
    }
}

/// The `WHERE` of a filter over `cgp_gate_runs r`, and its values in order.
fn where_of(filter: &Filter) -> (String, Vec<String>) {
    let mut conds = Vec::new();
    let mut args = Vec::new();
    for (col, v) in [
        ("r.branch = ?", &filter.branch),
        ("r.run_date >= ?", &filter.since),
        ("r.run_id = ?", &filter.run_id),
    ] {
        if let Some(v) = v {
            conds.push(col);
            args.push(v.clone());
        }
    }
    if conds.is_empty() {
        (String::new(), args)
    } else {
        (format!("WHERE {}", conds.join(" AND ")), args)
    }
}
