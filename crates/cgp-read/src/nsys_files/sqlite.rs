//! The SQLite export: kernels, copies and sets from the `CUPTI_ACTIVITY_KIND_*` tables.

use super::*;

const KERNEL_TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

/// Read a SQLite export (`nsys export --type sqlite`). `origin` names the file in messages (a
/// `.nsys-rep` whose export this is).
///
/// # Errors
/// [`Error::Input`] naming `origin` for a file that is not such an export.
pub fn read_sqlite(path: &Path, origin: &Path) -> Result<Workload, Error> {
    use rusqlite::{Connection, OpenFlags};
    let bad = |what: &str, e: &dyn std::fmt::Display| Error::input(origin, format!("{what}: {e}"));
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| bad("cannot open as SQLite", &e))?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(|e| bad("not a readable SQLite database", &e))?;
    let has = |t: &str| tables.iter().any(|x| x == t);
    let kernel_t = KERNEL_TABLE;
    let memcpy_t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    let memset_t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if !has(kernel_t) && !has(memcpy_t) && !has(memset_t) {
        let export = has("StringIds") || has("TARGET_INFO_SYSTEM_ENV") || has("META_DATA_EXPORT");
        let (what, help) = if export {
            (
                "is an nsys export without CUDA GPU activity (no CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET table)",
                "nsys saw no kernel, memcpy or memset: check that the application runs CUDA work on a GPU and was traced with `nsys profile --trace cuda`",
            )
        } else {
            (
                "is a SQLite file but not an nsys export (no CUPTI_ACTIVITY_KIND_KERNEL table)",
                "trace CUDA (`nsys profile -t cuda ...`) and export with `nsys export --type sqlite`",
            )
        };
        return Err(Error::input(origin, what).with_help(help));
    }
    let columns = |t: &str| -> Result<Vec<String>, Error> {
        conn.prepare(&format!("PRAGMA table_info({t})"))
            .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(1))?.collect())
            .map_err(|e| bad(&format!("cannot read the columns of {t}"), &e))
    };
    let mut names = Names::default();
    let mut activities: Vec<Activity> = Vec::new();
    if has(kernel_t) {
        let cols = columns(kernel_t)?;
        read_kernels(
            &conn,
            origin,
            &cols,
            has("StringIds"),
            &mut names,
            &mut activities,
        )?;
    }
    if has(memcpy_t) {
        let mut labels: Vec<(i64, String)> = MEMCPY_KINDS
            .iter()
            .map(|(i, _, l)| (*i, (*l).to_owned()))
            .collect();
        if has("ENUM_CUDA_MEMCPY_OPER")
            && let Ok(mut s) = conn.prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER")
            && let Ok(found) = s
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        {
            labels = found;
        }
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, start, end, copyKind FROM {memcpy_t}"))
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| bad(&format!("cannot read {memcpy_t}"), &e))?
        {
            let (rowid, start, end, kind): (i64, i64, i64, Option<i64>) =
                (|| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))()
                    .map_err(|e: rusqlite::Error| bad(&format!("{memcpy_t}: unexpected value"), &e))?;
            let kind = kind.unwrap_or(0);
            let label = labels
                .iter()
                .find(|(i, _)| *i == kind)
                .map_or_else(|| format!("kind {kind}"), |(_, l)| l.clone());
            let id = names.id(&memcpy_name(&label));
            push_activity(origin, &mut activities, memcpy_t, rowid, start, end, id)?;
        }
    }
    if has(memset_t) {
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, start, end FROM {memset_t}"))
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?;
        let mut rows = stmt
            .query([])
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?;
        while let Some(r) = rows
            .next()
            .map_err(|e| bad(&format!("cannot read {memset_t}"), &e))?
        {
            let (rowid, start, end): (i64, i64, i64) = (|| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))()
                .map_err(|e: rusqlite::Error| bad(&format!("{memset_t}: unexpected value"), &e))?;
            let id = names.id(MEMSET_NAME);
            push_activity(origin, &mut activities, memset_t, rowid, start, end, id)?;
        }
    }
    Ok(Workload {
        file: origin.to_path_buf(),
        shape: Shape::Trace,
        format: "sqlite export".to_owned(),
        names: names.names,
        activities,
    })
}

