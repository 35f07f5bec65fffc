//! `cgp-gate.yaml` -> [`Spec`]: decoding, defaults and every cross-field check.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::gpu::fingerprint::Fingerprint;

use super::categories::CategoryRules;
use super::decode::{Ctx, Fields, Result, describe, did_you_mean, list};
use super::error::SpecError;
use super::expr::Expr;
use super::model::{
    CacheControl, ClockControl, ClockSetting, Explain, KernelFilter, KernelMode, MetricSpec, ProfilerKind,
    Profiling, ReplayMode, SPEC_VERSION, Settings, Size, Spec, Target,
};
use super::template;
use super::threshold;
use super::yaml::{self, Kind, Mark, Node, Typed};

pub(crate) const TOP_KEYS: &[&str] = &["version", "settings", "defaults", "targets"];
pub(crate) const SETTINGS_KEYS: &[&str] = &[
    "alpha",
    "confidence",
    "history",
    "fingerprint_fields",
    "min_clock_fraction",
    "max_throttle_reruns",
    "job_spread",
    "job_spread_df",
    "build",
    "confirm",
    "store",
];
/// Every key a target may have; `defaults:` takes all but `name`.
pub(crate) const TARGET_KEYS: &[&str] = &[
    "name",
    "command",
    "cwd",
    "env",
    "env_passthrough",
    "env_passthrough_ci_credentials",
    "kernel",
    "nvtx",
    "launch_skip",
    "launch_count",
    "sizes",
    "metrics",
    "repetitions",
    "max_repetitions",
    "baseline_repetitions",
    "warmup",
    "timeout",
    "clock_control",
    "cache_control",
    "replay_mode",
    "clocks",
    "flops",
    "bytes",
    "profiler",
    "categories",
    "allow_missing",
    "explain",
    "sass",
    "kernels",
    "libcupti",
];

// Which profiler reads which key, and what a message says about one it does not: each
// profiler's rules (`spec::kinds`).
pub(crate) use super::kinds::unread_keys;
use super::kinds::{readers, reads as profiler_reads, specific_keys, unread_help as other_profiler_help};

pub(crate) const DEFAULT_REPETITIONS: u32 = 10;
/// Launches of each kernel a run drops at its start (`warmup:`).
pub(crate) const DEFAULT_WARMUP: u32 = 1;
/// The same for a harness target (`profiler: nvbench`, `gbench`, `pytest-benchmark`): none, the
/// harness warmed up before its first sample, and each repetition or round is a sample.
pub(crate) const DEFAULT_HARNESS_WARMUP: u32 = 0;
/// Repetitions `baseline update` stores by default (at least `repetitions`): paid once per merge,
/// shared by every pull request, and what gives the tests their power (docs/statistics.md).
pub(crate) const DEFAULT_BASELINE_REPETITIONS: u32 = 50;
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest target name and size key (`m=1024,n=512`), in bytes: both become file or folder names
/// (`<target>.json`, `<recording>/<target>/<size>/`), and file systems allow 255 bytes.
const MAX_NAME_BYTES: usize = 200;
/// A matrix can multiply out to a lot of sizes; past this many, a typo is more likely than intent.
/// The list form has the same cap.
pub(crate) const MAX_SIZES: usize = 10_000;
/// Most metrics a target may judge (docs/spec.md): each is a row per size and kernel.
pub(crate) const MAX_METRICS: usize = 1_000;
/// Most rows a spec may ask for, over all targets: sizes x metrics, summed (docs/spec.md). Past
/// it, the reports and the statistics of one run would be unreadable, and a typo more likely.
pub(crate) const MAX_SPEC_ROWS: usize = 100_000;
/// Most `repetitions`, `max_repetitions` and `baseline_repetitions` (docs/spec.md): each is one
/// profiled run of the program per size, so 1,000 is hours on a GPU already.
pub(crate) const MAX_REPETITIONS: u32 = 1_000;

/// Load and validate a spec file.
///
/// # Errors
/// A [`SpecError`] naming the file, and the line and column where the YAML has them.
pub fn load(path: &Path) -> std::result::Result<Spec, SpecError> {
    use crate::foundation::fsutil::{ReadError, limits, read_text};
    let text = read_text(path, limits::SPEC).map_err(|e| match e {
        ReadError::Io(e) => SpecError::new(path, format!("cannot read the spec: {e}"))
            .help("pass the spec file with `--spec PATH`"),
        ReadError::NotUtf8 { line, column, byte } => SpecError::new(
            path,
            format!("the spec is not UTF-8 text: byte 0x{byte:02x} cannot start a character here"),
        )
        .at(line, column)
        .help("save the file as UTF-8"),
        other => SpecError::new(path, other.message("spec")).help("pass the spec file with `--spec PATH`"),
    })?;
    load_str(&text, path)
}

