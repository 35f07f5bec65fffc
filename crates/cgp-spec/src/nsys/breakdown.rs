//! Per-category and per-kernel GPU time of one workload, the GPU busy time, and the renderings of
//! `cgp-gate breakdown` (console, JSON, CSV; the HTML page and bars are in `crate::report::breakdown`).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Categories, Shape, Workload};
use crate::foundation::units::human;

/// Version of the breakdown JSON (the contract in docs/nsys.md).
pub const BREAKDOWN_VERSION: u32 = 1;

/// `cgp-gate breakdown --json`: `{"runs":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    pub runs: Vec<RunBreakdown>,
}

/// One input file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunBreakdown {
    pub file: String,
    /// The union of every busy interval (kernels, memcpy, memset) across streams and devices;
    /// `null` for a summary report, which has no start times.
    pub gpu_time_ns: Option<u64>,
    /// The wall time given (`--wall`) or measured; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ns: Option<u64>,
    /// Wall time minus GPU time; absent when either is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_gpu_time_ns: Option<u64>,
    /// Largest first.
    pub categories: Vec<CategoryTime>,
    /// Largest first; memcpy and memset rows included.
    pub kernels: Vec<KernelTime>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryTime {
    pub name: String,
    /// Sum of the durations of its rows.
    pub time_ns: u64,
    pub instances: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelTime {
    pub name: String,
    pub category: String,
    pub time_ns: u64,
    pub instances: u64,
}

impl RunBreakdown {
    /// Sum of every row's duration (over all categories; more than the GPU time when streams
    /// overlap).
    pub fn total_ns(&self) -> u64 {
        self.categories
            .iter()
            .map(|c| c.time_ns)
            .fold(0, u64::saturating_add)
    }

    pub fn category(&self, name: &str) -> Option<&CategoryTime> {
        self.categories.iter().find(|c| c.name == name)
    }

    /// Set the wall time; the non-GPU time follows when the GPU time is known.
    ///
    /// # Errors
    /// When the wall time is shorter than the GPU busy time (the two cannot describe one run).
    pub fn set_wall(&mut self, wall_ns: u64) -> Result<(), String> {
        self.wall_ns = Some(wall_ns);
        if let Some(gpu) = self.gpu_time_ns {
            if wall_ns < gpu {
                return Err(format!(
                    "{}: the wall time ({}) is shorter than the GPU busy time ({}); give the wall time of the whole traced run",
                    self.file,
                    human(wall_ns as f64, "ns"),
                    human(gpu as f64, "ns")
                ));
            }
            self.non_gpu_time_ns = Some(wall_ns - gpu);
        }
        Ok(())
    }
}

/// Group a workload's rows by kernel and category.
pub fn breakdown(w: &Workload, categories: &Categories) -> RunBreakdown {
    // Per distinct name: (time, instances); names are interned, so this is one pass over rows.
    let mut per_name: Vec<(u64, u64)> = vec![(0, 0); w.names.len()];
    for a in &w.activities {
        let e = &mut per_name[a.name as usize];
        e.0 = e.0.saturating_add(a.duration_ns);
        e.1 = e.1.saturating_add(a.instances);
    }
    let mut kernels: Vec<KernelTime> = Vec::new();
    let mut cats: HashMap<&str, (u64, u64)> = HashMap::new();
    for (i, name) in w.names.iter().enumerate() {
        let (time_ns, instances) = per_name[i];
        if instances == 0 && time_ns == 0 {
            continue;
        }
        let category = categories.classify(name);
        let c = cats.entry(category).or_default();
        c.0 = c.0.saturating_add(time_ns);
        c.1 = c.1.saturating_add(instances);
        kernels.push(KernelTime {
            name: name.clone(),
            category: category.to_owned(),
            time_ns,
            instances,
        });
    }
    // A summary report may list a name several times (per grid/block in kern_gb_sum): they
    // were merged above because names are interned.
    kernels.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    let mut categories: Vec<CategoryTime> = cats
        .into_iter()
        .map(|(name, (time_ns, instances))| CategoryTime {
            name: name.to_owned(),
            time_ns,
            instances,
        })
        .collect();
    categories.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    RunBreakdown {
        file: w.file.display().to_string(),
        gpu_time_ns: (w.shape == Shape::Trace).then(|| busy_time(w)),
        wall_ns: None,
        non_gpu_time_ns: None,
        categories,
        kernels,
    }
}

/// The length of the union of all `[start, start + duration)` intervals.
pub fn busy_time(w: &Workload) -> u64 {
    let mut iv: Vec<(u64, u64)> = w
        .activities
        .iter()
        .filter_map(|a| a.start_ns.map(|s| (s, s.saturating_add(a.duration_ns))))
        .collect();
    iv.sort_unstable();
    let mut total = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in iv {
        match &mut cur {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = cur {
                    total = total.saturating_add(ce - cs);
                }
                cur = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        total = total.saturating_add(ce - cs);
    }
    total
}

/// Categories across runs in one order (largest total first), so bars and tables line up.
pub fn category_order(runs: &[RunBreakdown]) -> Vec<String> {
    let mut totals: Vec<(String, u64)> = Vec::new();
    for r in runs {
        for c in &r.categories {
            match totals.iter_mut().find(|(n, _)| *n == c.name) {
                Some((_, t)) => *t = t.saturating_add(c.time_ns),
                None => totals.push((c.name.clone(), c.time_ns)),
            }
        }
    }
    totals.sort_by(|a, b| {
        // misc last: it is what no rule explained.
        (a.0 == super::categories::MISC)
            .cmp(&(b.0 == super::categories::MISC))
            .then(b.1.cmp(&a.1))
            .then_with(|| a.0.cmp(&b.0))
    });
    totals.into_iter().map(|(n, _)| n).collect()
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The console summary: per run, the GPU and non-GPU time and a table of categories.
pub fn console(b: &Breakdown, top_kernels: usize) -> String {
    let mut out = String::new();
    for r in &b.runs {
        let total = r.total_ns();
        let _ = writeln!(out, "{}", r.file);
        let gpu = r.gpu_time_ns.map_or_else(
            || "n/a (a summary report has no start times)".to_owned(),
            |g| human(g as f64, "ns"),
        );
        let _ = write!(
            out,
            "  GPU busy time {gpu}; kernel+memop time {}",
            human(total as f64, "ns")
        );
        if let Some(w) = r.wall_ns {
            let _ = write!(out, "; wall {}", human(w as f64, "ns"));
        }
        if let Some(n) = r.non_gpu_time_ns {
            let _ = write!(out, "; non-GPU {}", human(n as f64, "ns"));
        }
        let _ = writeln!(out);
        let width = r
            .categories
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            out,
            "  {:<width$}  {:>12}  {:>6}  {:>10}",
            "category", "time", "%", "instances"
        );
        for c in &r.categories {
            let _ = writeln!(
                out,
                "  {:<width$}  {:>12}  {:>5.1}%  {:>10}",
                c.name,
                human(c.time_ns as f64, "ns"),
                pct(c.time_ns, total),
                c.instances
            );
        }
        if top_kernels > 0 && !r.kernels.is_empty() {
            let _ = writeln!(out, "  top kernels:");
            for k in r.kernels.iter().take(top_kernels) {
                let name: String = if k.name.chars().count() > 100 {
                    format!("{}...", k.name.chars().take(100).collect::<String>())
                } else {
                    k.name.clone()
                };
                let _ = writeln!(
                    out,
                    "    {:>12}  {:>5.1}%  {:>8}x  [{}] {}",
                    human(k.time_ns as f64, "ns"),
                    pct(k.time_ns, total),
                    k.instances,
                    k.category,
                    name
                );
            }
        }
    }
    out
}

/// The kernel-to-category mapping: `file,kernel,category,time_ns,instances`, one row per kernel
/// of every run, largest first.
///
/// # Errors
/// Never in practice (writing to memory).
pub fn csv(b: &Breakdown) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["file", "kernel", "category", "time_ns", "instances"])?;
    for r in &b.runs {
        for k in &r.kernels {
            w.write_record([
                r.file.as_str(),
                k.name.as_str(),
                k.category.as_str(),
                &k.time_ns.to_string(),
                &k.instances.to_string(),
            ])?;
        }
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nsys::{Activity, Names};
    use std::path::PathBuf;

    fn workload(rows: &[(&str, Option<u64>, u64)]) -> Workload {
        let mut names = Names::default();
        let activities = rows
            .iter()
            .map(|(n, s, d)| Activity {
                name: names.id(n),
                start_ns: *s,
                duration_ns: *d,
                instances: 1,
            })
            .collect();
        Workload {
            file: PathBuf::from("w.csv"),
            shape: if rows.iter().all(|r| r.1.is_some()) {
                Shape::Trace
            } else {
                Shape::Summary
            },
            format: "test".into(),
            names: names.names,
            activities,
        }
    }

    #[test]
    fn busy_time_is_the_union_across_streams() {
        // [0,10) and [5,20) overlap -> 20; [30,31) apart -> 1; [20,25) touches -> 25 total span.
        let w = workload(&[
            ("a", Some(0), 10),
            ("b", Some(5), 15),
            ("c", Some(30), 1),
            ("d", Some(20), 5),
        ]);
        assert_eq!(busy_time(&w), 26);
        let w = workload(&[]);
        assert_eq!(busy_time(&w), 0);
    }

    #[test]
    fn categories_sum_rows_and_sort_largest_first() {
        let w = workload(&[
            ("gemm_a", Some(0), 10),
            ("gemm_a", Some(10), 10),
            ("[CUDA memset]", Some(20), 50),
            ("mystery", Some(100), 1),
        ]);
        let b = breakdown(&w, &Categories::default());
        assert_eq!(b.gpu_time_ns, Some(71));
        let names: Vec<(&str, u64, u64)> = b
            .categories
            .iter()
            .map(|c| (c.name.as_str(), c.time_ns, c.instances))
            .collect();
        assert_eq!(names, [("memops", 50, 1), ("gemm", 20, 2), ("misc", 1, 1)]);
        assert_eq!(b.kernels[1].name, "gemm_a");
        assert_eq!(b.kernels[1].instances, 2);
    }

    #[test]
    fn wall_shorter_than_gpu_time_is_refused() {
        let w = workload(&[("k", Some(0), 100)]);
        let mut b = breakdown(&w, &Categories::default());
        assert!(b.set_wall(50).is_err());
        b.set_wall(250).unwrap();
        assert_eq!(b.non_gpu_time_ns, Some(150));
    }
}
