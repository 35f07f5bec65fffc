//! The data that flows from the profiler to the statistics: parsed launches and sample series.
//!
//! `ncu` output parses into [`Launch`]es (one per profiled kernel launch, metrics normalised to base
//! units). The gate then groups the numbers it needs into [`Series`]: one per
//! target x size x kernel x metric, each value tagged with the repetition it came from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A metric value from one launch, in base units. Written as what it holds: a JSON number, a list
/// of numbers or a string (by the impls below, not `serde(untagged)`, whose one error says
/// nothing of what was expected).
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValue {
    Number(f64),
    /// `;`-separated instance values (`--print-metric-instances values`).
    List(Vec<f64>),
    /// String-valued metrics such as `launch__func_cache_config` = `CachePreferNone`.
    Text(String),
}

impl Serialize for MetricValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(v) => s.serialize_f64(*v),
            Self::List(v) => v.serialize(s),
            Self::Text(t) => s.serialize_str(t),
        }
    }
}

impl<'de> Deserialize<'de> for MetricValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MetricValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number, a list of numbers or a string")
            }
            fn visit_f64<E>(self, v: f64) -> Result<MetricValue, E> {
                Ok(MetricValue::Number(v))
            }
            #[allow(clippy::cast_precision_loss, reason = "as serde reads an integer into an f64")]
            fn visit_i64<E>(self, v: i64) -> Result<MetricValue, E> {
                Ok(MetricValue::Number(v as f64))
            }
            #[allow(clippy::cast_precision_loss, reason = "as serde reads an integer into an f64")]
            fn visit_u64<E>(self, v: u64) -> Result<MetricValue, E> {
                Ok(MetricValue::Number(v as f64))
            }
            fn visit_str<E>(self, v: &str) -> Result<MetricValue, E> {
                Ok(MetricValue::Text(v.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<MetricValue, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(x) = seq.next_element::<f64>()? {
                    v.push(x);
                }
                Ok(MetricValue::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A metric of one launch: value in base units and the base unit's name (empty for text metrics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub value: MetricValue,
    pub unit: String,
}

/// One profiled kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// ncu's `ID` column: the sequential result number within one run.
    pub id: u64,
    /// `Kernel Name` as printed.
    pub kernel: String,
    /// Launch identity columns when present (`Block Size`, `Grid Size`, `Device`, `CC`, NVTX ranges, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    /// Metric name -> value. An `n/a` metric is absent.
    pub metrics: BTreeMap<String, Measured>,
}

/// Which page or layout the CSV had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CsvShape {
    /// `--page raw`: a column per metric, units in row 2.
    Raw,
    /// `--page details`: a row per (launch, section, metric).
    Details,
    /// `--print-summary`: aggregated; per-launch samples are lost.
    Summary,
}

/// Parsed ncu output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedOutput {
    pub shape: CsvShape,
    /// Launches in the order ncu printed them.
    pub launches: Vec<Launch>,
    /// `==WARNING==` lines seen in the output, verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Identifies one series of samples.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesKey {
    pub target: String,
    /// Canonical size key, e.g. `m=1024,n=1024` (`default` for a target without parameters).
    pub size: String,
    pub kernel: String,
    pub metric: String,
}

/// Samples of one metric for one target x size x kernel, in base units. Written with the key's
/// fields first, then its own ([`SeriesRepr`]: the bytes `serde(flatten)` wrote, without it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "SeriesRepr", try_from = "SeriesRepr")]
pub struct Series {
    pub key: SeriesKey,
    pub unit: String,
    /// One value per profiled launch, in the order measured, with the repetition it came from.
    /// Written as two lists of the same length, `values` and `reps` ([`SeriesRepr`]).
    pub samples: Vec<Sample>,
    /// The launch configurations (`grid (X, Y, Z) block (X, Y, Z)`) the values came from, sorted
    /// and unique; empty when the profiler did not say. A kernel whose configuration changed
    /// between baseline and candidate stays one series; this is how the change is seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<String>,
}