/// Validate spec text as if it had been read from `path` (relative `cwd`s resolve against
/// `path`'s directory; errors name `path`).
///
/// # Errors
/// As [`load`].
pub fn load_str(text: &str, path: &Path) -> std::result::Result<Spec, SpecError> {
    let deferred = std::cell::RefCell::new(Vec::new());
    let ctx = Ctx {
        path,
        deferred: Some(&deferred),
    };
    let root = yaml::parse(text)
        .map_err(|e| ctx.err_at(e.mark, e.message))?
        .ok_or_else(|| {
            SpecError::new(path, "the spec is empty").help("start with `version: 1` and a `targets:` list")
        })?;
    let spec_dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    check_version(&ctx, &root)?;
    let top = ctx.fields(&root, "the spec", TOP_KEYS)?;
    // Settings and defaults with errors are reported with the targets' errors, not alone.
    let settings = match top.get("settings") {
        Some(n) => ctx.keep(settings(&ctx, n))?.unwrap_or_default(),
        None => Settings::default(),
    };
    let defaults = match top.get("defaults") {
        Some(n) => ctx.keep(defaults(&ctx, n))?,
        None => None,
    };
    let Some(targets_node) = top.get("targets") else {
        return Err(ctx
            .err(&root, "the spec has no `targets:`")
            .help("add a `targets:` list with at least one target (`name`, `command`, `metrics`)"));
    };
    let items = ctx.seq(targets_node, "`targets`")?;
    if items.is_empty() {
        return Err(ctx
            .err(targets_node, "`targets` is empty")
            .help("add at least one target (`name`, `command`, `metrics`)"));
    }
    let mut targets: Vec<Target> = Vec::with_capacity(items.len());
    // Target name -> the line it is first named on (a hash lookup: linear in the targets).
    let mut first_lines: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(items.len());
    let mut rows = 0usize;
    for (i, item) in items.iter().enumerate() {
        // A target whose name is wrong is skipped, its error kept: the others are still read.
        let Some(own) = ctx.keep(ctx.fields(item, &format!("`targets[{i}]`"), TARGET_KEYS))? else {
            continue;
        };
        let name_node = own.get("name").ok_or_else(|| {
            ctx.err(item, format!("`targets[{i}]` has no `name`"))
                .help("every target needs a unique `name`")
        });
        let Some(name_node) = ctx.keep(name_node)? else {
            continue;
        };
        let Some(name) = ctx.keep(target_name(&ctx, name_node))? else {
            continue;
        };
        if let Some(line) = first_lines.get(name) {
            ctx.keep::<()>(Err(ctx
                .err(name_node, format!("duplicate target name `{name}`"))
                .help(format!(
                    "`{name}` is already the name of the target on line {line}; target names must be unique"
                ))))?;
            continue;
        }
        first_lines.insert(name.to_owned(), name_node.mark.line);
        let merged = Merged {
            own: &own,
            defaults: defaults.as_ref(),
        };
        // Each target's errors are kept and the others still read: one run reports them all.
        let Some(t) = ctx.keep(target(&ctx, name, item, &merged, &spec_dir))?.flatten() else {
            continue;
        };
        rows = rows.saturating_add(t.sizes.len().saturating_mul(t.metrics.len()));
        if rows > MAX_SPEC_ROWS {
            return Err(ctx
                .err(
                    name_node,
                    format!(
                        "with target `{name}` the spec asks for more than {MAX_SPEC_ROWS} rows \
                         (sizes x metrics, summed over the targets so far: {rows})"
                    ),
                )
                .help("gate the sizes and metrics that matter, or split the spec into several (one per workflow job)"));
        }
        targets.push(t);
    }
    super::error::collected(deferred.take())?;
    if let Some(d) = &defaults {
        unused_defaults(&ctx, d, &targets)?;
    }
    Ok(Spec {
        path: path.to_path_buf(),
        hash: hex_sha256(text.as_bytes()),
        settings,
        targets,
    })
}

fn hex_sha256(bytes: &[u8]) -> String {
    crate::foundation::units::hex(&Sha256::digest(bytes))
}

