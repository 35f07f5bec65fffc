//! The results store on SQLite, through the binary (docs/store.md): `store push` stores each run
//! once and a bad file stores nothing; `history` and `changes` read the same site and the same
//! change points from the store as from the files it was pushed from; `check` and `merge` push
//! what their `--json` holds; a newer database, a read-only file and a full disk are refused
//! with nothing half-written; a pusher killed mid-push leaves no part of its run. PostgreSQL:
//! tests/store_pg.rs; the PyTorch HUD's rows: tests/store_hud.rs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::bin;

/// Run the binary; (exit code, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).env_remove("CGP_GATE_STORE").output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) fn sqlite(db: &Path) -> String {
    format!("sqlite:{}", db.display())
}

/// (runs, rows) stored, read with SQLite itself.
fn counts(db: &Path) -> (i64, i64) {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let n = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    (
        n("SELECT count(*) FROM cgp_gate_runs"),
        n("SELECT count(*) FROM cgp_gate_rows"),
    )
}

/// A results file of `rows` rows (each of mixed.json's rows under `n` target names), dated `date`.
pub(crate) fn big_results(dir: &Path, rows: usize, date: &str) -> PathBuf {
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::fixture("results/mixed.json")).unwrap(),
    )
    .unwrap();
    let proto = r["rows"].as_array().unwrap().clone();
    r["date"] = date.into();
    r["rows"] = (0..rows)
        .map(|i| {
            let mut row = proto[i % proto.len()].clone();
            row["target"] = format!("t{}", i / proto.len()).into();
            row
        })
        .collect();
    let p = dir.join(format!("big-{rows}-{date}.json").replace(':', "-"));
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    p
}