/// One GPU activity of `table`; refused past [`MAX_ROWS`] or when its times are no interval.
fn push_activity(
    origin: &Path,
    activities: &mut Vec<Activity>,
    table: &str,
    rowid: i64,
    start: i64,
    end: i64,
    name: u32,
) -> Result<(), Error> {
    if activities.len() >= MAX_ROWS {
        return Err(Error::input(
            origin,
            format!("has more than {MAX_ROWS} GPU activities; cgp-gate refuses larger exports"),
        ));
    }
    if start < 0 || end < start {
        return Err(Error::input(
            origin,
            format!("{table} row {rowid}: start {start} and end {end} are not an interval"),
        ));
    }
    activities.push(Activity {
        name,
        start_ns: Some(start.unsigned_abs()),
        duration_ns: (end - start).unsigned_abs(),
        instances: 1,
    });
    Ok(())
}

/// The kernels of `CUPTI_ACTIVITY_KIND_KERNEL` (`cols`: its columns), named through `StringIds`
/// when the export has it (`join`).
fn read_kernels(
    conn: &rusqlite::Connection,
    origin: &Path,
    cols: &[String],
    join: bool,
    names: &mut Names,
    activities: &mut Vec<Activity>,
) -> Result<(), Error> {
    let bad = |what: &str, e: &dyn std::fmt::Display| Error::input(origin, format!("{what}: {e}"));
    let kernel_t = KERNEL_TABLE;
    let name_col = ["demangledName", "shortName", "mangledName"]
        .into_iter()
        .find(|c| cols.iter().any(|x| x == c))
        .ok_or_else(|| {
            Error::input(
                origin,
                format!("{kernel_t} has no demangledName or shortName column"),
            )
        })?;
    let sql = if join {
        format!(
            "SELECT k.rowid, k.start, k.end, k.{name_col}, s.value FROM {kernel_t} k LEFT JOIN StringIds s ON s.id = k.{name_col}"
        )
    } else {
        format!("SELECT rowid, start, end, {name_col}, NULL FROM {kernel_t}")
    };
    let mut stmt = conn
        .prepare(&sql)
        .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?;
    let mut rows = stmt
        .query([])
        .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?;
    while let Some(r) = rows
        .next()
        .map_err(|e| bad(&format!("cannot read {kernel_t}"), &e))?
    {
        let get = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, i64, i64, Option<String>)> {
            let raw: rusqlite::types::Value = r.get(3)?;
            let joined: Option<String> = r.get(4)?;
            let name = joined.or(match raw {
                rusqlite::types::Value::Text(t) => Some(t),
                _ => None,
            });
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, name))
        };
        let (rowid, start, end, name) =
            get(r).map_err(|e| bad(&format!("{kernel_t}: unexpected value"), &e))?;
        let name = name.ok_or_else(|| {
            Error::input(
                origin,
                format!("{kernel_t} row {rowid}: the kernel name ({name_col}) is not in StringIds"),
            )
        })?;
        let id = names.id(&name);
        push_activity(origin, activities, kernel_t, rowid, start, end, id)?;
    }
    Ok(())
}

/// The length of the profiled session in ns (`ANALYSIS_DETAILS.duration`), when the export has
/// it: the wall time nsys measured.
pub fn session_duration_ns(path: &Path) -> Option<u64> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let d: i64 = conn
        .query_row("SELECT MAX(duration) FROM ANALYSIS_DETAILS", [], |r| r.get(0))
        .ok()?;
    u64::try_from(d).ok().filter(|d| *d > 0)
}
