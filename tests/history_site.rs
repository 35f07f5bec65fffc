//! `cgp-gate history` end to end through the binary: the site of a history of real `check`
//! results (SYNTHETIC noise and a planted step, as in tests/changes_cli.rs), rendered by headless
//! Chromium from `file://`; github-action-benchmark's real data.js of a CUDA project; and the
//! output folder's rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::changes_cli::{Rng, commit, real_results};
use crate::support::{self, bin, chromium, run_chromium_url};

/// The planted series: matmul n=1024's duration steps up 3% from result 15 on.
fn planted(row: &Value) -> bool {
    row["target"] == "matmul" && row["size"] == "n=1024" && row["metric"] == "gpu__time_duration.sum"
}

/// 30 results files from one real `check` results file: every row's estimate (candidate median,
/// change and its interval) scaled by seeded noise (CV 0.5%), the planted series by 1.03 from 15.
pub(crate) fn history(dir: &Path, edit: &dyn Fn(&mut Value)) -> Vec<PathBuf> {
    let mut base = real_results(dir);
    edit(&mut base);
    let mut rng = Rng(47);
    (0..30)
        .map(|i| {
            let mut r = base.clone();
            r["git_commit"] = commit(i).into();
            r["date"] = format!("2026-03-{:02}T12:00:00Z", i + 1).into();
            for row in r["rows"].as_array_mut().unwrap() {
                let noisy = row["candidate"]["cv"].as_f64().is_some_and(|cv| cv > 0.0);
                let step = if planted(row) && i >= 15 { 1.03 } else { 1.0 };
                let f = step * if noisy { (0.005 * rng.normal()).exp() } else { 1.0 };
                if let Some(m) = row["candidate"]["median"].as_f64() {
                    row["candidate"]["median"] = (m * f).into();
                }
                if let Some(c) = row["change"].as_f64() {
                    row["change"] = ((1.0 + c) * f - 1.0).into();
                }
                if let Some(ci) = row["change_ci"].as_array_mut() {
                    for c in ci {
                        *c = ((1.0 + c.as_f64().unwrap()) * f - 1.0).into();
                    }
                }
            }
            let p = dir.join(format!("results-{i:02}.json"));
            std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
            p
        })
        .collect()
}

