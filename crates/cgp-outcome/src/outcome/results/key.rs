//! The key of a results row, and its owned form.

use std::fmt;

/// What the file holds, and reports print, for a row that belongs to no kernel.
pub(super) const NO_KERNEL: &str = "-";

/// What identifies a row: the GPU it was measured on (empty where not known), target, size,
/// kernel (none for a row of no kernel) and metric. Merged shards, the missing-row check, `ab`
/// and `changes` key rows by it; it orders like the tuple of its fields (GPU first, so the rows of
/// one GPU stay together) and prints as every report names a row, `gemm[m=4096] kernel metric`
/// (`-` for no kernel; without the GPU, which reports show per group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey<'a> {
    pub gpu: &'a str,
    pub target: &'a str,
    pub size: &'a str,
    pub kernel: Option<&'a str>,
    pub metric: &'a str,
}

impl<'a> RowKey<'a> {
    /// The kernel as reports print it: its name, or `-` for a row that belongs to no kernel.
    pub(crate) fn kernel_label(&self) -> &'a str {
        self.kernel.unwrap_or(NO_KERNEL)
    }

    /// The same key, owned (for maps that outlive the rows).
    pub fn to_owned(&self) -> OwnedRowKey {
        OwnedRowKey {
            target: self.target.to_owned(),
            size: self.size.to_owned(),
            kernel: self.kernel.map(Kernel::from),
            metric: self.metric.to_owned(),
            gpu: self.gpu.to_owned(),
        }
    }
}

impl fmt::Display for RowKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            crate::measured::samples::target_size(self.target, self.size),
            self.kernel_label(),
            self.metric
        )
    }
}

/// A [`RowKey`] that owns its strings. `Default` leaves every part empty, the GPU unknown (the
/// run sets it) and the kernel `None`: name the parts a row has.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnedRowKey {
    pub gpu: String,
    pub target: String,
    pub size: String,
    pub kernel: Option<Kernel>,
    pub metric: String,
}

impl From<&crate::measured::samples::SeriesKey> for OwnedRowKey {
    /// The key of a measured series: its kernel is named, its GPU is the run's to set.
    fn from(k: &crate::measured::samples::SeriesKey) -> Self {
        Self {
            gpu: String::new(),
            target: k.target.clone(),
            size: k.size.clone(),
            kernel: Some(Kernel::from(k.kernel.clone())),
            metric: k.metric.clone(),
        }
    }
}

impl OwnedRowKey {
    /// The kernel as reports print it (see [`Row::kernel_label`]).
    pub fn kernel_label(&self) -> &str {
        self.kernel.as_ref().map_or(NO_KERNEL, Kernel::as_str)
    }

    /// The kernel's name as files hold it, or `None` for a row of no kernel.
    pub fn kernel_name(&self) -> Option<&str> {
        self.kernel.as_ref().map(Kernel::as_str)
    }

    pub(crate) fn as_key(&self) -> RowKey<'_> {
        RowKey {
            target: &self.target,
            size: &self.size,
            kernel: self.kernel_name(),
            metric: &self.metric,
            gpu: &self.gpu,
        }
    }
}

impl fmt::Display for OwnedRowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_key().fmt(f)
    }
}

/// The kernel of a row: one kernel by name, or the operation row of a `kernels: sum` target
/// (the selected kernels summed per iteration), which files write as
/// [`SUM_KERNEL`](crate::spec::SUM_KERNEL). Built with `From<String>`, so that a name equal to
/// that string is always [`Kernel::Sum`]; it orders and compares as the string it is written as.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kernel {
    Named(String),
    Sum,
}

impl Kernel {
    /// The name as files hold it and reports print it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Named(n) => n,
            Self::Sum => crate::spec::SUM_KERNEL,
        }
    }
}

impl From<String> for Kernel {
    fn from(name: String) -> Self {
        if name == crate::spec::SUM_KERNEL {
            Self::Sum
        } else {
            Self::Named(name)
        }
    }
}

impl From<&str> for Kernel {
    fn from(name: &str) -> Self {
        Self::from(name.to_owned())
    }
}

impl From<Kernel> for String {
    fn from(k: Kernel) -> Self {
        match k {
            Kernel::Named(n) => n,
            Kernel::Sum => crate::spec::SUM_KERNEL.to_owned(),
        }
    }
}

impl Ord for Kernel {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Kernel {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
