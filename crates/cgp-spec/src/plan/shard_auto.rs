//! `--shard auto`: the shard from the variables of the engine that runs the job.
//!
//! A pure function of a variable map (the command layer passes the process environment), so every
//! engine is tested without touching the process environment. The result is a plain [`Shard`]:
//! the split itself, its balancing by `--shard-costs`, the results' `shard` field and `merge` are
//! the same as with `--shard K/N`, whatever engine the numbers came from.
//!
//! Engines, and the variables read (an empty value counts as unset):
//!
//! | engine | index | total |
//! |---|---|---|
//! | explicit | `CGP_GATE_SHARD` = `K/N` | |
//! | Kubernetes Indexed Job | `JOB_COMPLETION_INDEX` (0-based) | `CGP_GATE_SHARD_TOTAL` (the Job's `completions`, set in the manifest) |
//! | Slurm job array | `SLURM_ARRAY_TASK_ID` | `SLURM_ARRAY_TASK_COUNT`, or `SLURM_ARRAY_TASK_MIN`/`MAX` (`STEP`) |
//! | GitLab CI `parallel:` | `CI_NODE_INDEX` (1-based) | `CI_NODE_TOTAL` |
//! | GitHub Actions matrix | `CGP_GATE_SHARD_INDEX` (0-based: `strategy.job-index`) | `CGP_GATE_SHARD_TOTAL` (`strategy.job-total`) |
//!
//! GitHub Actions puts no matrix position in the environment, so the workflow (or the action,
//! with `shard: auto`) passes `strategy.job-index` and `strategy.job-total`. Outside GitHub the
//! same two variables are a generic 0-based index and total.
//!
//! Several engines can be present at once (a GitLab job that submits to Slurm sees both
//! `CI_NODE_TOTAL=1` and the array). An engine that says "one job" (total 1) gives way to one that
//! splits; two engines that split the run differently are refused, as is any partial or
//! inconsistent set of one engine's variables.

use std::collections::BTreeMap;

use super::shard::{MAX_SHARDS, Shard};

/// Where `--shard auto` found its shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoShard {
    pub shard: Shard,
    /// The engine, in words: `GitLab CI (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)`.
    pub source: String,
}

/// What `--shard` asks for: a fixed `K/N`, or `auto` (the engine's variables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardRequest {
    Fixed(Shard),
    Auto,
}

impl std::str::FromStr for ShardRequest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(Self::Auto)
        } else {
            s.parse::<Shard>()
                .map(Self::Fixed)
                .map_err(|e| format!("{e}, or `auto` to read it from the CI engine"))
        }
    }
}

impl From<Shard> for ShardRequest {
    fn from(s: Shard) -> Self {
        Self::Fixed(s)
    }
}

/// The variable names each engine reads; tests and the docs use them.
pub const EXPLICIT: &str = "CGP_GATE_SHARD";
pub const INDEX: &str = "CGP_GATE_SHARD_INDEX";
pub const TOTAL: &str = "CGP_GATE_SHARD_TOTAL";

const HELP: &str = "set the engine's variables consistently, or pass --shard K/N (docs/scale.md lists the variables per engine)";

/// The shard the variables in `vars` name.
///
/// # Errors
/// A message (for an exit-2 usage error) when no engine's variables are present, when one
/// engine's variables are partial, not numbers or inconsistent, or when two engines disagree.
pub fn from_vars(vars: &BTreeMap<String, String>) -> Result<AutoShard, String> {
    let vars = Vars(vars);
    let get = |k: &str| vars.get(k);
    let mut found: Vec<AutoShard> = Vec::new();
    if let Some(v) = get(EXPLICIT) {
        let shard: Shard = v.parse().map_err(|e| format!("{EXPLICIT}: {e}"))?;
        found.push(AutoShard {
            shard,
            source: format!("{EXPLICIT}={v}"),
        });
    }
    if let Some(a) = kubernetes(&vars)? {
        found.push(a);
    }
    if let Some(a) = slurm(&vars)? {
        found.push(a);
    }
    if let Some(a) = gitlab(&vars)? {
        found.push(a);
    }
    if let Some(a) = generic_index(&vars)? {
        found.push(a);
    }
    if found.is_empty() {
        return Err(format!(
            "--shard auto found no shard variables: none of {EXPLICIT}, JOB_COMPLETION_INDEX (Kubernetes), SLURM_ARRAY_TASK_ID (Slurm), CI_NODE_INDEX/CI_NODE_TOTAL (GitLab), {INDEX}/{TOTAL} (GitHub matrix) is set; {HELP}"
        ));
    }
    // An engine that says "one job" gives way to one that splits.
    let splitting: Vec<&AutoShard> = found.iter().filter(|a| a.shard.n > 1).collect();
    match splitting.as_slice() {
        [] => Ok(found.swap_remove(0)),
        [one] => Ok((*one).clone()),
        [first, rest @ ..] => {
            if let Some(other) = rest.iter().find(|a| a.shard != first.shard) {
                Err(format!(
                    "--shard auto found two engines that disagree: {} gives shard {} but {} gives shard {}; unset one, or pass --shard K/N",
                    first.source, first.shard, other.source, other.shard
                ))
            } else {
                Ok((*first).clone())
            }
        }
    }
}

