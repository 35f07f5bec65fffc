//! The measurement seam's rule (tests/architecture_syntax/seam.rs) proves itself on a scratch
//! copy with planted violations.

use super::Scratch;

/// Issue 62: the engine measures through `profile::Measurer`; a capture asked of the
/// `Profiler` itself, a tool's version or the reading of a capture in the engine are found
/// (over lines too), in its test items and the simulations they stay allowed.
#[test]
fn the_engine_reaching_behind_the_measurement_seam_is_found() {
    use crate::architecture_syntax::engine_measures_through_the_seam as rule;
    let s = Scratch::new();
    assert!(rule(s.root()).is_empty(), "{:#?}", rule(s.root()));
    s.append(
        "crates/cgp-engine/src/run/measure.rs",
        "\nfn planted(p: &mut dyn crate::profile::Profiler, job: crate::profile::Job<'_>) -> bool {\n    p\n        .capture(job)\n        .is_ok()\n}\n#[cfg(test)]\nmod planted_test {\n    fn allowed(p: &mut dyn crate::profile::Profiler) {\n        p.probe(&[]);\n    }\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/check/mod.rs",
        "\nfn planted(p: &mut dyn Measurer, t: &[&Target]) {\n    let _ = crate::profile::Versions::of;\n    let _ = crate::profile::extract::extract;\n    let _ = (p, t);\n}\n",
    );
    s.append(
        "crates/cgp-engine/src/run/simulate.rs",
        "\nfn allowed(p: &mut dyn Profiler) -> bool {\n    p.reads_a_recording()\n}\n",
    );
    let found = rule(s.root());
    for e in [
        "run/measure.rs:",
        "names `Profiler`",
        "names `.capture(`",
        "run/check/mod.rs:",
        "names `Versions::of`",
        "names `profile::extract`",
    ] {
        assert!(
            found.iter().any(|v| v.contains(e)),
            "`{e}` was not found: {found:#?}"
        );
    }
    // measure.rs: `Profiler` and `.capture(` of the planted function; check: two.
    assert_eq!(found.len(), 4, "{found:#?}");
}
