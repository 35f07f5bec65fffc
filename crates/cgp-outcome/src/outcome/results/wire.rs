//! How typed fields are written, where the file keeps an older form.

/// What the file holds for a row that belongs to no kernel.
pub(super) const NO_KERNEL: &str = "-";

/// `kernel`: a name, or `-` for none (schema 1 and 2 wrote the sentinel `-`; keeping it keeps
/// those files and older readers valid).
pub(super) mod kernel {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::NO_KERNEL;

    #[expect(
        clippy::ref_option,
        reason = "serde's serialize_with passes a reference to the field"
    )]
    pub(in super::super) fn serialize<S: Serializer>(k: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.as_deref().unwrap_or(NO_KERNEL))
    }

    pub(in super::super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let k = String::deserialize(d)?;
        Ok((k != NO_KERNEL).then_some(k))
    }
}
