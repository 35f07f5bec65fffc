//! One file per command. Each takes plain options (the command layer in `crate::cli` converts
//! clap's arguments into them) and returns the exit code. Shared here: opening a spec, its
//! profiler, the GPU session and the recorder, and one measurement pass.

pub mod ab;
pub mod baseline;
pub mod bisect;
pub mod breakdown;
pub mod calibrate;
pub mod changes;
pub mod check;
pub(crate) mod confirm;
pub mod doctor;
pub mod env;
pub(crate) mod git;
pub mod gitlab_note;
pub mod history;
pub mod import;
pub mod init;
pub mod merge;
pub mod outputs;
pub mod parse;
pub mod profile;
pub mod progress;
pub mod report;
pub mod schema;
pub mod store;
pub mod ui;
pub mod validate;

pub use ui::Ui;

use std::io::Write;
use std::path::PathBuf;

use crate::foundation::error::{Error, Result};

/// Where samples come from and where raw output goes (`--spec`, `--target`, `--record`, `--replay`).
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceOptions {
    pub spec: PathBuf,
    pub targets: Vec<String>,
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
}

/// `--shard K/N` (or `auto`) and the results file that balances it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShardOptions {
    pub shard: Option<crate::plan::ShardRequest>,
    pub shard_costs: Option<PathBuf>,
}

impl ShardOptions {
    /// The shard asked for: `--shard K/N` as given, `--shard auto` from the engine's variables in
    /// the process environment (a note on stderr says which engine), `None` without `--shard`.
    ///
    /// # Errors
    /// [`Error::Usage`] when `auto` finds no, partial or inconsistent variables.
    pub(crate) fn resolve(&self) -> Result<Option<crate::plan::Shard>> {
        match self.shard {
            None => Ok(None),
            Some(crate::plan::ShardRequest::Fixed(s)) => Ok(Some(s)),
            Some(crate::plan::ShardRequest::Auto) => {
                let vars: std::collections::BTreeMap<String, String> = std::env::vars_os()
                    .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                    .collect();
                let auto = crate::plan::shard_auto::from_vars(&vars).map_err(Error::Usage)?;
                // The source names CI variables and their values: sanitised.
                crate::foundation::sanitize::eprint_line(&format!(
                    "shard {} from {}",
                    auto.shard, auto.source
                ));
                Ok(Some(auto.shard))
            }
        }
    }

    /// The rows this shard runs, or `None` without `--shard`.
    ///
    /// # Errors
    /// `--shard auto` without usable variables; an unreadable or invalid `--shard-costs` file.
    pub(crate) fn selection(
        &self,
        targets: &[&crate::spec::Target],
    ) -> Result<Option<crate::plan::Selection>> {
        let Some(shard) = self.resolve()? else {
            return Ok(None);
        };
        let costs = self
            .shard_costs
            .as_deref()
            .map(crate::outcome::results::read)
            .transpose()?
            .map(|r| r.cost_seconds);
        Ok(Some(crate::plan::Selection::new(targets, shard, costs.as_ref())))
    }
}

/// A spec and the targets a command works on.
pub(crate) struct Selected {
    pub spec: crate::spec::Spec,
    pub names: Vec<String>,
}

impl Selected {
    /// Load the spec and check `--target` names.
    ///
    /// # Errors
    /// Spec errors; an unknown target name (with the known ones).
    pub(crate) fn load(source: &SourceOptions) -> Result<Self> {
        let spec = crate::spec::load(&source.spec)?;
        for n in &source.targets {
            if spec.target(n).is_none() {
                let known: Vec<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "no target `{n}` in {}; targets: {}",
                    source.spec.display(),
                    known.join(", ")
                )));
            }
        }
        let names = if source.targets.is_empty() {
            spec.targets.iter().map(|t| t.name.clone()).collect()
        } else {
            source.targets.clone()
        };
        Ok(Self { spec, names })
    }

    pub(crate) fn targets(&self) -> Vec<&crate::spec::Target> {
        self.spec
            .targets
            .iter()
            .filter(|t| self.names.contains(&t.name))
            .collect()
    }
}

/// The recording in `replay`, or the live profiler of `targets` of `spec`: each job goes to its
/// target's backend (`profiler: ncu`, `nsys` or `cupti`).
fn profiler_for(
    replay: Option<&std::path::Path>,
    spec: &crate::spec::Spec,
    targets: &[&crate::spec::Target],
) -> Result<Box<dyn crate::profile::Profiler>> {
    Ok(match replay {
        Some(dir) => Box::new(crate::profile::replay::ReplayProfiler::open(dir)?),
        // Tests make ncu's busy-counter retries instant; the engine reads no environment.
        None => Box::new(crate::profile::by_target::ByTarget::new(
            &spec.base_dir(),
            targets,
            retry_delays_from_env(),
        )?),
    })
}

