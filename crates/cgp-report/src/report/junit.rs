//! JUnit XML for CI test reporters, built with quick-junit.
//!
//! Mapping (documented in `docs/reports.md`): one `<testsuite>` per target, one `<testcase>` per
//! size x kernel x metric, by the row's gate status ([`crate::outcome::decide::row_gate`]): a row that fails
//! the gate -> `<failure>` (a regression, a missing row the run should have measured, an
//! inconclusive row under `--fail-on inconclusive`); a row or run error -> `<error>`; other
//! inconclusive and allowed missing rows -> `<skipped>` with a message (every CI reporter shows
//! skipped cases, while a success with a property would hide them); pass, improvement and new ->
//! success, with the verdict as a property.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::foundation::units::format_number;
use crate::outcome::decide::Gate;
use crate::outcome::results::{RowVerdict, RunError};
use crate::outcome::view::{RowView, RunView};
use crate::report::format::{case_name, change_cell, medians_sentence, p_value};

/// Render the results as JUnit XML.
pub fn junit<'a>(run: impl Into<RunView<'a>>) -> String {
    let run = run.into();
    let mut report = Report::new("cgp-gate");
    // Targets in the order the run produced them; targets that only failed come after.
    let mut order: Vec<&str> = Vec::new();
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    let targets = run
        .rows()
        .map(|r| r.key.target.as_str())
        .chain(run.errors.iter().map(|e| e.target.as_str()));
    for t in targets {
        suites.entry(t).or_insert_with(|| {
            order.push(t);
            suite(run, t)
        });
    }
    for row in run.rows() {
        if let Some(s) = suites.get_mut(row.key.target.as_str()) {
            s.add_test_case(row_case(&row));
        }
    }
    for e in run.errors {
        if let Some(s) = suites.get_mut(e.target.as_str()) {
            s.add_test_case(error_case(e));
        }
    }
    for t in order {
        if let Some(s) = suites.remove(t) {
            report.add_test_suite(s);
        }
    }
    // Serialising to memory fails only on I/O errors, which a Vec cannot produce; XmlString has
    // already removed the characters XML cannot hold. Should quick-junit ever fail anyway, the
    // reader gets a valid report whose one error case gives the reason, rather than a panic.
    let xml = report.to_string().unwrap_or_else(|e| {
        let msg = escape(&format!("failed to serialise the JUnit report: {e}"));
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cgp-gate\" tests=\"1\" failures=\"0\" errors=\"1\"><testsuite name=\"cgp-gate\" tests=\"1\" failures=\"0\" errors=\"1\"><testcase name=\"report\"><error message=\"{msg}\"/></testcase></testsuite></testsuites>\n"
        )
    });
    // Bidi controls in names would make a CI test view show a different name than the data's.
    crate::report::text::markup_document(&xml)
}

