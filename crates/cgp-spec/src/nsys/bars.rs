//! GPU time by category of each `profiler: nsys` target x size in a check, baseline against
//! candidate: what the stacked bars of the Markdown comment and the HTML report draw.
//!
//! Every category counts, gated or not: a live or replayed repetition yields a `category:<name>`
//! series for every category its rules can give (`profile::nsys::extract`), `baseline update`
//! keeps them, and `check` judges only the ones the spec lists. Without them (a baseline written
//! before cgp-gate kept every category) a side shows what it has.

use serde::{Deserialize, Serialize};

use crate::measured::samples::{SampleSet, SeriesKey};
use crate::spec::Target;

/// The bars of one nsys target x size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryBars {
    pub target: String,
    pub size: String,
    /// Every category with time on either side, in the order the rules give them.
    pub categories: Vec<CategoryMedians>,
}

/// One category's median time (ns) on each side; `None`: that side has no such series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryMedians {
    pub name: String,
    pub baseline_ns: Option<f64>,
    pub candidate_ns: Option<f64>,
}

/// Whether `metric` is one of the category times every repetition of an nsys target yields
/// for the bars, whether the spec gates it or not (`baseline update` keeps them; `check` judges
/// only the listed ones and never reports the others as missing).
pub fn is_informational(target: &Target, metric: &str) -> bool {
    target.profiler.gates_categories() && crate::spec::category_of(metric).is_some()
}

/// The median of `values` (NaN-free: times in ns).
fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    })
}

/// The bars of every nsys target x size in `samples` (the candidate), with the baseline's
/// medians from `baseline` (the samples of a key's baseline entry, when there is one).
pub fn category_bars(
    targets: &[&Target],
    samples: &SampleSet,
    baseline: &dyn Fn(&SeriesKey) -> Option<Vec<f64>>,
) -> Vec<CategoryBars> {
    let mut out = Vec::new();
    for t in targets.iter().filter(|t| t.profiler.gates_categories()) {
        for size in &t.sizes {
            let size = size.key();
            let mut categories: Vec<CategoryMedians> = Vec::new();
            for (key, series) in &samples.series {
                if key.target != t.name || key.size != size || series.unit != "ns" {
                    continue;
                }
                let Some(name) = crate::spec::category_of(&key.metric) else {
                    continue;
                };
                let m = CategoryMedians {
                    name: name.to_owned(),
                    baseline_ns: baseline(key).and_then(|v| median(&v)),
                    candidate_ns: median(&series.values()),
                };
                if m.baseline_ns.unwrap_or(0.0) > 0.0 || m.candidate_ns.unwrap_or(0.0) > 0.0 {
                    categories.push(m);
                }
            }
            if !categories.is_empty() {
                out.push(CategoryBars {
                    target: t.name.clone(),
                    size,
                    categories,
                });
            }
        }
    }
    out
}
