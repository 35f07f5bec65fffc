//! The function-size rule (tests/architecture/sizes.rs) proves itself on a scratch copy with
//! planted violations: issue 62's limit of 100 lines for a product function, the shrinking list
//! of those still over it, and the test functions' own limit.

use super::{Scratch, finds};
use crate::architecture::{
    CRATES, LONG_FUNCTIONS_ALLOWED, MAX_FN_LINES, MAX_TEST_FN_LINES, functions, long_functions, sizes,
};

/// A function of `lines` lines (its `fn` line and closing brace included), at the top level.
fn function(name: &str, lines: usize) -> String {
    format!("\nfn {name}() {{\n{}}}\n", "    let x = 1;\n".repeat(lines - 2))
}

/// A product function of 101 lines outside the list is found, and a test function of as many
/// is not (tests keep their own limit); a listed function may keep up to the test limit, and
/// one that shrank to 100 lines, or is gone, is found, so the list only shrinks.
#[test]
fn a_long_product_function_and_a_listed_one_that_shrank_are_found() {
    let s = Scratch::new();
    s.append("src/commands/ab.rs", &function("planted_long", MAX_FN_LINES + 1));
    s.append(
        "src/commands/ab.rs",
        &function("planted_listed", MAX_TEST_FN_LINES),
    );
    s.append("src/commands/ab.rs", &function("planted_shrunk", MAX_FN_LINES));
    let test = function("planted_test", MAX_FN_LINES + 1).replace('\n', "\n    ");
    s.append(
        "crates/cgp-engine/src/run/ab/pairs.rs",
        &format!("\n#[cfg(test)]\nmod planted {{{}\n}}\n", test.trim_end()),
    );
    finds(
        sizes,
        &s,
        &["cgp-gate: src/commands/ab.rs: fn planted_long has 101 lines"],
    );
    let allowed = [
        ("cgp-gate", "commands/ab.rs", "planted_listed", "planted"),
        ("cgp-gate", "commands/ab.rs", "planted_shrunk", "planted"),
        ("cgp-gate", "commands/ab.rs", "planted_gone", "planted"),
    ];
    let found = long_functions(s.root(), &allowed);
    for e in [
        "fn planted_long has 101 lines",
        "fn planted_shrunk is allowed to be long but is not over 100 lines",
        "fn planted_gone is allowed to be long but is not over 100 lines",
    ] {
        assert!(found.iter().any(|f| f.contains(e)), "`{e}` not found: {found:#?}");
    }
    for kept in ["planted_listed", "planted_test"] {
        assert!(!found.iter().any(|f| f.contains(kept)), "{kept}: {found:#?}");
    }
    // A listed function keeps at most the test functions' limit.
    s.append(
        "src/commands/ab.rs",
        &function("planted_grown", MAX_TEST_FN_LINES + 1),
    );
    let grown = [("cgp-gate", "commands/ab.rs", "planted_grown", "planted")];
    let found = long_functions(s.root(), &grown);
    assert!(
        found.iter().any(|f| f.contains("fn planted_grown has 121 lines")),
        "{found:#?}"
    );
}

/// The repository's own list is the one `sizes` reads: its first function, shrunk to 100 lines
/// in the copy, is found.
#[test]
fn a_function_of_the_repositorys_list_that_shrank_is_found() {
    let s = Scratch::new();
    let (krate, rel, name, _) = LONG_FUNCTIONS_ALLOWED[0];
    let dir = CRATES
        .iter()
        .find(|c| c.0 == krate)
        .expect("a crate of the table")
        .1;
    let path = s.root().join(dir).join("src").join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let (_, line, len) = functions(&text)
        .into_iter()
        .find(|f| f.0 == name)
        .expect("the listed function");
    // Its body's lines past the 100th are cut (the text need not compile: the rule reads lines).
    let cut: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| !(line - 1 + MAX_FN_LINES - 1..line - 1 + len - 1).contains(i))
        .map(|(_, l)| l)
        .collect();
    std::fs::write(&path, cut.join("\n")).unwrap();
    finds(
        sizes,
        &s,
        &[&format!(
            "fn {name} is allowed to be long but is not over 100 lines"
        )],
    );
}