/// JUnit's one escaping function: text for XML 1.0 element content or a quoted attribute value.
/// The five markup characters become entities, tab and line breaks character references;
/// characters XML 1.0 cannot hold (control
/// characters other than tab, newline and carriage return) are dropped. quick-junit escapes what
/// it writes itself; this is for the XML this module writes by hand.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // As references, so an attribute value keeps them (a reader normalises raw ones).
            '\t' | '\n' | '\r' => out.push_str(&format!("&#{};", u32::from(c))),
            // Shown as `<U+FFFE>`: bidi controls, invisible characters and the noncharacters XML
            // 1.0 has no form for, not even a reference; other controls are dropped.
            c if crate::report::text::is_hidden(c) => out.push_str(&crate::report::text::code_point_html(c)),
            c if crate::report::text::not_xml(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn suite(run: RunView<'_>, target: &str) -> TestSuite {
    let mut s = TestSuite::new(target);
    let fp = run.fingerprint;
    let props = [
        ("gpu_name", fp.gpu_name.as_str()),
        ("gpu_uuid", fp.gpu_uuid.as_str()),
        ("compute_capability", fp.compute_capability.as_str()),
        ("driver_version", fp.driver_version.as_str()),
        ("ncu_version", fp.ncu_version.as_str()),
        ("profiler", fp.profiler.as_str()),
        ("profiler_version", fp.profiler_version.as_str()),
        ("clocks", fp.clocks.as_str()),
        ("clock_control", fp.clock_control.as_str()),
        ("cache_control", fp.cache_control.as_str()),
        ("tool_version", run.tool_version),
        ("spec_path", run.spec_path),
        ("spec_hash", run.spec_hash),
        ("source", run.source.as_str()),
        ("multiple_testing", run.multiple_testing),
        ("run_verdict", run.verdict.as_str()),
    ];
    for (k, v) in props {
        s.add_property(Property::new(k, v));
    }
    s.add_property(Property::new("synthetic", run.synthetic.to_string()));
    for c in run.caveats {
        s.add_property(Property::new("caveat", c.as_str()));
    }
    if let Some(label) = crate::report::format::real_capture(run) {
        s.add_property(Property::new("capture", label));
    }
    s.add_property(Property::new(
        "health",
        crate::report::console::run_health_line(run),
    ));
    if let Some(c) = run.git_commit {
        s.add_property(Property::new("git_commit", c));
    }
    // `check --base` (docs/confirm.md): against which commit, and what became of it.
    if let Some(line) = crate::report::confirm::run_line(run) {
        s.add_property(Property::new(
            "base_commit",
            run.confirmation.base_commit.as_str(),
        ));
        s.add_property(Property::new("confirmation", line));
        s.add_property(Property::new(
            "confirmation_method",
            run.confirmation.method.as_str(),
        ));
    }
    for d in run.fingerprint_mismatch {
        s.add_property(Property::new(
            format!("fingerprint_mismatch.{}", d.field),
            format!("baseline {}, this run {}", d.baseline, d.current),
        ));
    }
    // A results file may say anything: `from_secs_f64` panics past u64::MAX seconds (found by
    // examples/fuzz.rs), so out-of-range times are left out.
    if let Some(secs) = run.cost_seconds.get(target)
        && let Ok(t) = Duration::try_from_secs_f64(*secs)
    {
        s.set_time(t);
    }
    s
}

/// The failure message: everything a reader needs on one line.
fn failure_message(row: &RowView<'_>) -> String {
    format!(
        "{} {}: change {} ({}), threshold {}, p (adj.) {}",
        row.key.metric,
        row.verdict.as_str(),
        change_cell(row, None),
        medians_sentence(row),
        row.rule_text(),
        p_value(row.p()),
    )
}

/// The long text of a non-success: the reason and the samples.
fn description(row: &RowView<'_>) -> String {
    let mut d = format!(
        "{}\nmethod: {}\n",
        super::format::reason_with_config(row),
        row.method
    );
    for (name, side) in [("base", &row.sides.baseline), ("head", &row.sides.candidate)] {
        if let Some(s) = side {
            let xs: Vec<String> = s.samples.iter().map(|x| format_number(*x)).collect();
            d.push_str(&format!("{name} samples ({}): {}\n", row.unit, xs.join(" ")));
        }
    }
    d
}

fn row_case(row: &RowView<'_>) -> TestCase {
    // The row's gate status (crate::outcome::decide) picks failure, error, skipped or success; the
    // verdict is the type, so a missing row that fails the gate is `<failure type="missing">`.
    let gate = row.gate;
    let status = match (gate.gate(), row.verdict) {
        (Gate::Fail | Gate::Error, v) => {
            let kind = if gate.gate() == Gate::Error {
                NonSuccessKind::Error
            } else {
                NonSuccessKind::Failure
            };
            let message = if gate.fails_beyond_its_verdict() {
                format!("{}: {}", v.as_str(), failure_message(row))
            } else {
                failure_message(row)
            };
            let mut st = TestCaseStatus::non_success(kind);
            st.set_type(v.as_str())
                .set_message(message)
                .set_description(description(row));
            st
        }
        (Gate::Pass, _) if row.skipped.is_some() => {
            let mut st = TestCaseStatus::skipped();
            st.set_type(row.skipped.map_or("skipped", |s| s.as_str()))
                .set_message(row.reason);
            st
        }
        (Gate::Warn, v) | (Gate::Pass, v @ RowVerdict::Missing) => {
            let mut st = TestCaseStatus::skipped();
            st.set_type(v.as_str())
                .set_message(format!("{}: {}", v.as_str(), failure_message(row)))
                .set_description(description(row));
            st
        }
        (Gate::Pass, _) => TestCaseStatus::success(),
    };
    let mut case = TestCase::new(case_name(row), status);
    case.set_classname(crate::measured::samples::target_size(
        &row.key.target,
        &row.key.size,
    ));
    case.add_properties(row_properties(row));
    let mut out = Vec::new();
    if matches!(row.verdict, RowVerdict::Improvement | RowVerdict::New) {
        out.push(format!(
            "{}: {}",
            row.verdict.as_str(),
            super::format::reason_with_config(row)
        ));
    } else if let Some(c) = &row.config_change {
        out.push(format!("launch configuration changed: {}", c.describe()));
    }
    // What the test left out, on every row whatever else it says (issue 43).
    if let Some(l) = super::format::left_out(row) {
        out.push(format!("left out: {l}"));
    }
    if !out.is_empty() {
        case.set_system_out(out.join("\n"));
    }
    case
}

fn row_properties(row: &RowView<'_>) -> Vec<Property> {
    let mut p = vec![
        Property::new("verdict", row.verdict.as_str()),
        Property::new("unit", row.unit),
        Property::new("threshold", row.rule_text()),
        Property::new("direction", row.direction),
        Property::new("method", row.method.as_str()),
    ];
    // `Display` for f64 is the shortest text that reads back to the same number, so a consumer
    // gets exactly the run's values (a p-value of 1.53e-6 must not become 0.000002).
    let mut num = |k: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            p.push(Property::new(k, v.to_string()));
        }
    };
    num("baseline_median", row.sides.baseline.as_ref().map(|s| s.median));
    num("candidate_median", row.sides.candidate.as_ref().map(|s| s.median));
    num("baseline_n", row.sides.baseline.as_ref().map(|s| s.n as f64));
    num("candidate_n", row.sides.candidate.as_ref().map(|s| s.n as f64));
    num("change", row.change());
    num("change_ci_low", row.interval().map(|c| c[0]));
    num("change_ci_high", row.interval().map(|c| c[1]));
    num("confidence", row.confidence());
    num("p", row.test().map(|t| t.p));
    num("p_adjusted", row.test().and_then(|t| t.p_adjusted));
    num("remeasured", Some(f64::from(row.remeasured)));
    if let Some(c) = &row.config_change {
        p.push(Property::new("config_baseline", c.baseline.join(" + ")));
        p.push(Property::new("config_candidate", c.candidate.join(" + ")));
    }
    confirmation_properties(row, &mut p);
    p
}

