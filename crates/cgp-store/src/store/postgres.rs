//! The PostgreSQL engine (rust-postgres's synchronous client): each push one transaction (the
//! run's row `ON CONFLICT DO NOTHING`, its rows by binary `COPY`), migrations under an advisory
//! lock. The connection, TLS handshake and login together are bounded by the URL's
//! `connect_timeout` (default [`super::url::DEFAULT_CONNECT_TIMEOUT`]): a server that accepts
//! and never answers is an error naming its host and port, not a hung job.

use std::sync::Arc;

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};

use super::url::{self, Tls};
use super::{Engine, Filter, Pushed, RowText, RunInfo, StoreUrl, StoredRun, schema};
use crate::Error;

/// The advisory lock that serialises migrations (any number; this is "cgp-gate" in ASCII).
const MIGRATION_LOCK: i64 = 0x6367_702d_6761_7465;

pub(crate) struct Postgres {
    url: StoreUrl,
    endpoint: String,
    client: Client,
}

impl Postgres {
    pub(crate) fn connect(url: &StoreUrl, pg: &url::Postgres) -> Result<Self, Error> {
        let mut config: postgres::Config = pg
            .conn
            .parse()
            .map_err(|e: postgres::Error| Error::Usage(url.scrub(&e.to_string())))?;
        config
            .application_name("cgp-gate")
            .connect_timeout(pg.connect_timeout);
        let tls = match pg.tls {
            Tls::Off => None,
            Tls::Verified => {
                config.ssl_mode(postgres::config::SslMode::Require);
                Some(tls_config(url, pg)?)
            }
        };
        // The whole connection (socket, TLS, login) on a thread of its own, waited for at most
        // the timeout: rust-postgres bounds the socket's connect only.
        let (send, recv) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let client = match tls {
                None => config.connect(NoTls),
                Some(c) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(c)),
            };
            let _ = send.send(client);
        });
        let endpoint = pg.endpoint.clone();
        let client = match recv.recv_timeout(pg.connect_timeout) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(unreachable(url, &endpoint, &e)),
            Err(_) => {
                return Err(Error::Environment(format!(
                    "the store's server at {endpoint} did not answer within {} s ({url}); check that it \
                     runs and that this machine may reach it (a firewall that drops packets looks like \
                     this), or raise connect_timeout=SECONDS in the URL",
                    pg.connect_timeout.as_secs()
                )));
            }
        };
        Ok(Self {
            url: url.clone(),
            endpoint,
            client,
        })
    }

    fn fail(&self, action: &str, e: &postgres::Error) -> Error {
        Error::Environment(format!(
            "cannot {action} the store at {} ({}): {}",
            self.endpoint,
            self.url,
            self.url.scrub(&describe(e))
        ))
    }
}

/// A driver error with its cause (rust-postgres's `Display` of a server error is only
/// "db error"; the server's message is the source).
/// The schema's version, and the migrations up to [`schema::SCHEMA_VERSION`] in one
/// transaction; the caller holds [`MIGRATION_LOCK`]. A newer schema is left alone.
fn migrate_locked(client: &mut Client) -> Result<u32, postgres::Error> {
    let mut tx = client.transaction()?;
    let has: Option<String> = tx
        .query_one("SELECT to_regclass('cgp_gate_schema')::text", &[])?
        .get(0);
    let from = if has.is_some() {
        tx.query_opt("SELECT version FROM cgp_gate_schema WHERE id = 1", &[])?
            .map_or(0, |r| r.get::<_, i32>(0))
    } else {
        0
    };
    let from = u32::try_from(from).unwrap_or(0);
    if from > schema::SCHEMA_VERSION {
        return Ok(from);
    }
    for m in schema::pending(from) {
        tx.batch_execute(m.postgres)?;
        tx.batch_execute(&schema::record_version(m.to))?;
    }
    tx.commit()?;
    Ok(from)
}

fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                text.push_str(": ");
                text.push_str(&s.to_string());
                src = s.source();
            }
            text
        }
    }
}

