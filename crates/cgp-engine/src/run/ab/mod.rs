//! `ab`: base and head measured in alternation on one GPU and judged pair by pair.
//!
//! For every target x size, pair `i` is repetition `i` of the base tree and repetition `i` of the
//! head tree, run back to back in ABBA order (pair 0 base first, pair 1 head first, ...), so slow
//! drift and clock state hit both sides alike. Each row's pairs are the per-repetition medians of
//! each side (after each run's warm-up launches); `stats::paired` judges their log ratios against
//! the row's threshold (paired t). Doubtful rows get more pairs up to `max_repetitions`, as in
//! `check`; a decided row stops. No stored baseline is involved.
//!
//! Recording layout: `DIR/base/<target>/<size>/<rep>.csv` and `DIR/head/...` (each side a normal
//! recording with its own optional `manifest.json`), and `DIR/manifest.json` ([`AbManifest`]) with
//! the order in which the runs happened.

mod judge;
mod pairs;
#[cfg(test)]
mod tests;

use crate::measured::samples::TargetSize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::foundation::error::Error;
use crate::gpu::Gpu;
use crate::outcome::results::{FailOn, Results, Row, RunError};
use crate::profile::Measurer;
use crate::profile::record::Recorder;
use crate::run::engine::{add_derived, fingerprint_for};
use crate::run::measure::Watch;
use crate::run::progress::Progress;
use crate::spec::{Spec, Target};
use crate::stats::Config;
use judge::judge;
use pairs::{Both, Item, measure_pairs};

/// Version of the A/B manifest.
pub const AB_MANIFEST_VERSION: u32 = 1;

/// Which tree a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Head,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Base => "base",
            Self::Head => "head",
        }
    }
}

/// One run, in the order they happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderEntry {
    pub side: Side,
    pub target: String,
    pub size: String,
    pub rep: u32,
}

/// `DIR/manifest.json` of an A/B recording (optional when replaying).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbManifest {
    pub schema_version: u32,
    /// True when the data was not measured on a GPU.
    #[serde(default)]
    pub synthetic: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_commit: Option<String>,
    /// Every run in the order it happened.
    #[serde(default)]
    pub order: Vec<OrderEntry>,
}

impl crate::profile::record::Versioned for AbManifest {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

impl AbManifest {
    /// Read `DIR/manifest.json`; `Ok(None)` when there is none.
    ///
    /// # Errors
    /// Invalid JSON (with its position) or a newer schema version.
    pub fn read(dir: &Path) -> Result<Option<Self>, Error> {
        crate::profile::record::read_manifest(dir, "A/B manifest", AB_MANIFEST_VERSION)
    }

    /// Write it atomically.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::output("the A/B manifest", e))?;
        crate::foundation::fsutil::write_atomic(&dir.join("manifest.json"), text.as_bytes())
    }
}

/// The two trees: a measurer and the targets as resolved in each (commands and relative paths
/// resolve in the tree's own directory).
pub struct Sides<'a> {
    pub base: &'a mut dyn Measurer,
    pub head: &'a mut dyn Measurer,
    pub base_targets: &'a [&'a Target],
    pub head_targets: &'a [&'a Target],
}

/// Options of one A/B run.
pub struct AbOptions<'a> {
    pub fail_on: FailOn,
    /// `--allow-missing`: rows the base tree measured and the head tree did not (a kernel that
    /// disappeared or was renamed) do not fail the gate, as in `check`.
    pub allow_missing: bool,
    /// NVML, when a driver is there (live runs only).
    pub gpu: Option<&'a dyn Gpu>,
    /// The manifest of a replayed recording (its `synthetic` flag reaches the results).
    pub manifest: Option<&'a AbManifest>,
    /// The commit the CI says the head tree is (`$GITHUB_SHA`, read by the command layer);
    /// `None`: the recording's head commit, else `git rev-parse HEAD` in the spec's folder.
    pub ci_commit: Option<&'a str>,
}

/// What an A/B run produced: the results and the order the runs happened in.
pub struct AbRun {
    pub results: Results,
    pub order: Vec<OrderEntry>,
}