/// The variables; an empty or blank value counts as unset.
struct Vars<'a>(&'a BTreeMap<String, String>);

impl<'a> Vars<'a> {
    fn get(&self, k: &str) -> Option<&'a str> {
        self.0.get(k).map(|v| v.trim()).filter(|v| !v.is_empty())
    }
}

/// A whole number in a variable, or a message naming it.
fn number(name: &str, v: &str) -> Result<u64, String> {
    v.parse::<u64>()
        .map_err(|_| format!("{name}={v} is not a whole number >= 0; {HELP}"))
}

/// Shard `index0 + 1` of `total`, checked.
fn shard(index0: u64, total: u64, source: String) -> Result<AutoShard, String> {
    if total == 0 {
        return Err(format!("{source}: a total of 0 shards; {HELP}"));
    }
    if total > MAX_SHARDS as u64 {
        return Err(format!(
            "{source}: {total} shards; at most {MAX_SHARDS} are supported"
        ));
    }
    if index0 >= total {
        return Err(format!(
            "{source}: the index is outside the {total} shards (shard {} of {total}); {HELP}",
            index0.saturating_add(1)
        ));
    }
    // Both fit in usize: total <= MAX_SHARDS.
    Ok(AutoShard {
        shard: Shard {
            k: index0 as usize + 1,
            n: total as usize,
        },
        source,
    })
}

fn kubernetes(vars: &Vars<'_>) -> Result<Option<AutoShard>, String> {
    let get = |k: &str| vars.get(k);
    let Some(i) = get("JOB_COMPLETION_INDEX") else {
        return Ok(None);
    };
    let Some(t) = get(TOTAL) else {
        return Err(format!(
            "JOB_COMPLETION_INDEX={i} (a Kubernetes Indexed Job) but no {TOTAL}: set {TOTAL} in the pod template to the Job's `completions` (examples/k8s/indexed-job.yaml)"
        ));
    };
    let index = number("JOB_COMPLETION_INDEX", i)?;
    let total = number(TOTAL, t)?;
    shard(
        index,
        total,
        format!("Kubernetes Indexed Job (JOB_COMPLETION_INDEX={i}, {TOTAL}={t})"),
    )
    .map(Some)
}

fn slurm(vars: &Vars<'_>) -> Result<Option<AutoShard>, String> {
    let get = |k: &str| vars.get(k);
    let Some(id) = get("SLURM_ARRAY_TASK_ID") else {
        for k in [
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_MAX",
        ] {
            if let Some(v) = get(k) {
                return Err(format!(
                    "{k}={v} but no SLURM_ARRAY_TASK_ID: is this a job array task (sbatch --array)? {HELP}"
                ));
            }
        }
        return Ok(None);
    };
    let task = number("SLURM_ARRAY_TASK_ID", id)?;
    let min = get("SLURM_ARRAY_TASK_MIN")
        .map(|v| number("SLURM_ARRAY_TASK_MIN", v))
        .transpose()?;
    let max = get("SLURM_ARRAY_TASK_MAX")
        .map(|v| number("SLURM_ARRAY_TASK_MAX", v))
        .transpose()?;
    let count = get("SLURM_ARRAY_TASK_COUNT")
        .map(|v| number("SLURM_ARRAY_TASK_COUNT", v))
        .transpose()?;
    let step = get("SLURM_ARRAY_TASK_STEP")
        .map(|v| number("SLURM_ARRAY_TASK_STEP", v))
        .transpose()?
        .unwrap_or(1);
    if step == 0 {
        return Err(format!("SLURM_ARRAY_TASK_STEP=0; {HELP}"));
    }
    let mut source = format!("Slurm job array (SLURM_ARRAY_TASK_ID={id}");
    for k in [
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX",
        "SLURM_ARRAY_TASK_STEP",
    ] {
        if let Some(v) = get(k) {
            source.push_str(&format!(", {k}={v}"));
        }
    }
    source.push(')');
    // Without MIN the array is taken to start at 0 (`--array=0-7`).
    let min = min.unwrap_or(0);
    let from_range = match max {
        Some(max) if max < min => {
            return Err(format!("{source}: MAX is below MIN; {HELP}"));
        }
        Some(max) => Some((max - min) / step + 1),
        None => None,
    };
    let total = match (count, from_range) {
        (Some(c), Some(r)) if c != r => {
            return Err(format!(
                "{source}: {c} tasks, but MIN..MAX by STEP holds {r}: the array is not one evenly spaced range (e.g. --array=1,3,7); submit it as --array=0-{} (one task per shard)",
                c.saturating_sub(1)
            ));
        }
        (Some(c), _) => c,
        (None, Some(r)) => r,
        (None, None) => {
            return Err(format!(
                "{source}: neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is set, so the number of shards is unknown; {HELP}"
            ));
        }
    };
    if task < min || (task - min) % step != 0 {
        return Err(format!(
            "{source}: the task id is not in the array MIN, MIN+STEP, ...; {HELP}"
        ));
    }
    shard((task - min) / step, total, source).map(Some)
}

