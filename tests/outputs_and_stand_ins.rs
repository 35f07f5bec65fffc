//! Round 5 of the hostile inputs (issue 58), the outputs' part: `-` as standard output, files the
//! run did not write kept, a recording never replaced or written into without a word, a token
//! without a known prefix never printed, the SYNTHETIC stand-in GPU said in every report and kept
//! out of real baselines, and the trust every report of a pull request's CUPTI or harness run
//! states. Every test runs the `cgp-gate` binary (docs/reliability.md, round 5).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness_input_safety::{run, update};
use crate::support::root;

/// Every report format of a run, into `r.*`.
const REPORTS: &[&str] = &[
    "--json",
    "r.json",
    "--markdown",
    "r.md",
    "--html",
    "r.html",
    "--junit",
    "r.xml",
];

/// A project in a temporary folder: a copy of the real H100 recording `extra3` (`rec/`) with its
/// spec (`s.yaml`) and baselines (`bl/`), and a file named `-` that must never be written.
fn h100_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let h100 = root().join("examples/recordings/h100");
    crate::support::copy_dir(&h100.join("extra3"), &d.path().join("rec"));
    crate::support::copy_dir(&root().join("examples/baselines-h100"), &d.path().join("bl"));
    let spec = std::fs::read_to_string(h100.join("check.yaml")).unwrap();
    std::fs::write(d.path().join("s.yaml"), spec).unwrap();
    std::fs::write(d.path().join("-"), "a file named -, not ours\n").unwrap();
    d
}

const CHECK: &[&str] = &[
    "check",
    "--spec",
    "s.yaml",
    "--replay",
    "rec",
    "--baselines",
    "bl",
];

/// [`CHECK`] with `extra`.
fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [CHECK, extra].concat()
}

