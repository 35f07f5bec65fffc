//! Why a timing metric changed: compare the counters that explain time between the baseline
//! and the candidate, keep those that changed beyond their noise (largest first), and read them
//! with a few simple rules (docs/why.md). Pure: numbers in, [`Why`] out.
//!
//! Deterministic counters (instructions executed, registers per thread, launch sizes, spills)
//! are compared exactly: any change of the median is a change. Noisy counters (bytes, stalls,
//! occupancy, throughput) get a Hodges-Lehmann shift with its 95% interval, as timing metrics
//! do, and count as changed when the interval excludes zero and the shift is at least 1%.

use serde::{Deserialize, Serialize};

use crate::foundation::units::{Percent, percent};
use crate::stats::hodges_lehmann::relative_shift;
use crate::stats::mannwhitney::NullCache;
use crate::stats::median;

/// Prefixes of the ncu metrics that explain time.
pub(crate) const EXPLANATORY: &[&str] = &[
    "smsp__inst_executed",
    "sm__inst_executed",
    "smsp__sass_inst_executed",
    "dram__bytes",
    "lts__t_bytes",
    "l1tex__data_bank_conflicts",
    "l1tex__data_pipe_lsu_wavefronts",
    "l1tex__t_bytes",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "launch__occupancy_limit",
    "launch__shared_mem_per_block",
    "sm__warps_active.avg.pct_of_peak",
    "sm__maximum_warps_per_active_cycle_pct",
    "local_",
    "l1tex__t_sectors_pipe_lsu_mem_local",
    "smsp__average_warp_latency_issue_stalled_",
    "smsp__pcsamp_warps_issue_stalled_",
    "smsp__warp_issue_stalled_",
    "sm__throughput",
    "dram__throughput",
];

/// The counters `explain: true` adds to every ncu run of a target: one or more of each kind the
/// issue names, by their ncu 2022.3+ names for sm_70 and newer (`ncu --query-metrics`). Each
/// is matched by [`EXPLANATORY`]. docs/why.md says what they cost in replay passes.
pub const COLLECT: &[&str] = &[
    "smsp__inst_executed.sum",
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
];

/// The smallest relative shift of a noisy counter reported as a change.
pub(crate) const MIN_NOISY_CHANGE: f64 = 0.01;

/// Whether `metric` is one of the counters that explain time.
pub fn is_explanatory(metric: &str) -> bool {
    EXPLANATORY.iter().any(|p| metric.starts_with(p))
}

/// Whether `metric` is deterministic for a given binary and input (compared exactly).
pub(crate) fn is_deterministic(metric: &str) -> bool {
    metric.starts_with("launch__")
        || metric.contains("inst_executed")
        || metric.contains("_mem_local")
        || metric.starts_with("local_")
}

/// One counter's samples on both sides.
#[derive(Debug, Clone)]
pub struct Counter<'a> {
    pub metric: &'a str,
    pub baseline: &'a [f64],
    pub candidate: &'a [f64],
}

/// A counter that changed beyond its noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedCounter {
    pub metric: String,
    /// Median of the baseline's samples.
    pub baseline: f64,
    /// Median of the candidate's samples.
    pub candidate: f64,
    /// Relative change (0.12 = +12%); for a deterministic counter, of the medians.
    pub change: f64,
    /// 95% interval of the change (noisy counters only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_ci: Option<[f64; 2]>,
    /// Compared exactly (a deterministic counter).
    #[serde(default)]
    pub exact: bool,
}

/// What changed besides the time, and a one-line reading of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Why {
    /// Counters that changed beyond their noise, largest relative change first.
    pub changed: Vec<ChangedCounter>,
    /// Counters that were compared (changed or not), so "same DRAM bytes" can be said.
    #[serde(default)]
    pub compared: Vec<String>,
    /// The one-line reading from the rules in docs/why.md.
    pub reading: String,
}

/// What the why knows of its timing row besides the counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The timing row's relative change (0.04 = +4%), the estimate the row shows: a throughput
    /// counter is read against it (a higher share of peak over a longer time is more work, not
    /// less per cycle).
    pub time_change: Option<f64>,
    /// The launch configurations (`grid (x, y, z) block (x, y, z)`) of the baseline's and this
    /// run's samples, when they differ: the first reading when present.
    pub launch: Option<(&'a [String], &'a [String])>,
}