/// The profiler of a measuring command, set up as every one sets it up (`check`, `profile`,
/// `baseline`, `calibrate`, each side of `ab`): a live run first checks what the targets need
/// (`preflight`: a missing `cwd` is invalid input, not a missing profiler), and takes the
/// busy-counter retry delays of `CGP_GATE_RETRY_DELAYS_MS`; `replay` opens that recording.
///
/// # Errors
/// A target the live run cannot start; a recording that cannot be opened; no temporary directory.
pub(crate) fn open_profiler(
    replay: Option<&std::path::Path>,
    spec: &crate::spec::Spec,
    targets: &[&crate::spec::Target],
) -> Result<Box<dyn crate::profile::Profiler>> {
    if replay.is_none() {
        crate::profile::live::preflight(spec, targets)?;
    }
    profiler_for(replay, spec, targets)
}

/// The profiler, the GPU session and the recorder of `--record`, as one profiling run opens them.
pub(crate) type OpenRun = (
    Box<dyn crate::profile::Profiler>,
    crate::profile::Versions,
    crate::run::session::Session,
    Option<crate::profile::record::Recorder>,
);

/// What every profiling command opens first: the profiler (its version asked first, so a missing
/// ncu fails before any clock is touched), the GPU session (NVML and clocks; nothing in replay)
/// and the recorder of `--record`.
pub(crate) fn open_run(
    source: &SourceOptions,
    sel: &Selected,
    targets: &[&crate::spec::Target],
    progress: &mut dyn Write,
) -> Result<OpenRun> {
    // First: a folder --record may not replace is refused before anything runs.
    let recorder = source
        .record
        .as_deref()
        .map(crate::profile::record::Recorder::new)
        .transpose()?;
    let mut profiler = open_profiler(source.replay.as_deref(), &sel.spec, targets)?;
    let mut versions = crate::profile::Versions::of(profiler.as_mut(), targets)?;
    let session = if source.replay.is_some() {
        crate::run::session::Session::replay()
    } else {
        crate::run::session::Session::live(targets, false, progress)?
    };
    // A harness target's device and version are in its own file: its first repetition runs now,
    // under the session's clocks, and is kept (docs/harnesses.md, "The device, without NVML").
    if targets
        .iter()
        .any(|t| crate::profile::harness::format_of(t.profiler).is_some())
    {
        profiler.probe(targets);
        versions = crate::profile::Versions::of(profiler.as_mut(), targets)?;
    }
    Ok((profiler, versions, session, recorder))
}

/// Write the manifest of `--record`, when recording.
pub(crate) fn finish_recording(
    recorder: Option<crate::profile::record::Recorder>,
    spec: &crate::spec::Spec,
    versions: &crate::profile::Versions,
    fingerprint: &crate::gpu::fingerprint::Fingerprint,
    progress: &mut dyn Write,
) -> Result<()> {
    if let Some(rec) = recorder {
        let path = rec.finish_with(&spec.hash, versions, fingerprint)?;
        let _ = writeln!(
            progress,
            "recorded raw {} output; manifest: {}",
            {
                let tools: Vec<&str> = versions
                    .tools()
                    .map(|k| crate::profile::backend_for(k).name())
                    .collect();
                if tools.is_empty() {
                    "ncu".to_owned()
                } else {
                    tools.join(" and ")
                }
            },
            path.display()
        );
    }
    Ok(())
}

/// One measurement pass of a spec's targets, with everything a command reports about it.
pub(crate) struct MeasuredRun {
    pub m: crate::run::measure::Measurement,
    pub versions: crate::profile::Versions,
    pub source: String,
    /// Per target, taken while NVML was open.
    pub fingerprints: std::collections::BTreeMap<String, crate::gpu::fingerprint::Fingerprint>,
    pub health: Option<crate::outcome::results::Health>,
    /// The recording says its data was not measured on a GPU.
    pub synthetic: bool,
}

/// How many repetitions a measuring command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reps {
    /// `repetitions` (profile).
    Check,
    /// `baseline_repetitions` (from a recording: what it holds, up to that).
    Baseline,
    /// This many (from a recording: what it holds, up to that).
    Calibrate(u32),
}

