//! What the history site (`cgp-gate history`, `report::site`) and the check comment share about a
//! series: its stable anchor, and the GPU a row of an unnamed GPU was measured on.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::outcome::results::{OwnedRowKey, Results, RowKey};

/// The anchor of a series' chart on the history site: `s-` and 16 hex digits of the SHA-256 of
/// its key (GPU, target, size, kernel, metric; unit-separated), the same in every build of the
/// site, so a link from a comment keeps working as the history grows.
pub fn anchor(key: &RowKey<'_>) -> String {
    let mut h = Sha256::new();
    for part in [key.gpu, key.target, key.size, key.kernel_label(), key.metric] {
        h.update(part.as_bytes());
        h.update([0x1f]);
    }
    let d = h.finalize();
    let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("s-{hex}")
}

/// The anchor of the chart of a row of key `key` in a run on `fingerprint`'s GPU, its GPU named as
/// [`name_gpus`] names it (a check comment's link to the history site).
pub fn anchor_of_row(fingerprint: &crate::gpu::fingerprint::Fingerprint, key: &OwnedRowKey) -> String {
    let gpu = match key.gpu.as_str() {
        "" => fingerprint.gpu_name.known().unwrap_or(""),
        g => g,
    };
    anchor(&RowKey { gpu, ..key.as_key() })
}

/// Name the GPU of every row that names none (a single-GPU `check` leaves it empty) after the
/// run's fingerprint, so that a history measured on two kinds of GPU keeps two series instead of
/// drawing one line across them. Rows of a fingerprint without a GPU name stay as they are.
pub fn name_gpus(inputs: &mut [(PathBuf, Results)]) {
    for (_, r) in inputs.iter_mut() {
        let Some(name) = r.fingerprint.gpu_name.known().map(str::to_owned) else {
            continue;
        };
        for row in r.rows.iter_mut().filter(|row| row.key.gpu.is_empty()) {
            row.key.gpu.clone_from(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_stable_and_tell_series_apart() {
        let k = |gpu, metric| RowKey {
            gpu,
            target: "gemm",
            size: "n=1",
            kernel: Some("k"),
            metric,
        };
        // Pinned: a link from a comment must keep working in later builds.
        assert_eq!(anchor(&k("H100", "dur")), anchor(&k("H100", "dur")));
        assert_eq!(anchor(&k("H100", "dur")).len(), 18);
        assert_ne!(anchor(&k("H100", "dur")), anchor(&k("H200", "dur")));
        assert_ne!(anchor(&k("H100", "dur")), anchor(&k("H100", "dus")));
    }
}
