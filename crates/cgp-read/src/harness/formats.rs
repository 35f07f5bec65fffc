//! The registration of the harness formats: one line each in [`READERS`], the reader in its own
//! file of this folder (`registry::Reader`; docs/architecture.md, "Adding a backend").

use super::Format;
use super::registry::{Doc, Reader};

/// The readers, one per format (the order detection tries them in).
pub static READERS: &[&dyn Reader] = &[
    &super::classic::NVBENCH,
    &super::classic::GBENCH,
    &super::classic::PYTEST_BENCHMARK,
    &super::pytorch_rows::READER,
    &super::tritonbench::READER,
    &super::hyperfine::READER,
    &super::criterion::READER,
    &super::asv::READER,
    &super::vllm::READER,
];

/// The reader of `format`. Every format has one (the test below checks it).
pub fn reader(format: Format) -> &'static dyn Reader {
    READERS
        .iter()
        .copied()
        .find(|r| r.format() == format)
        .unwrap_or(READERS[0])
}

/// The reader whose format `doc` is, by content.
pub fn detect(doc: &Doc) -> Option<&'static dyn Reader> {
    READERS.iter().copied().find(|r| r.detects(doc))
}

/// The tools and how each writes its file, for the message about a file of none.
pub fn formats_help() -> String {
    let each: Vec<String> = READERS
        .iter()
        .map(|r| format!("{} ({})", r.format().tool(), r.writes()))
        .collect();
    format!("give the file the harness wrote: {}", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_one_reader() {
        for f in Format::ALL {
            assert_eq!(READERS.iter().filter(|r| r.format() == f).count(), 1, "{f}");
            assert_eq!(reader(f).format(), f);
        }
    }
}