/// One value of a [`Series`], in base units, and the repetition (profiler run) it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub rep: u32,
}

impl Series {
    /// The values, in the order measured.
    pub fn values(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.value).collect()
    }

    /// The repetition each value came from, in the same order.
    pub fn reps(&self) -> Vec<u32> {
        self.samples.iter().map(|s| s.rep).collect()
    }
}

/// A [`Series`] as written: the key's fields and the series' own, side by side.
#[derive(Serialize, Deserialize)]
struct SeriesRepr {
    target: String,
    size: String,
    kernel: String,
    metric: String,
    unit: String,
    values: Vec<f64>,
    reps: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    configs: Vec<String>,
}

impl From<Series> for SeriesRepr {
    fn from(s: Series) -> Self {
        let Series {
            key:
                SeriesKey {
                    target,
                    size,
                    kernel,
                    metric,
                },
            unit,
            samples,
            configs,
        } = s;
        let (values, reps) = samples.iter().map(|s| (s.value, s.rep)).unzip();
        Self {
            target,
            size,
            kernel,
            metric,
            unit,
            values,
            reps,
            configs,
        }
    }
}

impl TryFrom<SeriesRepr> for Series {
    type Error = String;

    fn try_from(r: SeriesRepr) -> Result<Self, Self::Error> {
        let SeriesRepr {
            target,
            size,
            kernel,
            metric,
            unit,
            values,
            reps,
            configs,
        } = r;
        if values.len() != reps.len() {
            return Err(format!(
                "series {} {kernel} {metric} has {} values but {} reps (one per value)",
                target_size(&target, &size),
                values.len(),
                reps.len()
            ));
        }
        let samples = values
            .into_iter()
            .zip(reps)
            .map(|(value, rep)| Sample { value, rep })
            .collect();
        Ok(Self {
            key: SeriesKey {
                target,
                size,
                kernel,
                metric,
            },
            unit,
            samples,
            configs,
        })
    }
}

/// Every series a run measured, keyed for lookup.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleSet {
    pub series: BTreeMap<SeriesKey, Series>,
}

impl SampleSet {
    /// Add one value; the first value of a series fixes its unit.
    pub fn push(&mut self, key: &SeriesKey, unit: &str, value: f64, rep: u32) {
        let s = self.series.entry(key.clone()).or_insert_with(|| Series {
            key: key.clone(),
            unit: unit.to_owned(),
            samples: Vec::new(),
            configs: Vec::new(),
        });
        s.samples.push(Sample { value, rep });
    }

    /// Note the launch configuration of a series' values (kept sorted and unique). A series that
    /// does not exist yet is left alone.
    pub fn note_config(&mut self, key: &SeriesKey, config: &str) {
        if let Some(s) = self.series.get_mut(key)
            && let Err(at) = s.configs.binary_search_by(|c| c.as_str().cmp(config))
        {
            s.configs.insert(at, config.to_owned());
        }
    }

    /// Merge another set into this one (appending values of shared series).
    pub fn extend(&mut self, other: SampleSet) {
        for (k, s) in other.series {
            for x in &s.samples {
                self.push(&k, &s.unit, x.value, x.rep);
            }
            for c in &s.configs {
                self.note_config(&k, c);
            }
        }
    }
}

/// Fewest launches of a kernel a run must hold before its warm-up launches are dropped.
pub const WARMUP_MIN_LAUNCHES: usize = 3;

/// Drop the first `warmup` launches of every series of ONE run (one repetition's samples): the
/// first launch of a process is a warm-up outlier (docs/statistics.md, 2.5). A series with fewer
/// than [`WARMUP_MIN_LAUNCHES`] values keeps them all (a run of 1 or 2 launches has nothing to
/// spare), and at least one value is always kept. Returns how many values were dropped.
pub fn drop_warmup(run: &mut SampleSet, warmup: u32) -> usize {
    let mut dropped = 0;
    for s in run.series.values_mut() {
        if s.samples.len() < WARMUP_MIN_LAUNCHES {
            continue;
        }
        let k = (warmup as usize).min(s.samples.len() - 1);
        s.samples.drain(..k);
        dropped += k;
    }
    dropped
}