/// `ab` inside the re-measure loop ([`crate::run::engine::until_decided`]): the reference samples are
/// the base tree's, measured in pairs with the head tree's.
struct AbLoop<'a, 's, 'w> {
    sides: &'a mut Sides<'s>,
    items: &'a [Item<'a>],
    recorders: Option<(&'a mut Recorder, &'a mut Recorder)>,
    watch: Option<&'a mut Watch<'w>>,
    both: Both,
    /// The next pair to measure per (target, size).
    next: BTreeMap<TargetSize, u32>,
    cfg: &'a Config,
    gpu_name: &'a str,
    progress: &'a mut dyn Progress,
}

impl crate::run::engine::Remeasure for AbLoop<'_, '_, '_> {
    fn judge(&mut self, rounds: &crate::run::engine::Rounds) -> (Vec<Row>, Vec<RunError>) {
        let mut base = self.both.base.clone();
        let mut head = self.both.head.clone();
        add_derived(self.sides.base_targets, &mut base, self.gpu_name);
        add_derived(self.sides.head_targets, &mut head, self.gpu_name);
        let view = Both {
            base,
            head,
            pairs: self.both.pairs.clone(),
            failed: self.both.failed.clone(),
            ..Both::default()
        };
        let (mut rows, spec_errors) = judge(self.sides.head_targets, &view, self.cfg, rounds);
        for r in &mut rows {
            r.key.gpu = self.gpu_name.to_owned();
        }
        (rows, spec_errors)
    }

    fn stop(&self) -> bool {
        self.both.stop
    }

    fn measure_more(
        &mut self,
        doubtful: &BTreeSet<TargetSize>,
    ) -> Result<Option<BTreeSet<TargetSize>>, Error> {
        let more: Vec<(&Item<'_>, u32, u32)> = self
            .items
            .iter()
            .filter_map(|i| {
                let id = i.id();
                if !doubtful.contains(&id) {
                    return None;
                }
                let (from, to) = crate::stats::remeasure::next_round(
                    *self.next.get(&id)?,
                    i.head.repetitions,
                    i.head.max_repetitions,
                )?;
                Some((i, from, to))
            })
            .collect();
        if more.is_empty() {
            return Ok(None);
        }
        self.progress.status(&format!(
            "measuring more pairs for {} doubtful size(s)",
            more.len()
        ));
        let before = self.both.pairs.clone();
        let mut recorders = self.recorders.as_mut().map(|(b, h)| (&mut **b, &mut **h));
        measure_pairs(
            self.sides,
            &more,
            &mut recorders,
            self.watch.as_deref_mut(),
            true,
            &mut self.both,
            &mut *self.progress,
        )?;
        let mut grew = BTreeSet::new();
        for (item, _, to) in &more {
            let id = item.id();
            self.next.insert(id.clone(), *to);
            if self.both.pairs.get(&id) != before.get(&id) {
                grew.insert(id);
            }
        }
        Ok(Some(grew))
    }
}

/// A time regression the base tree's cycles explain is the clock's (docs/harnesses.md).
fn clock_of_base(rows: &mut [Row], targets: &[&Target], both: &Both) {
    crate::run::clock::confirm_in_cycles(rows, targets, &both.head, &|k| {
        both.base
            .series
            .get(k)
            .map(crate::measured::samples::Series::values)
    });
}

/// Each size of each head target with the same target of the base tree: a target the base
/// tree's spec lacks, or has with other sizes, is a usage error.
fn paired_items<'t>(
    base_targets: &[&'t Target],
    head_targets: &[&'t Target],
) -> Result<Vec<Item<'t>>, Error> {
    let mut items = Vec::new();
    for h in head_targets {
        let Some(b) = base_targets.iter().find(|b| b.name == h.name) else {
            return Err(Error::Usage(format!(
                "target `{}` is not in the base tree's spec",
                h.name
            )));
        };
        if b.sizes != h.sizes {
            return Err(Error::Usage(format!(
                "target `{}` has other sizes in the base tree's spec",
                h.name
            )));
        }
        for size in 0..h.sizes.len() {
            items.push(Item {
                base: b,
                head: h,
                size,
            });
        }
    }
    Ok(items)
}

