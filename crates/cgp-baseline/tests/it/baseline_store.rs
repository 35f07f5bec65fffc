//! The baseline store: format, round trip, merge, refusals, locking and crash safety.
//!
//! Sample values here are synthetic: hand-made numbers shaped like what ncu reports (durations in
//! ns, bytes, percentages), not measurements.

use cgp_test_support as support;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use cgp_baseline::baseline::{self, Store, UpdateMeta};
use cgp_core::foundation::error::Error;
use cgp_core::gpu::fingerprint::Fingerprint;
use cgp_core::measured::samples::{Sample, Series, SeriesKey};

mod concurrency;

fn h200() -> Fingerprint {
    Fingerprint {
        gpu_name: "NVIDIA H200".into(),
        compute_capability: "9.0".into(),
        memory_total_bytes: "150754820096".into(),
        driver_version: "560.35.03".into(),
        cuda_driver_version: "12.6".into(),
        ncu_version: "2025.1.0.0".into(),
        profiler_version: "2025.1.0.0".into(),
        clock_control: "base".into(),
        cache_control: "all".into(),
        clocks: "ncu".into(),
        ..Fingerprint::default()
    }
}

fn series(target: &str, size: &str, kernel: &str, metric: &str, unit: &str, v: &[f64]) -> Series {
    Series {
        key: SeriesKey {
            target: target.into(),
            size: size.into(),
            kernel: kernel.into(),
            metric: metric.into(),
        },
        unit: unit.into(),
        // Two launches per repetition.
        samples: (0..v.len())
            .map(|i| Sample {
                value: v[i],
                rep: (i / 2) as u32,
            })
            .collect(),
        configs: Vec::new(),
    }
}

/// A small, realistic measurement of target `gemm`: two sizes, one kernel, three metrics.
fn gemm_series(shift: f64) -> Vec<Series> {
    let t = "gemm";
    let k = "gemm_kernel";
    vec![
        series(
            t,
            "m=1024,n=1024",
            k,
            "gpu__time_duration.sum",
            "ns",
            &[
                406_240.0 + shift,
                406_112.0 + shift,
                406_301.0 + shift,
                405_998.0 + shift,
            ],
        ),
        series(
            t,
            "m=1024,n=1024",
            k,
            "dram__bytes_read.sum",
            "byte",
            &[8_388_608.0, 8_388_608.0, 8_388_640.0, 8_388_608.0],
        ),
        series(
            t,
            "m=1024,n=1024",
            k,
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "%",
            &[87.53, 87.61, 87.49, 87.58],
        ),
        series(
            t,
            "m=4096,n=4096",
            k,
            "gpu__time_duration.sum",
            "ns",
            &[
                21_402_880.5 + shift,
                21_398_016.25 + shift,
                21_410_304.0 + shift,
                21_401_600.0 + shift,
            ],
        ),
    ]
}

fn meta(commit: &str, date: &str, history: usize) -> UpdateMeta {
    UpdateMeta {
        git_commit: Some(commit.into()),
        spec_hash: "9f2c1e4b7a0d3c5e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60".into(),
        history,
        date: date.into(),
    }
}

fn refs(s: &[Series]) -> Vec<&Series> {
    s.iter().collect()
}

fn message(e: &Error) -> String {
    e.to_string()
}

#[test]
fn update_then_load_round_trips_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("baselines"));
    let s = gemm_series(0.0);
    let path = store
        .update(
            "gemm",
            &h200(),
            &refs(&s),
            &meta("0123abcd", "2026-05-01T12:00:00Z", 10),
        )
        .unwrap();
    assert_eq!(path, dir.path().join("baselines/nvidia-h200/gemm.json"));

    let f = store.load("nvidia-h200", "gemm").unwrap().expect("written");
    assert_eq!(f.schema_version, 2);
    assert_eq!(f.target, "gemm");
    assert_eq!(f.fingerprint, h200());
    assert_eq!(f.git_commit.as_deref(), Some("0123abcd"));
    assert_eq!(f.date, "2026-05-01T12:00:00Z");
    assert_eq!(f.tool_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(f.entries.len(), 4);
    // The samples come back bit for bit, as the series they were written from.
    for original in &s {
        let e = f.entry_for(&original.key).expect("entry for each series");
        assert_eq!(&e.series("gemm"), original);
        assert_eq!(e.history.len(), 1);
        assert_eq!(e.history[0].commit.as_deref(), Some("0123abcd"));
        assert_eq!(e.history[0].n, 4);
        assert_eq!(
            e.history[0].median.to_bits(),
            cgp_core::stats::median(&original.values())
                .unwrap_or(f64::NAN)
                .to_bits()
        );
    }
    let e = f
        .entry("m=1024,n=1024", "gemm_kernel", "gpu__time_duration.sum")
        .unwrap();
    assert_eq!(e.median().to_bits(), 406_176.0f64.to_bits());
    assert!(
        f.entry("m=1024,n=1024", "gemm_kernel", "no_such_metric")
            .is_none()
    );
    assert!(store.load("nvidia-h200", "other").unwrap().is_none());
    assert!(store.load("nvidia-h100", "gemm").unwrap().is_none());
}

