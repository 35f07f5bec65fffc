//! The baselines a check compares against: read once, checked for comparability (GPU,
//! fingerprint) before any GPU time is spent, and the error when there are none at all.

use crate::foundation::sanitize::line;
use std::collections::BTreeMap;

use super::{Baselines, CheckOptions, Stored};
use crate::baseline::Store;
use crate::foundation::error::Error;
use crate::outcome::results::FingerprintDiff;
use crate::profile::Provenance;
use crate::run::engine::fingerprint_for;
use crate::spec::{Spec, Target};

/// The error for a baselines directory that holds no baseline at all (a mistyped path, a
/// directory one level too deep, baselines never committed): passing with every row `new` would
/// keep CI green forever.
pub(super) fn no_baselines(dir: &std::path::Path, gpu_key: &str) -> Error {
    let layout = format!("{}/<gpu-key>/<target>.json", dir.display());
    // `--baselines baselines/nvidia-h100-80gb-hbm3`: the target files one level too high.
    let direct: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .take(3)
                .collect()
        })
        .unwrap_or_default();
    let message = if !direct.is_empty() {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| ".".to_owned(), |p| p.display().to_string());
        format!(
            "no baselines: this directory holds target files ({}) where GPU directories were expected; the layout is {layout} (here: {}/{gpu_key}/<target>.json)\n  help: pass the directory above it, `--baselines {parent}`",
            direct.join(", "),
            dir.display()
        )
    } else if dir.is_dir() {
        format!(
            "no baselines: the directory holds no baseline file (expected {layout}; for this GPU: {}/{gpu_key}/<target>.json)\n  help: record them with `cgp-gate baseline update` on main and commit them, fix the --baselines path, or pass --allow-no-baselines for the first run (every row is then `new`)",
            dir.display()
        )
    } else {
        format!(
            "no baselines: the directory does not exist (expected {layout})\n  help: record them with `cgp-gate baseline update` on main and commit them, fix the --baselines path, or pass --allow-no-baselines for the first run (every row is then `new`)"
        )
    };
    Error::Input {
        path: dir.to_path_buf(),
        message,
    }
}

/// The error of a live run on a machine where NVML could not open a GPU (no GPU, no driver, the
/// driver not loaded), when there are baselines to compare with: NVML's own reason, exit 3.
fn no_usable_gpu(
    opts: &CheckOptions<'_>,
    fp: &crate::gpu::fingerprint::Fingerprint,
    stored: &Stored,
) -> Option<Error> {
    let note = opts.gpu_note?;
    if opts.gpu.is_some() || fp.gpu_name != crate::gpu::fingerprint::FieldValue::Unknown || stored.is_empty()
    {
        return None;
    }
    Some(Error::Environment(format!(
        "no usable GPU: {note}\n  help: run on a machine whose NVIDIA GPU `nvidia-smi` lists (the GPU runner); without a GPU, replay a recording made there with `--replay DIR`"
    )))
}

/// A baseline of a real GPU and a run on the SYNTHETIC stand-in of `CGP_GATE_STAND_IN_GPU` (or
/// the other way round) were measured on different setups, whatever the GPUs' names say: the
/// difference as (field, baseline, now).
fn stand_in_difference(
    baseline: &crate::gpu::fingerprint::Fingerprint,
    now: &crate::gpu::fingerprint::Fingerprint,
) -> Option<(String, String, String)> {
    let said = |s: bool| {
        if s {
            "the SYNTHETIC stand-in GPU"
        } else {
            "a real GPU"
        }
        .to_owned()
    };
    (baseline.synthetic != now.synthetic).then(|| {
        (
            "synthetic (CGP_GATE_STAND_IN_GPU)".to_owned(),
            said(baseline.synthetic),
            said(now.synthetic),
        )
    })
}

/// Every selected target's baseline for this GPU, how their fingerprints differ from this run's
/// (when allowed), and every file of the store.
///
/// # Errors
/// Unreadable baselines; baselines only for other GPUs; a fingerprint mismatch without
/// `allow_fingerprint_mismatch`.
pub(super) fn load_baselines(
    spec: &Spec,
    targets: &[&Target],
    run: &Provenance,
    opts: &CheckOptions<'_>,
) -> Result<(Baselines, Vec<FingerprintDiff>, Stored), Error> {
    let store = Store::new(&opts.baselines);
    let fields = key_fields(spec);
    let mut baselines: Baselines = BTreeMap::new();
    let mut mismatch: Vec<FingerprintDiff> = Vec::new();
    let stored = store.load_all()?;
    for t in targets {
        let fp = fingerprint_for(run, t, opts.gpu);
        let path = store.path(&fp.gpu_key(), &t.name);
        let Some(mut b) = store.load(&fp.gpu_key(), &t.name)? else {
            only_other_gpus(t, &fp, &path, &stored, opts)?;
            continue;
        };
        for d in allowed_differences(t, &b.fingerprint, &fp, &fields, &path, &stored, opts)? {
            if !mismatch.contains(&d) {
                mismatch.push(d);
            }
        }
        // A schema-1 baseline still holds its runs' warm-up launches.
        b.drop_warmup_v1(t.warmup);
        baselines.insert(t.name.clone(), (b, path));
    }
    if stored.is_empty() && !opts.allow_no_baselines {
        let key = targets
            .first()
            .map(|t| fingerprint_for(run, t, opts.gpu).gpu_key())
            .unwrap_or_default();
        return Err(no_baselines(&opts.baselines, &key));
    }
    Ok((baselines, mismatch, stored))
}