fn run_history(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = bin().arg("history").args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn site(files: &[PathBuf], out: &Path, extra: &[&str]) -> (String, Value) {
    let mut args: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
    args.extend([std::ffi::OsStr::new("--out"), out.as_os_str()]);
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let (code, text) = run_history(&args);
    assert_eq!(code, 0, "{text}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    (page.clone(), data_of(&page))
}

/// The JSON blob the page's script draws.
pub(crate) fn data_of(page: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"cgp-data\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// The series every results file holds, as the site must draw them: one per GPU x target x size
/// x kernel x metric of a row with a measured candidate (not an error or missing row), the GPU
/// named by the row or else by the run's fingerprint. Counted here from the files themselves.
fn expected_series(files: &[PathBuf]) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for f in files {
        let r: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        for row in r["rows"].as_array().unwrap() {
            let verdict = row["verdict"].as_str().unwrap_or("");
            if verdict == "error" || verdict == "missing" || !row["candidate"]["median"].is_number() {
                continue;
            }
            let gpu = row["gpu"]
                .as_str()
                .filter(|g| !g.is_empty())
                .or_else(|| r["fingerprint"]["gpu_name"].as_str())
                .unwrap_or("");
            keys.insert(format!(
                "{gpu}|{}|{}|{}|{}",
                row["target"], row["size"], row["kernel"], row["metric"]
            ));
        }
    }
    keys
}

/// Every series of the data that has no drawn chart in Chromium's DOM (the page opened with
/// `#all`, which draws every chart at once, so nothing waits for a scroll), the console's
/// messages and the DOM.
fn missing_charts(bin: &str, page: &Path, data: &Value) -> (Vec<String>, Vec<String>, String) {
    let (dom, console) = run_chromium_url(bin, &format!("file://{}#all", page.display()), &["--dump-dom"]);
    let missing = data["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .filter(|id| {
            let Some(at) = dom.find(&format!("id=\"{id}\"")) else {
                return true;
            };
            let section = &dom[at..];
            let section = &section[..section.find("</section>").unwrap_or(section.len())];
            !section.contains("<svg") || !section.contains("class=\"plot\"")
        })
        .collect();
    (missing, console, dom)
}

#[test]
fn a_real_history_becomes_a_site_with_a_chart_per_series_and_its_change() {
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), &|_| {});
    let out = dir.path().join("site");
    let (page, data) = site(&files, &out, &["--repo-url", "https://github.com/o/r"]);
    let expected = expected_series(&files);
    let series = data["series"].as_array().unwrap();
    assert_eq!(series.len(), expected.len(), "one series per key");
    assert_eq!(data["commits"].as_array().unwrap().len(), 30);
    // The planted step: found where it is, worse, listed first, with its interval.
    let first = &series[0];
    assert_eq!(
        (first["target"].as_str(), first["size"].as_str()),
        (Some("matmul"), Some("n=1024"))
    );
    assert_eq!(first["metric"], "gpu__time_duration.sum");
    assert_eq!(first["worse"], true);
    let at = first["cps"][0]["at"].as_u64().unwrap();
    assert!(at.abs_diff(15) <= 1, "{at}");
    assert!(first["cps"][0]["text"].as_str().unwrap().contains("% CI)"));
    // Its points are the rows' decided estimates: baseline median x (1 + change).
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&files[20]).unwrap()).unwrap();
    let row = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| planted(row))
        .unwrap();
    let decided = row["baseline"]["median"].as_f64().unwrap() * (1.0 + row["change"].as_f64().unwrap());
    let x = first["x"]
        .as_array()
        .unwrap()
        .iter()
        .position(|x| x == 20)
        .unwrap();
    // The same number, exactly (JSON values compare the floats).
    assert_eq!(first["y"][x], serde_json::json!(decided));
    assert_eq!(first["thr"][x], row["threshold"]["limit"]);
    // Size budget (docs/history.md): 64 KiB of page and at most 200 bytes per result.
    let results: usize = series.iter().map(|s| s["x"].as_array().unwrap().len()).sum();
    assert!(
        page.len() <= 64 * 1024 + 200 * results,
        "{} bytes for {results} results",
        page.len()
    );
    assert!(out.join(".cgp-gate-history").is_file());
    // A second run into the folder it wrote replaces the page.
    site(&files[..10], &out, &[]);

    let Some(bin) =
        chromium("history_site::a_real_history_becomes_a_site_with_a_chart_per_series_and_its_change")
    else {
        return;
    };
    let (_, data) = site(&files, &out, &["--repo-url", "https://github.com/o/r"]);
    let index = out.join("index.html");
    let (missing, console, dom) = missing_charts(bin, &index, &data);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(missing.is_empty(), "series without a chart: {missing:?}");
    assert!(
        dom.contains("href=\"https://github.com/o/r/commit/"),
        "links to the commits"
    );
    assert!(dom.contains("Changed series, worst first") && dom.contains("class=\"worse\""));
}

/// Issue 59, item 4: six results around the planted +3 % step are too short to find any shift
/// at the level: the page says so in its header (how many series, the results they have and need)
/// and under each series, and its "no shift" line says why, as `changes` does; checked in the
/// page as headless Chromium draws it.
#[test]
fn a_history_too_short_to_find_a_shift_says_so_in_the_header_and_per_series() {
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), &|_| {});
    let short = &files[12..18];
    let out = dir.path().join("site");
    let (_, data) = site(short, &out, &[]);
    let changes = dir.path().join("changes.json");
    let o = bin()
        .arg("changes")
        .args(short)
        .arg("--json")
        .arg(&changes)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reach: Value = serde_json::from_str(&std::fs::read_to_string(&changes).unwrap()).unwrap();
    let n = data["series"].as_array().unwrap().len();
    assert_eq!(
        reach["reach"]["too_short"].as_u64(),
        Some(n as u64),
        "every series is too short"
    );
    assert_eq!(data["too_short"].as_u64(), Some(n as u64));
    let note = data["too_short_note"].as_str().unwrap();
    assert!(
        note.starts_with(&format!(
            "The history is too short to find a level shift in {n} of {n} series: 6 results, "
        )),
        "{note}"
    );
    assert!(note.contains(" needed"), "{note}");
    for s in data["series"].as_array().unwrap() {
        let text = s["short"].as_str().unwrap();
        assert!(
            text.starts_with("too short to find a level shift: 6 results, "),
            "{s}"
        );
        // The number it needs is the one `changes` works out for that series.
        let r = reach["reach"]["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["target"] == s["target"]
                    && r["size"] == s["size"]
                    && r["metric"] == s["metric"]
                    && r["kernel"] == s["kernel"]
            })
            .unwrap();
        let needed = r["needed"]
            .as_u64()
            .unwrap_or_else(|| r["fewest"].as_u64().unwrap());
        assert!(
            needed > 6 && text.contains(&format!("{needed} needed")),
            "{text} / {r}"
        );
    }
    let Some(bin) =
        chromium("history_site::a_history_too_short_to_find_a_shift_says_so_in_the_header_and_per_series")
    else {
        return;
    };
    let index = out.join("index.html");
    let (missing, console, dom) = missing_charts(bin, &index, &data);
    assert!(
        console.is_empty() && missing.is_empty(),
        "{console:#?} {missing:?}"
    );
    let header = &dom[dom.find("<header>").unwrap()..dom.find("</header>").unwrap()];
    assert!(header.contains(&format!("id=\"too-short\">{note}")), "{header}");
    assert!(
        dom.contains(
            "<p id=\"none-changed\">No level shift can be found yet: the history is too short (above).</p>"
        ),
        "{dom}"
    );
    let planted = data["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| planted(s) && s["kernel"].as_str().is_some_and(|k| k.contains("matmul")))
        .unwrap();
    let at = dom
        .find(&format!("id=\"{}\"", planted["id"].as_str().unwrap()))
        .unwrap();
    let section = &dom[at..at + dom[at..].find("</section>").unwrap()];
    assert!(
        section.contains("· too short to find a level shift: 6 results, "),
        "{section}"
    );
}

