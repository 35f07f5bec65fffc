//! Nsight Systems, the program: [`read`] runs nsys where a file needs it (`nsys export` of a
//! `.nsys-rep`, QdstrmImporter) and reads every form into one [`Workload`] (`read::read_path`);
//! the files that need no program are read by `cgp-read`'s `nsys_files` (parse-only), and the
//! model (`cgp_spec::nsys`: categories, breakdowns, bars) is imported here for this crate.

pub(crate) use cgp_spec::nsys::*;

pub mod read;

pub use read::read_path;
