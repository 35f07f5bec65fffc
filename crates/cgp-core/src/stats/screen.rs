//! The machine or the code (issue 43): which launches and processes a row may leave out.
//!
//! Outlier handling may protect against the machine (a preempted launch, a clock dip, a process
//! a neighbour slowed), never against the code: a kernel that is slow on a quarter of its
//! launches is slower, since throughput is what every launch took. So nothing is left out on a
//! rule about one side alone. Each rule below first marks what it would leave out on BOTH sides,
//! then the candidate's share of marked launches (or processes) is compared with the baseline's
//! own share, measured the same way on the same kind of run:
//!
//! - when the candidate's share is significantly larger ([`code_explains`]: Fisher's exact test,
//!   one-sided, at [`MACHINE_LEVEL`]), the marks are the code's: nothing is left out on either
//!   side, and the row is judged on every launch (its mean moves with the slow launches);
//! - otherwise they are the machine's: left out, counted and named in the row's reason and in its
//!   `left_out` field, and a row that leaves out more than [`MAX_LEFT_OUT_SHARE`] of a side's
//!   launches or processes is never a pass on what is left: only when the interval with nothing
//!   left out passes too (docs/statistics.md 2.5, 2.9).
//!
//! The level is 5 %, not the run's alpha: an error that keeps the machine's outliers in only
//! widens a row's interval, while one that leaves the code's out hides a slowdown, so the rule
//! leans towards keeping them.
//!
//! A far launch (the launch fence of issue 34) is one whose log lies farther than
//! `max(ln 1.2, 10 s)` from its process's centre: the median of the process's launches, `s`
//! 1.4826 times their median absolute deviation, at most half of a process, farthest first. A
//! process of two launches has no median to tell the odd one: when they differ by more than 20 %,
//! the one farther from the side's median launch is far. Pure; no I/O.

use statrs::distribution::{DiscreteCDF, Hypergeometric};

/// The smallest distance from the process's centre that makes a launch far, as a ratio (20 %).
pub(crate) const FAR_MIN_RATIO: f64 = 1.2;

/// The distance from the process's centre that makes a launch far, in robust standard
/// deviations (1.4826 MAD) of the process's launches.
pub(crate) const FAR_MADS: f64 = 10.0;

/// One-sided level of the test that the candidate's share of marked launches or processes
/// exceeds the baseline's: below it, the marks are the code's and nothing is left out.
pub(crate) const MACHINE_LEVEL: f64 = 0.05;

/// A row that leaves out more than this share of a side's launches, or of its processes, as the
/// machine's, and more than one of them, is never a pass on what is left: unless the interval with
/// nothing left out passes too, it is inconclusive and measured again.
/// One is always allowed: a single preempted launch or process is the machine's typical event,
/// and a side of 10 processes would otherwise never pass after one.
pub(crate) const MAX_LEFT_OUT_SHARE: f64 = 0.05;

/// What a row left out of its test, per side (baseline, candidate), and why.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct LeftOut {
    /// Launches left out (far launches and slow-side dips), baseline and candidate.
    pub launches: (usize, usize),
    /// Launches each side had after the warm-up, before anything was left out.
    pub of_launches: (usize, usize),
    /// Processes left out (disturbed runs), baseline and candidate.
    pub runs: (usize, usize),
    /// Processes each side had.
    pub of_runs: (usize, usize),
    /// Launches or processes a rule marked that were kept because the candidate had
    /// significantly more of them than the baseline (the code's, not the machine's): the
    /// candidate's count of marked launches and processes, with the test's p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_as_code: Option<KeptAsCode>,
    /// The far launches left out, named (side, run, value, the run's centre), at most [`NAMED`]
    /// of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<FarLaunch>,
}