#[test]
fn the_missing_chart_check_catches_a_series_without_one() {
    // Control for the test above: a page whose script skips one series' chart must be caught.
    let Some(bin) = chromium("history_site::the_missing_chart_check_catches_a_series_without_one") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), &|_| {});
    let out = dir.path().join("site");
    let (page, data) = site(&files, &out, &[]);
    let drawn = "item.box.appendChild(chart(item.s));";
    assert!(page.contains(drawn));
    let skipped = page.replace(
        drawn,
        "if (item.s !== D.series[1]) item.box.appendChild(chart(item.s));",
    );
    let planted = dir.path().join("planted.html");
    std::fs::write(&planted, skipped).unwrap();
    let (missing, _, _) = missing_charts(bin, &planted, &data);
    assert_eq!(missing, [data["series"][1]["id"].as_str().unwrap()]);
}

#[test]
fn names_from_programs_stay_text() {
    let hostile =
        "<script>console.error('INJECTED')</script><img src=x onerror=\"console.error('X')\">\u{202e}";
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), &|r| {
        let rows = r["rows"].as_array_mut().unwrap();
        rows[0]["kernel"] = hostile.into();
        rows[1]["target"] = hostile.into();
    });
    let out = dir.path().join("site");
    let (page, data) = site(&files, &out, &[]);
    assert_eq!(page.matches("<script").count(), 2, "only the page's own scripts");
    assert!(!page.contains("<img"));
    assert!(data["series"].as_array().unwrap().iter().any(|s| {
        s["kernel"]
            .as_str()
            .is_some_and(|k| k.starts_with("<script>") && k.ends_with("<U+202E>"))
    }));
    let Some(bin) = chromium("history_site::names_from_programs_stay_text") else {
        return;
    };
    let index = out.join("index.html");
    let (dom, console) = run_chromium_url(bin, &format!("file://{}#all", index.display()), &["--dump-dom"]);
    assert!(console.is_empty(), "{console:#?}");
    assert!(dom.contains("&lt;script&gt;console.error('INJECTED')&lt;/script&gt;"));
    assert!(!dom.contains("<img"));
}

/// github-action-benchmark's real data.js (luigifcruz/blade, ../shared), or `None` after a skip.
fn blade_data(test: &str) -> Option<PathBuf> {
    let name = "fixtures/harness/other/luigifcruz-blade__gh-pages__dev-bench-data.js";
    let found = [
        support::root().join("../shared"),
        support::root().join("../../shared"),
    ]
    .into_iter()
    .map(|d| d.join(name))
    .find(|p| p.is_file());
    if found.is_none() {
        support::skip(test, "no ../shared/fixtures/harness/other beside the checkout");
    }
    found
}

