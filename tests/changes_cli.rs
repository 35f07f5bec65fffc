//! `cgp-gate changes` end to end through the binary. The history is SYNTHETIC: one real `check`
//! results file (from the synthetic example recording) copied 30 times, each row's candidate
//! scaled by seeded log-normal noise (CV 1%), with a planted step in one series.

use std::path::{Path, PathBuf};

use crate::support::{bin, chromium, run_chromium};
use serde_json::Value;

/// A real results file: `check` of the example recording against the example baselines.
pub(crate) fn real_results(dir: &Path) -> Value {
    let json = dir.join("base.json");
    let out = bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-same",
            "--baselines",
            "examples/baselines",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// SplitMix64 + Box-Muller: seeded noise for the synthetic history.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 + 1e-18
    }
    pub(crate) fn normal(&mut self) -> f64 {
        let (a, b) = (self.uniform(), self.uniform());
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    }
}

fn scale(side: &mut Value, f: f64) {
    for k in ["median", "min", "max"] {
        if let Some(v) = side[k].as_f64() {
            side[k] = (v * f).into();
        }
    }
    if let Some(s) = side["samples"].as_array_mut() {
        for v in s {
            *v = (v.as_f64().unwrap() * f).into();
        }
    }
}

/// Write 30 results files with noise of CV `cv` on every noisy row; `step(i, row)` gives the
/// planted factor of a row in file `i`. Each row's noise comes from its own key, so the history
/// does not depend on the order of the rows.
fn history(dir: &Path, seed: u64, cv: f64, step: &dyn Fn(usize, &Value) -> f64) -> Vec<PathBuf> {
    let base = real_results(dir);
    (0..30)
        .map(|i| {
            let mut r = base.clone();
            r["git_commit"] = commit(i).into();
            r["date"] = format!("2026-03-{:02}T12:00:00Z", i + 1).into();
            for row in r["rows"].as_array_mut().unwrap() {
                let noisy = row["candidate"]["cv"].as_f64().is_some_and(|cv| cv > 0.0);
                let key = format!(
                    "{}/{}/{}/{}/{i}",
                    row["target"], row["size"], row["kernel"], row["metric"]
                );
                let mut rng = Rng(key
                    .bytes()
                    .fold(seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)));
                let f = step(i, row) * if noisy { (cv * rng.normal()).exp() } else { 1.0 };
                scale(&mut row["candidate"], f);
            }
            let p = dir.join(format!("results-{i:02}.json"));
            std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
            p
        })
        .collect()
}

pub(crate) fn commit(i: usize) -> String {
    format!("c0ffee{i:02}{}", "0".repeat(32))
}

fn run_changes(files: &[PathBuf], dir: &Path) -> (i32, Value, String, String, String) {
    let (json, md, html) = (
        dir.join("changes.json"),
        dir.join("changes.md"),
        dir.join("changes.html"),
    );
    let out = bin()
        .arg("changes")
        .args(files)
        .arg("--json")
        .arg(&json)
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (
        out.status.code().unwrap(),
        v,
        text,
        std::fs::read_to_string(md).unwrap(),
        std::fs::read_to_string(html).unwrap(),
    )
}

#[test]
fn two_percent_step_at_15_is_found_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    // CV 0.5% here, so that this test of the whole path does not hinge on one seed: at CV 1% and
    // 16 series, a 2% step is found at 15 +- 1 in 68 of 100 seeds (docs/ab-and-changes.md); the
    // issue's CV 1% case is a unit test in crates/cgp-outcome/src/history/changes.rs.
    let files = history(dir.path(), 42, 0.005, &|i, row| {
        let planted =
            row["target"] == "matmul" && row["size"] == "n=1024" && row["metric"] == "gpu__time_duration.sum";
        if planted && i >= 15 { 1.02 } else { 1.0 }
    });
    let (code, v, text, md, html) = run_changes(&files, dir.path());
    assert_eq!(code, 1, "a shift for the worse fails: {text}");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let r = &rows[0];
    assert_eq!(r["target"], "matmul");
    assert_eq!(r["size"], "n=1024");
    assert_eq!(r["metric"], "gpu__time_duration.sum");
    let index = r["index"].as_u64().unwrap() as usize;
    assert!(index.abs_diff(15) <= 1, "index {index}");
    let change = r["change"].as_f64().unwrap();
    assert!((0.012..0.028).contains(&change), "change {change}");
    assert!(r["after"].as_f64().unwrap() > r["before"].as_f64().unwrap());
    assert_eq!(r["worse"], true);
    assert_eq!(r["commit"], commit(index));
    assert_eq!(r["commit_before"], commit(index - 1));
    assert!(r["kernel"].as_str().unwrap().contains("matmul_tiled"));
    assert_eq!(v["synthetic"], true);
    assert!(v["series_tested"].as_u64().unwrap() >= 10);
    assert!(text.contains("WORSE matmul[n=1024]"), "{text}");
    assert!(md.contains("Synthetic data") && md.contains('┃'), "{md}");
    assert!(html.contains("class=\"cp\"") && html.contains("Synthetic data"));
}

