//! Where the store is: `sqlite:PATH` or `postgres://...` / `postgresql://...`, read once into a
//! [`StoreUrl`] that can be shown anywhere: its [`std::fmt::Display`] never carries the
//! password, and [`StoreUrl::scrub`] takes it out of any text (a driver's message may quote the
//! connection string).
//!
//! Hand-written: the two forms are a prefix and libpq's URL, which `postgres::Config` parses
//! itself; what is read here is only what cgp-gate must know before it connects (the file, the
//! host and port it names in messages, the TLS options libpq has and rust-postgres does not).

use std::path::PathBuf;
use std::time::Duration;

use crate::Error;

/// How long a connection to a server may take, unless the URL says `connect_timeout=SECONDS`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed store address.
#[derive(Clone)]
pub struct StoreUrl {
    /// What the user gave, with the password replaced by `***`.
    shown: String,
    /// The password (and its percent-decoded form) where the URL holds one: taken out of every
    /// message.
    secrets: Vec<String>,
    pub(crate) kind: Kind,
}

#[derive(Clone)]
pub(crate) enum Kind {
    Sqlite(PathBuf),
    Postgres(Postgres),
}

/// What the PostgreSQL engine needs of the URL.
#[derive(Clone)]
pub(crate) struct Postgres {
    /// The URL without the options read here (rust-postgres refuses options it does not know).
    pub(crate) conn: String,
    /// `host:port` (the first when several), for messages.
    pub(crate) endpoint: String,
    pub(crate) tls: Tls,
    /// PEM file of the certificates that sign the server's (`sslrootcert=`).
    pub(crate) root_cert: Option<PathBuf>,
    pub(crate) connect_timeout: Duration,
}

/// `sslmode`: only the modes that ask for TLS get it, and then the server's certificate is
/// always verified (stricter than libpq's `require`, which does not verify).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tls {
    /// `disable`, `allow`, `prefer` or no `sslmode`: a plain connection.
    Off,
    /// `require`, `verify-ca`, `verify-full`: TLS, the certificate verified against the
    /// system's roots and `sslrootcert`.
    Verified,
}

impl std::fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreUrl({})", self.shown)
    }
}

impl StoreUrl {
    /// Read a store address.
    ///
    /// # Errors
    /// [`Error::Usage`] (exit 2) for anything but `sqlite:PATH` and a PostgreSQL URL that
    /// rust-postgres reads; the message never holds the password.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("sqlite:") {
            // `sqlite:PATH`, and sqlx's `sqlite://PATH` (`sqlite:///abs/path` is absolute).
            let path = rest.strip_prefix("//").unwrap_or(rest);
            let path = path.split_once('?').map_or(path, |(p, _)| p);
            if path.is_empty() {
                return Err(Error::Usage(
                    "the store `sqlite:` names no file; write sqlite:PATH (e.g. sqlite:perf.db)".to_owned(),
                ));
            }
            return Ok(Self {
                shown: format!("sqlite:{path}"),
                secrets: Vec::new(),
                kind: Kind::Sqlite(PathBuf::from(path)),
            });
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return postgres(text);
        }
        let scheme = text.split_once(':').map_or("", |(s, _)| s);
        let shown = if scheme.is_empty() || scheme.contains('/') {
            "this value".to_owned()
        } else {
            format!("a `{}:` address", crate::foundation::sanitize::line(scheme))
        };
        Err(Error::Usage(format!(
            "the store is {shown}, which cgp-gate does not read; write sqlite:PATH (one file) or \
             postgres://USER@HOST:PORT/DB (a server; the password in CGP_GATE_STORE or PGPASSWORD)"
        )))
    }

    /// `text` without the password, wherever it stands.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in &self.secrets {
            out = out.replace(s.as_str(), "***");
        }
        crate::foundation::redact::redact_urls(&out).into_owned()
    }

    /// Whether the URL holds a password (a spec, which is committed, must not).
    pub fn has_password(&self) -> bool {
        !self.secrets.is_empty()
    }

    /// The engine's name: `sqlite` or `postgres`.
    pub fn engine(&self) -> &'static str {
        match self.kind {
            Kind::Sqlite(_) => "sqlite",
            Kind::Postgres(_) => "postgres",
        }
    }

    /// Give the server a password the URL lacks (`PGPASSWORD`, as libpq reads it).
    pub fn with_password_from(mut self, password: Option<String>) -> Self {
        if let (Kind::Postgres(pg), Some(p)) = (&mut self.kind, password.filter(|p| !p.is_empty()))
            && self.secrets.is_empty()
        {
            pg.conn.push_str(if pg.conn.contains('?') { "&" } else { "?" });
            pg.conn.push_str("password=");
            pg.conn.push_str(
                &percent_encoding::utf8_percent_encode(&p, percent_encoding::NON_ALPHANUMERIC).to_string(),
            );
            self.secrets.push(p);
        }
        self
    }
}

