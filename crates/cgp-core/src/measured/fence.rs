//! The launch fence (issue 34; docs/statistics.md 2.5, "One launch far outside its process"):
//! within ONE process (one repetition's samples), a kernel launch whose duration sits far from
//! the process's other launches is left out of the samples and reported, so that one preempted
//! (or damaged) launch cannot hide a clear change. It acts where launches become a process's
//! samples (`run::measure`, before the warm-up is dropped), so `check`, `ab`, `baseline update`
//! and `calibrate` all see the same launches.
//!
//! The rule, per kernel duration series (`gpu__time_duration.*`) of one process with at least
//! [`crate::measured::samples::WARMUP_MIN_LAUNCHES`] launches:
//! - the process's centre is the median of the logs of ALL its launches, warm-ups included (with
//!   3 launches, 2 after the warm-up, the warm-up is the third opinion that tells which of the two
//!   is the odd one), and its spread `s` is 1.4826 times their median absolute deviation;
//! - a launch after the warm-up whose log is farther from the centre than
//!   `max(ln(FENCE_MIN_RATIO), FENCE_MADS * s)` is fenced, farthest first, at most half of the
//!   launches after the warm-up.
//!
//! Evidence (docs/statistics.md): on every real H100 recording of the project, no launch after
//! its warm-up sits more than 5.5 % from its process's other launch, nor more than 2.7 MADs from
//! the median of a process of 30 to 300 launches; the fence is 20 % and 10 MADs.

use crate::foundation::units::is_kernel_duration;
use crate::measured::samples::{SampleSet, SeriesKey, WARMUP_MIN_LAUNCHES};

/// The smallest distance from the process's centre that is fenced, as a ratio (20 %).
pub const FENCE_MIN_RATIO: f64 = 1.2;

/// The distance from the process's centre that is fenced, in robust standard deviations
/// (1.4826 MAD) of the process's launches.
pub const FENCE_MADS: f64 = 10.0;

/// One launch the fence left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Fenced {
    pub key: SeriesKey,
    /// The repetition (process) it came from.
    pub rep: u32,
    /// Its position among the process's launches of this kernel (0 = the first, the warm-up).
    pub launch: usize,
    pub value: f64,
    /// The process's centre it was compared with (median of its launches).
    pub centre: f64,
}

impl std::fmt::Display for Fenced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            // The kernel name as Rust's debug form: control and bidi characters escaped, until
            // the one sanitiser of issue 34 (another change) takes it.
            "{}[{}] {:?} {}: launch {} of repetition {} ({} ns, {:+.1}% from its process's median {} ns) is far outside its process's spread and was left out",
            self.key.target,
            self.key.size,
            self.key.kernel,
            self.key.metric,
            self.launch,
            self.rep,
            self.value,
            (self.value / self.centre - 1.0) * 100.0,
            self.centre
        )
    }
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Fence the far launches of every kernel duration series of ONE run (one repetition's samples,
/// warm-ups still in): call it before [`crate::measured::samples::drop_warmup`] with the same
/// `warmup`. Returns what it left out.
pub fn fence_far_launches(run: &mut SampleSet, warmup: u32) -> Vec<Fenced> {
    let mut out = Vec::new();
    for s in run.series.values_mut() {
        let n = s.samples.len();
        if n < WARMUP_MIN_LAUNCHES || !is_kernel_duration(&s.key.metric) {
            continue;
        }
        if s.samples.iter().any(|x| !x.value.is_finite() || x.value <= 0.0) {
            continue;
        }
        let logs: Vec<f64> = s.samples.iter().map(|x| x.value.ln()).collect();
        let centre = median(&sorted(logs.clone()));
        let spread = 1.4826 * median(&sorted(logs.iter().map(|l| (l - centre).abs()).collect()));
        let limit = FENCE_MIN_RATIO.ln().max(FENCE_MADS * spread);
        let first = (warmup as usize).min(n - 1);
        let mut far: Vec<(usize, f64)> = (first..n)
            .map(|i| (i, (logs[i] - centre).abs()))
            .filter(|(_, d)| *d > limit)
            .collect();
        far.sort_by(|a, b| b.1.total_cmp(&a.1));
        far.truncate((n - first) / 2);
        let mut gone: Vec<usize> = far.iter().map(|(i, _)| *i).collect();
        gone.sort_unstable();
        for &i in gone.iter().rev() {
            let x = s.samples.remove(i);
            out.push(Fenced {
                key: s.key.clone(),
                rep: x.rep,
                launch: i,
                value: x.value,
                centre: centre.exp(),
            });
        }
    }
    out.sort_by(|a, b| (&a.key, a.launch).cmp(&(&b.key, b.launch)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(metric: &str, values: &[f64]) -> SampleSet {
        let key = SeriesKey {
            target: "matmul".into(),
            size: "n=1024".into(),
            kernel: "void matmul_tiled<32>".into(),
            metric: metric.into(),
        };
        let mut s = SampleSet::default();
        for v in values {
            s.push(&key, "ns", *v, 0);
        }
        s
    }

    fn kept(set: &SampleSet) -> Vec<f64> {
        set.series.values().next().unwrap().values()
    }

    #[test]
    fn one_far_launch_after_the_warm_up_is_fenced_either_way() {
        // extra3's matmul, repetition 0, launch 2 set to 2x (issue 34) and to 1 ns.
        for (bad, fenced) in [(513_600.0, 513_600.0), (1.0, 1.0), (1e12, 1e12)] {
            let mut s = run("gpu__time_duration.sum", &[257_760.0, 256_512.0, bad]);
            let f = fence_far_launches(&mut s, 1);
            assert_eq!(f.len(), 1, "{bad}");
            assert_eq!((f[0].launch, f[0].value), (2, fenced));
            assert_eq!(kept(&s), [257_760.0, 256_512.0]);
        }
    }

    #[test]
    fn real_spread_warm_ups_and_other_metrics_are_left_alone() {
        // reduce, extra3 repetition 0 (the real launch 5.3% from its process's other one).
        let mut s = run("gpu__time_duration.sum", &[27_712.0, 26_016.0, 27_392.0]);
        assert!(fence_far_launches(&mut s, 1).is_empty());
        // A slow warm-up is the warm-up's business, not the fence's.
        let mut s = run("gpu__time_duration.sum", &[900_000.0, 256_512.0, 257_000.0]);
        assert!(fence_far_launches(&mut s, 1).is_empty());
        // Two launches: nothing tells which is odd.
        let mut s = run("gpu__time_duration.sum", &[256_512.0, 513_600.0]);
        assert!(fence_far_launches(&mut s, 1).is_empty());
        // Counters are not fenced.
        let mut s = run("dram__bytes_read.sum", &[1.0, 1.0, 9.0]);
        assert!(fence_far_launches(&mut s, 1).is_empty());
    }

    #[test]
    fn at_most_half_of_a_process_is_fenced() {
        let mut s = run(
            "gpu__time_duration.sum",
            &[100.0, 100.0, 100.0, 100.0, 300.0, 300.0, 900.0],
        );
        let f = fence_far_launches(&mut s, 1);
        assert_eq!(f.len(), 3);
        let mut s = run("gpu__time_duration.sum", &[100.0, 100.0, 400.0, 400.0, 400.0]);
        // The centre is 400: the two 100s are the far ones, and one of them is the warm-up.
        let f = fence_far_launches(&mut s, 1);
        assert_eq!(f.iter().map(|x| x.launch).collect::<Vec<_>>(), [1]);
    }
}