/// Profile (or replay) every repetition of the targets once: open the session (NVML, clocks),
/// record if asked, take fingerprints, and restore the clocks before returning.
pub(crate) fn measure_once(
    source: &SourceOptions,
    sel: &Selected,
    targets: &[&crate::spec::Target],
    shard: Option<&crate::plan::Selection>,
    reps: Reps,
    progress: &mut dyn crate::run::progress::Progress,
) -> Result<MeasuredRun> {
    let (mut profiler, versions, session, mut recorder) = open_run(
        source,
        sel,
        targets,
        &mut crate::commands::progress::NoteWriter::new(progress),
    )?;
    let mut work = match reps {
        Reps::Check => crate::plan::initial_work(targets, shard),
        Reps::Baseline => crate::plan::baseline_work(targets, shard),
        Reps::Calibrate(n) => {
            let mut w = crate::plan::initial_work(targets, shard);
            for x in &mut w {
                x.reps.1 = n;
            }
            w
        }
    };
    if reps != Reps::Check && source.replay.is_some() {
        crate::plan::cap_to_recording(&mut work, |w| {
            crate::profile::recorded_repetitions(profiler.as_ref(), w.target, w.size, w.reps.1)
        });
    }
    let mut watch = session.watch(&sel.spec.settings);
    let mut measurer = crate::profile::Measuring::new(profiler.as_mut());
    let mut tools = crate::run::measure::Instruments {
        measurer: &mut measurer,
        recorder: recorder.as_mut(),
        watch: watch.as_mut(),
        progress: &mut *progress,
    };
    let mut m = crate::run::measure::measure(&mut tools, &work, false);
    let mut why = Ok(None);
    if reps == Reps::Baseline
        && let Ok(measured) = m.as_mut()
    {
        // `profiler: cupti` targets with `explain:`: ncu profiles each size once, so that the
        // baseline holds the counters a check compares when a time changed (docs/cupti.md).
        let ncu = crate::run::ncu_why::ncu_targets(targets);
        let wanted = work
            .iter()
            .filter(|w| ncu.contains_key(&w.target.name))
            .map(crate::plan::Work::id)
            .collect();
        let next = work.iter().map(|w| (w.id(), w.reps.1)).collect();
        why = crate::run::ncu_why::collect(&wanted, &work, &ncu, &next, measured, &mut tools);
    }
    let health = watch.map(|w| w.sampler.summary());
    let origin = crate::profile::Provenance::of(profiler.as_ref(), versions.clone(), targets);
    let fingerprints: std::collections::BTreeMap<_, _> = targets
        .iter()
        .map(|t| {
            let fp = crate::run::engine::fingerprint_for(&origin, t, session.gpu.as_deref());
            (t.name.clone(), fp)
        })
        .collect();
    progress.finish();
    session.finish()?;
    let m = m?;
    why?;
    let fp = targets
        .first()
        .and_then(|t| fingerprints.get(&t.name))
        .cloned()
        .unwrap_or_default();
    finish_recording(
        recorder,
        &sel.spec,
        &versions,
        &fp,
        &mut crate::commands::progress::NoteWriter::new(progress),
    )?;
    Ok(MeasuredRun {
        m,
        versions,
        source: origin.source,
        fingerprints,
        health,
        synthetic: origin.synthetic,
    })
}

/// The commit the CI says this job measures, `$GITHUB_SHA` (empty: none). Read here, in the
/// command layer, and handed to the engine as a value (issue 62: the engine reads no CI
/// variable).
pub(crate) fn ci_commit() -> Option<String> {
    std::env::var("GITHUB_SHA").ok().filter(|s| !s.trim().is_empty())
}

/// The baseline store at `dir` for a command that writes it, its writers waiting for the lock as
/// `$CGP_GATE_LOCK_TIMEOUT_S` says (docs/baselines.md). Read here, in the command layer, and
/// handed to the store as a value (issue 62: the store reads no environment variable).
pub(crate) fn baseline_store(dir: impl Into<std::path::PathBuf>) -> crate::baseline::Store {
    let setting = std::env::var(crate::baseline::LOCK_TIMEOUT_ENV).ok();
    crate::baseline::Store::new(dir).with_lock_timeout(crate::baseline::LockTimeout::from_setting(setting))
}

/// Whether this run gates code from a pull request (merge request), as the CI says: GitHub
/// Actions' `pull_request`, `pull_request_target` and `merge_group` events, a GitLab merge
/// request pipeline, a Buildkite or Jenkins pull-request build.
fn gates_a_pull_request() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    matches!(
        var("GITHUB_EVENT_NAME").as_str(),
        "pull_request" | "pull_request_target" | "merge_group"
    ) || !var("CI_MERGE_REQUEST_IID").is_empty()
        || !matches!(var("BUILDKITE_PULL_REQUEST").as_str(), "" | "false")
        || !var("CHANGE_ID").is_empty()
}

/// What every report of a run of `targets` must say about its numbers when it gates code from a
/// pull request (issue 58, item 14): each backend's own caveat, where the program under test can
/// write the times it is judged by (`profile::Backend::program_can_forge`).
pub(crate) fn trust_caveats(targets: &[&crate::spec::Target]) -> Vec<String> {
    if !gates_a_pull_request() {
        return Vec::new();
    }
    let mut said: Vec<String> = Vec::new();
    for t in targets {
        if let Some(c) = crate::profile::backend_of(t).program_can_forge()
            && !said.iter().any(|s| s == c)
        {
            said.push(c.to_owned());
        }
    }
    said
}

pub(crate) fn stdout_err(e: std::io::Error) -> Error {
    Error::io("write", "<stdout>", e)
}

/// Environment variable overriding the delays (comma-separated milliseconds) between retries
/// when another tool holds the GPU counters. Default: 2000,5000,10000.
pub(crate) const RETRY_DELAYS_ENV: &str = "CGP_GATE_RETRY_DELAYS_MS";

fn retry_delays_from_env() -> Option<Vec<std::time::Duration>> {
    std::env::var(RETRY_DELAYS_ENV).ok().and_then(|v| {
        v.split(',')
            .map(|x| x.trim().parse::<u64>().ok().map(std::time::Duration::from_millis))
            .collect()
    })
}