/// Compare the counters and read them, knowing nothing of the timing row. `None` when no counter
/// could be compared.
pub fn explain(counters: &[Counter<'_>]) -> Option<Why> {
    explain_in(counters, &Context::default())
}

/// Compare the counters and read them against the timing row's change and launch configuration.
/// `None` when no counter could be compared and the launch configuration did not change.
pub fn explain_in(counters: &[Counter<'_>], ctx: &Context<'_>) -> Option<Why> {
    let mut changed = Vec::new();
    let mut compared = Vec::new();
    for c in counters {
        let (Some(b), Some(k)) = (median(c.baseline), median(c.candidate)) else {
            continue;
        };
        compared.push(c.metric.to_owned());
        let rel = if b == 0.0 {
            if k == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            k / b - 1.0
        };
        if is_deterministic(c.metric) {
            // Compared exactly, as the issue asks: counts read back from ncu as the same number.
            if b.to_bits() != k.to_bits() {
                changed.push(ChangedCounter {
                    metric: c.metric.to_owned(),
                    baseline: b,
                    candidate: k,
                    change: rel,
                    change_ci: None,
                    exact: true,
                });
            }
            continue;
        }
        let shift = relative_shift(c.candidate, c.baseline, 0.95, &mut NullCache::default());
        if let Some(s) = shift
            && (s.ci[0] > 0.0 || s.ci[1] < 0.0)
            && s.change.abs() >= MIN_NOISY_CHANGE
        {
            changed.push(ChangedCounter {
                metric: c.metric.to_owned(),
                baseline: b,
                candidate: k,
                change: s.change,
                change_ci: Some(s.ci),
                exact: false,
            });
        }
    }
    if compared.is_empty() && ctx.launch.is_none() {
        return None;
    }
    changed.sort_by(|a, b| {
        b.change
            .abs()
            .total_cmp(&a.change.abs())
            .then_with(|| a.metric.cmp(&b.metric))
    });
    let reading = read(&changed, &compared, ctx);
    Some(Why {
        changed,
        compared,
        reading,
    })
}

/// A counter's change as reports print it: `+12%` (exact), or `-5.9% [-6.2%, -5.6%]`.
pub fn change_text(c: &ChangedCounter) -> String {
    match c.change_ci {
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            percent(c.change, Percent::Counter),
            percent(lo, Percent::Counter),
            percent(hi, Percent::Counter)
        ),
        None => format!("{} (exact)", percent(c.change, Percent::Counter)),
    }
}

/// A counter value as reports print it.
pub fn number(x: f64) -> String {
    num(x)
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// What a warp-stall reason usually means.
fn stall_meaning(metric: &str) -> Option<(&'static str, &'static str)> {
    const REASONS: &[(&str, &str, &str)] = &[
        ("long_scoreboard", "long-scoreboard stalls", "memory latency"),
        (
            "short_scoreboard",
            "short-scoreboard stalls",
            "shared-memory or special-function latency",
        ),
        ("barrier", "barrier stalls", "synchronisation"),
        ("membar", "memory-barrier stalls", "memory fences"),
        (
            "math_pipe_throttle",
            "math-pipe-throttle stalls",
            "math throughput",
        ),
        ("mio_throttle", "MIO-throttle stalls", "shared-memory throughput"),
        ("lg_throttle", "LG-throttle stalls", "local/global memory queue"),
        ("wait", "wait stalls", "fixed-latency dependencies"),
        (
            "not_selected",
            "not-selected stalls",
            "more warps than the scheduler issues",
        ),
        (
            "no_instruction",
            "no-instruction stalls",
            "instruction cache misses",
        ),
        (
            "branch_resolving",
            "branch-resolving stalls",
            "divergent branches",
        ),
        (
            "tex_throttle",
            "texture-throttle stalls",
            "texture unit throughput",
        ),
    ];
    let tail = metric
        .split("issue_stalled_")
        .nth(1)
        .or_else(|| metric.split("warp_issue_stalled_").nth(1))?;
    REASONS
        .iter()
        .find(|(k, _, _)| tail.starts_with(k))
        .map(|(_, name, meaning)| (*name, *meaning))
}

/// Whether `metric` is part of the launch configuration (the first reading when it changed).
fn is_launch(metric: &str) -> bool {
    metric == "launch__registers_per_thread"
        || metric.starts_with("launch__grid_size")
        || metric.starts_with("launch__block_size")
        || metric.starts_with("launch__shared_mem_per_block")
}

fn is_occupancy(metric: &str) -> bool {
    metric.starts_with("sm__warps_active") || metric.starts_with("sm__maximum_warps")
}

/// The launch configuration's part of the reading: grid and block (from the samples'
/// configurations, else from the launch counters), registers (with the occupancy they cost),
/// shared memory. `None` when none of them changed.
fn launch_reading(changed: &[ChangedCounter], ctx: &Context<'_>) -> Option<String> {
    let find = |pred: &dyn Fn(&str) -> bool| changed.iter().find(|c| pred(&c.metric));
    let mut parts: Vec<String> = Vec::new();
    if let Some((b, k)) = ctx.launch {
        parts.push(format!(
            "launch configuration changed: {} -> {}",
            b.join(" + "),
            k.join(" + ")
        ));
    } else {
        let sizes: Vec<String> = changed
            .iter()
            .filter(|c| {
                c.metric.starts_with("launch__grid_size") || c.metric.starts_with("launch__block_size")
            })
            .map(|c| {
                format!(
                    "{} {} -> {}",
                    c.metric.trim_start_matches("launch__"),
                    num(c.baseline),
                    num(c.candidate)
                )
            })
            .collect();
        if !sizes.is_empty() {
            parts.push(format!("launch configuration changed: {}", sizes.join(", ")));
        }
    }
    if let Some(r) = find(&|m| m == "launch__registers_per_thread") {
        let mut s = format!("registers {} -> {}", num(r.baseline), num(r.candidate));
        if let Some(o) = find(&is_occupancy) {
            s.push_str(&format!(
                ", occupancy {}% -> {}%",
                num(o.baseline.round()),
                num(o.candidate.round())
            ));
        }
        s.push_str(if r.candidate > r.baseline {
            ": register pressure"
        } else {
            ": fewer registers"
        });
        parts.push(s);
    }
    if let Some(m) = find(&|m| m.starts_with("launch__shared_mem_per_block")) {
        parts.push(format!(
            "shared memory per block {} -> {} bytes",
            num(m.baseline),
            num(m.candidate)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// How a throughput counter is read.
struct Rate {
    /// `SM throughput`.
    name: &'static str,
    /// What the unit does per cycle: `the SMs do` (`less per cycle` follows).
    per_cycle: &'static str,
    /// What rate times time is: `SM work`.
    work: &'static str,
}

const SM_RATE: Rate = Rate {
    name: "SM throughput",
    per_cycle: "the SMs do",
    work: "SM work",
};

const DRAM_RATE: Rate = Rate {
    name: "DRAM throughput",
    per_cycle: "DRAM moves",
    work: "DRAM traffic",
};

/// A throughput counter (a share of its peak rate) read against the time: the work it did is
/// the rate times the time, so a higher share over a longer time is more work, and a lower share
/// over a longer time is less done per cycle.
fn throughput_reading(c: &ChangedCounter, rate: &Rate, time_change: Option<f64>) -> String {
    let Rate {
        name: what,
        per_cycle,
        work,
    } = rate;
    let head = format!(
        "{what} {} ({}% -> {}% of peak)",
        percent(c.change, Percent::Counter),
        num2(c.baseline),
        num2(c.candidate)
    );
    let Some(t) = time_change.filter(|t| t.is_finite() && *t != 0.0) else {
        return head;
    };
    let head = format!("{head}, time {}", percent(t, Percent::Counter));
    let total = (1.0 + t) * (1.0 + c.change) - 1.0;
    match (c.change > 0.0, t > 0.0) {
        (false, true) => format!("{head}: {per_cycle} less per cycle"),
        (true, false) => format!("{head}: {per_cycle} more per cycle"),
        (true, true) => format!(
            "{head}: about {} more {work}",
            percent(total, Percent::Counter).trim_start_matches('+')
        ),
        (false, false) => format!(
            "{head}: about {} less {work}",
            percent(total, Percent::Counter).trim_start_matches('-')
        ),
    }
}

/// A counter value with at most 4 significant digits (a percentage of peak).
fn num2(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The rules, first match wins (docs/why.md lists them). A changed launch configuration comes
/// first; the other counters that changed are read after it.
fn read(changed: &[ChangedCounter], compared: &[String], ctx: &Context<'_>) -> String {
    let launch = launch_reading(changed, ctx);
    // Occupancy is read with the registers when they changed.
    let registers_changed = changed.iter().any(|c| c.metric == "launch__registers_per_thread");
    let rest: Vec<ChangedCounter> = changed
        .iter()
        .filter(|c| !(is_launch(&c.metric) || (registers_changed && is_occupancy(&c.metric))))
        .cloned()
        .collect();
    match (launch, read_counters(&rest, compared, ctx.time_change)) {
        (Some(l), Some(r)) => format!("{l}; {r}"),
        (Some(l), None) => l,
        (None, Some(r)) => r,
        (None, None) => {
            "no explanatory counter changed beyond its noise: look at clocks, the input or the launch order"
                .to_owned()
        }
    }
}

/// The reading of the counters other than the launch configuration's; `None` when none changed.
fn read_counters(
    changed: &[ChangedCounter],
    compared: &[String],
    time_change: Option<f64>,
) -> Option<String> {
    let find = |pred: &dyn Fn(&str) -> bool| changed.iter().find(|c| pred(&c.metric));
    let was_compared = |pred: &dyn Fn(&str) -> bool| compared.iter().any(|m| pred(m));
    let is_inst = |m: &str| m.contains("inst_executed");
    let is_dram = |m: &str| m.starts_with("dram__bytes");
    if changed.is_empty() {
        return None;
    }
    if let Some(l) = find(&|m| m.contains("local")) {
        return Some(format!(
            "{} local-memory traffic ({}): register spills",
            percent(l.change, Percent::Counter),
            l.metric
        ));
    }
    if let Some(i) = find(&is_inst) {
        let dram = find(&is_dram);
        return Some(match dram {
            None if was_compared(&is_dram) => {
                format!(
                    "{} instructions executed, same DRAM bytes: more work per thread",
                    percent(i.change, Percent::Counter)
                )
            }
            None => format!(
                "{} instructions executed: more work per thread",
                percent(i.change, Percent::Counter)
            ),
            Some(d) => format!(
                "{} instructions executed, {} DRAM bytes: more work and more memory traffic",
                percent(i.change, Percent::Counter),
                percent(d.change, Percent::Counter)
            ),
        });
    }
    let same_inst = if was_compared(&is_inst) {
        "same instructions, "
    } else {
        ""
    };
    if let Some((c, (name, meaning))) = changed
        .iter()
        .find_map(|c| stall_meaning(&c.metric).map(|m| (c, m)))
    {
        return Some(format!(
            "{same_inst}{} {name}: {meaning}",
            percent(c.change, Percent::Counter)
        ));
    }
    if let Some(d) = find(&is_dram) {
        let traffic = if d.change >= 0.0 { "more" } else { "less" };
        return Some(format!(
            "{same_inst}{} DRAM bytes: {traffic} memory traffic",
            percent(d.change, Percent::Counter)
        ));
    }
    if let Some(b) = find(&|m| m.starts_with("l1tex__data_bank_conflicts")) {
        return Some(format!(
            "{same_inst}{} shared-memory bank conflicts",
            percent(b.change, Percent::Counter)
        ));
    }
    if let Some(o) = find(&is_occupancy) {
        return Some(format!(
            "{same_inst}occupancy {}% -> {}%",
            num(o.baseline.round()),
            num(o.candidate.round())
        ));
    }
    if let Some(t) = find(&|m| m.starts_with("sm__throughput")) {
        return Some(format!(
            "{same_inst}{}",
            throughput_reading(t, &SM_RATE, time_change)
        ));
    }
    if let Some(t) = find(&|m| m.starts_with("dram__throughput")) {
        return Some(format!(
            "{same_inst}{}",
            throughput_reading(t, &DRAM_RATE, time_change)
        ));
    }
    let top = &changed[0];
    Some(format!(
        "{same_inst}largest change: {} {}",
        top.metric,
        percent(top.change, Percent::Counter)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(center: f64) -> Vec<f64> {
        (0..10)
            .map(|i| center * (1.0 + (f64::from(i) - 4.5) * 0.001))
            .collect()
    }

    #[test]
    fn more_instructions_same_dram_is_more_work_per_thread() {
        let (bi, ci) = (vec![1000.0; 5], vec![1120.0; 5]);
        let (bd, cd) = (noisy(8e6), noisy(8e6));
        let w = explain(&[
            Counter {
                metric: "smsp__inst_executed.sum",
                baseline: &bi,
                candidate: &ci,
            },
            Counter {
                metric: "dram__bytes.sum",
                baseline: &bd,
                candidate: &cd,
            },
        ])
        .unwrap();
        assert_eq!(w.changed.len(), 1);
        assert!(w.changed[0].exact);
        assert_eq!(
            w.reading,
            "+12% instructions executed, same DRAM bytes: more work per thread"
        );
    }

    #[test]
    fn stalls_with_same_instructions_are_memory_latency() {
        let i = vec![1000.0; 5];
        let (bs, cs) = (noisy(10.0), noisy(13.0));
        let w = explain(&[
            Counter {
                metric: "smsp__inst_executed.sum",
                baseline: &i,
                candidate: &i,
            },
            Counter {
                metric: "smsp__average_warp_latency_issue_stalled_long_scoreboard",
                baseline: &bs,
                candidate: &cs,
            },
        ])
        .unwrap();
        assert_eq!(
            w.reading,
            "same instructions, +30% long-scoreboard stalls: memory latency"
        );
        assert!(w.changed[0].change_ci.is_some());
    }

    #[test]
    fn registers_and_occupancy_largest_first() {
        let (br, cr) = (vec![38.0; 5], vec![64.0; 5]);
        let (bo, co) = (noisy(75.0), noisy(50.0));
        let w = explain(&[
            Counter {
                metric: "sm__warps_active.avg.pct_of_peak_sustained_active",
                baseline: &bo,
                candidate: &co,
            },
            Counter {
                metric: "launch__registers_per_thread",
                baseline: &br,
                candidate: &cr,
            },
        ])
        .unwrap();
        assert_eq!(
            w.reading,
            "registers 38 -> 64, occupancy 75% -> 50%: register pressure"
        );
        assert_eq!(w.changed[0].metric, "launch__registers_per_thread");
        assert_eq!(w.changed.len(), 2);
    }

    #[test]
    fn noise_is_not_a_change() {
        let (b, c) = (noisy(100.0), noisy(100.05));
        let w = explain(&[Counter {
            metric: "dram__bytes.sum",
            baseline: &b,
            candidate: &c,
        }])
        .unwrap();
        assert!(w.changed.is_empty());
        assert!(w.reading.starts_with("no explanatory counter changed"));
        assert!(explain(&[]).is_none());
    }

    fn throughput(change_pct: f64, time: Option<f64>) -> String {
        let b = noisy(71.17);
        let c = noisy(71.17 * (1.0 + change_pct / 100.0));
        explain_in(
            &[Counter {
                metric: "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                baseline: &b,
                candidate: &c,
            }],
            &Context {
                time_change: time,
                launch: None,
            },
        )
        .unwrap()
        .reading
    }

    #[test]
    fn throughput_is_read_in_the_direction_it_moved() {
        // Higher share of peak over a longer time: more work, never "less per cycle".
        let up_slower = throughput(1.08, Some(0.041));
        assert!(
            up_slower.starts_with("SM throughput +1.1% (71.17% -> 71.94% of peak), time +4.1%: about 5."),
            "{up_slower}"
        );
        assert!(up_slower.ends_with("% more SM work"), "{up_slower}");
        assert_eq!(
            throughput(-48.0, Some(1.44)),
            "SM throughput -48% (71.17% -> 37.01% of peak), time +144%: the SMs do less per cycle"
        );
        assert!(throughput(5.0, Some(-0.05)).ends_with("the SMs do more per cycle"));
        assert!(throughput(-5.0, Some(-0.05)).ends_with("less SM work"));
        // Without the time, only what moved.
        assert_eq!(
            throughput(-5.0, None),
            "SM throughput -5.0% (71.17% -> 67.61% of peak)"
        );
    }

    #[test]
    fn a_launch_configuration_change_comes_first() {
        let (b, c) = (noisy(8e6), noisy(8.8e6));
        let base = ["grid (64, 1, 1) block (256, 1, 1)".to_owned()];
        let cand = ["grid (512, 1, 1) block (32, 1, 1)".to_owned()];
        let counters = [Counter {
            metric: "dram__bytes.sum",
            baseline: &b,
            candidate: &c,
        }];
        let ctx = Context {
            time_change: Some(0.5),
            launch: Some((&base, &cand)),
        };
        let w = explain_in(&counters, &ctx).unwrap();
        assert_eq!(
            w.reading,
            "launch configuration changed: grid (64, 1, 1) block (256, 1, 1) -> grid (512, 1, 1) block (32, 1, 1); \
             +10% DRAM bytes: more memory traffic"
        );
        // With no counter at all, the launch alone.
        let w = explain_in(&[], &ctx).unwrap();
        assert!(
            w.reading
                .starts_with("launch configuration changed: grid (64, 1, 1)")
        );
        // The launch counters without the configurations: the same reading, from the counters.
        let (g0, g1) = (vec![64.0; 3], vec![512.0; 3]);
        let w = explain(&[Counter {
            metric: "launch__grid_size",
            baseline: &g0,
            candidate: &g1,
        }])
        .unwrap();
        assert_eq!(w.reading, "launch configuration changed: grid_size 64 -> 512");
    }
}
