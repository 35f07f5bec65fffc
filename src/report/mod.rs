//! Reporters: they render [`crate::results::Results`] (or parsed launches); they decide nothing.

pub mod console;