/// Item 9: `-` was a file name for every output (`check --json -` wrote a file `-`, and in a
/// folder holding one, overwrote it). It is standard output now: what reaches stdout is the
/// file alone (the console's text goes to stderr), the command's exit code is its own, and the
/// file `-` is untouched; two outputs onto `-`, and `-` where a folder is meant, are refused.
#[test]
fn a_dash_is_standard_output_for_every_file_output() {
    let d = h100_project();
    let dir = d.path();
    // The check's verdict is a regression (exit 1) whatever goes to stdout.
    let (code, out, err) = run(dir, &with(&["--json", "-"]), &[]);
    assert_eq!(code, 1, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(r["verdict"], "regression");
    assert!(err.contains("regressions"), "the console went to stderr: {err}");
    let (code, out, _) = run(dir, &with(&["--markdown", "-"]), &[]);
    assert_eq!(code, 1);
    assert!(out.starts_with("### ❌ cgp-gate"), "{out}");
    let (_, out, _) = run(dir, &with(&["--junit", "-", "--json", "r.json"]), &[]);
    assert!(out.starts_with("<?xml"), "{out}");
    let (code, out, _) = run(dir, &["report", "--from", "r.json", "--html", "-"], &[]);
    assert_eq!(code, 0);
    assert!(out.starts_with("<!DOCTYPE html>"), "{out}");
    let (code, out, _) = run(dir, &["merge", "r.json", "--json", "-"], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["verdict"],
        "regression"
    );
    let (code, out, _) = run(
        dir,
        &["changes", "r.json", "r.json", "r.json", "--json", "-"],
        &[],
    );
    assert_eq!(code, 0);
    assert!(serde_json::from_str::<Value>(&out).unwrap()["schema_version"].is_u64());
    let (code, out, _) = run(
        dir,
        &[
            "calibrate",
            "--spec",
            "s.yaml",
            "--replay",
            "rec",
            "--markdown",
            "-",
        ],
        &[],
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("### cgp-gate calibrate"), "{out}");
    let csv = dir.join("rec/matmul/n=1024/0.csv");
    let (code, out, err) = run(dir, &["init", "--from", csv.to_str().unwrap(), "-o", "-"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# cgp-gate spec written by"), "{out}");
    assert!(err.contains("it validates"), "{err}");
    // Where `-` makes no sense, or two outputs would run into each other.
    let (code, _, err) = run(dir, &["history", "r.json", "--out", "-"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out -"), "{err}");
    let (code, _, err) = run(dir, &with(&["--json", "-", "--markdown", "-"]), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("both go to standard output"), "{err}");
    let (code, _, err) = run(dir, &["man", "--dir", "-"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("-")).unwrap(),
        "a file named -, not ours\n",
        "the file `-` is untouched"
    );
}

/// Item 12: `check --markdown good.json` wrote over a harness file the run never read. An output
/// may replace an existing file only when cgp-gate wrote it (its own report, results or spec);
/// a report of an earlier run is replaced as before.
#[test]
fn an_output_never_replaces_a_file_cgp_gate_did_not_write() {
    let d = h100_project();
    let dir = d.path();
    let good = root().join("tests/standins/gpu.json");
    std::fs::copy(&good, dir.join("good.json")).unwrap();
    std::fs::write(dir.join("notes.md"), "# my notes\n").unwrap();
    let before = std::fs::read(dir.join("good.json")).unwrap();
    for (flag, file) in [
        ("--markdown", "good.json"),
        ("--json", "good.json"),
        ("--html", "notes.md"),
        ("--junit", "notes.md"),
    ] {
        let (code, _, err) = run(dir, &[CHECK, &[flag, file]].concat(), &[]);
        assert_eq!(code, 2, "{flag} {file}: {err}");
        assert!(err.contains("is not one cgp-gate wrote"), "{err}");
    }
    assert_eq!(std::fs::read(dir.join("good.json")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.md")).unwrap(),
        "# my notes\n"
    );
    // Its own reports of an earlier run are replaced, every format.
    for _ in 0..2 {
        let (code, _, err) = run(dir, &[CHECK, REPORTS].concat(), &[]);
        assert_eq!(code, 1, "{err}");
    }
}

/// Item 12: `import --into` an existing recording replaced it whole; `baseline update
/// --baselines` into the recording it replays wrote baselines among its repetitions.
#[test]
fn a_recording_is_neither_replaced_nor_written_into_without_a_word() {
    let d = h100_project();
    let dir = d.path();
    let spec = "version: 1\ntargets:\n  - name: t\n    profiler: gbench\n    command: [bench]\n    repetitions: 3\n    metrics:\n      real_time: \"5%\"\n";
    std::fs::write(dir.join("g.yaml"), spec).unwrap();
    let file = dir.join("g.json");
    let ok = std::process::Command::new("python3")
        .arg(root().join("tests/standins/harness.py"))
        .arg(format!("--benchmark_out={}", file.display()))
        .status()
        .unwrap();
    assert!(ok.success());
    let import = |extra: &[&str]| {
        let mut a = vec!["import", "--spec", "g.yaml", "--into", "grec"];
        a.extend_from_slice(extra);
        a.push("g.json");
        run(dir, &a, &[])
    };
    assert_eq!(import(&[]).0, 0);
    let manifest = std::fs::read(dir.join("grec/manifest.json")).unwrap();
    let (code, _, err) = import(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pass --replace"), "{err}");
    assert_eq!(std::fs::read(dir.join("grec/manifest.json")).unwrap(), manifest);
    let (code, _, err) = import(&["--replace"]);
    assert_eq!(code, 0, "{err}");
    // The store inside the recording it replays, or the recording itself.
    for store in ["rec", "rec/baselines", "."] {
        let (code, _, err) = run(
            dir,
            &[
                "baseline",
                "update",
                "--spec",
                "s.yaml",
                "--replay",
                "rec",
                "--baselines",
                store,
            ],
            &[],
        );
        assert_eq!(code, 2, "{store}: {err}");
        assert!(err.contains("one holds the other"), "{err}");
    }
    assert!(!dir.join("rec/baselines").exists());
    assert!(!dir.join("rec/nvidia-h100-80gb-hbm3").exists());
}

/// Item 12: an API error body that echoes the token without a known prefix (a proxy, a server
/// quoting the request) was printed. Every value of a credential variable is redacted now,
/// whatever its shape.
#[test]
fn a_token_without_a_known_prefix_echoed_by_the_api_is_never_printed() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    const TOKEN: &str = "k9Qz7Lm2Xv8Rt4WpZq3";
    let d = h100_project();
    let dir = d.path();
    let (code, _, err) = run(dir, &[CHECK, &["--json", "r.json"]].concat(), &[]);
    assert_eq!(code, 1, "{err}");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(422).set_body_json(serde_json::json!({
                "message": format!("Validation Failed for credentials {TOKEN} (as sent)"),
            })))
            .mount(&server),
    );
    let (code, out, err) = run(
        dir,
        &[
            "report",
            "--from",
            "r.json",
            "--github-comment",
            "--repo",
            "acme/k",
            "--pr",
            "7",
        ],
        &[
            ("GITHUB_API_URL", &server.uri()),
            ("GITHUB_TOKEN", TOKEN),
            ("CGP_GATE_RETRY_DELAYS_MS", "0,0"),
        ],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("Validation Failed"),
        "the message is still there: {err}"
    );
    assert!(
        !out.contains(TOKEN) && !err.contains(TOKEN),
        "the token leaked: {out}{err}"
    );
}

/// A spec of one live nvbench target run by the SYNTHETIC stand-in benchmark program.
fn live_harness(dir: &Path) {
    let standin = root().join("tests/standins/harness.py");
    std::fs::write(
        dir.join("live.yaml"),
        format!(
            "version: 1\ntargets:\n  - name: nv\n    profiler: nvbench\n    command: [python3, {:?}]\n    repetitions: 2\n    baseline_repetitions: 3\n    metrics:\n      nv/cold/time/gpu: \"5%\"\n",
            standin.display().to_string()
        ),
    )
    .unwrap();
}

/// Item 5: with `CGP_GATE_STAND_IN_GPU` the JSON said `"synthetic": false`, the Markdown named
/// an invented H100 with its driver, clocks and power, baselines carried no mark, and `doctor`
/// said `ok GPU`. The stand-in is marked in the fingerprint, every report and every baseline; a
/// stand-in never replaces a real GPU's baseline nor compares with one; `doctor` fails on it.
#[test]
fn the_stand_in_gpu_is_said_everywhere_and_kept_apart_from_real_baselines() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    live_harness(dir);
    let gpu = crate::support::stand_in_gpu();
    let stand_in = [(crate::support::STAND_IN_GPU, gpu.to_str().unwrap())];
    let (code, out, err) = run(dir, &["doctor"], &stand_in);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("FAIL  GPU") && out.contains("SYNTHETIC stand-in GPU"),
        "{out}"
    );
    let update = ["baseline", "update", "--spec", "live.yaml", "--baselines"];
    let (code, _, err) = run(dir, &[&update[..], &["si"]].concat(), &stand_in);
    assert_eq!(code, 0, "{err}");
    let stored = dir.join("si/synthetic-stand-in-gpu/nv.json");
    let b: Value = serde_json::from_slice(&std::fs::read(&stored).unwrap()).unwrap();
    assert_eq!(b["fingerprint"]["synthetic"], true, "the baseline is marked");
    let check = ["check", "--spec", "live.yaml", "--baselines", "si"];
    let (code, out, err) = run(dir, &[&check[..], REPORTS].concat(), &stand_in);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("on the SYNTHETIC stand-in GPU"),
        "the console: {out}"
    );
    assert!(
        out.contains("(made up by the SYNTHETIC stand-in GPU)"),
        "the health: {out}"
    );
    let r: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["synthetic"], true);
    assert_eq!(r["fingerprint"]["synthetic"], true);
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    assert!(
        md.contains("**Synthetic data**") && md.contains("SYNTHETIC stand-in GPU ("),
        "{md}"
    );
    assert!(
        md.contains("made up by the SYNTHETIC stand-in GPU"),
        "the footer's health: {md}"
    );
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(html.contains("Synthetic data.") && html.contains("SYNTHETIC stand-in GPU"));
    let xml = std::fs::read_to_string(dir.join("r.xml")).unwrap();
    assert!(xml.contains("name=\"synthetic\" value=\"true\""), "{xml}");
    // A real GPU's baseline of that name (here: the harness run without the stand-in) is never
    // replaced by the stand-in's, nor compared with its samples.
    let (code, _, err) = run(dir, &[&update[..], &["real"]].concat(), &[]);
    assert_eq!(code, 0, "{err}");
    let real = dir.join("real/synthetic-stand-in-gpu/nv.json");
    let before = std::fs::read(&real).unwrap();
    let (code, _, err) = run(dir, &[&update[..], &["real"]].concat(), &stand_in);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("refusing to replace a baseline measured on a real GPU"),
        "{err}"
    );
    assert_eq!(std::fs::read(&real).unwrap(), before);
    let (code, _, err) = run(
        dir,
        &["check", "--spec", "live.yaml", "--baselines", "real"],
        &stand_in,
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("synthetic (CGP_GATE_STAND_IN_GPU): baseline `a real GPU`"),
        "{err}"
    );
}