/// The fingerprint fields a baseline must match: the spec's `fingerprint_fields`, and whatever
/// the spec leaves out, those that keep an ncu baseline from comparing with an nsys run.
fn key_fields(spec: &Spec) -> Vec<&str> {
    let mut fields: Vec<&str> = spec
        .settings
        .fingerprint_fields
        .iter()
        .map(String::as_str)
        .collect();
    for f in crate::gpu::fingerprint::ALWAYS_KEY_FIELDS {
        if !fields.contains(f) {
            fields.push(f);
        }
    }
    fields
}

/// Target `t` has no baseline for this GPU (expected at `path`). A first run has no baselines at
/// all: every row is "new". But baselines of this target for other GPUs mean this GPU is not the
/// one the baselines describe (or NVML could not name it): passing on "new" rows would hide
/// every regression, so that is an error.
fn only_other_gpus(
    t: &Target,
    fp: &crate::gpu::fingerprint::Fingerprint,
    path: &std::path::Path,
    stored: &Stored,
    opts: &CheckOptions<'_>,
) -> Result<(), Error> {
    let others: Vec<String> = stored
        .iter()
        .filter(|(_, f)| f.target == t.name)
        .map(|(p, _)| p.display().to_string())
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    // A live run without a usable GPU has no GPU to name, so its baselines cannot be
    // found, and --allow-fingerprint-mismatch would not help: say why there is no GPU.
    if let Some(e) = no_usable_gpu(opts, fp, stored) {
        return Err(e);
    }
    Err(Error::Environment(format!(
        "no baseline of `{}` for this GPU (`{}`, expected {}), but there are baselines for other GPUs: {}\n  help: run on the GPU the baselines were measured on, or add this GPU's with `cgp-gate baseline update` (on a new runner type, commit them in the same pull request)",
        t.name,
        line(fp.gpu_name.as_str()),
        line(&path.display().to_string()),
        line(&others.join(", "))
    )))
}

/// How the fingerprint of target `t`'s baseline (at `path`) differs from this run's, as the
/// results list them; an error when the profilers differ (never compared, whatever the flags:
/// issue 44) or the setups differ without `--allow-fingerprint-mismatch`.
fn allowed_differences(
    t: &Target,
    baseline: &crate::gpu::fingerprint::Fingerprint,
    fp: &crate::gpu::fingerprint::Fingerprint,
    fields: &[&str],
    path: &std::path::Path,
    stored: &Stored,
    opts: &CheckOptions<'_>,
) -> Result<Vec<FingerprintDiff>, Error> {
    let mut diffs = baseline.differences(fp, fields);
    diffs.extend(stand_in_difference(baseline, fp));
    // A profiler's baselines are compared with that profiler's samples only, whatever the
    // flags (issue 44): --allow-fingerprint-mismatch never crosses profilers.
    let profilers = baseline.differences(fp, crate::gpu::fingerprint::ALWAYS_KEY_FIELDS);
    if let Some((_, base, now)) = profilers.first() {
        return Err(Error::Environment(format!(
            "the baseline of `{}` ({}) was measured with `{}`, this run measures with `{}`: one profiler's baselines are never compared with another's samples (--allow-fingerprint-mismatch does not cross profilers)\n  help: record this profiler's baselines with `cgp-gate baseline update` (its history starts afresh), or run with the profiler the baselines were measured with",
            t.name,
            path.display(),
            line(base),
            line(now)
        )));
    }
    if !diffs.is_empty() && !opts.allow_fingerprint_mismatch {
        if let Some(e) = no_usable_gpu(opts, fp, stored) {
            return Err(e);
        }
        let list = diffs
            .iter()
            // The fields come from a baseline file and the manifest of a recording:
            // each stays on this one line, sanitised.
            .map(|(f, base, now)| format!("{f}: baseline `{}`, now `{}`", line(base), line(now)))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(Error::Environment(format!(
            "the baseline of `{}` ({}) was measured on a different setup: {list}\n  help: refresh it on this machine with `cgp-gate baseline update`, add the baseline of this GPU, or pass --allow-fingerprint-mismatch (every report will say so)",
            t.name,
            path.display()
        )));
    }
    Ok(diffs
        .into_iter()
        .map(|(f, base, now)| FingerprintDiff {
            field: format!("{}: {f}", t.name),
            baseline: base,
            current: now,
        })
        .collect())
}
