//! The store on SQLite, in a temporary folder: push, idempotence, reading back, the schema's
//! version. PostgreSQL and the binary are tested in the root's `tests/store_*.rs`.

use super::*;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(cgp_test_support::fixture(&format!("results/{name}"))).unwrap()
}

fn origin(branch: &str) -> Origin {
    Origin {
        branch: branch.to_owned(),
        kind: "push".to_owned(),
        runner: "test".to_owned(),
        ci: std::collections::BTreeMap::new(),
        file: None,
    }
}

fn url_in(dir: &tempfile::TempDir) -> StoreUrl {
    StoreUrl::parse(&format!("sqlite:{}", dir.path().join("s.db").display())).unwrap()
}

#[test]
fn a_run_reads_back_as_the_results_it_was_pushed_as_and_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_in(&dir);
    let text = fixture("mixed.json");
    let run = StoredRun::from_text(&text, origin("main")).unwrap();
    let mut store = Store::open(&url, Access::Write).unwrap();
    assert_eq!(store.push(&run).unwrap(), Pushed::Stored(run.rows.len()));
    // The same file, re-indented: the same run.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let again = StoredRun::from_text(&serde_json::to_string(&v).unwrap(), origin("other")).unwrap();
    assert_eq!(again.id, run.id);
    assert_eq!(
        store.push(&again).unwrap(),
        Pushed::Already {
            branch: "main".to_owned()
        }
    );
    let want = crate::outcome::results::parse(&text).unwrap();
    let got = store.results(&Filter::default(), true).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, want, "with samples: the results as pushed");
    let light = store.results(&Filter::default(), false).unwrap();
    let r = &light[0].1.rows;
    assert!(
        r.iter()
            .all(|r| r.sides.candidate.as_ref().is_none_or(|c| c.samples.is_empty()))
    );
    assert_eq!(r.len(), want.rows.len());
    assert_eq!(
        r.iter()
            .map(|r| r.sides.candidate.as_ref().map(|c| c.median))
            .collect::<Vec<_>>(),
        want.rows
            .iter()
            .map(|r| r.sides.candidate.as_ref().map(|c| c.median))
            .collect::<Vec<_>>()
    );
    // Filters.
    let on = |b: &str| Filter {
        branch: Some(b.to_owned()),
        ..Filter::default()
    };
    assert_eq!(store.runs(&on("main")).unwrap().len(), 1);
    assert_eq!(store.runs(&on("dev")).unwrap().len(), 0);
    let later = Filter {
        since: Some("2030-01-01T00:00:00Z".into()),
        ..Filter::default()
    };
    assert_eq!(store.runs(&later).unwrap().len(), 0);
}

#[test]
fn fields_this_version_does_not_know_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_in(&dir);
    let mut v: serde_json::Value = serde_json::from_str(&fixture("pass.json")).unwrap();
    v["rows"][0]["detectable"] = serde_json::json!(0.021);
    v["a_later_field"] = serde_json::json!({"x": 1});
    let run = StoredRun::from_text(&v.to_string(), origin("main")).unwrap();
    let mut store = Store::open(&url, Access::Write).unwrap();
    store.push(&run).unwrap();
    let info = &store.runs(&Filter::default()).unwrap()[0];
    assert!(info.header.contains("a_later_field"), "{}", info.header);
    let mut bodies = Vec::new();
    store
        .engine
        .rows(&Filter::default(), true, &mut |(_, b, _)| {
            bodies.push(b);
            Ok(())
        })
        .unwrap();
    assert!(bodies[0].contains("\"detectable\":0.021"), "{}", bodies[0]);
}

#[test]
fn a_newer_database_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_in(&dir);
    drop(Store::open(&url, Access::Write).unwrap());
    let path = dir.path().join("s.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute("UPDATE cgp_gate_schema SET version = 99", []).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    for access in [Access::Write, Access::Read] {
        let Err(e) = Store::open(&url, access) else {
            panic!("a newer store opened")
        };
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert!(e.to_string().contains("schema 99"), "{e}");
    }
    assert!(Store::migrate(&url).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file was written");
}

#[test]
fn reading_a_store_that_is_not_there_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_in(&dir);
    let Err(e) = Store::open(&url, Access::Read) else {
        panic!("opened")
    };
    assert!(matches!(e, Error::Usage(_)), "{e}");
    assert!(!dir.path().join("s.db").exists());
    let m = Store::migrate(&url).unwrap();
    assert_eq!((m.from, m.to, m.steps.len()), (0, SCHEMA_VERSION, 1));
    assert_eq!(
        Store::migrate(&url).unwrap().steps.len(),
        0,
        "a second migrate does nothing"
    );
}

#[test]
fn a_file_that_is_not_a_database_is_invalid_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.db"),
        b"this is a text file, not SQLite, long enough to have a header page",
    )
    .unwrap();
    let Err(e) = Store::open(&url_in(&dir), Access::Write) else {
        panic!("opened")
    };
    assert!(matches!(e, Error::Usage(_)), "{e}");
}

#[test]
fn runs_come_back_in_date_order_also_without_rows() {
    let dir = tempfile::tempdir().unwrap();
    let url = url_in(&dir);
    let mut store = Store::open(&url, Access::Write).unwrap();
    let v: serde_json::Value = serde_json::from_str(&fixture("pass.json")).unwrap();
    // Pushed newest first; the middle one holds no rows.
    for (day, rows) in [(3, true), (2, false), (1, true)] {
        let mut r = v.clone();
        r["date"] = format!("2026-05-0{day}T00:00:00Z").into();
        if !rows {
            r["rows"] = serde_json::json!([]);
        }
        store
            .push(&StoredRun::from_text(&r.to_string(), origin("main")).unwrap())
            .unwrap();
    }
    let got = store.results(&Filter::default(), false).unwrap();
    let dates: Vec<&str> = got.iter().map(|(i, _)| i.date.as_str()).collect();
    assert_eq!(
        dates,
        [
            "2026-05-01T00:00:00Z",
            "2026-05-02T00:00:00Z",
            "2026-05-03T00:00:00Z"
        ]
    );
    let rows: Vec<usize> = got.iter().map(|(_, r)| r.rows.len()).collect();
    assert_eq!(rows, [5, 0, 5]);
}