#[test]
fn the_same_data_always_gives_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (Store::new(dir.path().join("a")), Store::new(dir.path().join("b")));
    let s = gemm_series(0.0);
    // Series order does not matter: entries are sorted.
    let mut reversed = refs(&s);
    reversed.reverse();
    let m = meta("0123abcd", "2026-05-01T12:00:00Z", 10);
    let pa = a.update("gemm", &h200(), &refs(&s), &m).unwrap();
    let pb = b.update("gemm", &h200(), &reversed, &m).unwrap();
    let (ta, tb) = (fs::read_to_string(&pa).unwrap(), fs::read_to_string(&pb).unwrap());
    assert_eq!(ta, tb);
    // Reading and rendering again is the identity on the bytes.
    let f = baseline::parse(&pa, &ta).unwrap();
    assert_eq!(baseline::render(&f), ta);
    // The hand-made writer agrees with serde on what the file means.
    let ours: serde_json::Value = serde_json::from_str(&ta).unwrap();
    assert_eq!(as_floats(ours), as_floats(serde_json::to_value(&f).unwrap()));
    let version_free = ta.replace(env!("CARGO_PKG_VERSION"), "[cgp-gate version]");
    insta::assert_snapshot!("gemm_baseline", version_free);
}

/// Every number as an f64, so that `406240` and `406240.0` compare equal.
fn as_floats(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => n.as_f64().map_or(Value::Null, |f| serde_json::json!(f)),
        Value::Array(a) => Value::Array(a.into_iter().map(as_floats).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, as_floats(v))).collect()),
        other => other,
    }
}

#[test]
fn updates_carry_history_of_continuing_entries_and_drop_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    for (i, commit) in ["c1", "c2", "c3", "c4"].iter().enumerate() {
        let s = gemm_series(100.0 * i as f64);
        let date = format!("2026-05-0{}T12:00:00Z", i + 1);
        store
            .update("gemm", &h200(), &refs(&s), &meta(commit, &date, 3))
            .unwrap();
    }
    // The fifth run no longer measures the 4096 size and changes the unit of the bytes metric.
    let mut s = gemm_series(400.0);
    s.pop();
    s[1].unit = "sector".into();
    store
        .update("gemm", &h200(), &refs(&s), &meta("c5", "2026-05-05T12:00:00Z", 3))
        .unwrap();

    let f = store.load("nvidia-h200", "gemm").unwrap().unwrap();
    assert_eq!(f.entries.len(), 3);
    assert!(
        f.entry("m=4096,n=4096", "gemm_kernel", "gpu__time_duration.sum")
            .is_none()
    );
    let t = f
        .entry("m=1024,n=1024", "gemm_kernel", "gpu__time_duration.sum")
        .unwrap();
    let commits: Vec<_> = t.history.iter().map(|g| g.commit.as_deref().unwrap()).collect();
    assert_eq!(commits, ["c3", "c4", "c5"], "last 3 generations, oldest first");
    let medians: Vec<f64> = t.history.iter().map(|g| g.median).collect();
    assert_eq!(medians, [406_376.0, 406_476.0, 406_576.0]);
    assert_eq!(t.older_medians(), [406_376.0, 406_476.0]);
    let bytes = f
        .entry("m=1024,n=1024", "gemm_kernel", "dram__bytes_read.sum")
        .unwrap();
    assert_eq!(bytes.history.len(), 1, "a unit change restarts the trend");
}