fn gitlab(vars: &Vars<'_>) -> Result<Option<AutoShard>, String> {
    let get = |k: &str| vars.get(k);
    match (get("CI_NODE_INDEX"), get("CI_NODE_TOTAL")) {
        (None, None) => Ok(None),
        (Some(i), None) => Err(format!(
            "CI_NODE_INDEX={i} but no CI_NODE_TOTAL; GitLab sets both for a job with `parallel:`; {HELP}"
        )),
        // GitLab sets CI_NODE_TOTAL=1 on every job without `parallel:`: one job, the whole run.
        (None, Some(t)) => {
            let total = number("CI_NODE_TOTAL", t)?;
            if total == 1 {
                shard(0, 1, "GitLab CI (CI_NODE_TOTAL=1, no `parallel:`)".to_owned()).map(Some)
            } else {
                Err(format!(
                    "CI_NODE_TOTAL={t} but no CI_NODE_INDEX; GitLab sets both for a job with `parallel:`; {HELP}"
                ))
            }
        }
        (Some(i), Some(t)) => {
            let index = number("CI_NODE_INDEX", i)?;
            let total = number("CI_NODE_TOTAL", t)?;
            if index == 0 {
                return Err(format!(
                    "CI_NODE_INDEX=0, but GitLab counts from 1 (1..=CI_NODE_TOTAL); {HELP}"
                ));
            }
            shard(
                index - 1,
                total,
                format!("GitLab CI parallel (CI_NODE_INDEX={i}, CI_NODE_TOTAL={t})"),
            )
            .map(Some)
        }
    }
}

