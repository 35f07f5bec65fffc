//! The GPU side of a live run: NVML (when there is a driver), clock locking with its guard, and
//! health watching. A replay run has none of it.

use std::io::Write;
use std::sync::Arc;

use crate::foundation::error::Error;
use crate::gpu::{ClockGuard, Gpu, HealthSampler};
use crate::run::measure::Watch;
use crate::spec::{ClockSetting, Settings, Target};

/// Held for the duration of a live run; dropping it restores the clocks.
pub struct Session {
    pub gpu: Option<Arc<dyn Gpu>>,
    /// Why there is no GPU access, when there is none.
    pub gpu_note: Option<String>,
    guard: Option<ClockGuard>,
}

impl Session {
    /// A session for replay: no GPU is touched.
    pub fn replay() -> Self {
        Self {
            gpu: None,
            gpu_note: None,
            guard: None,
        }
    }

    /// Open NVML, check what the targets need from the machine (unless `dry_run`:
    /// [`crate::profile::machine::preflight`]) and lock the clocks the targets ask for.
    ///
    /// # Errors
    /// A failed preflight (exit 3); targets with different `clocks:` (one lock per run); NVML
    /// locking without NVML; the errors of [`crate::gpu::lock_clocks`] (no permission, MIG,
    /// unsupported clocks).
    pub fn live(targets: &[&Target], dry_run: bool, out: &mut dyn Write) -> Result<Self, Error> {
        let mut settings = targets.iter().map(|t| t.clocks);
        let clocks = settings.next().unwrap_or(ClockSetting::Ncu);
        if settings.any(|c| c != clocks) {
            return Err(Error::Usage(
                "the selected targets use different `clocks:` settings; cgp-gate locks once per run: \
                 run them separately with --target, or give them the same setting"
                    .to_owned(),
            ));
        }
        // Ctrl-C and SIGTERM must end ncu and the benchmark too, and reset locked clocks.
        crate::gpu::clocks::ensure_signal_thread().map_err(Error::Environment)?;
        let opened = crate::gpu::open();
        // Before any baseline is read or program started: what the targets' backends need from
        // the machine (issue 46). A dry run starts nothing.
        if !dry_run {
            crate::profile::machine::preflight(targets, opened.as_ref().map(AsRef::as_ref))?;
        }
        let (gpu, gpu_note) = match opened {
            Ok(g) => (Some(Arc::<dyn Gpu>::from(g)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let needs_nvml = !matches!(clocks, ClockSetting::Ncu | ClockSetting::None);
        let guard = match (&gpu, needs_nvml) {
            (Some(g), true) => Some(crate::gpu::lock_clocks(Arc::clone(g), 0, &clocks, dry_run, out)?),
            (None, true) => {
                return Err(Error::Environment(format!(
                    "`clocks: {}` locks clocks through NVML, but {}\n  help: use `clocks: ncu` (ncu locks to base clocks) or `clocks: none`",
                    crate::gpu::clocks::clock_setting_label(&clocks),
                    gpu_note.as_deref().unwrap_or("NVML is not available")
                )));
            }
            _ => None,
        };
        Ok(Self { gpu, gpu_note, guard })
    }

    /// Health watching for [`crate::run::measure::measure`], when NVML is there.
    pub fn watch<'a>(&'a self, settings: &'a Settings) -> Option<Watch<'a>> {
        let gpu = self.gpu.as_deref()?;
        let locked = self.guard.as_ref().and_then(ClockGuard::locked).map(|l| l.sm_mhz);
        Some(Watch {
            gpu,
            sampler: HealthSampler::new(0, locked, settings),
            settings,
        })
    }

    /// Restore the clocks now (dropping does it too, but this reports failures).
    ///
    /// # Errors
    /// When NVML refuses to reset the clocks.
    pub fn finish(mut self) -> Result<(), Error> {
        match self.guard.take() {
            Some(g) => g.restore(),
            None => Ok(()),
        }
    }
}