/// The version is checked before anything else: a newer spec may use keys this build does not
/// know, and "unsupported version" is the useful message then.
fn check_version(ctx: &Ctx<'_>, root: &Node) -> Result<()> {
    let Kind::Map(entries) = &root.kind else {
        return Err(ctx
            .err(
                root,
                format!("the spec must be a mapping, found {}", describe(root)),
            )
            .help("start with `version: 1` and a `targets:` list"));
    };
    let version = entries.iter().find(|(k, _)| match &k.kind {
        Kind::Scalar(s) => s.text == "version",
        _ => false,
    });
    let Some((_, v)) = version else {
        return Err(ctx
            .err(root, "the spec has no `version`")
            .help(format!("add `version: {SPEC_VERSION}` as the first line")));
    };
    match &v.kind {
        Kind::Scalar(s) if s.typed() == Typed::Int(i128::from(SPEC_VERSION)) => Ok(()),
        Kind::Scalar(s) if matches!(s.typed(), Typed::Int(_)) => Err(ctx
            .err(v, format!("unsupported spec version {}", s.text))
            .help(format!(
                "this build of cgp-gate reads version {SPEC_VERSION} only; upgrade cgp-gate or write `version: {SPEC_VERSION}`"
            ))),
        _ => Err(ctx
            .err(v, format!("`version` must be the number {SPEC_VERSION}, found {}", describe(v)))
            .help(format!("write `version: {SPEC_VERSION}`"))),
    }
}

fn settings(ctx: &Ctx<'_>, node: &Node) -> Result<Settings> {
    let f = ctx.fields(node, "`settings`", SETTINGS_KEYS)?;
    let mut s = Settings::default();
    let fraction = |key: &str, lo_inclusive: bool, hi_inclusive: bool| -> Result<Option<f64>> {
        let Some(n) = f.get(key) else { return Ok(None) };
        let v = ctx.number(n, &format!("`settings.{key}`"))?;
        let lo_ok = if lo_inclusive { v >= 0.0 } else { v > 0.0 };
        let hi_ok = if hi_inclusive { v <= 1.0 } else { v < 1.0 };
        if !(lo_ok && hi_ok) {
            let range = format!(
                "{}0, 1{}",
                if lo_inclusive { "[" } else { "(" },
                if hi_inclusive { "]" } else { ")" }
            );
            return Err(ctx.err(n, format!("`settings.{key}` must be in {range}, found {v}")));
        }
        Ok(Some(v))
    };
    if let Some(v) = fraction("alpha", false, false)? {
        s.alpha = v;
    }
    if let Some(v) = fraction("confidence", false, false)? {
        s.confidence = v;
    }
    if let Some(v) = fraction("min_clock_fraction", false, true)? {
        s.min_clock_fraction = v;
    }
    if let Some(n) = f.get("history") {
        s.history = ctx.uint(n, "`settings.history`")?;
        if s.history == 0 {
            return Err(ctx
                .err(n, "`settings.history` must be at least 1")
                .help("it counts the baseline generations kept per metric"));
        }
    }
    if let Some(n) = f.get("job_spread") {
        s.job_spread = Some(job_spread(ctx, n)?);
    }
    if let Some(n) = f.get("job_spread_df") {
        let df = ctx.number(n, "`settings.job_spread_df`")?;
        if !(df.is_finite() && (1.0..=1000.0).contains(&df)) {
            return Err(ctx
                .err(n, format!("`settings.job_spread_df` must be a number from 1 to 1000, found {df}"))
                .help("the degrees of freedom of the evidence behind `job_spread`: what `cgp-gate calibrate --baselines` prints with it"));
        }
        s.job_spread_df = Some(df);
    }
    if let Some(n) = f.get("build") {
        let cmd = ctx.text(n, "`settings.build`")?;
        if cmd.trim().is_empty() {
            return Err(ctx
                .err(n, "`settings.build` is empty")
                .help("give the shell command that builds a commit's tree (run by `cgp-gate bisect` and `cgp-gate check --base`), or leave the key out"));
        }
        s.build = Some(cmd.to_owned());
    }
    if let Some(n) = f.get("confirm") {
        let word = ctx.text(n, "`settings.confirm`")?;
        s.confirm = crate::spec::ConfirmMode::parse(word).ok_or_else(|| {
            ctx.err(n, format!("`settings.confirm` must be `doubtful` or `all`, found `{word}`"))
                .help("`doubtful` (the default) confirms the inconclusive rows and the regressions against the base commit (`check --base`); `all` confirms every row")
        })?;
    }
    if let Some(n) = f.get("store") {
        s.store = Some(store(ctx, n)?);
    }
    if let Some(n) = f.get("max_throttle_reruns") {
        s.max_throttle_reruns = ctx.uint(n, "`settings.max_throttle_reruns`")?;
    }
    if let Some(n) = f.get("fingerprint_fields") {
        let known = Fingerprint::default();
        let known: Vec<&str> = known.fields().keys().copied().collect();
        let mut fields = Vec::new();
        for item in ctx.seq(n, "`settings.fingerprint_fields`")? {
            let name = ctx.text(item, "a fingerprint field")?;
            if !known.contains(&name) {
                let guess = did_you_mean(name, &known)
                    .map(|g| format!("did you mean `{g}`? "))
                    .unwrap_or_default();
                return Err(ctx
                    .err(item, format!("unknown fingerprint field `{name}`"))
                    .help(format!("{guess}fields are {}", list(&known))));
            }
            fields.push(name.to_owned());
        }
        s.fingerprint_fields = fields;
    }
    Ok(s)
}

