//! JUnit output parsed back (quick-junit) and by an independent reader (Python's junitparser).

use cgp_test_support as support;

use std::path::PathBuf;
use std::process::Command;

use cgp_outcome::outcome::results::read as read_results;
use cgp_outcome::outcome::results::{Results, RowVerdict};
use cgp_report::report::junit;
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

fn fixture(name: &str) -> Results {
    read_results(&support::fixture("results").join(name)).unwrap()
}

fn prop<'a>(props: &'a [quick_junit::Property], name: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|p| p.name.as_str() == name)
        .map(|p| p.value.as_str())
}

#[test]
fn every_row_becomes_one_case_in_its_targets_suite() {
    let r = fixture("mixed.json");
    let report = Report::deserialize_from_str(&junit(&r)).unwrap();
    let names: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gemm", "reduce", "softmax", "attention"]);
    let cases: usize = report.test_suites.iter().map(|s| s.test_cases.len()).sum();
    assert_eq!(cases, r.rows.len() + r.errors.len());
    for row in &r.rows {
        let suite = report
            .test_suites
            .iter()
            .find(|s| s.name.as_str() == row.key.target)
            .unwrap();
        let name = format!(
            "{}[{}] {} {}",
            row.key.target,
            row.key.size,
            row.kernel_label(),
            row.key.metric
        );
        let case = suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap_or_else(|| panic!("no case named {name}"));
        assert_eq!(prop(&case.properties, "verdict"), Some(row.verdict().as_str()));
        match (&case.status, row.verdict()) {
            (
                TestCaseStatus::NonSuccess {
                    kind: NonSuccessKind::Failure,
                    message,
                    ..
                },
                RowVerdict::Regression,
            ) => {
                let m = message.as_ref().unwrap().as_str();
                // The failure message carries the change and its interval, as every report
                // prints them, and the medians as context.
                let b = cgp_core::foundation::units::human(
                    row.sides.baseline.as_ref().unwrap().median,
                    &row.unit,
                );
                let c = cgp_core::foundation::units::human(
                    row.sides.candidate.as_ref().unwrap().median,
                    &row.unit,
                );
                assert!(m.contains(&format!("median base {b} → head {c}")), "{m}");
                let [lo, hi] = row.estimate().change_ci().unwrap();
                let change = row.estimate().change().unwrap();
                assert!(
                    m.contains(&format!(
                        "change {:+.2}% [{:+.2}%, {:+.2}%]",
                        change * 100.0,
                        lo * 100.0,
                        hi * 100.0
                    )),
                    "{m}"
                );
                assert!(m.contains("95% CI"), "{m}");
            }
            (TestCaseStatus::Skipped { message, .. }, RowVerdict::Inconclusive | RowVerdict::Missing) => {
                assert!(
                    message
                        .as_ref()
                        .unwrap()
                        .as_str()
                        .starts_with(row.verdict().as_str())
                );
            }
            (
                TestCaseStatus::Success { .. },
                RowVerdict::Pass | RowVerdict::Improvement | RowVerdict::New,
            ) => {}
            (s, v) => panic!("{name}: verdict {v:?} rendered as {s:?}"),
        }
        // Per-case numbers round-trip exactly.
        if let Some(b) = &row.sides.baseline {
            let v: f64 = prop(&case.properties, "baseline_median")
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(v.to_bits(), b.median.to_bits(), "{name}");
        }
        if let Some(p) = row.estimate().p() {
            let v: f64 = prop(&case.properties, "p").unwrap().parse().unwrap();
            assert_eq!(v.to_bits(), p.to_bits(), "{name}");
        }
    }
}

#[test]
fn run_errors_are_error_cases_and_totals_add_up() {
    let r = fixture("mixed.json");
    let report = Report::deserialize_from_str(&junit(&r)).unwrap();
    let attention = report
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "attention")
        .unwrap();
    let case = &attention.test_cases[0];
    assert_eq!(case.name.as_str(), "attention[seq=8192,heads=32] (run)");
    match &case.status {
        TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Error,
            ty,
            message,
            ..
        } => {
            assert_eq!(ty.as_ref().unwrap().as_str(), "timeout");
            assert!(message.as_ref().unwrap().as_str().contains("600 s"));
        }
        s => panic!("run error rendered as {s:?}"),
    }
    let failures: usize = report.test_suites.iter().map(|s| s.failures).sum();
    let errors: usize = report.test_suites.iter().map(|s| s.errors).sum();
    let skipped: usize = report.test_suites.iter().map(|s| s.skipped).sum();
    assert_eq!(failures, r.count(RowVerdict::Regression));
    assert_eq!(errors, r.count(RowVerdict::Error) + r.errors.len());
    assert_eq!(
        skipped,
        r.count(RowVerdict::Inconclusive) + r.count(RowVerdict::Missing)
    );
}