/// The user-info password of `postgres://user:password@host` and a `password=` option, raw and
/// percent-decoded.
fn passwords(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let after = text.split_once("://").map_or("", |(_, r)| r);
    let authority = after.split(['/', '?']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@')
        && let Some((_, pw)) = userinfo.split_once(':')
        && !pw.is_empty()
    {
        out.push(pw.to_owned());
    }
    if let Some((_, query)) = text.split_once('?') {
        for kv in query.split('&') {
            if let Some(pw) = kv.strip_prefix("password=")
                && !pw.is_empty()
            {
                out.push(pw.to_owned());
            }
        }
    }
    let decoded: Vec<String> = out
        .iter()
        .map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    out.extend(decoded);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// A PostgreSQL URL: the options read here taken out, the rest checked by rust-postgres's own
/// parser.
fn postgres(text: &str) -> Result<StoreUrl, Error> {
    let secrets = passwords(text);
    let scrub = |s: &str| {
        let mut out = s.to_owned();
        for p in &secrets {
            out = out.replace(p.as_str(), "***");
        }
        crate::foundation::redact::redact_urls(&out).into_owned()
    };
    let shown = scrub(text);
    let bad = |why: String| {
        Error::Usage(format!(
            "the store {} is not a PostgreSQL URL cgp-gate can use: {why}; write \
             postgres://USER@HOST:PORT/DB[?sslmode=require]",
            crate::foundation::sanitize::line(&shown)
        ))
    };
    let (base, query) = text.split_once('?').unwrap_or((text, ""));
    let mut kept = Vec::new();
    let mut tls = Tls::Off;
    let mut root_cert = None;
    let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let v_dec = percent_encoding::percent_decode_str(v)
            .decode_utf8_lossy()
            .into_owned();
        match k {
            "sslmode" => {
                tls = match v_dec.as_str() {
                    "disable" | "allow" | "prefer" => Tls::Off,
                    "require" | "verify-ca" | "verify-full" => Tls::Verified,
                    other => {
                        return Err(bad(format!(
                            "sslmode `{}` is none of disable, allow, prefer, require, verify-ca, verify-full",
                            crate::foundation::sanitize::line(other)
                        )));
                    }
                }
            }
            "sslrootcert" => root_cert = Some(PathBuf::from(v_dec)),
            "connect_timeout" => {
                let s: u64 = v_dec
                    .parse()
                    .ok()
                    .filter(|s| (1..=3600).contains(s))
                    .ok_or_else(|| {
                        bad("connect_timeout is not a whole number of seconds from 1 to 3600".into())
                    })?;
                connect_timeout = Duration::from_secs(s);
            }
            _ => kept.push(kv),
        }
    }
    let conn = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let config: postgres::Config = conn
        .parse()
        .map_err(|e: postgres::Error| bad(scrub(&e.to_string())))?;
    let host = config.get_hosts().first().map(|h| match h {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    });
    let Some(host) = host else {
        return Err(bad("it names no host".to_owned()));
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    Ok(StoreUrl {
        shown,
        secrets,
        kind: Kind::Postgres(Postgres {
            conn,
            endpoint: format!("{host}:{port}"),
            tls,
            root_cert,
            connect_timeout,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_forms() {
        for (text, path) in [
            ("sqlite:perf.db", "perf.db"),
            ("sqlite:/tmp/a.db", "/tmp/a.db"),
            ("sqlite:///tmp/a.db", "/tmp/a.db"),
            ("sqlite://rel.db", "rel.db"),
        ] {
            let u = StoreUrl::parse(text).unwrap();
            let Kind::Sqlite(p) = &u.kind else {
                panic!("{text}")
            };
            assert_eq!(p, &PathBuf::from(path));
            assert_eq!(u.engine(), "sqlite");
        }
        assert!(matches!(StoreUrl::parse("sqlite:"), Err(Error::Usage(_))));
    }

    #[test]
    fn the_password_is_never_shown() {
        let u = StoreUrl::parse("postgres://gate:s3cr%40t@db.example:6543/perf?sslmode=require").unwrap();
        assert_eq!(
            u.to_string(),
            "postgres://gate:***@db.example:6543/perf?sslmode=require"
        );
        let Kind::Postgres(pg) = &u.kind else { panic!() };
        assert_eq!(pg.endpoint, "db.example:6543");
        assert_eq!(pg.tls, Tls::Verified);
        assert!(!pg.conn.contains("sslmode"));
        assert_eq!(
            u.scrub("auth failed for s3cr@t and s3cr%40t"),
            "auth failed for *** and ***"
        );
        assert!(u.has_password());
        let q = StoreUrl::parse("postgresql://gate@h/perf?password=hunter22&connect_timeout=3").unwrap();
        assert!(!q.to_string().contains("hunter22"), "{q}");
        let Kind::Postgres(pg) = &q.kind else { panic!() };
        assert_eq!(pg.endpoint, "h:5432");
        assert_eq!(pg.connect_timeout, Duration::from_secs(3));
    }

    #[test]
    fn malformed_urls_are_usage_errors_without_the_password() {
        for text in [
            "mysql://u:pw123456@h/db",
            "postgres://u:pw123456@h:notaport/db",
            "postgres://u:pw123456@h/db?sslmode=sometimes",
            "postgres://u:pw123456@h/db?connect_timeout=0",
            "perf.db",
            "",
        ] {
            let e = StoreUrl::parse(text).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{text}: {e}");
            assert!(!e.to_string().contains("pw123456"), "{text}: {e}");
        }
    }

    #[test]
    fn pgpassword_fills_a_missing_password() {
        let u = StoreUrl::parse("postgres://gate@h/db")
            .unwrap()
            .with_password_from(Some("p w&x".into()));
        let Kind::Postgres(pg) = &u.kind else { panic!() };
        assert!(pg.conn.ends_with("?password=p%20w%26x"), "{}", pg.conn);
        assert_eq!(u.scrub("x p w&x y"), "x *** y");
        assert_eq!(u.to_string(), "postgres://gate@h/db");
    }
}