#[test]
fn flat_history_yields_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), 7, 0.01, &|_, _| 1.0);
    let (code, v, text, md, _) = run_changes(&files, dir.path());
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 0, "{v:#}");
    assert!(text.contains("no level shift"), "{text}");
    assert!(md.contains("no level shift"));
    // --last keeps the newest N.
    let out = bin()
        .arg("changes")
        .args(&files)
        .args(["--last", "4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // 4 results can find no shift at all: said plainly, not "no level shift".
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("the history is too short (4 results)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"rows\": 3}").unwrap();
    let out = bin().arg("changes").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("junk.json") && err.contains("schema_version"),
        "{err}"
    );
    let out = bin()
        .args(["changes", "--min-change", "lots"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("percentage"));
    let out = bin().arg("changes").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A results file that is not there is invalid input (exit 2), as a missing spec is to
    // `validate`, in every command that reads one (issue 59, item 7); not an environment failure.
    let gone = dir.path().join("gone.json");
    let gone = gone.to_str().unwrap();
    for args in [
        &["changes", gone][..],
        &["report", "--from", gone],
        &["merge", gone],
        &["history", gone, "--out", "site-x"],
        &["parse", gone],
        &["validate", "--spec", gone],
    ] {
        let out = bin().current_dir(dir.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("gone.json"), "{args:?}: {err}");
    }
    assert!(!dir.path().join("site-x").exists());
}

/// `changes` over a history made of REAL H100 check results (12 of the A/A replay, then 12 of
/// `EXTRA_WORK_PCT=3`, each stamped with its own commit and date): the y-axis labels of every
/// chart read in units with three significant digits (`8.36 TFLOP/s`, not
/// `8362475394648.349609 flop/second`), and in headless Chromium each label's bounding box lies
/// inside the SVG, left of the plot's axis. The measuring copy of the page drops the CSP and adds
/// a script that writes each label's `getBBox()` into the DOM; the page itself runs no script.
/// A screenshot of the page as written renders too.
#[test]
fn changes_chart_labels_use_units_and_fit_in_chromium() {
    let Some(bin) = chromium("changes_cli::changes_chart_labels_use_units_and_fit_in_chromium") else {
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let rec = "examples/recordings/h100";
    let mut files = Vec::new();
    for (name, replay) in [("same", "aa-live"), ("slow", "extra3")] {
        let json = dir.path().join(format!("{name}.json"));
        let out = crate::support::bin_std()
            .args(["check", "--spec", &format!("{rec}/check.yaml"), "--baselines"])
            .args(["examples/baselines-h100", "--replay", &format!("{rec}/{replay}")])
            .args(["--quiet", "--no-github-actions", "--json"])
            .arg(&json)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for k in 0..12 {
            let i = files.len();
            let mut v = v.clone();
            v["git_commit"] = format!("{:040x}", 0xabc000 + i).into();
            v["date"] = format!("2026-11-{:02}T12:38:{:02}Z", k + 1, i).into();
            let p = dir.path().join(format!("r{i:02}.json"));
            std::fs::write(&p, v.to_string()).unwrap();
            files.push(p);
        }
    }
    let page = dir.path().join("changes.html");
    let md = dir.path().join("changes.md");
    let out = crate::support::bin_std()
        .arg("changes")
        .args(&files)
        .arg("--html")
        .arg(&page)
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    // Its Markdown: names, paths and timestamps as written (code spans), no character references.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(!md.contains("&#") && md.contains("T12:38:"), "{md}");
    assert!(
        md.contains("| `matmul` |") && md.contains("`cgp__achieved_flops.per_second`"),
        "{md}"
    );
    let text = std::fs::read_to_string(&page).unwrap();
    let labels: Vec<&str> = text
        .split("<text class=\"ylabel\"")
        .skip(1)
        .map(|s| s.split_once('>').unwrap().1.split("</text>").next().unwrap())
        .collect();
    assert!(labels.len() >= 2, "no chart: {text}");
    assert!(labels.contains(&"8.36 TFLOP/s"), "{labels:?}");
    for l in &labels {
        let number = l.split(' ').next().unwrap();
        assert_eq!(number.chars().filter(char::is_ascii_digit).count(), 3, "{l}");
        assert!(l.contains(' ') && !l.contains("flop/second"), "{l}");
    }
    // Measure in the browser: each label's box against its SVG's and against the y axis.
    let script = r#"<script>
const out = [];
for (const svg of document.querySelectorAll('svg')) {
  const axis = svg.querySelector('line.axis');
  for (const t of svg.querySelectorAll('text.ylabel')) {
    const b = t.getBBox();
    out.push([t.textContent, b.x, b.x + b.width, parseFloat(axis.getAttribute('x1'))].join('|'));
  }
}
const pre = document.createElement('pre'); pre.id = 'bbox'; pre.textContent = out.join('\n');
document.body.appendChild(pre);
</script>"#;
    let measured = text
        .replace(
            "default-src 'none'",
            "default-src 'none'; script-src 'unsafe-inline'",
        )
        .replace("</body>", &format!("{script}</body>"));
    let probe = {
        let p = dir.path().join("probe.html");
        std::fs::write(&p, &measured).unwrap();
        p
    };
    let (dom, _) = run_chromium(bin, &probe, &["--dump-dom"]);
    let boxes = dom
        .split("<pre id=\"bbox\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement in the DOM: {dom}"));
    let mut n = 0;
    for line in boxes.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (left, right, axis): (f64, f64, f64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        assert!(left >= 0.0, "{} is cut at the left edge: {line}", f[0]);
        assert!(right <= axis, "{} runs into the axis: {line}", f[0]);
        n += 1;
    }
    assert_eq!(n, labels.len(), "{boxes}");
    let png = dir.path().join("changes.png");
    let (_, console) = run_chromium(
        bin,
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,1200",
        ],
    );
    assert!(console.is_empty(), "{console:#?}");
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}