/// `check --base` (docs/confirm.md): whether the row was confirmed against the base commit, the
/// pairs, and the stored baseline's verdict and change as context (the row's own `change` above
/// is the paired one).
fn confirmation_properties(row: &RowView<'_>, p: &mut Vec<Property>) {
    use crate::outcome::results::Confirmation;
    match &row.confirmation {
        Confirmation::None => {}
        Confirmation::NotRun { base_commit } => {
            p.push(Property::new("confirmation", "not-run"));
            p.push(Property::new("base_commit", base_commit.as_str()));
        }
        Confirmation::Confirmed(c) => {
            p.push(Property::new("confirmation", "confirmed"));
            p.push(Property::new("base_commit", c.base_commit.as_str()));
            p.push(Property::new("pairs", c.pairs.to_string()));
            p.push(Property::new("screen_verdict", c.screen.verdict.as_str()));
            if let Some(ch) = c.screen.change.filter(|v| v.is_finite()) {
                p.push(Property::new("screen_change", ch.to_string()));
            }
            if c.same_sass {
                p.push(Property::new("same_sass", "true"));
            }
        }
    }
}

fn error_case(e: &RunError) -> TestCase {
    let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
    st.set_type(e.kind.as_str()).set_message(e.message.as_str());
    let name = match &e.size {
        Some(size) => format!("{}[{size}] (run)", e.target),
        None => format!("{} (run)", e.target),
    };
    let mut case = TestCase::new(name, st);
    case.set_classname(match &e.size {
        Some(size) => format!("{}[{size}]", e.target),
        None => e.target.clone(),
    });
    case.add_property(Property::new("verdict", "error"));
    case.add_property(Property::new("kind", e.kind.as_str()));
    case
}