/// Alpha is spent over the looks more pairs may take, by each row's plan, as in `check`
/// (docs/statistics.md, 2.6; `ab::judge` gives every row its look): the most any row may take.
fn most_looks(items: &[Item<'_>]) -> u32 {
    items
        .iter()
        .map(|i| crate::stats::remeasure::looks(i.head.repetitions, i.head.max_repetitions))
        .max()
        .unwrap_or(1)
}

/// Run the A/B comparison and assemble the results (same shape as `check`'s: `baseline` is the
/// base tree, `candidate` the head tree). Profiler failures end up in `Results::errors`.
///
/// # Errors
/// Targets of the two trees that do not match; recorder failures.
pub fn run_ab(
    spec: &Spec,
    sides: &mut Sides<'_>,
    mut recorders: Option<(&mut Recorder, &mut Recorder)>,
    mut watch: Option<&mut Watch<'_>>,
    opts: &AbOptions<'_>,
    progress: &mut dyn Progress,
) -> Result<AbRun, Error> {
    // Harness targets name their device in their first file: each tree's first repetition runs
    // now (head, then base) and is kept as its pair 0.
    let head_origin = sides.head.open(sides.head_targets)?;
    let base_origin = sides.base.open(sides.base_targets)?;
    let items = paired_items(sides.base_targets, sides.head_targets)?;
    let fingerprint = sides
        .head_targets
        .first()
        .map(|t| fingerprint_for(&head_origin, t, opts.gpu))
        .unwrap_or_default();

    let mut both = Both::default();
    let first: Vec<(&Item<'_>, u32, u32)> = items.iter().map(|i| (i, 0, i.head.repetitions)).collect();
    measure_pairs(
        sides,
        &first,
        &mut recorders,
        watch.as_deref_mut(),
        false,
        &mut both,
        progress,
    )?;
    let looks = most_looks(&items);
    let mut cfg = crate::run::engine::stats_config(&spec.settings);
    cfg.looks = looks;
    let mut run = AbLoop {
        next: items.iter().map(|i| (i.id(), i.head.repetitions)).collect(),
        sides,
        items: &items,
        recorders,
        watch: watch.as_deref_mut(),
        both,
        cfg: &cfg,
        gpu_name: fingerprint.gpu_name.as_str(),
        progress,
    };
    let (mut rows, spec_errors, _) = crate::run::engine::until_decided(&mut run)?;
    let AbLoop { mut both, sides, .. } = run;

    // A kernel the head tree no longer launches (or launches under a new name) fails the gate
    // as in `check`, unless allowed.
    crate::outcome::apply_missing(
        &mut rows,
        &crate::outcome::MissingScope {
            targets: sides.head_targets,
            allow_all: opts.allow_missing,
            skipped: &BTreeSet::new(),
        },
    );
    clock_of_base(&mut rows, sides.head_targets, &both);
    both.errors.extend(spec_errors);
    let synthetic =
        opts.manifest.is_some_and(|m| m.synthetic) || base_origin.synthetic || head_origin.synthetic;
    let results = crate::run::engine::assemble(
        crate::run::engine::Assembly {
            spec,
            source: format!("ab: base {} / head {}", base_origin.source, head_origin.source),
            synthetic,
            fingerprint,
            git_commit: opts
                .manifest
                .and_then(|m| m.head_commit.clone())
                .or_else(|| crate::run::engine::git_commit(opts.ci_commit, &spec.base_dir())),
            fail_on: opts.fail_on,
            multiple_testing: format!(
                "paired (ABBA), paired t on log ratios against the threshold; holm alpha={} spent over up to {looks} look(s) (alpha/looks at each look but the last, which spends the rest)",
                cfg.alpha
            ),
            had_work: !items.is_empty(),
            health: watch.map(|w| w.sampler.summary()).unwrap_or_default(),
            cost_seconds: both.cost,
        },
        rows,
        both.errors,
    );
    Ok(AbRun {
        results,
        order: both.order,
    })
}