/// A failed connection: exit 3, naming host and port, never the password.
fn unreachable(url: &StoreUrl, endpoint: &str, e: &postgres::Error) -> Error {
    let why = url.scrub(&describe(e));
    let hint = if why.contains("password") || why.contains("authentication") {
        "check the user and password (CGP_GATE_STORE, or PGPASSWORD)"
    } else if why.contains("certificate") || why.contains("tls") || why.contains("TLS") {
        "the server's certificate must be signed by a root this machine trusts, or by the one in sslrootcert=PATH"
    } else {
        "check that the server runs and listens there, and that this machine may reach it"
    };
    Error::Environment(format!(
        "cannot connect to the store's server at {endpoint} ({url}): {why}; {hint}"
    ))
}

/// rustls on ring with the system's roots and `sslrootcert`'s certificates.
fn tls_config(url: &StoreUrl, pg: &url::Postgres) -> Result<rustls::ClientConfig, Error> {
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(c);
    }
    if let Some(path) = &pg.root_cert {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(path).map_err(|e| {
            Error::Usage(format!(
                "sslrootcert {} of the store {url} cannot be read: {e}",
                path.display()
            ))
        })?;
        for c in certs {
            let c = c.map_err(|e| {
                Error::Usage(format!(
                    "sslrootcert {} of the store {url} is not a PEM certificate file: {e}",
                    path.display()
                ))
            })?;
            roots
                .add(c)
                .map_err(|e| Error::Usage(format!("sslrootcert {}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Environment(format!("TLS for the store {url}: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl Engine for Postgres {
    fn version(&mut self) -> Result<u32, Error> {
        let has: Option<String> = self
            .client
            .query_one("SELECT to_regclass('cgp_gate_schema')::text", &[])
            .map_err(|e| self.fail("read", &e))?
            .get(0);
        if has.is_none() {
            return Ok(0);
        }
        let v: Option<i32> = self
            .client
            .query_opt("SELECT version FROM cgp_gate_schema WHERE id = 1", &[])
            .map_err(|e| self.fail("read", &e))?
            .map(|r| r.get(0));
        Ok(v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0))
    }

    fn migrate(&mut self) -> Result<u32, Error> {
        let (url, endpoint) = (self.url.clone(), self.endpoint.clone());
        let fail = |e: postgres::Error| {
            Error::Environment(format!(
                "cannot migrate the store at {endpoint} ({url}): {}",
                url.scrub(&describe(&e))
            ))
        };
        // The lock is the session's, taken before the transaction begins: a transaction that
        // waits for a lock keeps the catalog it saw when it began, so a pusher that waited
        // while another created the tables would not see them and create them again
        // ("relation cgp_gate_schema already exists"; seen with eight pushers into a new
        // database). A transaction begun after the wait sees every committed migration.
        self.client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .map_err(fail)?;
        let migrated = migrate_locked(&mut self.client).map_err(fail);
        // Released also when the connection closes (a killed pusher holds nothing).
        let unlocked = self
            .client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
            .map_err(fail);
        let from = migrated?;
        unlocked?;
        Ok(from)
    }

    fn push(&mut self, run: &StoredRun) -> Result<Pushed, Error> {
        let (url, endpoint) = (self.url.clone(), self.endpoint.clone());
        let fail = |e: postgres::Error| {
            Error::Environment(format!(
                "cannot write the store at {endpoint} ({url}): {}; nothing of this run was stored",
                url.scrub(&describe(&e))
            ))
        };
        let ci = serde_json::to_string(&run.origin.ci).unwrap_or_else(|_| "{}".to_owned());
        let rows = i32::try_from(run.rows.len()).unwrap_or(i32::MAX);
        let pushed_at = super::now();
        let mut tx = self.client.transaction().map_err(fail)?;
        let seq: Option<i64> = tx
            .query_opt(
                "INSERT INTO cgp_gate_runs (run_id, branch, kind, runner, ci, git_commit, run_date, shard, \
                 spec_hash, gpu, verdict, tool_version, row_count, pushed_at, header, file) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
                 ON CONFLICT (run_id) DO NOTHING RETURNING seq",
                &[
                    &run.id,
                    &run.origin.branch,
                    &run.origin.kind,
                    &run.origin.runner,
                    &ci,
                    &run.git_commit,
                    &run.date,
                    &run.shard,
                    &run.spec_hash,
                    &run.gpu,
                    &run.verdict,
                    &run.tool_version,
                    &rows,
                    &pushed_at,
                    &run.header,
                    &run.origin.file,
                ],
            )
            .map_err(fail)?
            .map(|r| r.get(0));
        let Some(seq) = seq else {
            let branch: String = tx
                .query_one("SELECT branch FROM cgp_gate_runs WHERE run_id = $1", &[&run.id])
                .map_err(fail)?
                .get(0);
            return Ok(Pushed::Already { branch });
        };
        let sink = tx
            .copy_in(
                "COPY cgp_gate_rows (run_seq, ord, gpu, target, size, kernel, metric, unit, verdict, value, \
                 change, body, samples) FROM STDIN (FORMAT binary)",
            )
            .map_err(fail)?;
        let types = [
            Type::INT8,
            Type::INT4,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::FLOAT8,
            Type::FLOAT8,
            Type::TEXT,
            Type::TEXT,
        ];
        let mut w = BinaryCopyInWriter::new(sink, &types);
        for (ord, r) in run.rows.iter().enumerate() {
            let ord = i32::try_from(ord).unwrap_or(i32::MAX);
            let values: [&(dyn ToSql + Sync); 13] = [
                &seq, &ord, &r.gpu, &r.target, &r.size, &r.kernel, &r.metric, &r.unit, &r.verdict, &r.value,
                &r.change, &r.body, &r.samples,
            ];
            w.write(&values).map_err(fail)?;
        }
        w.finish().map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(Pushed::Stored(run.rows.len()))
    }

    fn runs(&mut self, filter: &Filter) -> Result<Vec<RunInfo>, Error> {
        let (cond, args) = where_of(filter);
        let sql = format!(
            "SELECT seq, run_id, branch, kind, runner, ci, git_commit, run_date, shard, spec_hash, gpu, verdict, \
             row_count, header, file FROM cgp_gate_runs r {cond} ORDER BY run_date, seq"
        );
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        let rows = self
            .client
            .query(&sql, &params)
            .map_err(|e| self.fail("read", &e))?;
        Ok(rows
            .iter()
            .map(|r| RunInfo {
                seq: r.get(0),
                id: r.get(1),
                branch: r.get(2),
                kind: r.get(3),
                runner: r.get(4),
                ci: serde_json::from_str(r.get::<_, &str>(5)).unwrap_or_default(),
                git_commit: r.get(6),
                date: r.get(7),
                shard: r.get(8),
                spec_hash: r.get(9),
                gpu: r.get(10),
                verdict: r.get(11),
                rows: i64::from(r.get::<_, i32>(12)),
                header: r.get(13),
                file: r.get(14),
            })
            .collect())
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
            if samples { "w.samples" } else { "NULL::text" }
        );
        let (url, endpoint) = (self.url.clone(), self.endpoint.clone());
        let fail = |e: postgres::Error| {
            Error::Environment(format!(
                "cannot read the store at {endpoint} ({url}): {}",
                url.scrub(&describe(&e))
            ))
        };
        // Streamed: a portal fetches the rows as they are read, never all at once.
        let mut tx = self.client.transaction().map_err(fail)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        let portal = tx.bind(sql.as_str(), &params).map_err(fail)?;
        loop {
            let batch = tx.query_portal(&portal, 10_000).map_err(fail)?;
            if batch.is_empty() {
                break;
            }
            for r in &batch {
                each((r.get(0), r.get(1), r.get(2)))?;
            }
        }
        tx.commit().map_err(fail)?;
        Ok(())
    }
}

/// The `WHERE` of a filter over `cgp_gate_runs r` with `$n` placeholders, and its values.
fn where_of(filter: &Filter) -> (String, Vec<String>) {
    let mut conds = Vec::new();
    let mut args = Vec::new();
    for (col, v) in [
        ("r.branch", &filter.branch),
        ("r.run_date", &filter.since),
        ("r.run_id", &filter.run_id),
    ] {
        if let Some(v) = v {
            args.push(v.clone());
            let op = if col == "r.run_date" { ">=" } else { "=" };
            conds.push(format!("{col} {op} ${}", args.len()));
        }
    }
    if conds.is_empty() {
        (String::new(), args)
    } else {
        (format!("WHERE {}", conds.join(" AND ")), args)
    }
}