#[test]
fn suites_carry_the_fingerprint_and_ncu_version() {
    let r = fixture("pass.json");
    let report = Report::deserialize_from_str(&junit(&r)).unwrap();
    assert!(!report.test_suites.is_empty());
    for s in &report.test_suites {
        assert_eq!(prop(&s.properties, "gpu_name"), Some("NVIDIA H200"));
        assert_eq!(
            prop(&s.properties, "gpu_uuid"),
            Some(r.fingerprint.gpu_uuid.as_str())
        );
        assert_eq!(prop(&s.properties, "ncu_version"), Some("2025.1.1.0"));
        assert_eq!(prop(&s.properties, "synthetic"), Some("true"));
        assert_eq!(s.failures + s.errors, 0);
        // Suite time is the target's measured wall time.
        let secs = r.cost_seconds[s.name.as_str()];
        assert!((s.time.unwrap().as_secs_f64() - secs).abs() < 1e-6);
    }
}

#[test]
fn hostile_names_survive_the_round_trip() {
    let mut r = fixture("mixed.json");
    let nasty = "k<\"'&]]>\u{1b}[31m</testcase><script>x</script>\u{0}";
    r.rows[0].key.kernel = Some(nasty.into());
    r.errors[0].message = "line1\nline2 ]]> & <b>".to_owned();
    let xml = junit(&r);
    let report = Report::deserialize_from_str(&xml).unwrap();
    let names: Vec<&str> = report.test_suites[0]
        .test_cases
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    // Control characters cannot appear in XML 1.0: quick-junit drops NUL and whole ANSI escape
    // sequences; everything else comes back as written.
    assert!(
        names
            .iter()
            .any(|n| n.contains("k<\"'&]]></testcase><script>x</script> ")),
        "{names:?}"
    );
    assert!(!xml.contains("<script>"));
}

fn junitparser_check(test: &str, xml_path: &PathBuf) -> Option<String> {
    // The `python3` on PATH: the one `python3 -m pip install junitparser` installs into.
    let python = "python3";
    if !Command::new(python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        support::skip(
            test,
            "python3 is not installed, so JUnit output was not checked with junitparser",
        );
        return None;
    }
    // Prints one line per case: suite, verdict kind, name; and suite totals.
    let script = r#"
import sys
try:
    import junitparser
except ImportError as e:
    print("IMPORT-ERROR", e)
    sys.exit(3)
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    print("SUITE", suite.name, suite.tests, suite.failures, suite.errors, suite.skipped)
    for case in suite:
        kinds = [type(r).__name__ for r in case.result]
        print("CASE", suite.name, ",".join(kinds) or "Success", case.name)
"#;
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(xml_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.code() == Some(3) {
        support::skip(
            test,
            &format!(
                "junitparser is not importable ({}); run `bash .ci/setup`",
                stdout.trim()
            ),
        );
        return None;
    }
    assert!(
        out.status.success(),
        "junitparser failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout)
}

#[test]
fn junitparser_reads_the_same_verdicts() {
    let r = fixture("mixed.json");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, junit(&r)).unwrap();
    let Some(out) = junitparser_check("report_junit::junitparser_reads_the_same_verdicts", &path) else {
        return;
    };
    let cases: Vec<(&str, &str, &str)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("CASE "))
        .map(|l| {
            let mut it = l.splitn(3, ' ');
            (it.next().unwrap(), it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    assert_eq!(cases.len(), r.rows.len() + r.errors.len(), "{out}");
    for row in &r.rows {
        let name = format!(
            "{}[{}] {} {}",
            row.key.target,
            row.key.size,
            row.kernel_label(),
            row.key.metric
        );
        let (suite, kind, _) = cases
            .iter()
            .find(|c| c.2 == name)
            .unwrap_or_else(|| panic!("{name} not in {out}"));
        assert_eq!(*suite, row.key.target);
        let expected = match row.verdict() {
            RowVerdict::Regression => "Failure",
            RowVerdict::Error => "Error",
            RowVerdict::Inconclusive | RowVerdict::Missing => "Skipped",
            _ => "Success",
        };
        assert_eq!(*kind, expected, "{name}");
    }
    assert!(cases.iter().any(|c| c.0 == "attention" && c.1 == "Error"));
    let gemm = out.lines().find(|l| l.starts_with("SUITE gemm ")).unwrap();
    assert_eq!(gemm, "SUITE gemm 4 1 0 1");
}

#[test]
fn junits_one_escaping_function_makes_text_an_xml_reader_gives_back() {
    let hostile = "a<b>&\"c\"'d' ]]> <!-- x -->\u{1b}[31m end";
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"n\" tests=\"1\" failures=\"0\" errors=\"0\"><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase name=\"{}\"/></testsuite></testsuites>\n",
        cgp_report::report::junit::escape(hostile)
    );
    let report = Report::deserialize_from_str(&xml).unwrap();
    let name = report.test_suites[0].test_cases[0].name.as_str();
    // ESC cannot appear in XML 1.0 and is dropped; everything else comes back as written.
    assert_eq!(name, hostile.replace('\u{1b}', ""), "{xml}");
}