/// The name a kernel is tracked by across runs: the demangled name without its parameter list
/// (`void gemm<128>(float const*, int)` -> `void gemm<128>`). Template arguments stay, so
/// instantiations are told apart; a changed signature alone does not turn every row of a kernel
/// into "new" + "missing" and hide a regression.
pub fn kernel_key(name: &str) -> String {
    let t = name.trim();
    if !t.ends_with(')') {
        return t.to_owned();
    }
    let mut depth = 0usize;
    for (i, c) in t.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let head = t[..i].trim_end();
                    return if head.is_empty() {
                        t.to_owned()
                    } else {
                        head.to_owned()
                    };
                }
            }
            _ => {}
        }
    }
    t.to_owned()
}

/// The series name of a kernel that one repetition launched with several configurations:
/// `KERNEL [grid (X, Y, Z) block (X, Y, Z)]` (`config` is `grid ... block ...`).
pub fn kernel_with_config(kernel: &str, config: &str) -> String {
    format!("{kernel} [{config}]")
}

/// The kernel of a series name: without the ` [grid ... block ...]` of [`kernel_with_config`].
pub fn kernel_of_series(name: &str) -> &str {
    match name.rfind(" [grid ") {
        Some(at) if name.ends_with(']') => &name[..at],
        _ => name,
    }
}

/// `target[size]`: how every message and report names one size of a target (`gemm[m=4096,n=4096]`).
pub fn target_size(target: &str, size: &str) -> String {
    format!("{target}[{size}]")
}

/// One size of one target (the size by its key, `m=4096,n=4096`): what the work list, the
/// re-measure loop, shards, recordings and baselines key their maps and sets by. Orders like the
/// pair (target first), and prints as every report names it, `target[size]` ([`target_size`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TargetSize {
    pub target: String,
    pub size: String,
}

impl TargetSize {
    pub fn new(target: impl Into<String>, size: impl Into<String>) -> Self {
        Self {
            target: target.into(),
            size: size.into(),
        }
    }

    /// Whether this is `target`'s size `size` (without building a key to compare).
    pub fn is(&self, target: &str, size: &str) -> bool {
        self.target == target && self.size == size
    }
}

impl std::fmt::Display for TargetSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.target, self.size)
    }
}