#[test]
fn runs_are_stored_once_and_a_bad_file_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let url = sqlite(&db);
    let pass = crate::support::fixture("results/pass.json");
    let mixed = crate::support::fixture("results/mixed.json");
    let (code, out, err) = run(&[
        "store",
        "push",
        "--store",
        &url,
        "--branch",
        "main",
        pass.to_str().unwrap(),
        mixed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 run(s) stored, 0 already there"), "{out}");
    assert_eq!(counts(&db), (2, 14));
    // The same runs again, one re-indented: stored once.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&pass).unwrap()).unwrap();
    let compact = dir.path().join("pass-compact.json");
    std::fs::write(&compact, v.to_string()).unwrap();
    let (code, out, _) = run(&[
        "store",
        "push",
        "--store",
        &url,
        compact.to_str().unwrap(),
        mixed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("0 run(s) stored, 2 already there"), "{out}");
    assert!(out.contains("already in"), "{out}");
    assert_eq!(counts(&db), (2, 14));
    // A results file of a newer schema among good ones: exit 2 naming it, nothing stored.
    let mut newer = v.clone();
    newer["schema_version"] = 99.into();
    newer["date"] = "2026-04-01T00:00:00Z".into();
    let bad = dir.path().join("newer.json");
    std::fs::write(&bad, newer.to_string()).unwrap();
    let good = big_results(dir.path(), 20, "2026-05-01T00:00:00Z");
    let (code, _, err) = run(&[
        "store",
        "push",
        "--store",
        &url,
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("newer.json") && err.contains("nothing was stored"),
        "{err}"
    );
    assert_eq!(counts(&db), (2, 14));
    // Not JSON at all.
    std::fs::write(&bad, "{ not json").unwrap();
    let (code, _, err) = run(&["store", "push", "--store", &url, bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(counts(&db), (2, 14));
    // A malformed URL: exit 2 before any file is read.
    for bad_url in ["mysql://u:pw@h/db", "sqlite:", "postgres://u:hunter2@h:port/db"] {
        let (code, _, err) = run(&["store", "push", "--store", bad_url, pass.to_str().unwrap()]);
        assert_eq!(code, 2, "{bad_url}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    // `store runs` lists them, oldest first.
    let (code, out, _) = run(&["store", "runs", "--store", &url]);
    assert_eq!(code, 0);
    assert!(out.contains("2 run(s) in sqlite:"), "{out}");
    assert_eq!(out.matches(" main ").count(), 2, "{out}");
}

/// `changes --json` with each input's path replaced by its place, so that files and store
/// runs (named `store:<id>`) compare.
fn without_paths(mut report: Value) -> Value {
    let paths: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    for (i, f) in report["files"].as_array_mut().unwrap().iter_mut().enumerate() {
        f["path"] = format!("#{i}").into();
    }
    let mut text = report["notes"].to_string();
    for (i, p) in paths.iter().enumerate() {
        text = text.replace(p.as_str(), &format!("#{i}"));
    }
    report["notes"] = serde_json::from_str(&text).unwrap();
    report
}

/// The site and the change points of `files` and of `store` (read with `read`): equal.
pub(crate) fn same_site_and_changes(files: &[PathBuf], read: &[&str], dir: &Path) -> (Value, usize) {
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let (a, b) = (dir.join("site-files"), dir.join("site-store"));
    let mut args = vec!["history", "--out", a.to_str().unwrap()];
    args.extend(&names);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{out}{err}");
    let mut args = vec!["history", "--out", b.to_str().unwrap()];
    args.extend(read);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{out}{err}");
    let (pa, pb) = (
        std::fs::read_to_string(a.join("index.html")).unwrap(),
        std::fs::read_to_string(b.join("index.html")).unwrap(),
    );
    assert!(pa == pb, "the site from the store differs from the files'");
    let (ja, jb) = (dir.join("changes-files.json"), dir.join("changes-store.json"));
    let mut args = vec!["changes", "--no-fail", "--json", ja.to_str().unwrap()];
    args.extend(&names);
    assert_eq!(run(&args).0, 0);
    let mut args = vec!["changes", "--no-fail", "--json", jb.to_str().unwrap()];
    args.extend(read);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{out}{err}");
    let read_json =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let (ca, cb) = (without_paths(read_json(&ja)), without_paths(read_json(&jb)));
    assert_eq!(ca, cb, "the change points from the store differ from the files'");
    let shifts = ca["rows"].as_array().unwrap().len();
    (cb, shifts)
}

#[test]
fn history_and_changes_read_the_same_from_the_store_as_from_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = crate::history_site::history(dir.path(), &|_| {});
    let db = dir.path().join("h.db");
    let url = sqlite(&db);
    let mut args = vec!["store", "push", "--store", &url, "--branch", "main"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    assert_eq!(run(&args).0, 0);
    // A run of another branch is not read with --branch main.
    let other = big_results(dir.path(), 10, "2026-03-10T00:00:00Z");
    assert_eq!(
        run(&[
            "store",
            "push",
            "--store",
            &url,
            "--branch",
            "dev",
            other.to_str().unwrap()
        ])
        .0,
        0
    );
    let (report, shifts) = same_site_and_changes(&files, &["--store", &url, "--branch", "main"], dir.path());
    assert!(shifts >= 1, "the planted step is found: {report}");
    assert_eq!(report["files"].as_array().unwrap().len(), 30);
    // --since keeps the runs from that day on: the last 10 of the 30 daily runs.
    let (code, out, err) = run(&[
        "changes",
        "--no-fail",
        "--store",
        &url,
        "--branch",
        "main",
        "--since",
        "2026-03-21",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("10 results"), "{out}");
    // A branch with no run is a clear error.
    let (code, _, err) = run(&["changes", "--store", &url, "--branch", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no run on branch `nope`"), "{err}");
    // --store and files together are refused.
    let (code, _, _) = run(&["changes", "--store", &url, files[0].to_str().unwrap()]);
    assert_eq!(code, 2);
}

#[test]
fn the_shards_of_a_commit_read_as_their_merge() {
    let dir = tempfile::tempdir().unwrap();
    let files = crate::history_site::history(dir.path(), &|_| {});
    let db = dir.path().join("s.db");
    let url = sqlite(&db);
    // Run 7 arrives as two shards (its rows split in two), and no merged run.
    let whole: Value = serde_json::from_str(&std::fs::read_to_string(&files[7]).unwrap()).unwrap();
    let rows = whole["rows"].as_array().unwrap();
    let mut shard_files = Vec::new();
    for (k, part) in [&rows[..rows.len() / 2], &rows[rows.len() / 2..]]
        .iter()
        .enumerate()
    {
        let mut s = whole.clone();
        s["shard"] = format!("{}/2", k + 1).into();
        s["rows"] = Value::Array(part.to_vec());
        let p = dir.path().join(format!("shard-{k}.json"));
        std::fs::write(&p, s.to_string()).unwrap();
        shard_files.push(p);
    }
    let mut args = vec!["store", "push", "--store", &url, "--branch", "main"];
    args.extend(
        files
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 7)
            .map(|(_, f)| f.to_str().unwrap()),
    );
    args.extend(shard_files.iter().map(|f| f.to_str().unwrap()));
    assert_eq!(run(&args).0, 0);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let mut args = vec!["history", "--out", a.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    assert_eq!(run(&args).0, 0);
    let (code, out, err) = run(&["history", "--store", &url, "--out", b.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("30 results"), "{out}");
    let data =
        |d: &Path| crate::history_site::data_of(&std::fs::read_to_string(d.join("index.html")).unwrap());
    assert_eq!(
        data(&a)["series"],
        data(&b)["series"],
        "the merged shards draw as the whole run"
    );
}

#[test]
fn check_and_merge_push_what_their_json_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let url = sqlite(&db);
    let mut shards = Vec::new();
    for k in ["1/2", "2/2"] {
        let json = dir.path().join(format!("shard-{}.json", &k[..1]));
        let (code, _, err) = run(&[
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-same",
            "--baselines",
            "examples/baselines",
            "--shard",
            k,
            "--json",
            json.to_str().unwrap(),
            "--store",
            &url,
            "--branch",
            "pr-7",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("stored run") && err.contains("branch pr-7"), "{err}");
        shards.push(json);
    }
    assert_eq!(counts(&db).0, 2);
    // A check's --json is the run it pushed: pushing the file stores nothing.
    let (code, out, _) = run(&["store", "push", "--store", &url, shards[0].to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("0 run(s) stored, 1 already there"), "{out}");
    // merge pushes the merged run (the store from CGP_GATE_STORE), once.
    for expect in ["stored run", "already in"] {
        let out = bin()
            .args(["merge", "--branch", "pr-7"])
            .args(&shards)
            .env("CGP_GATE_STORE", &url)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains(expect), "{err}");
    }
    // ab pushes its run too, regression and all (exit 1: the real A/B recording).
    let ab_json = dir.path().join("ab.json");
    let (code, _, err) = run(&[
        "ab",
        "--spec",
        "examples/recordings/h100/check.yaml",
        "--replay",
        "examples/recordings/h100-ab",
        "--json",
        ab_json.to_str().unwrap(),
        "--store",
        &url,
        "--branch",
        "pr-7",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("stored run"), "{err}");
    let (code, out, _) = run(&["store", "runs", "--store", &url]);
    assert_eq!(code, 0);
    assert!(
        out.contains(" merge ")
            && out.contains(" check ")
            && out.contains(" ab ")
            && out.contains("4 run(s)"),
        "{out}"
    );
    // The history reads the merged run for the commit, not its shards besides it (and the ab run).
    let (code, out, err) = run(&["changes", "--no-fail", "--store", &url, "--branch", "pr-7"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 results"), "{out}");
    // A malformed store stops check before it measures anything.
    let (code, out, err) = run(&[
        "check",
        "--spec",
        "examples/cgp-gate.yaml",
        "--replay",
        "examples/recordings/pr-same",
        "--baselines",
        "examples/baselines",
        "--store",
        "sqlight:x.db",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--store: the store is a `sqlight:` address"),
        "{err}"
    );
    assert!(out.is_empty(), "check measured before refusing the store: {out}");
}

#[test]
fn baseline_update_from_the_store_writes_what_from_the_file_writes() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite(&dir.path().join("b.db"));
    let json = dir.path().join("r.json");
    let spec = "examples/cgp-gate.yaml";
    let (code, _, err) = run(&[
        "check",
        "--spec",
        spec,
        "--replay",
        "examples/recordings/pr-same",
        "--baselines",
        "examples/baselines",
        "--json",
        json.to_str().unwrap(),
        "--store",
        &url,
        "--branch",
        "main",
    ]);
    assert_eq!(code, 0, "{err}");
    let (a, b) = (dir.path().join("from-file"), dir.path().join("from-store"));
    let (code, _, err) = run(&[
        "baseline",
        "update",
        "--spec",
        spec,
        "--from",
        json.to_str().unwrap(),
        "--baselines",
        a.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&[
        "baseline",
        "update",
        "--spec",
        spec,
        "--from-store",
        "--store",
        &url,
        "--branch",
        "main",
        "--baselines",
        b.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("--from-store: r.json") || err.contains("--from-store: "),
        "{err}"
    );
    let files = |d: &Path| {
        let mut v = Vec::new();
        for gpu in std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
        {
            for f in std::fs::read_dir(gpu.path()).unwrap().flatten() {
                let mut j: Value = serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap();
                // When the update ran, not what it stored.
                j["date"] = Value::Null;
                for e in j["entries"].as_array_mut().unwrap() {
                    for g in e["history"].as_array_mut().unwrap() {
                        g["date"] = Value::Null;
                    }
                }
                v.push((f.file_name(), j));
            }
        }
        v.sort_by(|x, y| x.0.cmp(&y.0));
        v
    };
    let (fa, fb) = (files(&a), files(&b));
    assert!(!fa.is_empty());
    assert_eq!(fa, fb, "the baselines from the store differ from the file's");
    // No run on that branch: a clear error, nothing written.
    let c = dir.path().join("none");
    let (code, _, err) = run(&[
        "baseline",
        "update",
        "--spec",
        spec,
        "--from-store",
        "--store",
        &url,
        "--branch",
        "dev",
        "--baselines",
        c.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no run of") && err.contains("`dev`"), "{err}");
    assert!(!c.exists());
}

/// `calibrate --store` on the REAL H100 A/A recording: its job drift comes from the store's runs
/// exactly as from the baselines `baseline update --from` of the same runs wrote (seven runs of
/// one real check, each candidate's samples scaled by a planted +-1.5 % job drift).
#[test]
fn calibrate_reads_the_job_drift_from_the_store_as_from_the_baselines_of_the_same_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "examples/recordings/h100/check.yaml";
    let rec = "examples/recordings/h100/aa-live";
    let base = dir.path().join("base.json");
    let (code, _, err) = run(&[
        "check",
        "--spec",
        spec,
        "--replay",
        rec,
        "--baselines",
        "examples/baselines-h100",
        "--json",
        base.to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let real: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let url = sqlite(&dir.path().join("cal.db"));
    let baselines = dir.path().join("baselines");
    for (i, k) in [1.015, 0.985, 1.015, 0.985, 1.015, 0.985, 1.0].iter().enumerate() {
        let mut r = real.clone();
        r["date"] = format!("2026-04-{:02}T12:00:00Z", i + 1).into();
        r["git_commit"] = format!("{i:040x}").into();
        // Times drift; counts (registers, bytes) stay what they are.
        for row in r["rows"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .filter(|r| r["unit"] == "ns")
        {
            if let Some(s) = row["candidate"]["samples"].as_array_mut() {
                for x in s.iter_mut() {
                    *x = (x.as_f64().unwrap() * k).into();
                }
            }
            if let Some(m) = row["candidate"]["median"].as_f64() {
                row["candidate"]["median"] = (m * k).into();
            }
        }
        let p = dir.path().join(format!("run-{i}.json"));
        std::fs::write(&p, r.to_string()).unwrap();
        assert_eq!(
            run(&[
                "store",
                "push",
                "--store",
                &url,
                "--branch",
                "main",
                p.to_str().unwrap()
            ])
            .0,
            0
        );
        let (code, _, err) = run(&[
            "baseline",
            "update",
            "--spec",
            spec,
            "--from",
            p.to_str().unwrap(),
            "--accept-regressions",
            "--baselines",
            baselines.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let calibrate = |extra: &[&str], name: &str| -> Value {
        let json = dir.path().join(name);
        let mut args = vec![
            "calibrate",
            "--spec",
            spec,
            "--replay",
            rec,
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{out}{err}");
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let from_files = calibrate(&["--baselines", baselines.to_str().unwrap()], "a.json");
    let from_store = calibrate(&["--store", &url, "--branch", "main"], "b.json");
    assert_eq!(
        from_files["rows"], from_store["rows"],
        "calibrate --store differs from --baselines"
    );
    let row = from_store["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["target"] == "matmul" && r["size"] == "n=1024" && r["metric"] == "gpu__time_duration.sum")
        .unwrap();
    assert!(
        row["job_drift"].as_f64().unwrap() > 0.005,
        "the planted drift is found: {row}"
    );
    assert_eq!(row["job_drift_medians"], 7, "{row}");
}

/// `settings.store` names the store a spec's runs go to; a password in it is refused with the
/// spec's line and column (a spec is committed).
#[test]
fn the_spec_names_the_store_but_never_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::support::root().join("examples/cgp-gate.yaml")).unwrap();
    let db = dir.path().join("spec.db");
    let spec = dir.path().join("cgp-gate.yaml");
    let with = |store: &str| {
        text.replacen(
            "version: 1\n",
            &format!("version: 1\nsettings:\n  store: {store}\n"),
            1,
        )
    };
    std::fs::write(&spec, with(&format!("sqlite:{}", db.display()))).unwrap();
    let (code, _, err) = run(&[
        "check",
        "--spec",
        spec.to_str().unwrap(),
        "--replay",
        "examples/recordings/pr-same",
        "--baselines",
        "examples/baselines",
        "--branch",
        "main",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("stored run") && err.contains(&db.display().to_string()),
        "{err}"
    );
    std::fs::write(&spec, with("postgres://gate:s3cret-pw@db.example:5432/perf")).unwrap();
    let (code, out, err) = run(&["validate", "--spec", spec.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    let all = out + &err;
    assert!(all.contains("holds a password") && all.contains(":5:"), "{all}");
    assert!(!all.contains("s3cret-pw"), "{all}");
}