/// Marks the code explains, kept in the test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeptAsCode {
    /// Candidate launches marked (far or slow dips) and kept.
    pub launches: usize,
    /// Candidate processes marked (disturbed) and kept.
    pub runs: usize,
    /// The smaller p of the share tests that kept them.
    pub p: f64,
    /// Candidate processes holding a marked launch, when the marks recur (in every candidate
    /// process, or in significantly more of them than the baseline's: a slow path the code takes,
    /// issue 57); 0 when the share of launches or disturbed processes decided.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub in_processes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The fewest candidate processes for a mark in every one of them to be the code's by that alone:
/// in one process a single slow launch is as likely the machine's (a preemption) as the code's,
/// and the next process tells (issue 57).
pub(crate) const MIN_RECURRING: usize = 2;

/// What the outlier rules marked on each side (baseline, candidate), for the share tests.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Marks {
    /// Launches marked (far launches and slow-side dips).
    pub(crate) launches: (usize, usize),
    /// Launches each side had after the warm-up.
    pub(crate) of_launches: (usize, usize),
    /// Processes marked whole (disturbed processes).
    pub(crate) runs: (usize, usize),
    /// Processes each side had.
    pub(crate) of_runs: (usize, usize),
    /// Processes holding at least one marked launch.
    pub(crate) marked_runs: (usize, usize),
}

impl Marks {
    /// The candidate's marks are the code's (`Some`, with what decided it) when its share of
    /// marked launches, of disturbed processes or of processes holding a marked launch is
    /// significantly larger than the baseline's (Fisher, one-sided, [`MACHINE_LEVEL`]), or when a
    /// mark recurs in every one of at least [`MIN_RECURRING`] candidate processes: a slow path
    /// every process takes is the code's, however few of its launches it slows (issue 57: one
    /// launch in 29 at 3x is not significant launch by launch, and was left out as the
    /// machine's). `None`: the machine's.
    pub(crate) fn the_codes(&self) -> Option<KeptAsCode> {
        let (l, n, r, nr, k) = (
            self.launches,
            self.of_launches,
            self.runs,
            self.of_runs,
            self.marked_runs,
        );
        let p_launches = share_p(l.1, n.1, l.0, n.0);
        let p_runs = share_p(r.1, nr.1, r.0, nr.0);
        let p_marked = share_p(k.1, nr.1, k.0, nr.0);
        let every = nr.1 >= MIN_RECURRING && k.1 == nr.1;
        let recurring = every || p_marked <= MACHINE_LEVEL;
        let p = p_launches.min(p_runs).min(p_marked);
        (p <= MACHINE_LEVEL || every).then_some(KeptAsCode {
            launches: l.1,
            runs: r.1,
            p,
            in_processes: if recurring { k.1 } else { 0 },
        })
    }
}

/// A far launch that was left out, for the reason.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FarLaunch {
    /// 0 baseline, 1 candidate.
    pub side: usize,
    /// The repetition (process) it came from.
    pub run: u32,
    pub value: f64,
    /// Its process's centre.
    pub centre: f64,
}

/// How many far launches a reason names (the count covers all).
pub(crate) const NAMED: usize = 3;

impl LeftOut {
    /// Nothing left out or kept by any rule.
    pub fn is_empty(&self) -> bool {
        self.launches == (0, 0) && self.runs == (0, 0) && self.kept_as_code.is_none()
    }

    /// Must a pass hold with nothing left out too? When the candidate had anything left out
    /// (issue 57: a row never passes on what is left while a launch of the candidate was left
    /// out), or a side more than [`Self::too_much`].
    pub(crate) fn needs_all_in(&self) -> bool {
        self.launches.1 > 0 || self.runs.1 > 0 || self.too_much()
    }

    /// Does a side leave out more than [`MAX_LEFT_OUT_SHARE`] of its launches or processes, and
    /// more than one?
    pub(crate) fn too_much(&self) -> bool {
        let over = |k: usize, n: usize| k > 1 && k as f64 > MAX_LEFT_OUT_SHARE * n as f64;
        over(self.launches.0, self.of_launches.0)
            || over(self.launches.1, self.of_launches.1)
            || over(self.runs.0, self.of_runs.0)
            || over(self.runs.1, self.of_runs.1)
    }

