//! The results store on a real PostgreSQL (Debian's server, started and stopped by the test:
//! `support::pg::TestPostgres`), through the binary: runs stored once and read back as the files
//! read (the same site and change points); eight pushers at once into a new database, each run
//! once; a pusher killed in the middle of its transaction leaves nothing; a newer schema is
//! refused before any write; TLS when the URL asks for it, the certificate verified; a wrong
//! password, a closed port and a server that never answers are exit 3 naming host and port,
//! never the password. The same eight pushers into one SQLite file run here too.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::store_cli::{big_results, run, same_site_and_changes, sqlite};
use crate::support::bin_std;
use crate::support::pg::TestPostgres;

const T: &str = "store_pg";

/// Every message of a run: never the password.
fn no_password(text: &str) {
    assert!(
        !text.contains(TestPostgres::PASSWORD),
        "the password was printed: {text}"
    );
}

/// Eight pushers at once, into a store none of them has made yet: each pushes the three
/// shared runs and one of its own; every run is stored once.
fn eight_pushers(url: &str, dir: &Path) -> Vec<String> {
    let shared: Vec<PathBuf> = (0..3)
        .map(|i| big_results(dir, 40, &format!("2026-07-0{}T00:00:00Z", i + 1)))
        .collect();
    let children: Vec<std::process::Child> = (0..8)
        .map(|k| {
            let own = big_results(dir, 20 + k, &format!("2026-08-0{}T00:00:00Z", k + 1));
            bin_std()
                .args(["store", "push", "--store", url, "--branch", "main"])
                .args(&shared)
                .arg(own)
                .env_remove("CGP_GATE_STORE")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut said = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{text}");
        said.push(text);
    }
    let stored: usize = said.iter().map(|t| t.matches(": stored run ").count()).sum();
    assert_eq!(stored, 3 + 8, "each run stored exactly once: {said:?}");
    let (code, out, err) = run(&["store", "runs", "--store", url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("11 run(s)"), "{out}");
    said
}

#[test]
fn postgres_stores_each_run_once_and_reads_as_the_files_read() {
    let Some(pg) = TestPostgres::start(
        &format!("{T}::postgres_stores_each_run_once_and_reads_as_the_files_read"),
        &[],
        None,
        &[],
    ) else {
        return;
    };
    pg.psql("postgres", "CREATE DATABASE perf");
    pg.psql("postgres", "CREATE DATABASE shards");
    let dir = tempfile::tempdir().unwrap();
    let said = eight_pushers(&pg.url("shards", ""), dir.path());
    said.iter().for_each(|t| no_password(t));
    assert_eq!(pg.psql("shards", "SELECT count(*) FROM cgp_gate_runs"), "11");
    assert_eq!(pg.psql("shards", "SELECT version FROM cgp_gate_schema"), "1");
    // The same eight into one SQLite file.
    eight_pushers(&sqlite(&dir.path().join("shards.db")), dir.path());

    let files = crate::history_site::history(dir.path(), &|_| {});
    let url = pg.url("perf", "");
    let mut args = vec!["store", "push", "--store", &url, "--branch", "main"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    no_password(&(out.clone() + &err));
    let (code, out, _) = run(&args);
    assert_eq!(code, 0);
    assert!(out.contains("0 run(s) stored, 30 already there"), "{out}");
    let (report, shifts) = same_site_and_changes(&files, &["--store", &url, "--branch", "main"], dir.path());
    assert!(shifts >= 1, "{report}");
    // The password from PGPASSWORD, the URL without it.
    let out = crate::support::bin()
        .args([
            "changes",
            "--no-fail",
            "--store",
            &format!("postgres://{}@127.0.0.1:{}/perf", TestPostgres::USER, pg.port),
        ])
        .env("PGPASSWORD", TestPostgres::PASSWORD)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("30 results"));
}

/// Migrations at once into new databases: each of eight `store migrate` waits for the one
/// that creates the tables and then sees them (a migration that waited inside its transaction
/// saw the catalog from before the wait and created the tables again: "relation
/// cgp_gate_schema already exists", seen once in CI with eight pushers).
#[test]
fn postgres_migrations_at_once_into_new_databases_all_succeed() {
    let Some(pg) = TestPostgres::start(
        &format!("{T}::postgres_migrations_at_once_into_new_databases_all_succeed"),
        &[],
        None,
        &[],
    ) else {
        return;
    };
    for db in 0..6 {
        let name = format!("fresh{db}");
        pg.psql("postgres", &format!("CREATE DATABASE {name}"));
        let url = pg.url(&name, "");
        let children: Vec<std::process::Child> = (0..8)
            .map(|_| {
                bin_std()
                    .args(["store", "migrate", "--store", &url])
                    .env_remove("CGP_GATE_STORE")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        }
        assert_eq!(pg.psql(&name, "SELECT version FROM cgp_gate_schema"), "1");
    }
}

/// A CA and a server certificate for 127.0.0.1 (openssl's command line).
fn certificates(dir: &Path) -> Option<(Vec<u8>, Vec<u8>, PathBuf)> {
    let sh = |cmd: &str| {
        std::process::Command::new("bash")
            .args(["-c", cmd])
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ok = sh(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
                 -days 2 -subj /CN=cgp-store-test-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign",
    ) && sh(
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
                 -subj /CN=127.0.0.1",
    ) && sh(
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > ext && \
                 openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile ext",
    );
    ok.then(|| {
        (
            std::fs::read(dir.join("server.crt")).unwrap(),
            std::fs::read(dir.join("server.key")).unwrap(),
            dir.join("ca.pem"),
        )
    })
}

/// A server that takes connections and never answers.
fn silent_server() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

#[test]
fn tls_and_failures_to_connect_name_the_server_never_the_password() {
    let test = format!("{T}::tls_and_failures_to_connect_name_the_server_never_the_password");
    let dir = tempfile::tempdir().unwrap();
    let Some((crt, key, ca)) = certificates(dir.path()) else {
        crate::support::skip(
            &test,
            "openssl could not make the test's certificates (Debian's openssl package)",
        );
        return;
    };
    let hba = "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n";
    let conf = [
        "ssl = on",
        "ssl_cert_file = 'server.crt'",
        "ssl_key_file = 'server.key'",
    ];
    let Some(pg) = TestPostgres::start(
        &test,
        &conf,
        Some(hba),
        &[("server.crt", crt), ("server.key", key)],
    ) else {
        return;
    };
    let pass = crate::support::fixture("results/pass.json");
    let push = |url: &str| run(&["store", "push", "--store", url, pass.to_str().unwrap()]);
    let endpoint = format!("127.0.0.1:{}", pg.port);
    // TLS with the server's CA: stored.
    let tls = pg.url(
        "postgres",
        &format!("sslmode=require&sslrootcert={}", ca.display()),
    );
    let (code, out, err) = push(&tls);
    assert_eq!(code, 0, "{err}");
    no_password(&(out + &err));
    // Without TLS the server refuses (hostnossl reject); without the CA the certificate is not
    // trusted: exit 3, naming the server.
    for (url, why) in [
        (pg.url("postgres", ""), "pg_hba.conf rejects connection"),
        (pg.url("postgres", "sslmode=require"), "certificate"),
        (
            pg.url(
                "postgres",
                &format!("sslmode=require&sslrootcert={}", ca.display()),
            )
            .replace(TestPostgres::PASSWORD, "not-the-password-9"),
            "password authentication failed",
        ),
    ] {
        let (code, out, err) = push(&url);
        assert_eq!(code, 3, "{url}: {err}");
        assert!(err.contains(&endpoint) && err.contains(why), "{why}: {err}");
        no_password(&(out + &err));
        assert!(!err.contains("not-the-password-9"), "{err}");
    }
    // Nothing listens: exit 3 at once. A server that never answers: exit 3 within the timeout.
    let (l, closed) = silent_server();
    drop(l);
    let (code, _, err) = push(&format!(
        "postgres://cgp:{}@127.0.0.1:{closed}/x",
        TestPostgres::PASSWORD
    ));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&format!("127.0.0.1:{closed}")), "{err}");
    no_password(&err);
    let (_l, silent) = silent_server();
    let start = std::time::Instant::now();
    let (code, _, err) = push(&format!(
        "postgres://cgp:{}@127.0.0.1:{silent}/x?connect_timeout=1",
        TestPostgres::PASSWORD
    ));
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{silent}")) && err.contains("did not answer within 1 s"),
        "{err}"
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    no_password(&err);
}

#[test]
fn postgres_kill_mid_push_and_a_newer_schema_write_nothing() {
    let test = format!("{T}::postgres_kill_mid_push_and_a_newer_schema_write_nothing");
    let Some(pg) = TestPostgres::start(&test, &[], None, &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = pg.url("postgres", "");
    let pass = crate::support::fixture("results/pass.json");
    assert_eq!(
        run(&["store", "push", "--store", &url, pass.to_str().unwrap()]).0,
        0
    );
    let counts = || {
        pg.psql(
            "postgres",
            "SELECT (SELECT count(*) FROM cgp_gate_runs) || ' ' || (SELECT count(*) FROM cgp_gate_rows)",
        )
    };
    assert_eq!(counts(), "1 5");
    // Hold the rows table: the pusher inserts its run, then waits inside its transaction.
    let mut holder = pg
        .psql_command("postgres")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut hold = holder.stdin.take().unwrap();
    writeln!(
        hold,
        "BEGIN; LOCK TABLE cgp_gate_rows IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);"
    )
    .unwrap();
    hold.flush().unwrap();
    let more = big_results(dir.path(), 300, "2026-06-01T00:00:00Z");
    let mut child = bin_std()
        .args(["store", "push", "--store", &url])
        .arg(&more)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Mid-push: its transaction has written (it has an xid) and waits for the lock.
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cgp-gate' \
                   AND backend_xid IS NOT NULL AND wait_event_type = 'Lock'";
    let mut seen = false;
    for _ in 0..600 {
        if pg.psql("postgres", waiting) == "1" {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(seen, "the pusher never got into its transaction: {}", pg.log());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = child.wait();
    // End the holder's session (its backend sleeps; killing psql alone would leave it asleep).
    pg.psql(
        "postgres",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'psql' AND pid <> pg_backend_pid()",
    );
    drop(hold);
    let _ = holder.wait();
    // The server sees the dead client and rolls its transaction back.
    let mut left = String::new();
    for _ in 0..200 {
        left = counts();
        if pg.psql(
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cgp-gate'",
        ) == "0"
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(left, "1 5", "the killed push left a part of its run");
    let (code, _, err) = run(&["store", "push", "--store", &url, more.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(), "2 305");
    // A database of a newer cgp-gate: refused before any write.
    pg.psql("postgres", "UPDATE cgp_gate_schema SET version = 5");
    let other = big_results(dir.path(), 10, "2026-06-02T00:00:00Z");
    let (code, _, err) = run(&["store", "push", "--store", &url, other.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("schema 5, written by a newer cgp-gate"), "{err}");
    no_password(&err);
    assert_eq!(counts(), "2 305");
}