#[test]
fn incomplete_measurements_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    let good = gemm_series(0.0);
    store.update("gemm", &h200(), &refs(&good), &m).unwrap();
    let path = store.path("nvidia-h200", "gemm");
    let before = fs::read(&path).unwrap();

    let one = vec![series(
        "gemm",
        "default",
        "k",
        "gpu__time_duration.sum",
        "ns",
        &[1.0],
    )];
    let nan = vec![series(
        "gemm",
        "default",
        "k",
        "gpu__time_duration.sum",
        "ns",
        &[1.0, f64::NAN],
    )];
    let other = vec![series(
        "conv",
        "default",
        "k",
        "gpu__time_duration.sum",
        "ns",
        &[1.0, 2.0],
    )];
    // A rep for each value: `Series` holds them as one list of samples, so lists of different
    // lengths are refused where a series is read (they could reach `update` before).
    let mut bad_reps = serde_json::to_value(&gemm_series(0.0)[0]).unwrap();
    bad_reps["reps"].as_array_mut().unwrap().pop();
    let e = serde_json::from_value::<Series>(bad_reps).unwrap_err();
    assert!(e.to_string().contains("has 4 values but 3 reps"), "{e}");
    let twice = [&good[0], &good[0]];
    let cases: [(&[&Series], &str); 5] = [
        (&[], "no series for target `gemm`"),
        (
            &refs(&one),
            "has 1 sample(s); a baseline needs at least 2 per series",
        ),
        (&refs(&nan), "has a sample that is not finite (NaN, #1)"),
        (&refs(&other), "belongs to target `conv`, not `gemm`"),
        (&twice, "is given twice"),
    ];
    for (input, expected) in cases {
        let e = store.update("gemm", &h200(), input, &m).unwrap_err();
        assert!(matches!(e, Error::Input { .. }), "{e}");
        let text = message(&e);
        assert!(
            text.contains("refusing to write") && text.contains(expected),
            "{text}"
        );
        assert!(
            text.starts_with(&path.display().to_string()),
            "names the file: {text}"
        );
    }
    assert_eq!(fs::read(&path).unwrap(), before, "the baseline is untouched");

    let e = store.update("../evil", &h200(), &refs(&good), &m).unwrap_err();
    assert!(
        message(&e).contains("target `../evil` cannot name a baseline file"),
        "{e}"
    );
    let e = store.load("nvidia-h200", ".hidden").unwrap_err();
    assert!(
        message(&e).contains("target `.hidden` cannot name a baseline file"),
        "{e}"
    );
}

#[test]
fn a_newer_schema_is_refused_for_reading_and_writing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    store
        .update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap();
    let path = store.path("nvidia-h200", "gemm");
    // A future schema may change any field's shape; the version alone decides.
    let newer = fs::read_to_string(&path)
        .unwrap()
        .replace("\"schema_version\": 2", "\"schema_version\": 3")
        .replace("\"entries\": [", "\"entries_by_kernel\": [");
    fs::write(&path, &newer).unwrap();

    let expected = format!(
        "{}: baseline was written by a newer cgp-gate (schema 3); this build reads up to 2: \
         upgrade cgp-gate",
        path.display()
    );
    let e = store.load("nvidia-h200", "gemm").unwrap_err();
    assert_eq!(message(&e), expected);
    assert_eq!(e.exit_code(), cgp_core::foundation::exit_codes::INVALID_INPUT);
    let e = store.load_all().unwrap_err();
    assert_eq!(message(&e), expected);
    let e = store
        .update("gemm", &h200(), &refs(&gemm_series(1.0)), &m)
        .unwrap_err();
    assert_eq!(message(&e), expected);
    assert_eq!(fs::read_to_string(&path).unwrap(), newer, "never overwritten");
}

