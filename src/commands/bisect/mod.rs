//! `cgp-gate bisect`: the first commit between a good and a bad one at which a row moved beyond
//! its threshold the bad way (docs/bisect.md). Each commit is checked out in a detached worktree
//! under a temporary folder (`git`), built with `settings.build` or `--build`, and measured paired
//! with the good commit as `ab` measures two trees (`step`); `outcome::bisect` chooses the commits
//! and decides; `report::bisect` renders.

mod step;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::git::{self, Place, place};
use super::stdout_err;
use crate::foundation::error::{Error, Result};
use crate::foundation::exit_codes::Exit;
use crate::outcome::{
    BISECT_SCHEMA_VERSION, BisectEnd, BisectResult, BisectStep, Culprit, Levels, Said, Search, SearchEnd,
};

/// Everything `bisect` needs from the command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub spec: PathBuf,
    pub good: Option<String>,
    pub bad: Option<String>,
    pub targets: Vec<String>,
    pub build: Option<String>,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--from changes.json`: good, bad and the target from a `changes` row.
    pub from: Option<PathBuf>,
    /// `--row N`: which row of `--from` (0-based in its `rows`); default the first that got worse.
    pub row: Option<usize>,
    /// `--threshold`: the relative threshold every step judges against, instead of the spec's.
    pub threshold: Option<String>,
    /// `--build-timeout`: how long one commit's build may run (default
    /// [`git::DEFAULT_BUILD_TIMEOUT`]).
    pub build_timeout: Option<std::time::Duration>,
}

/// Where the search starts: good, bad, the targets, and the threshold of the steps (`None`: the
/// spec's).
struct Start {
    good: String,
    bad: String,
    targets: Vec<String>,
    threshold: Option<f64>,
}

/// Good, bad, the targets and the threshold: from the flags, or from a `changes` result's row
/// (the threshold then half its shift, unless `--threshold` says otherwise).
fn endpoints(args: &Options) -> Result<Start> {
    let threshold = args.threshold.as_deref().map(step::parse_threshold).transpose()?;
    let Some(path) = &args.from else {
        let (Some(g), Some(b)) = (&args.good, &args.bad) else {
            return Err(Error::Usage(
                "bisect needs --good REV and --bad REV (or --from changes.json)".to_owned(),
            ));
        };
        return Ok(Start {
            good: g.clone(),
            bad: b.clone(),
            targets: args.targets.clone(),
            threshold,
        });
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    let report: crate::history::ChangesReport = serde_json::from_str(&text).map_err(|e| Error::Input {
        path: path.clone(),
        message: format!("not a `cgp-gate changes --json` file: {e}"),
    })?;
    let row = match args.row {
        Some(i) => report.rows.get(i).ok_or_else(|| {
            Error::Usage(format!(
                "--row {i}: {} has {} row(s) (0-based)",
                path.display(),
                report.rows.len()
            ))
        })?,
        None => report.rows.iter().find(|r| r.worse).ok_or_else(|| {
            Error::Usage(format!(
                "{} has no change that got worse; give --row N to bisect another one",
                path.display()
            ))
        })?,
    };
    let missing = |what: &str| {
        Error::Usage(format!(
            "{}: the row of `{}` has no {what} commit (its results files name none); give --good and --bad",
            path.display(),
            row.target
        ))
    };
    let good = args
        .good
        .clone()
        .or_else(|| row.commits.before.clone())
        .ok_or_else(|| missing("before"))?;
    let bad = args
        .bad
        .clone()
        .or_else(|| row.commits.at.clone())
        .ok_or_else(|| missing("after"))?;
    let targets = if args.targets.is_empty() {
        vec![row.target.clone()]
    } else {
        args.targets.clone()
    };
    // The shift `changes` found is the change searched for: a commit is bad past half of it.
    let half = row.change.map(|c| c.abs() / 2.0).filter(|h| *h > 0.0 && *h < 1.0);
    Ok(Start {
        good,
        bad,
        targets,
        threshold: threshold.or(half),
    })
}

/// Run `bisect`.
///
/// # Errors
/// Invalid input (2), an environment that cannot measure the good commit (3), report failures.
pub(crate) fn run(args: &Options, ui: &super::Ui, out: &mut dyn Write) -> Result<Exit> {
    let mut inputs = vec![("the spec", args.spec.as_path())];
    inputs.extend(args.from.as_deref().map(|p| ("the changes file", p)));
    let outs = [
        ("--json", args.json.as_deref()),
        ("--markdown", args.markdown.as_deref()),
    ];
    super::outputs::refuse_outputs_onto_inputs(&super::outputs::given(&outs), &inputs)?;
    let Start {
        good,
        bad,
        targets,
        threshold,
    } = endpoints(args)?;
    let user_spec = crate::spec::load(&args.spec)?;
    for n in &targets {
        if user_spec.target(n).is_none() {
            return Err(Error::Usage(format!(
                "no target `{n}` in {}",
                args.spec.display()
            )));
        }
    }
    let build = args.build.clone().or_else(|| user_spec.settings.build.clone());
    let p = place(
        &args.spec,
        "bisect checks out the commits of the spec's repository",
    )?;
    let good = git::resolve(&p.root, &good, "--good")?;
    let bad = git::resolve(&p.root, &bad, "--bad")?;
    let (commits, first_parent) = git::commits(&p.root, &good, &bad)?;
    if commits.is_empty() {
        return Err(Error::Usage(
            "--good and --bad are the same commit: nothing to bisect".to_owned(),
        ));
    }
    let levels = Levels::new(user_spec.settings.alpha, commits.len());
    let mut progress = ui.progress(std::collections::BTreeMap::new());
    let picked = step::pick(&user_spec, &targets);
    let session = crate::run::session::Session::live(
        &picked,
        false,
        &mut crate::commands::progress::NoteWriter::new(progress.as_mut()),
    )?;
    let mut search = Searcher {
        place: &p,
        levels,
        threshold,
        build: build.as_deref().map(|cmd| git::Build {
            cmd,
            timeout: args.build_timeout.unwrap_or(git::DEFAULT_BUILD_TIMEOUT),
        }),
        targets: &targets,
        trees: git::Worktrees::new(&p.root)?,
        session: &session,
        progress: progress.as_mut(),
    };
    let found = search.search(&good, &commits);
    drop(search);
    progress.finish();
    let (steps, search_state) = found?;
    session.finish()?;
    let result = decide(
        Decided {
            good,
            bad,
            commits: &commits,
            first_parent,
            targets,
            levels,
            threshold,
        },
        steps,
        &search_state,
        &p.root,
    );
    write!(out, "{}", crate::report::bisect::console(&result)).map_err(stdout_err)?;
    out.flush().map_err(stdout_err)?;
    if let Some(path) = &args.json {
        let mut text =
            serde_json::to_string_pretty(&result).map_err(|e| Error::output("the bisect result", e))?;
        text.push('\n');
        crate::foundation::fsutil::write_output(path, text.as_bytes())?;
    }
    if let Some(path) = &args.markdown {
        crate::foundation::fsutil::write_output(path, crate::report::bisect::markdown(&result).as_bytes())?;
    }
    Ok(crate::outcome::decide::bisect_exit_code(result.end))
}

/// The live search: worktrees, builds, steps.
struct Searcher<'a> {
    place: &'a Place,
    levels: Levels,
    threshold: Option<f64>,
    build: Option<git::Build<'a>>,
    targets: &'a [String],
    trees: git::Worktrees,
    session: &'a crate::run::session::Session,
    progress: &'a mut dyn crate::run::progress::Progress,
}

impl Searcher<'_> {
    /// A commit's tree, built, with the spec as it lies there.
    fn prepare(&mut self, sha: &str) -> std::result::Result<(PathBuf, crate::spec::Spec), String> {
        let tree = self.trees.add(sha)?;
        let spec = step::spec_in(
            &self.place.text,
            &tree,
            &self.place.rel,
            &self.levels,
            self.threshold,
        )
        .map_err(|e| e.to_string())?;
        if let Some(b) = self.build {
            self.progress
                .note(&format!("building {}", &sha[..12.min(sha.len())]));
            git::build(&spec.base_dir(), b)?;
        }
        Ok((tree, spec))
    }

    fn search(&mut self, good: &str, commits: &[String]) -> Result<(Vec<BisectStep>, Search)> {
        let (good_tree, good_spec) = self.prepare(good).map_err(|e| {
            Error::Environment(format!(
                "the good commit {good} cannot be measured: {e}; fix the build command (--build or settings.build) or give another --good"
            ))
        })?;
        let good_targets = step::pick(&good_spec, self.targets);
        let mut search = Search::new(commits.len());
        let mut steps = Vec::new();
        let mut measured = 0;
        while let Some(i) = search.next() {
            if measured >= self.levels.max_steps {
                break;
            }
            let sha = &commits[i - 1];
            let started = Instant::now();
            self.progress.note(&format!(
                "bisect: measuring commit {i} of {} ({sha})",
                commits.len()
            ));
            let m = match self.prepare(sha) {
                Err(why) => step::Measured::skipped(why, started.elapsed().as_secs_f64()),
                Ok((tree, spec)) => {
                    let picked = step::pick(&spec, self.targets);
                    let m = step::measure(
                        (&good_spec, &good_targets),
                        (&spec, &picked),
                        self.session,
                        &mut *self.progress,
                    )?;
                    self.trees.remove(&tree);
                    m
                }
            };
            if m.said != Said::Skipped {
                measured += 1;
            }
            self.progress
                .note(&format!("bisect: commit {i} ({sha}) is {}", m.said.as_str()));
            search.record(i, m.said);
            steps.push(BisectStep {
                index: i,
                commit: sha.clone(),
                subject: git::subject(&self.place.root, sha),
                said: m.said,
                change: m.change,
                change_ci: m.change_ci,
                row: m.row,
                reason: m.reason,
                processes: m.processes,
                seconds: m.seconds,
            });
        }
        self.trees.remove(&good_tree);
        Ok((steps, search))
    }
}

/// What the result names besides the steps.
struct Decided<'a> {
    good: String,
    bad: String,
    commits: &'a [String],
    first_parent: bool,
    targets: Vec<String>,
    levels: Levels,
    threshold: Option<f64>,
}

/// The decided result of a search.
fn decide(d: Decided<'_>, steps: Vec<BisectStep>, search: &Search, root: &Path) -> BisectResult {
    let measured = steps.iter().filter(|s| s.said != Said::Skipped).count();
    let sha = |i: usize| d.commits[i - 1].clone();
    let (end, culprit, range, summary) = match search.end() {
        SearchEnd::Culprit(i) => {
            let s = steps.iter().find(|s| s.index == i);
            let c = Culprit {
                commit: sha(i),
                subject: git::subject(root, &sha(i)),
                change: s.and_then(|s| s.change),
                change_ci: s.and_then(|s| s.change_ci),
                row: s.map(|s| s.row.clone()).unwrap_or_default(),
            };
            let text = format!("the first bad commit is {} ({})", c.commit, c.subject);
            (BisectEnd::Culprit, Some(c), Vec::new(), text)
        }
        SearchEnd::NoChange(said) => {
            let text = match said {
                Said::Skipped => "the bad commit did not build or run: nothing could be compared".to_owned(),
                Said::Unknown => "the bad commit is not shown beyond the threshold of the good one (unknown after the most processes): no culprit".to_owned(),
                Said::Good | Said::Bad => "no change beyond the threshold between the good and the bad commit: no culprit".to_owned(),
            };
            let end = if said == Said::Skipped {
                BisectEnd::NotPinned
            } else {
                BisectEnd::NoChange
            };
            (end, None, Vec::new(), text)
        }
        SearchEnd::Range(r) if search.skipped_in(&r) => {
            let shas: Vec<String> = r.iter().map(|&i| sha(i)).collect();
            let text = format!(
                "the first bad commit is one of {} commits whose neighbours could not be judged (some did not build or run): {}",
                shas.len(),
                shas.join(", ")
            );
            (BisectEnd::NotPinned, None, shas, text)
        }
        SearchEnd::Range(r) => {
            // A creep (issue 57): the change from good crosses the threshold within these
            // consecutive commits, and none of them is shown to cross it alone.
            let shas: Vec<String> = r.iter().map(|&i| sha(i)).collect();
            let first = r.first().copied().unwrap_or(1);
            let last = r.last().copied().unwrap_or(first);
            let at = |i: usize| {
                steps
                    .iter()
                    .find(|s| s.index == i)
                    .and_then(|s| s.change)
                    .map_or_else(
                        || "within it".to_owned(),
                        |c| crate::foundation::units::percent(c, crate::foundation::units::Percent::Signed2),
                    )
            };
            let before = if first > 1 {
                format!(
                    "commit {} ({}) is within it ({})",
                    first - 1,
                    &sha(first - 1)[..12.min(sha(first - 1).len())],
                    at(first - 1)
                )
            } else {
                "the good commit is within it".to_owned()
            };
            let text = format!(
                "the change crosses the threshold within {} consecutive commits, {first} to {last} ({}..{}): {before}, commit {last} is beyond it ({}); none of them is shown to cross it alone (a creep)",
                shas.len(),
                &shas[0][..12.min(shas[0].len())],
                &sha(last)[..12.min(sha(last).len())],
                at(last)
            );
            (BisectEnd::Range, None, shas, text)
        }
    };
    let claim = end.claim().to_owned();
    BisectResult {
        schema_version: BISECT_SCHEMA_VERSION,
        good: d.good,
        bad: d.bad,
        commits: d.commits.len(),
        first_parent: d.first_parent,
        targets: d.targets,
        levels: d.levels,
        threshold: d.threshold,
        end,
        confidence: (!claim.is_empty()).then(|| d.levels.confidence(measured)),
        claim,
        culprit,
        method: crate::outcome::bisect_method(&d.levels, d.threshold),
        range,
        processes: steps.iter().map(|s| s.processes).sum(),
        seconds: steps.iter().map(|s| s.seconds).sum(),
        steps,
        summary,
    }
}