    /// The sentence for a row's reason; empty when nothing was left out or kept.
    pub fn sentence(&self) -> String {
        let mut parts = self.counts();
        parts.extend(self.notes());
        parts.join("; ")
    }

    /// What was kept as the code's and whether the row may pass, for a reason that states the
    /// counts itself (the rank test's).
    pub(crate) fn notes_sentence(&self) -> String {
        self.notes().join("; ")
    }

    fn counts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if self.launches != (0, 0) {
            let (b, c) = self.launches;
            let (nb, nc) = self.of_launches;
            parts.push(format!(
                "left out as the machine's (far launches, slow-side dips): {b} of {nb} baseline and {c} of {nc} candidate launches"
            ));
        }
        if self.runs != (0, 0) {
            let (b, c) = self.runs;
            let (nb, nc) = self.of_runs;
            parts.push(format!(
                "left out as the machine's (disturbed processes): {b} of {nb} baseline and {c} of {nc} candidate processes"
            ));
        }
        if !self.named.is_empty() {
            let each: Vec<String> = self
                .named
                .iter()
                .map(|f| {
                    format!(
                        "{} repetition {} ({} ns, {:+.1}% from its process's median {} ns)",
                        ["baseline", "candidate"][f.side.min(1)],
                        f.run,
                        crate::foundation::units::format_number(round_sig(f.value)),
                        (f.value / f.centre - 1.0) * 100.0,
                        crate::foundation::units::format_number(round_sig(f.centre))
                    )
                })
                .collect();
            parts.push(format!("far launches left out: {}", each.join(", ")));
        }
        parts
    }

    fn notes(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(k) = self.kept_as_code {
            parts.push(if k.in_processes > 0 {
                format!(
                    "kept as the code's, not the machine's: {} candidate launches that the outlier rules mark recur in {} of its {} processes (a slow path the code takes; the baseline's share p {:.2e}), so every launch is judged, by each process's mean",
                    k.launches,
                    k.in_processes,
                    self.of_runs.1,
                    crate::stats::pvalue::P(k.p)
                )
            } else {
                format!(
                    "kept as the code's, not the machine's: {} candidate launches and {} processes that the outlier rules mark, significantly more than the baseline's share (p {:.2e}), so every launch is judged, by each process's mean",
                    k.launches,
                    k.runs,
                    crate::stats::pvalue::P(k.p)
                )
            });
        }
        if self.needs_all_in() {
            parts.push(
                "a pass needs the interval of the processes' means with nothing left out to pass too"
                    .to_owned(),
            );
        }
        parts
    }
}