#[test]
fn corrupt_json_names_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    store
        .update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap();
    let path = store.path("nvidia-h200", "gemm");
    let original = fs::read_to_string(&path).unwrap();

    // A stray comma inside the third entry's sample list.
    let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let (idx, line) = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"samples\": ["))
        .nth(2)
        .map(|(i, l)| (i, l.clone()))
        .unwrap();
    let col = line.find('[').unwrap() + 2;
    lines[idx] = line.replacen('[', "[,", 1);
    fs::write(&path, lines.join("\n")).unwrap();
    let e = store.load("nvidia-h200", "gemm").unwrap_err();
    let text = message(&e);
    let want = format!(
        "{}: line {}, column {}: invalid baseline JSON: expected value",
        path.display(),
        idx + 1,
        col
    );
    assert!(text.starts_with(&want), "{text}\nwanted: {want}");

    // A value of the wrong type is located the same way.
    let wrong = fs::read_to_string(&path)
        .unwrap()
        .replacen("[,", "[\"fast\", ", 1);
    fs::write(&path, wrong).unwrap();
    let text = message(&store.load("nvidia-h200", "gemm").unwrap_err());
    assert!(text.contains(&format!("line {}, column", idx + 1)), "{text}");
    assert!(
        text.contains("invalid type: string \"fast\", expected f64"),
        "{text}"
    );

    // Truncation, as a non-atomic writer killed mid-write would leave it.
    fs::write(&path, &original[..original.len() / 2]).unwrap();
    let text = message(&store.load("nvidia-h200", "gemm").unwrap_err());
    assert!(text.contains("EOF while parsing"), "{text}");
    assert!(text.starts_with(&path.display().to_string()), "{text}");
}

#[test]
fn load_all_spans_gpu_keys_and_skips_temporary_and_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    let h100 = Fingerprint {
        gpu_name: "NVIDIA H100 80GB HBM3".into(),
        ..h200()
    };
    store
        .update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap();
    store.update("gemm", &h100, &refs(&gemm_series(0.0)), &m).unwrap();
    let conv = vec![series(
        "conv",
        "default",
        "conv2d",
        "gpu__time_duration.sum",
        "ns",
        &[5.0, 6.0, 7.0],
    )];
    store
        .update("conv", &Fingerprint::default(), &refs(&conv), &m)
        .unwrap();
    // What a writer killed mid-write leaves, and what people put next to baselines.
    fs::write(dir.path().join("nvidia-h200/.gemm.json.tmp.4242"), "{\"trunc").unwrap();
    fs::write(dir.path().join("nvidia-h200/README.md"), "notes").unwrap();
    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".git/x.json"), "not a baseline").unwrap();

    let all = store.load_all().unwrap();
    let names: Vec<_> = all
        .iter()
        .map(|(p, _)| p.strip_prefix(dir.path()).unwrap().to_path_buf())
        .collect();
    assert_eq!(
        names,
        [
            PathBuf::from("nvidia-h100-80gb-hbm3/gemm.json"),
            PathBuf::from("nvidia-h200/gemm.json"),
            PathBuf::from("unknown-gpu/conv.json"),
        ]
    );
    assert_eq!(all[2].1.fingerprint.gpu_name, "unknown");

    // The next write under the lock removes the dead writer's leftover.
    store
        .update("gemm", &h200(), &refs(&gemm_series(1.0)), &m)
        .unwrap();
    assert!(!dir.path().join("nvidia-h200/.gemm.json.tmp.4242").exists());
    assert!(store.load_all().unwrap().len() == 3);
    assert!(
        Store::new(dir.path().join("missing"))
            .load_all()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn other_documents_and_unwritable_stores_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let path = store.path("nvidia-h200", "gemm");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "\"gemm\"\n").unwrap();
    let text = message(&store.load("nvidia-h200", "gemm").unwrap_err());
    assert!(
        text.contains("line 1, column 6: invalid baseline JSON: invalid type: string \"gemm\", expected a cgp-gate baseline object; fix the file"),
        "{text}"
    );
    fs::write(&path, "{\"target\": \"gemm\"}").unwrap();
    let text = message(&store.load("nvidia-h200", "gemm").unwrap_err());
    assert!(text.contains("`schema_version` is missing"), "{text}");

    // A store whose directory is a file cannot be written: an environment error, not bad input.
    let not_a_dir = dir.path().join("file");
    fs::write(&not_a_dir, "").unwrap();
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    let e = Store::new(&not_a_dir)
        .update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert_eq!(e.exit_code(), cgp_core::foundation::exit_codes::PROFILER_FAILURE);
    assert!(message(&e).contains(&not_a_dir.display().to_string()), "{e}");
}