/// `settings.store`: `sqlite:PATH` or a PostgreSQL URL, without a password (the spec is
/// committed; the password goes in `CGP_GATE_STORE` or `PGPASSWORD`). The store's own reader
/// (`cgp-store`) checks the rest when a command opens it.
fn store(ctx: &Ctx<'_>, n: &Node) -> Result<String> {
    let url = ctx.text(n, "`settings.store`")?.trim();
    let known = ["sqlite:", "postgres://", "postgresql://"];
    if !known.iter().any(|k| url.starts_with(k)) || known.contains(&url) {
        return Err(ctx
            .err(n, "`settings.store` is neither sqlite:PATH nor a postgres:// URL")
            .help("write `store: sqlite:perf.db` (one file) or `store: postgres://USER@HOST:PORT/DB` (a server; docs/store.md)"));
    }
    let authority = url
        .split_once("://")
        .map_or("", |(_, r)| r.split(['/', '?']).next().unwrap_or(""));
    let user_password = authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'));
    if user_password || url.contains("password=") {
        return Err(ctx
            .err(n, "`settings.store` holds a password, and a spec is committed")
            .help("take the password out: set it in PGPASSWORD, or give the whole URL in CGP_GATE_STORE (a CI secret)"));
    }
    Ok(url.to_owned())
}

/// `settings.job_spread`: the between-job spread assumed before the baseline history says more,
/// a percentage from `"0%"` (none assumed) to `"50%"`.
fn job_spread(ctx: &Ctx<'_>, n: &Node) -> Result<f64> {
    let text = match &n.kind {
        Kind::Scalar(s) => s.text.clone(),
        _ => String::new(),
    };
    let value = text
        .trim()
        .strip_suffix('%')
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|p| p.is_finite() && (0.0..=50.0).contains(p));
    value.map(|p| p / 100.0).ok_or_else(|| {
        ctx.err(n, format!("`settings.job_spread` must be a percentage from 0% to 50%, found {}", describe(n)))
            .help("write what `cgp-gate calibrate --baselines` measured, like `\"0.3%\"`; `\"0%\"` assumes no drift between CI jobs")
    })
}

fn defaults<'n>(ctx: &Ctx<'_>, node: &'n Node) -> Result<Fields<'n>> {
    if let Kind::Map(entries) = &node.kind
        && let Some((k, _)) = entries.iter().find(|(k, _)| match &k.kind {
            Kind::Scalar(s) => s.text == "name",
            _ => false,
        })
    {
        return Err(ctx
            .err(k, "`defaults` cannot set `name`")
            .help("each target names itself; `defaults` holds the other target keys"));
    }
    let keys: Vec<&str> = TARGET_KEYS.iter().copied().filter(|k| *k != "name").collect();
    ctx.fields(node, "`defaults`", &keys)
}

/// A target's keys, falling back to `defaults:` key by key (a target's key replaces the
/// default's value whole: maps such as `env` and `metrics` are not merged).
struct Merged<'a, 'n> {
    own: &'a Fields<'n>,
    defaults: Option<&'a Fields<'n>>,
}

impl<'n> Merged<'_, 'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.own
            .get(key)
            .or_else(|| self.defaults.and_then(|d| d.get(key)))
    }

    /// How an error about `keys` names where they are set: `` `defaults` `` when every one of
    /// them that is set comes from `defaults:` (the error is there, once, not once per target
    /// that inherits it), else `target` (the target's own `what`).
    fn whose(&self, keys: &[&str], target: &str) -> String {
        let inherited = keys.iter().all(|k| self.own.get(k).is_none())
            && keys
                .iter()
                .any(|k| self.defaults.is_some_and(|d| d.get(k).is_some()));
        if inherited {
            "`defaults`".to_owned()
        } else {
            target.to_owned()
        }
    }
}