/// Write a SYNTHETIC CUPTI recording of target `va` (tests/cupti_gate/mod.rs's traces): `reps`
/// processes of about `ns` per launch.
fn cupti_recording(dir: &Path, reps: u64, ns: f64) -> PathBuf {
    let rec = dir.join("crec");
    let folder = rec.join("va/default");
    std::fs::create_dir_all(&folder).unwrap();
    let mut runs = Vec::new();
    for i in 0..reps {
        let t = crate::cupti_gate::trace(
            &crate::cupti_gate::process(i + 1, ns, 16),
            crate::cupti_gate::End::Flushed,
        );
        std::fs::write(folder.join(format!("{i}.cupti")), t).unwrap();
        runs.push(serde_json::json!({"target": "va", "size": "default", "rep": i, "argv": ["./vector_add"], "exit_code": 0}));
    }
    let manifest = serde_json::json!({"schema_version": 1, "synthetic": true, "note": "SYNTHETIC CUPTI traces (tests/outputs_and_stand_ins.rs)", "cupti_version": "2022.3.0", "runs": runs});
    std::fs::write(rec.join("manifest.json"), manifest.to_string()).unwrap();
    rec
}

/// Item 14 (second half): the CUPTI forgery with the run's nonce is a documented limit, and
/// every report of a cupti run that gates code from a pull request says it (a harness run's
/// likewise: the program writes its own file). Outside a pull request nothing is added.
#[test]
fn every_report_of_a_pull_requests_cupti_run_says_the_program_can_forge_its_times() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("c.yaml"), crate::cupti_gate::SPEC).unwrap();
    cupti_recording(dir, 5, 100_000.0);
    update(dir, "c.yaml", "crec", "cb");
    let check = [
        "check",
        "--spec",
        "c.yaml",
        "--replay",
        "crec",
        "--baselines",
        "cb",
    ];
    for (event, said) in [
        ("pull_request", true),
        ("pull_request_target", true),
        ("push", false),
    ] {
        std::fs::write(dir.join("summary.md"), "").unwrap();
        let (code, out, err) = run(
            dir,
            &[&check[..], REPORTS].concat(),
            &[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", event),
                ("GITHUB_STEP_SUMMARY", dir.join("summary.md").to_str().unwrap()),
            ],
        );
        assert_eq!(code, 0, "{out}{err}");
        let mut texts = vec![("console", out)];
        for f in ["r.json", "r.md", "r.html", "r.xml", "summary.md"] {
            texts.push((f, std::fs::read_to_string(dir.join(f)).unwrap()));
        }
        for (what, text) in texts {
            assert_eq!(
                text.contains("CGP_GATE_CUPTI_NONCE"),
                said,
                "{event}: {what} says the forgery: {text}"
            );
        }
    }
    // `report` of the results, and `merge` of them, keep it.
    let (_, _, _) = run(
        dir,
        &[&check[..], &["--json", "pr.json"]].concat(),
        &[("GITHUB_EVENT_NAME", "pull_request")],
    );
    let (_, out, _) = run(dir, &["report", "--from", "pr.json", "--markdown", "-"], &[]);
    assert!(out.contains("CGP_GATE_CUPTI_NONCE"), "{out}");
    let (_, out, _) = run(dir, &["merge", "pr.json"], &[]);
    assert!(out.contains("CGP_GATE_CUPTI_NONCE"), "{out}");
}