fn generic_index(vars: &Vars<'_>) -> Result<Option<AutoShard>, String> {
    let get = |k: &str| vars.get(k);
    let github = get("GITHUB_ACTIONS") == Some("true");
    match (get(INDEX), get(TOTAL)) {
        (None, _) => Ok(None),
        (Some(i), None) => Err(format!(
            "{INDEX}={i} but no {TOTAL}; pass both (GitHub: `${{{{ strategy.job-index }}}}` and `${{{{ strategy.job-total }}}}`)"
        )),
        (Some(i), Some(t)) => {
            let index = number(INDEX, i)?;
            let total = number(TOTAL, t)?;
            let engine = if github {
                "GitHub Actions matrix"
            } else {
                "shard variables"
            };
            shard(index, total, format!("{engine} ({INDEX}={i}, {TOTAL}={t})")).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn ok(pairs: &[(&str, &str)]) -> (String, String) {
        let a = from_vars(&vars(pairs)).unwrap_or_else(|e| panic!("{pairs:?}: {e}"));
        (a.shard.to_string(), a.source)
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        match from_vars(&vars(pairs)) {
            Ok(a) => panic!("{pairs:?} gave {a:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_engine_gives_the_same_shard_as_k_of_n() {
        for n in 1..=6u64 {
            for k in 1..=n {
                let want = format!("{k}/{n}");
                let (k0, ks, ns) = ((k - 1).to_string(), k.to_string(), n.to_string());
                let cases: Vec<Vec<(&str, &str)>> = vec![
                    vec![("CGP_GATE_SHARD", &want)],
                    vec![("JOB_COMPLETION_INDEX", &k0), (TOTAL, &ns)],
                    vec![("SLURM_ARRAY_TASK_ID", &k0), ("SLURM_ARRAY_TASK_COUNT", &ns)],
                    vec![
                        ("SLURM_ARRAY_TASK_ID", &ks),
                        ("SLURM_ARRAY_TASK_MIN", "1"),
                        ("SLURM_ARRAY_TASK_MAX", &ns),
                    ],
                    vec![("CI_NODE_INDEX", &ks), ("CI_NODE_TOTAL", &ns)],
                    vec![("GITHUB_ACTIONS", "true"), (INDEX, &k0), (TOTAL, &ns)],
                ];
                for c in cases {
                    assert_eq!(ok(&c).0, want, "{c:?}");
                }
            }
        }
    }

    #[test]
    fn says_which_engine() {
        assert_eq!(
            ok(&[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "4")]).1,
            "GitLab CI parallel (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)"
        );
        assert!(
            ok(&[("JOB_COMPLETION_INDEX", "0"), (TOTAL, "2")])
                .1
                .starts_with("Kubernetes")
        );
        assert!(
            ok(&[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_COUNT", "2")])
                .1
                .starts_with("Slurm")
        );
        assert!(
            ok(&[("GITHUB_ACTIONS", "true"), (INDEX, "0"), (TOTAL, "2")])
                .1
                .starts_with("GitHub")
        );
    }

    #[test]
    fn slurm_arrays_with_steps_and_offsets() {
        // --array=10-24:2 -> 8 tasks.
        let base = [
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_MAX", "24"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        let mut c = base.to_vec();
        c.push(("SLURM_ARRAY_TASK_ID", "14"));
        assert_eq!(ok(&c).0, "3/8");
        let mut c = base.to_vec();
        c.push(("SLURM_ARRAY_TASK_ID", "15"));
        assert!(err(&c).contains("not in the array"));
        // --array=1,3,7: not one range.
        let e = err(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert!(e.contains("--array=0-2"), "{e}");
    }

    #[test]
    fn partial_and_inconsistent_values_are_refused() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[], "found no shard variables"),
            (&[("JOB_COMPLETION_INDEX", "1")], "CGP_GATE_SHARD_TOTAL"),
            (
                &[("JOB_COMPLETION_INDEX", "4"), (TOTAL, "4")],
                "outside the 4 shards",
            ),
            (
                &[("JOB_COMPLETION_INDEX", "x"), (TOTAL, "4")],
                "not a whole number",
            ),
            (
                &[("JOB_COMPLETION_INDEX", "-1"), (TOTAL, "4")],
                "not a whole number",
            ),
            (&[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "4")], "counts from 1"),
            (&[("CI_NODE_INDEX", "5"), ("CI_NODE_TOTAL", "4")], "outside"),
            (&[("CI_NODE_INDEX", "1")], "no CI_NODE_TOTAL"),
            (&[("CI_NODE_TOTAL", "3")], "no CI_NODE_INDEX"),
            (&[("SLURM_ARRAY_TASK_ID", "1")], "number of shards is unknown"),
            (&[("SLURM_ARRAY_TASK_COUNT", "4")], "no SLURM_ARRAY_TASK_ID"),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "1"),
                    ("SLURM_ARRAY_TASK_MIN", "3"),
                    ("SLURM_ARRAY_TASK_MAX", "2"),
                ],
                "MAX is below MIN",
            ),
            (&[(INDEX, "0")], "no CGP_GATE_SHARD_TOTAL"),
            (&[("CGP_GATE_SHARD", "3/2")], "write K/N"),
            (&[("JOB_COMPLETION_INDEX", "0"), (TOTAL, "0")], "a total of 0"),
            (&[("JOB_COMPLETION_INDEX", "0"), (TOTAL, "100000")], "at most"),
            (
                &[
                    ("CI_NODE_INDEX", "1"),
                    ("CI_NODE_TOTAL", "2"),
                    ("SLURM_ARRAY_TASK_ID", "1"),
                    ("SLURM_ARRAY_TASK_COUNT", "2"),
                ],
                "disagree",
            ),
        ];
        for (c, want) in cases {
            let e = err(c);
            assert!(e.contains(want), "{c:?}: {e}");
        }
    }

    #[test]
    fn a_single_job_engine_gives_way_to_a_splitting_one() {
        // A GitLab job without `parallel:` that runs inside a Slurm array (Jacamar CI).
        assert_eq!(
            ok(&[
                ("CI_NODE_TOTAL", "1"),
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ])
            .0,
            "3/4"
        );
        assert_eq!(ok(&[("CI_NODE_TOTAL", "1")]).0, "1/1");
        // Two engines that agree are fine; empty values count as unset.
        assert_eq!(
            ok(&[
                ("CGP_GATE_SHARD", "2/3"),
                ("CI_NODE_INDEX", "2"),
                ("CI_NODE_TOTAL", "3"),
                ("JOB_COMPLETION_INDEX", " ")
            ])
            .0,
            "2/3"
        );
    }
}
