//! Building a new generation of a baseline file from the previous one and a fresh measurement.
//!
//! Policy: the new measurement replaces every entry of the target (an entry not measured again is
//! dropped, with its history), and an entry that continues (same size, kernel, metric and unit)
//! keeps its history. Each entry's history lists its last `keep` generations, oldest first, the
//! newest being the samples now in the file.

use std::collections::BTreeMap;

use super::format::{Entry, Generation, median};
use crate::measured::samples::Series;

/// The entries of the next generation: one per series, sorted by (size, kernel, metric), with
/// the history of `previous` carried over where an entry continues, and trimmed to `keep`
/// generations (at least 1: the current one).
pub(crate) fn next_entries(
    previous: &[Entry],
    series: &[&Series],
    date: &str,
    commit: Option<&str>,
    keep: usize,
) -> Vec<Entry> {
    let keep = keep.max(1);
    let old: BTreeMap<(&str, &str, &str), &Entry> = previous
        .iter()
        .map(|e| ((e.size.as_str(), e.kernel.as_str(), e.metric.as_str()), e))
        .collect();
    let mut entries: Vec<Entry> = series
        .iter()
        .map(|s| {
            let k = &s.key;
            // A unit change means the old medians are not comparable; the trend restarts.
            let mut history = old
                .get(&(k.size.as_str(), k.kernel.as_str(), k.metric.as_str()))
                .filter(|e| e.unit == s.unit)
                .map(|e| e.history.clone())
                .unwrap_or_default();
            history.push(Generation {
                date: date.to_owned(),
                commit: commit.map(str::to_owned),
                median: median(&s.values()),
                n: s.samples.len(),
            });
            let excess = history.len().saturating_sub(keep);
            history.drain(..excess);
            Entry {
                size: k.size.clone(),
                kernel: k.kernel.clone(),
                metric: k.metric.clone(),
                unit: s.unit.clone(),
                samples: s.values(),
                reps: s.reps(),
                configs: s.configs.clone(),
                history,
            }
        })
        .collect();
    entries.sort_by(|a, b| (&a.size, &a.kernel, &a.metric).cmp(&(&b.size, &b.kernel, &b.metric)));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measured::samples::{Sample, SeriesKey};

    fn series(size: &str, unit: &str, values: &[f64]) -> Series {
        Series {
            key: SeriesKey {
                target: "t".into(),
                size: size.into(),
                kernel: "k".into(),
                metric: "gpu__time_duration.sum".into(),
            },
            unit: unit.into(),
            samples: (0..)
                .zip(values)
                .map(|(rep, &value)| Sample { value, rep })
                .collect(),
            configs: Vec::new(),
        }
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]).to_bits(), 2f64.to_bits());
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]).to_bits(), 2.5f64.to_bits());
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn history_continues_trims_and_restarts_on_unit_change() {
        let a = series("n=1", "ns", &[10.0, 12.0]);
        let b = series("n=2", "ns", &[20.0, 22.0]);
        let mut entries = next_entries(&[], &[&b, &a], "d1", Some("c1"), 2);
        assert_eq!(entries[0].size, "n=1", "entries are sorted");
        for (i, d) in ["d2", "d3"].iter().enumerate() {
            let a2 = series("n=1", "ns", &[10.0 + i as f64, 14.0]);
            let b2 = series("n=2", "byte", &[1.0, 2.0]);
            entries = next_entries(&entries, &[&a2, &b2], d, None, 2);
        }
        let dates: Vec<_> = entries[0].history.iter().map(|g| g.date.as_str()).collect();
        assert_eq!(dates, ["d2", "d3"], "trimmed to the last 2 generations");
        assert_eq!(entries[0].history[1].median.to_bits(), 12.5f64.to_bits());
        assert_eq!(entries[0].history[1].n, 2);
        assert_eq!(entries[0].history[1].commit, None);
        // n=2 changed unit at d2: the ns medians are not carried into the byte trend.
        let dates: Vec<_> = entries[1].history.iter().map(|g| g.date.as_str()).collect();
        assert_eq!(dates, ["d2", "d3"]);
        assert_eq!(entries[1].history[0].median.to_bits(), 1.5f64.to_bits());
    }

    #[test]
    fn entries_not_measured_again_are_dropped() {
        let a = series("n=1", "ns", &[10.0, 12.0]);
        let b = series("n=2", "ns", &[20.0, 22.0]);
        let first = next_entries(&[], &[&a, &b], "d1", None, 10);
        let second = next_entries(&first, &[&a], "d2", None, 10);
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].history.len(), 2);
    }
}