/// A value read back from its logarithm, to 9 significant digits (what ncu prints, and no
/// `999999999999.999` for a 1e12 read through `ln` and `exp`).
fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(8 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// p of "the candidate's share `k_c / n_c` is no larger than the baseline's `k_b / n_b`":
/// Fisher's exact test, one-sided (the hypergeometric tail of the candidate's count given both
/// sides' totals). 1 when nothing is marked.
pub(crate) fn share_p(k_c: usize, n_c: usize, k_b: usize, n_b: usize) -> f64 {
    let (k_c, k_b) = (k_c.min(n_c), k_b.min(n_b));
    if k_c == 0 || n_c == 0 {
        return 1.0;
    }
    let total = (n_c + n_b) as u64;
    let marked = (k_c + k_b) as u64;
    Hypergeometric::new(total, marked, n_c as u64).map_or(1.0, |h| h.sf(k_c as u64 - 1).clamp(0.0, 1.0))
}

/// p of "an outlier is as likely on the bad side as on the good one" for `k_bad` and `k_good`
/// outliers (the sign test, one-sided): the machine slows a base process as often as a head one.
pub(crate) fn sign_p(k_bad: usize, k_good: usize) -> f64 {
    use statrs::distribution::Binomial;
    if k_bad == 0 {
        return 1.0;
    }
    Binomial::new(0.5, (k_bad + k_good) as u64).map_or(1.0, |b| b.sf(k_bad as u64 - 1).clamp(0.0, 1.0))
}

/// Does the code explain the candidate's marks (its share significantly above the baseline's)?
pub(crate) fn code_explains(k_c: usize, n_c: usize, k_b: usize, n_b: usize) -> Option<f64> {
    let p = share_p(k_c, n_c, k_b, n_b);
    (p <= MACHINE_LEVEL).then_some(p)
}

fn median(v: &[f64]) -> f64 {
    super::order::median(v).unwrap_or(0.0)
}

/// The far launches of one side (log values grouped by run): for each run, the flags of its
/// launches. See the module's rule.
pub(crate) fn far_launches(side: &[Vec<f64>]) -> Vec<Vec<bool>> {
    let all: Vec<f64> = side.iter().flatten().copied().collect();
    let side_centre = median(&all);
    let min = FAR_MIN_RATIO.ln();
    side.iter()
        .map(|run| {
            let n = run.len();
            let mut flags = vec![false; n];
            if n >= 3 {
                let centre = median(run);
                let dev: Vec<f64> = run.iter().map(|x| (x - centre).abs()).collect();
                let limit = min.max(FAR_MADS * 1.4826 * median(&dev));
                let mut far: Vec<usize> = (0..n).filter(|&i| dev[i] > limit).collect();
                far.sort_by(|&a, &b| dev[b].total_cmp(&dev[a]));
                far.truncate(n / 2);
                for i in far {
                    flags[i] = true;
                }
            } else if n == 2 && side.len() >= 3 && (run[0] - run[1]).abs() > min {
                let odd = usize::from((run[1] - side_centre).abs() > (run[0] - side_centre).abs());
                flags[odd] = true;
            }
            flags
        })
        .collect()
}

/// A run's centre for naming a far launch: the median of its other launches.
pub(crate) fn run_centre(run: &[f64], flags: &[bool]) -> f64 {
    let kept: Vec<f64> = run
        .iter()
        .zip(flags)
        .filter(|(_, f)| !**f)
        .map(|(x, _)| *x)
        .collect();
    if kept.is_empty() {
        median(run)
    } else {
        median(&kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(v: &[f64]) -> Vec<f64> {
        v.iter().map(|x| x.ln()).collect()
    }

    #[test]
    fn fisher_tail_matches_the_hypergeometric_by_hand() {
        // 1 of 6 candidate launches against 0 of 20 baseline ones: P(X >= 1) = 6 / 26.
        assert!((share_p(1, 6, 0, 20) - 6.0 / 26.0).abs() < 1e-12);
        // 3 of 29 against 0 of 290: C(29,3) / C(319,3).
        let by_hand = (29.0 * 28.0 * 27.0) / (319.0 * 318.0 * 317.0);
        assert!((share_p(3, 29, 0, 290) - by_hand).abs() < 1e-12);
        assert!((share_p(0, 29, 5, 290) - 1.0).abs() < 1e-15);
        // As many as the baseline: no evidence.
        assert!(share_p(1, 29, 10, 290) > 0.5);
        assert!(code_explains(3, 29, 0, 290).is_some());
        assert!(code_explains(1, 29, 0, 290).is_none());
        // The sign test: 4 of 4 outlying pairs on the head's slow side is 1 / 16.
        assert!((sign_p(4, 0) - 1.0 / 16.0).abs() < 1e-12);
        assert!((sign_p(2, 1) - 0.5).abs() < 1e-12);
        assert!((sign_p(0, 3) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn far_launches_follow_the_fence_of_issue_34() {
        // extra3's matmul, one launch of a 3-launch process at 2x (after the warm-up the process
        // holds 2; the side's other processes say which is odd).
        let side = vec![
            logs(&[256_512.0, 513_600.0]),
            logs(&[257_000.0, 256_800.0]),
            logs(&[256_900.0, 257_100.0]),
        ];
        let f = far_launches(&side);
        assert_eq!(f, vec![vec![false, true], vec![false, false], vec![false, false]]);
        // The real spread (5.3 % within a 3-launch reduce process) is not far.
        let side = vec![logs(&[27_712.0, 26_016.0, 27_392.0])];
        assert_eq!(far_launches(&side), vec![vec![false; 3]]);
        // At most half of a process.
        let side = vec![logs(&[100.0, 100.0, 100.0, 100.0, 300.0, 300.0, 900.0])];
        assert_eq!(far_launches(&side)[0].iter().filter(|x| **x).count(), 3);
        // Two launches and no other process: nothing tells which is odd.
        let side = vec![logs(&[256_512.0, 513_600.0])];
        assert_eq!(far_launches(&side), vec![vec![false, false]]);
    }

    #[test]
    fn too_much_left_out_is_never_a_pass_and_is_said() {
        let l = LeftOut {
            launches: (0, 2),
            of_launches: (20, 6),
            runs: (0, 0),
            of_runs: (10, 3),
            kept_as_code: None,
            named: vec![FarLaunch {
                side: 1,
                run: 0,
                value: 513_600.0,
                centre: 256_512.0,
            }],
        };
        assert!(l.too_much());
        let s = l.sentence();
        assert!(
            s.contains("0 of 20 baseline and 2 of 6 candidate launches"),
            "{s}"
        );
        assert!(s.contains("candidate repetition 0 (513600 ns, +100.2%"), "{s}");
        assert!(
            s.contains("a pass needs the interval of the processes' means with nothing left out"),
            "{s}"
        );
        // One is the machine's typical event: 1 of 6 may still pass; 2 of 29 may not.
        for (k, n, much) in [(1, 6, false), (1, 29, false), (2, 29, true), (2, 60, false)] {
            let l = LeftOut {
                launches: (0, k),
                of_launches: (290, n),
                ..LeftOut::default()
            };
            assert_eq!(l.too_much(), much, "{k} of {n}");
        }
        assert!(LeftOut::default().is_empty() && LeftOut::default().sentence().is_empty());
        // Anything of the candidate's left out: a pass needs the interval with nothing left out.
        let one = LeftOut {
            launches: (0, 1),
            of_launches: (290, 29),
            ..LeftOut::default()
        };
        assert!(!one.too_much() && one.needs_all_in());
        let baseline_only = LeftOut {
            launches: (3, 0),
            of_launches: (290, 29),
            ..LeftOut::default()
        };
        assert!(!baseline_only.needs_all_in());
    }

    #[test]
    fn a_mark_in_every_candidate_process_is_the_codes() {
        // One launch of 29 in each of 2 or 3 candidate processes, 0 to 7 of 290 in the
        // baseline's 10 (issue 57): launch by launch not significant, yet in every process.
        let marks = |k: usize, s: usize, kb: usize, mb: usize| Marks {
            launches: (kb, k),
            of_launches: (290, 29 * s),
            runs: (0, 0),
            of_runs: (10, s),
            marked_runs: (mb, k.min(s)),
        };
        assert!(share_p(2, 58, 7, 290) > MACHINE_LEVEL);
        for s in [2, 3] {
            let code = marks(s, s, 7, 5).the_codes().unwrap();
            assert_eq!(code.in_processes, s);
            let text = LeftOut {
                of_runs: (10, s),
                kept_as_code: Some(code),
                ..LeftOut::default()
            }
            .sentence();
            assert!(
                text.contains(&format!("recur in {s} of its {s} processes")),
                "{text}"
            );
        }
        // In one process a single slow launch may be a preemption: the machine's, for now.
        assert!(marks(1, 1, 0, 0).the_codes().is_none());
        // In one process of two, against a baseline with none: not significant either.
        assert!(marks(1, 2, 0, 0).the_codes().is_none());
        // In 4 of 5 processes against 0 of 10: significantly more (p 0.004).
        let m = Marks {
            marked_runs: (0, 4),
            ..marks(4, 5, 0, 0)
        };
        assert!(m.the_codes().is_some_and(|k| k.in_processes == 4));
    }
}
