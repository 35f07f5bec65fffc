//! A real PostgreSQL for a test: Debian's server binaries (`.ci/setup` installs the
//! `postgresql` package), a cluster made by `initdb` in a temporary folder, listening on a private
//! port of 127.0.0.1 and a socket in that folder, stopped (`pg_ctl stop -m immediate`) when the
//! value is dropped, also when the test panics. As root, the server runs as the `postgres` user
//! (PostgreSQL refuses to run as root), else as `nobody`.
//!
//! Logins over TCP need the password ([`TestPostgres::PASSWORD`], scram-sha-256); the socket
//! trusts the superuser, for [`TestPostgres::psql`].

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A running server.
pub struct TestPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    owner: Option<(u32, u32)>,
    pub port: u16,
}

/// Where Debian's server binaries are: `initdb` on `PATH`, else the newest
/// `/usr/lib/postgresql/N/bin`.
fn server_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    }) {
        return Some(p);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let p = e.ok()?.path();
            let v: u32 = p.file_name()?.to_str()?.parse().ok()?;
            p.join("bin/initdb").is_file().then(|| (v, p.join("bin")))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}

/// The uid and gid of `name` in /etc/passwd.
fn user(name: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&name) && f.len() > 3).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn chown_all(path: &Path, uid: u32, gid: u32) {
    let _ = std::os::unix::fs::chown(path, Some(uid), Some(gid));
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            chown_all(&e.path(), uid, gid);
        }
    }
}

impl TestPostgres {
    /// The superuser's name and its password (for the tests' own server; no secret).
    pub const USER: &'static str = "cgp";
    pub const PASSWORD: &'static str = "pg-test-Kx7qZ";

    /// Start a server; `None` (after a `SKIPPED` line; a failure under CI) when PostgreSQL is not
    /// installed. `conf` lines go into postgresql.conf, `hba` (when given) replaces pg_hba.conf,
    /// `files` (name, bytes) are written into the data folder (mode 0600: a TLS key and its
    /// certificate, named relative to it in `conf`).
    pub fn start(test: &str, conf: &[&str], hba: Option<&str>, files: &[(&str, Vec<u8>)]) -> Option<Self> {
        let Some(bin) = server_bin() else {
            super::skip(
                test,
                "PostgreSQL's server (initdb, pg_ctl) is not installed; run `bash .ci/setup` (Debian's postgresql package)",
            );
            return None;
        };
        let dir = tempfile::Builder::new().prefix("cgp-pg-").tempdir().unwrap();
        let owner = is_root().then(|| {
            user("postgres")
                .or_else(|| user("nobody"))
                .expect("a postgres or nobody user")
        });
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, Self::PASSWORD).unwrap();
        if let Some((uid, gid)) = owner {
            chown_all(dir.path(), uid, gid);
        }
        let data = dir.path().join("data");
        let out = Self::as_owner(owner, Command::new(bin.join("initdb")))
            .args(["-D"])
            .arg(&data)
            .args([
                "-U",
                Self::USER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-N",
                "-E",
                "UTF8",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut lines = vec![
            format!("port = {port}"),
            "listen_addresses = '127.0.0.1'".to_owned(),
            format!("unix_socket_directories = '{}'", dir.path().display()),
            "fsync = off".to_owned(),
            "shared_buffers = 32MB".to_owned(),
            "max_connections = 40".to_owned(),
        ];
        lines.extend(conf.iter().map(|s| (*s).to_owned()));
        let conf_path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).unwrap();
        text.push('\n');
        text.push_str(&lines.join("\n"));
        text.push('\n');
        std::fs::write(&conf_path, text).unwrap();
        if let Some(h) = hba {
            std::fs::write(data.join("pg_hba.conf"), h).unwrap();
        }
        for (name, bytes) in files {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::write(data.join(name), bytes).unwrap();
            std::fs::set_permissions(data.join(name), std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        if let Some((uid, gid)) = owner {
            chown_all(dir.path(), uid, gid);
        }
        let server = Self {
            dir,
            bin,
            owner,
            port,
        };
        let out = server
            .pg_ctl()
            .args(["-w", "-t", "60", "-l"])
            .arg(server.dir.path().join("log"))
            .arg("start")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(server.dir.path().join("log")).unwrap_or_default()
        );
        Some(server)
    }

    fn as_owner(owner: Option<(u32, u32)>, mut c: Command) -> Command {
        if let Some((uid, gid)) = owner {
            c.uid(uid).gid(gid);
        }
        c.env_remove("PGPASSWORD");
        c
    }

    fn pg_ctl(&self) -> Command {
        let mut c = Self::as_owner(self.owner, Command::new(self.bin.join("pg_ctl")));
        c.arg("-D").arg(self.dir.path().join("data"));
        c
    }

    /// The folder of the server (its certificates go here).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `postgres://cgp:PASSWORD@127.0.0.1:PORT/DB` (with `query` after `?` when not empty).
    pub fn url(&self, db: &str, query: &str) -> String {
        let q = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{db}{q}",
            Self::USER,
            Self::PASSWORD,
            self.port
        )
    }

    /// psql on the socket as the superuser, unaligned, values only, stopping at an error.
    pub fn psql_command(&self, db: &str) -> Command {
        let psql = Some(self.bin.join("psql"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("psql"));
        let mut c = Command::new(psql);
        c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.dir.path())
            .args(["-p", &self.port.to_string(), "-U", Self::USER, "-d", db])
            .env_remove("PGPASSWORD");
        c
    }

    /// Run SQL through the socket as the superuser (psql, one value per line); panics on failure.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = self.psql_command(db).args(["-c", sql]).output().unwrap();
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl().args(["-m", "immediate", "-w", "stop"]).output();
    }
}
