//! What a metric's value can be (issue 34): a reading no GPU can give is damaged input, refused
//! with exit 2 where it is read (a recording, ncu's or nsys's output, a baseline file), never
//! judged. The rules are by unit and, for the counts that must be whole, by metric name:
//!
//! - every value is a finite number;
//! - a time (unit `ns`) is not negative and at most [`MAX_TIME_NS`] (a day); a kernel's
//!   duration (`gpu__time_duration.*`) is at least 1 ns (ncu prints whole nanoseconds, so a
//!   launch under 1 ns is no reading; 0 was refused before);
//! - a byte count (`byte`) is not negative and at most [`MAX_BYTES`];
//! - a count or a rate of counts (`inst`, `register/thread`, `sector/second`, ...) is not
//!   negative;
//! - registers, grid, block and thread counts of a launch (`launch__registers_per_thread`,
//!   `launch__grid_size`, `launch__block_size`, `launch__thread_count`) and `.sum` counters of
//!   instructions, blocks, threads, warps and launches are whole numbers.

use crate::foundation::units::{Dimension, is_kernel_duration, normalise_or_keep};

/// The longest time any metric may hold: one day, in ns. 1e308 ns is not a kernel time.
pub(crate) const MAX_TIME_NS: f64 = 86_400e9;

/// The largest byte count any metric may hold (1e18 bytes, an exabyte: no GPU moves that in a
/// kernel or holds it).
pub(crate) const MAX_BYTES: f64 = 1e18;

/// Launch attributes that are whole counts.
const WHOLE_METRICS: &[&str] = &[
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "launch__thread_count",
];

/// Launch dimensions that are at least 1 for any launch (a zero dimension is impossible).
const LAUNCH_DIMENSIONS: &[&str] = &["launch__grid_size", "launch__block_size", "launch__thread_count"];

/// Units whose `.sum` counter is a whole number.
const WHOLE_SUM_UNITS: &[&str] = &[
    "inst", "block", "blocks", "thread", "threads", "warp", "warps", "launch",
];

/// Why `value` of `metric` (in base unit `unit`) cannot be a reading, or `None` when it can be.
pub fn implausible(metric: &str, unit: &str, value: f64) -> Option<String> {
    if !value.is_finite() {
        return Some(format!("{value} is not a finite number"));
    }
    let dimension = normalise_or_keep(unit).dimension;
    let whole =
        WHOLE_METRICS.contains(&metric) || (metric.ends_with(".sum") && WHOLE_SUM_UNITS.contains(&unit));
    if unit == "ns" || dimension == Dimension::Time {
        if value < 0.0 {
            return Some(format!("{value} ns is a negative time"));
        }
        if value > MAX_TIME_NS {
            return Some(format!(
                "{value} ns is longer than a day ({MAX_TIME_NS} ns), no kernel time"
            ));
        }
        if is_kernel_duration(metric) && value < 1.0 {
            return Some(format!(
                "{value} ns is under 1 ns: ncu prints kernel durations in whole nanoseconds, and a launch takes about a microsecond at least"
            ));
        }
    } else if unit == "byte" || dimension == Dimension::Bytes {
        if value < 0.0 {
            return Some(format!("{value} bytes is a negative byte count"));
        }
        if value > MAX_BYTES {
            return Some(format!("{value} bytes is more than {MAX_BYTES} bytes"));
        }
    } else if (dimension == Dimension::Count || whole) && value < 0.0 {
        return Some(format!("{value} {unit} is a negative count"));
    } else if (unit == "%" || metric.contains(".pct_of_peak")) && value < 0.0 {
        // Issue 44: `sm__throughput.avg.pct_of_peak_sustained_elapsed = -5` was taken.
        return Some(format!("{value} % is a negative share of the peak"));
    }
    if LAUNCH_DIMENSIONS.contains(&metric) && value < 1.0 {
        // Issue 44: a grid of 0 blocks launches nothing; under `exact, direction: lower` it
        // counted as an improvement.
        return Some(format!(
            "{value} is no launch configuration: `{metric}` is at least 1 for any kernel that ran"
        ));
    }
    if whole && value.fract() != 0.0 {
        return Some(format!(
            "{value} {unit} is not a whole number, and `{metric}` counts"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::implausible;

    #[test]
    fn impossible_readings_are_named_and_real_ones_pass() {
        let t = "gpu__time_duration.sum";
        for bad in [1e308, f64::NAN, f64::INFINITY, -1.0, 0.5, 1e-300, 0.0] {
            assert!(implausible(t, "ns", bad).is_some(), "{bad}");
        }
        for ok in [1.0, 256_800.0, 1e12] {
            assert_eq!(implausible(t, "ns", ok), None, "{ok}");
        }
        let r = "launch__registers_per_thread";
        assert!(implausible(r, "register/thread", 16.5).is_some());
        assert!(implausible(r, "register/thread", -16.0).is_some());
        assert_eq!(implausible(r, "register/thread", 16.0), None);
        assert!(implausible("dram__bytes_read.sum", "byte", -1.0).is_some());
        assert!(implausible("dram__bytes_read.sum", "byte", 1e19).is_some());
        assert_eq!(implausible("dram__bytes_read.sum", "byte", 0.0), None);
        assert!(implausible("smsp__inst_executed.sum", "inst", 3.5).is_some());
        assert_eq!(implausible("smsp__inst_executed.avg", "inst", 3.5), None);
        assert_eq!(
            implausible("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", 71.2),
            None
        );
        let pct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
        assert!(implausible(pct, "%", -5.0).is_some());
        assert_eq!(implausible(pct, "%", 0.0), None);
        assert!(implausible("launch__grid_size", "", 0.0).is_some());
        assert_eq!(implausible("launch__grid_size", "", 1.0), None);
        // Counters may be 0 (bank conflicts), percentages are not counts.
        assert_eq!(
            implausible("l1tex__data_bank_conflicts_pipe_lsu.sum", "", 0.0),
            None
        );
    }
}
