//! Checking a spec's metric names against what ncu knows for a chip, without a GPU:
//! `ncu --query-metrics --chips CHIP` lists the base names, and
//! `--query-metrics-mode suffix --metrics a,b` every valid full name of those bases.
//!
//! `validate` (src/commands/validate.rs) runs it only where it can: ncu installed and the chip
//! known (`CGP_GATE_CHIP`, or the compute capability of a baseline next to the spec). Otherwise
//! it says that the check was skipped and why, and still passes: a missing ncu is not a spec
//! error.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use crate::ncu::runner::{Invocation, run};

/// Environment variable naming the chip to check metric names for (`ga100`, `gh100`, ...).
pub const CHIP_ENV: &str = "CGP_GATE_CHIP";

/// The ncu chip name of a compute capability (the chips `ncu --list-chips` of 2022.3 lists).
pub fn chip_for_compute_capability(cc: &str) -> Option<&'static str> {
    Some(match cc.trim() {
        "7.0" => "gv100",
        "7.2" => "gv11b",
        "7.5" => "tu102",
        "8.0" => "ga100",
        "8.6" => "ga102",
        "8.7" => "ga10b",
        "8.9" => "ad102",
        "9.0" => "gh100",
        _ => return None,
    })
}

/// A metric name ncu does not know for the chip, with the closest names it does know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMetric {
    pub metric: String,
    pub suggestions: Vec<String>,
}

/// The names in a `--query-metrics` table: the first word of each row below the header.
pub fn parse_query(output: &str) -> BTreeSet<String> {
    output
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('-') && !l.starts_with("Chip "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "Metric" && w.contains("__"))
        .map(str::to_owned)
        .collect()
}

fn query(ncu: &Path, args: &[&str]) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let inv = Invocation {
        program: ncu.to_path_buf(),
        args: args.iter().map(Into::into).collect(),
        cwd: None,
        env: std::collections::BTreeMap::new(),
        timeout: Duration::from_secs(120),
        stdout: dir.path().join("out"),
        stderr: dir.path().join("err"),
    };
    let o = run(&inv).map_err(|e| format!("cannot run {}: {e}", ncu.display()))?;
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap_or_default();
    if o.code != Some(0) {
        return Err(format!(
            "`ncu {}` failed ({:?}): {}",
            args.join(" "),
            o.code,
            read("err").trim()
        ));
    }
    Ok(read("out"))
}

/// Check metric names (`dram__bytes_read.sum`) against ncu's list for `chip`. Names with a
/// `regex:`, `group:` or `breakdown:` prefix are left to ncu.
///
/// # Errors
/// When ncu cannot be run or does not know the chip.
pub fn check_metrics(ncu: &Path, chip: &str, metrics: &[String]) -> Result<Vec<UnknownMetric>, String> {
    let metrics: Vec<&String> = metrics.iter().filter(|m| !m.contains(':')).collect();
    if metrics.is_empty() {
        return Ok(Vec::new());
    }
    let bases_out = query(ncu, &["--query-metrics", "--chips", chip])?;
    let bases = parse_query(&bases_out);
    if bases.is_empty() {
        return Err(format!("`ncu --query-metrics --chips {chip}` listed no metrics"));
    }
    // `--query-metrics` lists the hardware counters only: `launch__`, `device__`, `profiler__`
    // and other collections are not in it (`launch__registers_per_thread` is valid and absent).
    // A metric whose unit (the part before `__`) the list does not have at all is not checked.
    let units: BTreeSet<&str> = bases.iter().filter_map(|b| b.split("__").next()).collect();
    let metrics: Vec<&String> = metrics
        .into_iter()
        .filter(|m| m.split("__").next().is_some_and(|u| units.contains(u)))
        .collect();
    let base_of = |m: &str| m.split('.').next().unwrap_or(m).to_owned();
    let known_bases: Vec<String> = metrics
        .iter()
        .map(|m| base_of(m))
        .filter(|b| bases.contains(b))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let full = if known_bases.is_empty() {
        BTreeSet::new()
    } else {
        parse_query(&query(
            ncu,
            &[
                "--query-metrics",
                "--chips",
                chip,
                "--query-metrics-mode",
                "suffix",
                "--metrics",
                &known_bases.join(","),
            ],
        )?)
    };
    let mut unknown = Vec::new();
    for m in metrics {
        let base = base_of(m);
        let ok = if bases.contains(&base) {
            m.as_str() == base || full.contains(m.as_str())
        } else {
            false
        };
        if !ok {
            let pool: Vec<&String> = if bases.contains(&base) {
                full.iter().collect()
            } else {
                bases.iter().collect()
            };
            let target = if bases.contains(&base) {
                m.as_str()
            } else {
                base.as_str()
            };
            let mut scored: Vec<(f64, &String)> = pool
                .into_iter()
                .map(|c| (strsim::jaro_winkler(target, c), c))
                .filter(|(s, _)| *s > 0.85)
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            unknown.push(UnknownMetric {
                metric: m.clone(),
                suggestions: scored.into_iter().take(3).map(|(_, c)| c.clone()).collect(),
            });
        }
    }
    Ok(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_tables_give_the_names() {
        // The layout of `ncu --query-metrics --chips ga100` (Nsight Compute 2022.3).
        let out = "Chip ga100\n\
-------------------- ------- ------ --------\n\
Metric Name          Metric Type     Metric Unit     Metric Description\n\
-------------------- ------- ------ --------\n\
dram__bytes          Counter         byte            # of bytes accessed in DRAM\n\
gpu__time_duration.avg   Counter     nsecond         equals to gpu__time_duration_measured_user if collectable, otherwise\n\
                                                     equals to gpu__time_duration_measured_wallclock\n";
        let names = parse_query(out);
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["dram__bytes", "gpu__time_duration.avg"]
        );
        assert_eq!(chip_for_compute_capability("9.0"), Some("gh100"));
        assert_eq!(chip_for_compute_capability("12.0"), None);
    }
}
