//! Faults of the SQLite store, through the binary: a database of a newer cgp-gate is refused
//! before anything is written (exit 2); a read-only file and a full disk are exit 3 with nothing
//! half-written; a pusher killed with SIGKILL in the middle of its transaction leaves nothing of
//! its run, and the next push stores it whole.

use std::path::{Path, PathBuf};

use crate::store_cli::{big_results, run, sqlite};
use crate::support::bin_std;

fn count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap()
}

fn runs(db: &Path) -> (i64, i64) {
    (
        count(db, "SELECT count(*) FROM cgp_gate_runs"),
        count(db, "SELECT count(*) FROM cgp_gate_rows"),
    )
}

/// The database's own check of itself.
fn intact(db: &Path) -> bool {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .unwrap()
        == "ok"
}

/// A store holding one run of 5 rows.
fn one_run(dir: &Path) -> PathBuf {
    let db = dir.join("s.db");
    let pass = crate::support::fixture("results/pass.json");
    let (code, _, err) = run(&["store", "push", "--store", &sqlite(&db), pass.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    db
}

#[test]
fn a_newer_database_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_run(dir.path());
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute("UPDATE cgp_gate_schema SET version = 7", []).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let more = big_results(dir.path(), 30, "2026-06-01T00:00:00Z");
    let url = sqlite(&db);
    let out_dir = dir.path().join("site");
    for args in [
        vec!["store", "push", "--store", &url, more.to_str().unwrap()],
        vec!["store", "migrate", "--store", &url],
        vec!["changes", "--store", &url],
        vec!["history", "--store", &url, "--out", out_dir.to_str().unwrap()],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("schema 7, written by a newer cgp-gate"), "{err}");
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database file was written"
    );
    assert!(!out_dir.exists(), "history made its folder");
    assert_eq!(runs(&db), (1, 5));
}

/// `cgp-gate ARGS` as another user when this is root (root writes any file), else as this one.
fn as_unprivileged(args: &[&str]) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt as _;
    let mut c = bin_std();
    c.args(args).env_remove("CGP_GATE_STORE");
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if root {
        c.uid(65534).gid(65534);
    }
    c.output().ok()
}

#[test]
fn a_read_only_store_is_exit_3_and_keeps_what_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_run(dir.path());
    let more = big_results(dir.path(), 30, "2026-06-01T00:00:00Z");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&more, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let Some(out) = as_unprivileged(&["store", "push", "--store", &sqlite(&db), more.to_str().unwrap()])
    else {
        crate::support::skip(
            "store_faults::a_read_only_store_is_exit_3_and_keeps_what_it_had",
            "the binary could not be run as an unprivileged user",
        );
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("nothing of this run was stored"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(runs(&db), (1, 5));
}

/// A tmpfs of 1 MiB at `at` while the value lives (root only; `None` where mounting is not
/// allowed).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path) -> Option<Self> {
        std::fs::create_dir_all(at).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "cgp-store-test"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Self(at.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_exit_3_and_leaves_the_store_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_run(dir.path());
    let more = big_results(dir.path(), 3000, "2026-06-01T00:00:00Z");
    // A file-size limit (`ulimit -f`, any user): writes past it fail as on a full disk.
    let limited = bin_std()
        .get_program()
        .to_str()
        .map(|b| {
            format!(
                "trap '' XFSZ; ulimit -f 400; exec {b} store push --store sqlite:{} {}",
                db.display(),
                more.display()
            )
        })
        .unwrap();
    let out = std::process::Command::new("bash")
        .args(["-c", &limited])
        .current_dir(crate::support::root())
        .env_remove("CGP_GATE_STORE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("nothing of this run was stored") || err.contains("cannot write"),
        "{err}"
    );
    assert!(intact(&db));
    assert_eq!(runs(&db), (1, 5), "a part of the run was stored");
    // A real full disk, where this machine lets a test mount one.
    let Some(disk) = SmallDisk::mount(&dir.path().join("small")) else {
        crate::support::skip(
            "store_faults::a_full_disk_is_exit_3_and_leaves_the_store_whole (its tmpfs part)",
            "mounting a 1 MiB tmpfs is not allowed here; the file-size limit part ran",
        );
        return;
    };
    let small = disk.0.join("s.db");
    std::fs::copy(&db, &small).unwrap();
    let (code, _, err) = run(&[
        "store",
        "push",
        "--store",
        &sqlite(&small),
        more.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("the disk is full") || err.contains("cannot write"),
        "{err}"
    );
    assert!(intact(&small));
    assert_eq!(runs(&small), (1, 5));
}

#[test]
fn a_pusher_killed_mid_push_leaves_nothing_of_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_run(dir.path());
    let more = big_results(dir.path(), 4_000, "2026-06-01T00:00:00Z");
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let mut child = bin_std()
        .args(["store", "push", "--store", &sqlite(&db)])
        .arg(&more)
        .env_remove("CGP_GATE_STORE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Its transaction is open and writing once the log grows past half a megabyte (the run's
    // pages spill from SQLite's cache into the WAL before the commit).
    let mut seen = 0;
    for _ in 0..6000 {
        seen = std::fs::metadata(&wal).map_or(0, |m| m.len());
        if seen > 512 << 10 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the push ended before it could be killed (WAL {seen} bytes)"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = child.wait();
    assert!(intact(&db));
    assert_eq!(runs(&db), (1, 5), "the killed push left a part of its run");
    // The next push stores the run whole.
    let (code, out, err) = run(&["store", "push", "--store", &sqlite(&db), more.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 run(s) stored"), "{out}");
    assert_eq!(runs(&db), (2, 4_005));
}
