//! cgp-publish's own tests: the sticky pull-request comment through real octocrab against a
//! stand-in GitHub (cgp-test-support's `MockApi`; one binary, as the root's tests/integration.rs).

mod report_comment;