/// The kernel names in an operation row's configurations (`KERNEL grid (..) block (..)`), sorted
/// and once each.
pub fn kernels_of(configs: &[String]) -> Vec<String> {
    let mut out: Vec<String> = configs
        .iter()
        .map(|c| c.rfind(" grid (").map_or(c.as_str(), |at| &c[..at]).to_owned())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {

    /// The explicit (de)serialisers write the bytes `serde(untagged)` and `serde(flatten)` wrote,
    /// and read them back.
    #[test]
    fn metric_values_and_series_keep_their_json() {
        use super::{MetricValue, SampleSet, Series, SeriesKey};
        let values = [
            MetricValue::Number(1.5),
            MetricValue::List(vec![1.0, 2.5]),
            MetricValue::Text("CachePreferNone".into()),
        ];
        let text = serde_json::to_string(&values).unwrap();
        assert_eq!(text, r#"[1.5,[1.0,2.5],"CachePreferNone"]"#);
        let back: Vec<MetricValue> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, values);
        let int: MetricValue = serde_json::from_str("3").unwrap();
        assert_eq!(int, MetricValue::Number(3.0));
        assert!(serde_json::from_str::<MetricValue>("{}").is_err());
        let mut set = SampleSet::default();
        let key = SeriesKey {
            target: "t".into(),
            size: "n=1".into(),
            kernel: "k".into(),
            metric: "m".into(),
        };
        set.push(&key, "ns", 2.0, 0);
        let s = &set.series[&key];
        let text = serde_json::to_string(s).unwrap();
        assert_eq!(
            text,
            r#"{"target":"t","size":"n=1","kernel":"k","metric":"m","unit":"ns","values":[2.0],"reps":[0]}"#
        );
        assert_eq!(&serde_json::from_str::<Series>(&text).unwrap(), s);
    }
    use super::kernel_key;

    #[test]
    fn every_run_drops_its_warm_up_launches_when_it_has_three_or_more() {
        use super::{SampleSet, SeriesKey, drop_warmup};
        let key = |k: &str| SeriesKey {
            target: "t".into(),
            size: "default".into(),
            kernel: k.into(),
            metric: "gpu__time_duration.sum".into(),
        };
        let mut run = SampleSet::default();
        for v in [107.0, 100.0, 101.0] {
            run.push(&key("three"), "ns", v, 4);
        }
        for v in [107.0, 100.0] {
            run.push(&key("two"), "ns", v, 4);
        }
        assert_eq!(drop_warmup(&mut run.clone(), 0), 0);
        assert_eq!(drop_warmup(&mut run, 1), 1);
        assert_eq!(run.series[&key("three")].values(), vec![100.0, 101.0]);
        assert_eq!(run.series[&key("three")].reps(), vec![4, 4]);
        assert_eq!(run.series[&key("two")].values(), vec![107.0, 100.0]);
        // Never all of a run.
        let mut big = SampleSet::default();
        for v in [1.0, 2.0, 3.0] {
            big.push(&key("k"), "ns", v, 0);
        }
        assert_eq!(drop_warmup(&mut big, 9), 2);
        assert_eq!(big.series[&key("k")].values(), vec![3.0]);
    }

    #[test]
    fn a_series_name_with_a_configuration_gives_back_its_kernel() {
        use super::{kernel_of_series, kernel_with_config};
        let name = kernel_with_config("void gemm<128>", "grid (64, 1, 1) block (256, 1, 1)");
        assert_eq!(name, "void gemm<128> [grid (64, 1, 1) block (256, 1, 1)]");
        assert_eq!(kernel_of_series(&name), "void gemm<128>");
        assert_eq!(kernel_of_series("void gemm<128>"), "void gemm<128>");
        assert_eq!(kernel_of_series("k [gridlock]"), "k [gridlock]");
    }

    #[test]
    fn kernel_keys_drop_the_parameter_list_only() {
        assert_eq!(
            kernel_key("void matmul_tiled<32>(const float *, const float *, float *, int)"),
            "void matmul_tiled<32>"
        );
        assert_eq!(
            kernel_key("vector_add(const float *, const float *, float *, int)"),
            "vector_add"
        );
        assert_eq!(kernel_key("void k<(int)3>(void (*)(int), int)"), "void k<(int)3>");
        assert_eq!(kernel_key("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
        assert_eq!(kernel_key("(anonymous)"), "(anonymous)");
        assert_eq!(kernel_key("Foo::operator()(int)"), "Foo::operator()");
    }

    #[test]
    fn target_sizes_print_as_reports_name_them_and_order_like_the_pair() {
        use super::{TargetSize, target_size};
        let a = TargetSize::new("gemm", "m=4096,n=4096");
        assert_eq!(a.to_string(), "gemm[m=4096,n=4096]");
        assert_eq!(a.to_string(), target_size("gemm", "m=4096,n=4096"));
        let mut keys = [
            TargetSize::new("b", "n=1"),
            TargetSize::new("a", "n=2"),
            TargetSize::new("a", "n=1"),
        ];
        keys.sort();
        let pairs: Vec<(&str, &str)> = keys
            .iter()
            .map(|k| (k.target.as_str(), k.size.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "n=1"), ("a", "n=2"), ("b", "n=1")]);
        assert!(a.is("gemm", "m=4096,n=4096"));
        assert!(!a.is("gemm", "m=1"));
    }
}
