//! The HTML report: structure and escaping, then real headless Chromium (console clean, charts
//! in the DOM, a screenshot).

use std::path::{Path, PathBuf};

use cgp_test_support::{chromium, fixture as fixture_path, run_chromium};

use cgp_outcome::outcome::results::Results;
use cgp_outcome::outcome::results::read as read_results;
use cgp_report::report::html;

const HOSTILE: &str =
    "<script>console.error('INJECTED')</script><img src=x onerror=\"console.error('X')\"> & \"q\" 'a'";

fn fixture(name: &str) -> Results {
    read_results(&fixture_path("results").join(name)).unwrap()
}

fn hostile_results() -> Results {
    let mut r = fixture("mixed.json");
    r.rows[0].key.kernel = Some(HOSTILE.into());
    r.errors[0].message = HOSTILE.to_owned();
    r.spec_path = HOSTILE.to_owned();
    r.roofline[0].target = HOSTILE.to_owned();
    r
}

#[test]
fn text_is_escaped_everywhere() {
    let page = html(&hostile_results());
    assert!(!page.contains("<script"), "a script element leaked");
    assert!(!page.contains("<img"), "an img element leaked");
    assert!(page.contains("&lt;script&gt;console.error(&#39;INJECTED&#39;)&lt;/script&gt;"));
    assert!(page.contains("onerror=&quot;console.error"));
}

#[test]
fn one_strip_plot_per_compared_row_and_a_roofline() {
    let r = fixture("mixed.json");
    let page = html(&r);
    let compared = r
        .rows
        .iter()
        .filter(|x| x.sides.baseline.is_some() && x.sides.candidate.is_some())
        .count();
    assert_eq!(page.matches("<figure>").count(), compared);
    // Strip plots plus the roofline.
    assert_eq!(page.matches("<svg ").count(), compared + 1);
    // Relative thresholds draw a limit line; the exact ones do not.
    let relative = r
        .rows
        .iter()
        .filter(|x| {
            x.sides.baseline.is_some()
                && x.sides.candidate.is_some()
                && matches!(
                    x.rule.threshold.as_ref().map(|t| &t.kind),
                    Some(cgp_outcome::outcome::results::ThresholdKind::Relative { .. })
                )
        })
        .count();
    assert_eq!(page.matches("class=\"limit\"").count(), relative);
    assert!(page.contains("<title>Roofline (log-log)</title>"));
    assert!(page.contains("peak 66.9 TFLOP/s"));
    assert!(page.contains("Synthetic data."));
    assert!(page.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""));
}

#[test]
fn no_roofline_without_points_and_mismatch_is_flagged() {
    let mut r = fixture("pass.json");
    r.roofline.clear();
    r.fingerprint_mismatch = vec![cgp_outcome::outcome::results::FingerprintDiff {
        field: "gpu_name".into(),
        baseline: "NVIDIA H200".into(),
        current: "NVIDIA H100 80GB HBM3".into(),
    }];
    let page = html(&r);
    assert!(!page.contains("Roofline"));
    assert!(page.contains("Fingerprint mismatch."));
    assert!(page.contains(
        "<th>field</th><th>baseline</th><th>this run</th></tr><tr><td>gpu_name</td><td>NVIDIA H200</td><td>NVIDIA H100 80GB HBM3</td>"
    ));
}

fn write_page(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn chromium_sees_a_clean_console_and_the_charts() {
    let Some(bin) = chromium("report_html::chromium_sees_a_clean_console_and_the_charts") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = hostile_results();
    let page = write_page(dir.path(), "report.html", &html(&r));
    let (dom, console) = run_chromium(bin, &page, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
    // The DOM as the browser built it: charts present, the hostile name as text only.
    let compared = r
        .rows
        .iter()
        .filter(|x| x.sides.baseline.is_some() && x.sides.candidate.is_some())
        .count();
    assert_eq!(dom.matches("<svg ").count(), compared + 1);
    assert!(dom.matches("<circle ").count() > 100);
    assert!(!dom.contains("<script"));
    assert!(dom.contains("&lt;script&gt;console.error('INJECTED')&lt;/script&gt;"));
}

#[test]
fn chromium_console_check_catches_external_loads() {
    // Control for the test above: the same check must see a blocked external image.
    let Some(bin) = chromium("report_html::chromium_console_check_catches_external_loads") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = html(&fixture("pass.json")).replace("<body>", "<body><img src=\"https://example.com/x.png\">");
    let page = write_page(dir.path(), "control.html", &page);
    let (_, console) = run_chromium(bin, &page, &["--dump-dom"]);
    assert!(
        console.iter().any(|l| l.contains("Content Security Policy")),
        "no CSP violation seen: {console:#?}"
    );
}

#[test]
fn chromium_screenshot_renders() {
    let Some(bin) = chromium("report_html::chromium_screenshot_renders") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path(), "report.html", &html(&fixture("mixed.json")));
    let png = dir.path().join("report.png");
    let (_, console) = run_chromium(
        bin,
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,1600",
            "--hide-scrollbars",
        ],
    );
    assert!(console.is_empty(), "{console:#?}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, right after the chunk header.
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), (1200, 1600));
    // A blank page compresses to a few KB; tables and charts do not.
    assert!(bytes.len() > 50_000, "{} bytes", bytes.len());
}

/// A missing row that fails the gate wears the failure colour, as decide::row_gate says; the
/// same row allowed keeps the plain `missing` pill (the row's class stays its verdict).
#[test]
fn a_missing_row_that_fails_the_gate_wears_the_failure_colour() {
    use cgp_outcome::outcome::results::RowVerdict;
    let mut r = fixture("mixed.json");
    let i = r
        .rows
        .iter()
        .position(|x| x.verdict() == RowVerdict::Missing)
        .unwrap();
    let allowed = html(&r);
    assert!(
        allowed.contains("<span class=\"pill missing\">missing</span>"),
        "{allowed}"
    );
    assert!(!allowed.contains("pill missing fails"));
    r.rows[i].outcome = cgp_outcome::outcome::results::Outcome::Missing(
        cgp_outcome::outcome::results::Missing::failing(Default::default()),
    );
    let failing = html(&r);
    assert!(
        failing.contains("<tr class=\"missing\"><td><span class=\"pill missing fails\">missing</span>"),
        "{failing}"
    );
}