#[test]
fn github_action_benchmark_history_is_imported_from_the_real_file() {
    let Some(data_js) =
        blade_data("history_site::github_action_benchmark_history_is_imported_from_the_real_file")
    else {
        return;
    };
    let raw = std::fs::read_to_string(&data_js).unwrap();
    let gab: Value =
        serde_json::from_str(raw[raw.find('{').unwrap()..].trim_end().trim_end_matches(';')).unwrap();
    let entries = gab["entries"].as_object().unwrap();
    let names: BTreeSet<(String, String)> = entries
        .iter()
        .flat_map(|(suite, runs)| {
            runs.as_array().unwrap().iter().flat_map(move |run| {
                run["benches"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |b| (suite.clone(), b["name"].as_str().unwrap().to_owned()))
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let flag = format!("--import-github-action-benchmark={}", data_js.display());
    let (_, data) = site(&[], &out, &[&flag]);
    let series = data["series"].as_array().unwrap();
    assert_eq!(series.len(), names.len());
    assert_eq!(data["commit_url"], "https://github.com/luigifcruz/blade/commit/");
    // One point per commit, with the file's value, in the order the benchmarks ran.
    let run = &entries["Memory Benchmark"][0];
    let bench = &run["benches"][0];
    let s = series
        .iter()
        .find(|s| s["target"] == "Memory Benchmark" && s["kernel"] == bench["name"])
        .unwrap();
    assert_eq!(s["y"][0], bench["value"]);
    assert_eq!(s["unit"], "ns/iter");
    let sha = run["commit"]["id"].as_str().unwrap();
    assert_eq!(data["commits"][s["x"][0].as_u64().unwrap() as usize]["sha"], sha);
    // Results files after it continue the same page.
    let files = history(dir.path(), &|_| {});
    let out2 = dir.path().join("site2");
    let (_, both) = site(&files[..6], &out2, &[&flag]);
    assert_eq!(
        both["series"].as_array().unwrap().len(),
        names.len() + expected_series(&files[..6]).len()
    );
    let Some(bin) = chromium("history_site::github_action_benchmark_history_is_imported_from_the_real_file")
    else {
        return;
    };
    let index = out.join("index.html");
    let (missing, console, dom) = missing_charts(bin, &index, &data);
    assert!(
        console.is_empty() && missing.is_empty(),
        "{console:#?} {missing:?}"
    );
    assert!(dom.contains(&format!("https://github.com/luigifcruz/blade/commit/{sha}")));
}

#[test]
fn the_output_folder_is_its_own_and_bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let files = history(dir.path(), &|_| {});
    // A folder of the user's files is refused, and left as it was.
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("index.html"), "my page").unwrap();
    let (code, text) = run_history(&[files[0].as_os_str(), "--out".as_ref(), mine.as_os_str()]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("did not write") && text.contains("empty folder"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("index.html")).unwrap(),
        "my page"
    );
    // Nothing to draw; a damaged data.js; a repository URL that is not one.
    let out = dir.path().join("site");
    let (code, text) = run_history(&["--out".as_ref(), out.as_os_str()]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--import-github-action-benchmark"), "{text}");
    let junk = dir.path().join("data.js");
    std::fs::write(&junk, "window.BENCHMARK_DATA = {\"entries\": 3};").unwrap();
    let (code, text) = run_history(&[
        "--import-github-action-benchmark".as_ref(),
        junk.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("data.js") && text.contains("github-action-benchmark"),
        "{text}"
    );
    assert!(!out.exists(), "a bad input leaves no folder behind");
    let (code, text) = run_history(&[
        files[0].as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--repo-url".as_ref(),
        "javascript:alert(1)".as_ref(),
    ]);
    assert_eq!(code, 2, "{text}");
    // A page that is a link is not written through.
    let (code, _) = run_history(&[files[0].as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert_eq!(code, 0);
    let elsewhere = dir.path().join("elsewhere.html");
    std::fs::write(&elsewhere, "keep").unwrap();
    std::fs::remove_file(out.join("index.html")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("index.html")).unwrap();
    let (code, text) = run_history(&[files[0].as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("symbolic link"), "{text}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
}

#[test]
fn the_check_summary_links_each_row_to_its_chart_on_the_site() {
    // A real check of the slowed-down example recording, as GitHub Actions runs it, with the
    // site's address set: each highlighted row's metric links to the chart of its series on the
    // site drawn from the same results.
    let dir = tempfile::tempdir().unwrap();
    let (json, summary) = (dir.path().join("r.json"), dir.path().join("summary.md"));
    let out = bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-slowdown",
            "--baselines",
            "examples/baselines",
            "--json",
        ])
        .arg(&json)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", dir.path().join("out"))
        .env("CGP_GATE_HISTORY_URL", "https://acme.github.io/kernels/")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    let links: Vec<&str> = md
        .split("](https://acme.github.io/kernels/#")
        .skip(1)
        .map(|rest| &rest[..rest.find(')').unwrap()])
        .collect();
    assert!(!links.is_empty(), "{md}");
    let (_, data) = site(std::slice::from_ref(&json), &dir.path().join("site"), &[]);
    let ids: BTreeSet<&str> = data["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    for l in &links {
        assert!(ids.contains(l), "{l} is no chart of the site");
    }
    // Without the address, the same summary has no link.
    let summary2 = dir.path().join("summary2.md");
    bin()
        .args(["report", "--from"])
        .arg(&json)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary2)
        .env("GITHUB_OUTPUT", dir.path().join("out"))
        .output()
        .unwrap();
    let plain = std::fs::read_to_string(&summary2).unwrap();
    assert!(
        plain.contains("gpu__time_duration.sum") && !plain.contains("github.io"),
        "{plain}"
    );
}