#[test]
fn a_file_renamed_to_another_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let m = meta("c1", "2026-05-01T12:00:00Z", 10);
    let p = store
        .update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap();
    fs::rename(&p, store.path("nvidia-h200", "gemm2")).unwrap();
    let e = store.load("nvidia-h200", "gemm2").unwrap_err();
    assert!(
        message(&e).contains("holds target `gemm` but is named for `gemm2`"),
        "{e}"
    );
}

#[test]
fn show_lists_gpu_metadata_and_one_row_per_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new("baselines");
    let real = Store::new(dir.path());
    let mut m = meta("c1", "2026-05-01T12:00:00Z", 10);
    real.update("gemm", &h200(), &refs(&gemm_series(0.0)), &m)
        .unwrap();
    m = meta("c2", "2026-05-02T12:00:00Z", 10);
    real.update("gemm", &h200(), &refs(&gemm_series(812.0)), &m)
        .unwrap();
    // Paths relative to a fixed store so that the snapshot does not hold a temp directory.
    let files: Vec<_> = real
        .load_all()
        .unwrap()
        .into_iter()
        .map(|(p, f)| (store.dir().join(p.strip_prefix(dir.path()).unwrap()), f))
        .collect();
    let text = baseline::render_show(&files).replace(env!("CARGO_PKG_VERSION"), "[cgp-gate version]");
    insta::assert_snapshot!("show", text);
    assert!(baseline::render_show(&[]).starts_with("no baselines found"));
}

/// The SASS hashes and the explanatory counters (docs/sass-cache.md, docs/why.md) round-trip; a
/// full update drops them (the code may have changed), a sharded one keeps those of the sizes it
/// did not measure.
#[test]
fn sass_hashes_and_counters_round_trip_and_follow_the_sizes_measured() {
    use std::collections::BTreeMap;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("baselines"));
    let s = gemm_series(0.0);
    let m = meta("0123abcd", "2026-05-01T12:00:00Z", 10);
    store.update("gemm", &h200(), &refs(&s), &m).unwrap();
    let sizes: Vec<String> = {
        let mut v: Vec<String> = s.iter().map(|x| x.key.size.clone()).collect();
        v.dedup();
        v
    };
    assert_eq!(sizes.len(), 2);
    let counter = |size: &str, v: f64| baseline::CounterSamples {
        size: size.into(),
        kernel: "gemm_kernel".into(),
        metric: "smsp__inst_executed.sum".into(),
        unit: "inst".into(),
        samples: vec![v, v, 0.1 + v],
    };
    let hash = |size: &str, h: &str| {
        BTreeMap::from([(
            size.to_owned(),
            BTreeMap::from([("gemm_kernel".to_owned(), h.to_owned())]),
        )])
    };
    for size in &sizes {
        store
            .set_counters("nvidia-h200", "gemm", vec![counter(size, 1e6)])
            .unwrap();
        store.set_sass("nvidia-h200", "gemm", hash(size, "ab")).unwrap();
    }
    // Replacing one size's counters leaves the other's.
    store
        .set_counters("nvidia-h200", "gemm", vec![counter(&sizes[0], 2e6)])
        .unwrap();
    let f = store.load("nvidia-h200", "gemm").unwrap().unwrap();
    assert_eq!(f.counters, vec![counter(&sizes[0], 2e6), counter(&sizes[1], 1e6)]);
    assert_eq!(f.sass.len(), 2);
    assert_eq!(f.entries.len(), 4, "the counters are not entries");

    // A sharded update of the first size keeps the second size's hashes and counters.
    let first: Vec<Series> = s.iter().filter(|x| x.key.size == sizes[0]).cloned().collect();
    store.update_sizes("gemm", &h200(), &refs(&first), &m).unwrap();
    let f = store.load("nvidia-h200", "gemm").unwrap().unwrap();
    assert_eq!(f.counters, vec![counter(&sizes[1], 1e6)]);
    assert_eq!(f.sass.keys().collect::<Vec<_>>(), [&sizes[1]]);
    // A full update starts afresh.
    store.update("gemm", &h200(), &refs(&s), &m).unwrap();
    let f = store.load("nvidia-h200", "gemm").unwrap().unwrap();
    assert!(f.counters.is_empty() && f.sass.is_empty());
}