mod command;
mod control;
pub use control::parse_duration;
mod harness;
mod measure;
mod target;

use self::target::*;

/// A key of `defaults:` that no target reads (an ncu-only key when every target is an nsys
/// target, `categories` when none is, `libcupti` without a cupti target) would be ignored
/// silently: an error.
fn unused_defaults(ctx: &Ctx<'_>, defaults: &Fields<'_>, targets: &[Target]) -> Result<()> {
    for key in &specific_keys() {
        if targets.iter().any(|t| profiler_reads(t.profiler, key)) {
            continue;
        }
        if let Some(node) = defaults.key_node(key) {
            // The help is the one a target of the spec's (first) profiler gets for this key.
            let theirs = targets.first().map_or_else(ProfilerKind::default, |t| t.profiler);
            return Err(ctx
                .err(node, {
                    let (who, also) = readers(key);
                    format!(
                        "`{key}` in `defaults` only applies to {who} targets, and the spec has none{also}"
                    )
                })
                .help(other_profiler_help(key, theirs)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::control::parse_duration;
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("120s"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("0s").unwrap_err().contains("not longer than zero"));
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("5 days")
                .unwrap_err()
                .contains("unknown unit `days`")
        );
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("does not start with a number")
        );
        assert!(
            parse_duration("99999999999999999999h")
                .unwrap_err()
                .contains("too long")
        );
    }

    fn one_target(extra: &str) -> std::result::Result<Spec, SpecError> {
        load_str(
            &format!(
                "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n{extra}"
            ),
            Path::new("dir/cgp-gate.yaml"),
        )
    }

    #[test]
    fn settings_confirm_names_the_rows_check_base_confirms() {
        let with = |v: &str| {
            load_str(
                &format!(
                    "version: 1\nsettings:\n  confirm: {v}\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
                ),
                Path::new("cgp-gate.yaml"),
            )
        };
        assert_eq!(
            one_target("").unwrap().settings.confirm,
            crate::spec::ConfirmMode::Doubtful
        );
        assert_eq!(
            with("all").unwrap().settings.confirm,
            crate::spec::ConfirmMode::All
        );
        assert_eq!(
            with("doubtful").unwrap().settings.confirm,
            crate::spec::ConfirmMode::Doubtful
        );
        let e = with("some").unwrap_err().to_string();
        assert!(
            e.contains("cgp-gate.yaml:3:12") && e.contains("`doubtful` or `all`"),
            "{e}"
        );
    }

    #[test]
    fn explain_and_sass_keys() {
        let t = one_target("").unwrap().targets.remove(0);
        assert!(t.explain == Explain::Off && t.sass.is_empty());
        let s = one_target("    explain: true\n    sass: [lib/libk.so, /opt/k.so]\n").unwrap();
        let t = &s.targets[0];
        assert_eq!(t.explain, Explain::Always);
        let r = one_target("    explain: remeasure\n").unwrap();
        assert_eq!(r.targets[0].explain, Explain::Remeasure);
        assert_eq!(
            t.sass,
            [PathBuf::from("dir/lib/libk.so"), PathBuf::from("/opt/k.so")]
        );
        let one = one_target("    sass: build/app\n").unwrap();
        assert_eq!(one.targets[0].sass, [PathBuf::from("dir/build/app")]);
        // `defaults:` applies it to every target.
        let d = load_str(
            "version: 1\ndefaults:\n  explain: true\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
            Path::new("cgp-gate.yaml"),
        )
        .unwrap();
        assert_eq!(d.targets[0].explain, Explain::Always);

        let e = one_target("    explain: sometimes\n").unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(
            e.to_string()
                .contains("`explain` of target `t` must be `true`, `false` or `remeasure`"),
            "{e}"
        );
        let nsys = load_str(
            "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    profiler: nsys\n    explain: true\n    metrics:\n      gpu_time: \"3%\"\n",
            Path::new("cgp-gate.yaml"),
        )
        .unwrap_err();
        assert!(
            nsys.to_string()
                .contains("`explain` of target `t` only applies to Nsight Compute"),
            "{nsys}"
        );
        let e = one_target("    sass: []\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("`sass` of target `t` must be a path or a non-empty list"),
            "{e}"
        );
        assert!(one_target("    sass: [\"\"]\n").is_err());
    }

    #[test]
    fn hash_is_sha256_hex() {
        assert_eq!(
            hex_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
